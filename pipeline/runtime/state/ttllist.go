package state

import (
	"encoding/binary"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TTLList keeps entries, by int32 id, in the order of their last write
// (a doubly linked list over slices, no pointer per entry), with that
// write's time. The oldest is at the head, so sweeping expired entries
// costs only what it frees.
type TTLList struct {
	TTL   int64 // milliseconds; 0 disables every method
	Now   func() time.Time
	Clock int64 // the last time read, never going back
	At    []int64
	// prev and next link the ids; next[id] is unlinked for an id not in
	// the list.
	prev, next []int32
	Head, tail int32
	N          int
}

const (
	TTLNone     int32 = -1 // end of the list
	ttlUnlinked int32 = -2
)

func (l *TTLList) Set(c operator.StateTTL) {
	l.TTL = c.TTL.Milliseconds()
	if c.TTL > 0 && l.TTL == 0 {
		l.TTL = 1
	}
	l.Now = c.Now
	if l.Now == nil {
		l.Now = time.Now
	}
	l.Head, l.tail = TTLNone, TTLNone
}

func (l *TTLList) On() bool { return l.TTL > 0 }

// Tick reads the clock; an operator calls it once per input batch. The
// time never goes back, so the list stays in time order.
func (l *TTLList) Tick() {
	if l.TTL == 0 {
		return
	}
	if c := l.Now().UnixMilli(); c > l.Clock {
		l.Clock = c
	}
}

func (l *TTLList) Linked(id int32) bool {
	return int(id) < len(l.next) && l.next[id] != ttlUnlinked
}

func (l *TTLList) unlink(id int32) {
	p, n := l.prev[id], l.next[id]
	if p == TTLNone {
		l.Head = n
	} else {
		l.next[p] = n
	}
	if n == TTLNone {
		l.tail = p
	} else {
		l.prev[n] = p
	}
	l.next[id] = ttlUnlinked
	l.N--
}

// TouchAt records a write of id at time at, which must not be earlier
// than any time in the list.
func (l *TTLList) TouchAt(id int32, at int64) {
	if at > l.Clock {
		l.Clock = at // a restored time later than the clock: never go back
	}
	for int(id) >= len(l.next) {
		l.At = append(l.At, 0)
		l.prev = append(l.prev, TTLNone)
		l.next = append(l.next, ttlUnlinked)
	}
	if l.Linked(id) {
		if l.tail == id {
			l.At[id] = at
			return
		}
		l.unlink(id)
	}
	l.At[id] = at
	l.prev[id], l.next[id] = l.tail, TTLNone
	if l.tail == TTLNone {
		l.Head = id
	} else {
		l.next[l.tail] = id
	}
	l.tail = id
	l.N++
}

// Touch records a write of id now.
func (l *TTLList) Touch(id int32) {
	if l.TTL != 0 {
		l.TouchAt(id, l.Clock)
	}
}

// Drop forgets id (its state was removed).
func (l *TTLList) Drop(id int32) {
	if l.TTL != 0 && l.Linked(id) {
		l.unlink(id)
	}
}

// Expired reports whether id's last write is TTL or more ago (Flink's
// expiry: last write + ttl <= now).
func (l *TTLList) Expired(id int32) bool {
	return l.TTL != 0 && l.Linked(id) && l.At[id]+l.TTL <= l.Clock
}

// Sweep frees, oldest first, at most budget expired ids, calling free
// for each after it left the list; free returns false to stop (an id
// that cannot go yet).
func (l *TTLList) Sweep(budget int, free func(id int32) bool) int {
	n := 0
	for ; n < budget && l.Head != TTLNone && l.Expired(l.Head); n++ {
		id := l.Head
		if !free(id) {
			break
		}
		l.Drop(id)
	}
	return n
}

// Each calls f for every id in the list, the oldest write first.
func (l *TTLList) Each(f func(id int32, at int64)) {
	for id := l.Head; id != TTLNone; id = l.next[id] {
		f(id, l.At[id])
	}
}

// Reset empties the list (an operator restoring over its state calls
// it first), keeping the TTL, the clock and its time source.
func (l *TTLList) Reset() {
	*l = TTLList{TTL: l.TTL, Now: l.Now, Clock: l.Clock, Head: TTLNone, tail: TTLNone}
}

// TTLKeys is a ttlList over keys of any comparable type, for the
// operators whose state is a Go map.
type TTLKeys[K comparable] struct {
	List TTLList
	IDs  map[K]int32
	Keys []K
	free []int32
}

func (t *TTLKeys[K]) Set(c operator.StateTTL) {
	t.List.Set(c)
	t.IDs = map[K]int32{}
}

func (t *TTLKeys[K]) On() bool { return t.List.On() }
func (t *TTLKeys[K]) Tick()    { t.List.Tick() }

func (t *TTLKeys[K]) id(k K) int32 {
	if id, ok := t.IDs[k]; ok {
		return id
	}
	var id int32
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
		t.Keys[id] = k
	} else {
		id = int32(len(t.Keys))
		t.Keys = append(t.Keys, k)
	}
	t.IDs[k] = id
	return id
}

// Touch records a write of k now.
func (t *TTLKeys[K]) Touch(k K) {
	if t.List.TTL != 0 {
		t.List.Touch(t.id(k))
	}
}

// touchAt records a write of k at time at (restore, in time order).
func (t *TTLKeys[K]) touchAt(k K, at int64) {
	if t.List.TTL != 0 {
		t.List.TouchAt(t.id(k), at)
	}
}

// Drop forgets k.
func (t *TTLKeys[K]) Drop(k K) {
	if t.List.TTL == 0 {
		return
	}
	id, ok := t.IDs[k]
	if !ok {
		return
	}
	t.List.Drop(id)
	delete(t.IDs, k)
	var zero K
	t.Keys[id] = zero
	t.free = append(t.free, id)
}

// Expired reports whether k's state is expired.
func (t *TTLKeys[K]) Expired(k K) bool {
	if t.List.TTL == 0 {
		return false
	}
	id, ok := t.IDs[k]
	return ok && t.List.Expired(id)
}

// Sweep frees at most budget expired keys, oldest first; free removes
// the key's state and returns false to keep it for now.
func (t *TTLKeys[K]) Sweep(budget int, free func(K) bool) {
	if t.List.TTL == 0 {
		return
	}
	for n := 0; n < budget && t.List.Head != TTLNone && t.List.Expired(t.List.Head); n++ {
		k := t.Keys[t.List.Head]
		if !free(k) {
			return
		}
		t.Drop(k)
	}
}

// Each calls f for every key, the oldest write first.
func (t *TTLKeys[K]) Each(f func(k K, at int64)) {
	t.List.Each(func(id int32, at int64) { f(t.Keys[id], at) })
}

// AppendTimes encodes the keys' last writes, oldest first: a count, then
// per key enc(key) and the time in milliseconds.
func (t *TTLKeys[K]) AppendTimes(buf []byte, enc func([]byte, K) []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(t.List.N))
	t.Each(func(k K, at int64) {
		buf = enc(buf, k)
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

// ReadTimes decodes appendTimes' layout into the keys' write times,
// kept in order when the TTL is on (and read past when it is off).
func (t *TTLKeys[K]) ReadTimes(d *row.Decoder, dec func(*row.Decoder) K) {
	n := d.Count(2)
	for range n {
		k := dec(d)
		at := d.Varint()
		if d.Err() != nil {
			return
		}
		t.touchAt(k, at)
	}
}

// Reset empties the keys (before a restore).
func (t *TTLKeys[K]) Reset() {
	if t.List.TTL == 0 {
		return
	}
	t.List.Reset()
	*t = TTLKeys[K]{List: t.List, IDs: map[K]int32{}}
}
