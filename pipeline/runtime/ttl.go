package runtime

import (
	"encoding/binary"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// State TTL (Flink's table.exec.state.ttl, StateTtlConfig with
// processing time, UpdateType.OnCreateAndWrite and
// StateVisibility.NeverReturnExpired): the state an operator keeps for a
// key is dropped once the key has not been written for TTL. Reading a
// key's state (a join probing the other side) does not refresh it;
// creating or changing it does. An expired entry is absent: it is never
// read again, a new row for its key starts fresh and a retraction of it
// finds nothing. Expiry emits nothing.
//
// Clean-up is lazy and incremental: an operator checks a key's age when
// it looks the key up, and after every input batch (and every SweepEvery
// while its input is quiet) frees at most a bounded number of the
// oldest expired entries, more than the batch could have created, so the
// state stays bounded by the keys written within TTL. The last write of
// every entry is in the operator's snapshot as wall-clock milliseconds:
// a restored run keeps the ages.
//
// The operators that honour it: GroupAgg (with its mini-batch path),
// Distinct, Join (both sides, per stored row), TopN and
// UpdatableTopN (per partition), Dedup (per key) and OverAgg (per
// partition). Window aggregates, window Top-N, sessions and interval
// state are freed by the watermark instead.

// StateTTL is an operator's state retention.
type StateTTL struct {
	// TTL: the state of a key not written for this long is dropped; 0
	// keeps it forever (the default).
	TTL time.Duration
	// Now is the processing-time clock; nil is time.Now. Tests inject a
	// clock instead of sleeping.
	Now func() time.Time
}

// TTLSetter is an operator whose keyed state honours a StateTTL. The
// planner calls SetStateTTL once, after building the operator and before
// Restore or any message.
type TTLSetter interface {
	SetStateTTL(StateTTL)
}

// Sweeper is an operator with expiring state. The node calls Sweep every
// SweepEvery while its input is quiet, so that idle keys are freed (and
// the state size metrics fall) without new input.
type Sweeper interface {
	SweepEvery() time.Duration
	Sweep()
}

// sweepEvery is how often a quiet node sweeps: often enough that the
// state size follows the TTL closely, never more than every 10ms.
func sweepEvery(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return 0
	}
	return min(max(ttl/4, 10*time.Millisecond), time.Second)
}

// sweepBudget bounds the entries one sweep frees: at least twice what a
// batch of n changes can create, so expired state never accumulates.
func sweepBudget(n int) int { return 2*n + 256 }

// quietSweep bounds the entries one timer sweep frees (well under a
// millisecond of work), so a mass expiry on a quiet input is freed
// within a few ticks without stalling the node.
const quietSweep = 4096

// ttlList keeps entries, by int32 id, in the order of their last write
// (a doubly linked list over slices, no pointer per entry), with that
// write's time. The oldest is at the head, so sweeping expired entries
// costs only what it frees.
type ttlList struct {
	ttl   int64 // milliseconds; 0 disables every method
	now   func() time.Time
	clock int64 // the last time read, never going back
	at    []int64
	// prev and next link the ids; next[id] is unlinked for an id not in
	// the list.
	prev, next []int32
	head, tail int32
	n          int
}

const (
	ttlNone     int32 = -1 // end of the list
	ttlUnlinked int32 = -2
)

func (l *ttlList) set(c StateTTL) {
	l.ttl = c.TTL.Milliseconds()
	if c.TTL > 0 && l.ttl == 0 {
		l.ttl = 1
	}
	l.now = c.Now
	if l.now == nil {
		l.now = time.Now
	}
	l.head, l.tail = ttlNone, ttlNone
}

func (l *ttlList) on() bool { return l.ttl > 0 }

// tick reads the clock; an operator calls it once per input batch. The
// time never goes back, so the list stays in time order.
func (l *ttlList) tick() {
	if l.ttl == 0 {
		return
	}
	if c := l.now().UnixMilli(); c > l.clock {
		l.clock = c
	}
}

func (l *ttlList) linked(id int32) bool {
	return int(id) < len(l.next) && l.next[id] != ttlUnlinked
}

func (l *ttlList) unlink(id int32) {
	p, n := l.prev[id], l.next[id]
	if p == ttlNone {
		l.head = n
	} else {
		l.next[p] = n
	}
	if n == ttlNone {
		l.tail = p
	} else {
		l.prev[n] = p
	}
	l.next[id] = ttlUnlinked
	l.n--
}

// touchAt records a write of id at time at, which must not be earlier
// than any time in the list.
func (l *ttlList) touchAt(id int32, at int64) {
	if at > l.clock {
		l.clock = at // a restored time later than the clock: never go back
	}
	for int(id) >= len(l.next) {
		l.at = append(l.at, 0)
		l.prev = append(l.prev, ttlNone)
		l.next = append(l.next, ttlUnlinked)
	}
	if l.linked(id) {
		if l.tail == id {
			l.at[id] = at
			return
		}
		l.unlink(id)
	}
	l.at[id] = at
	l.prev[id], l.next[id] = l.tail, ttlNone
	if l.tail == ttlNone {
		l.head = id
	} else {
		l.next[l.tail] = id
	}
	l.tail = id
	l.n++
}

// touch records a write of id now.
func (l *ttlList) touch(id int32) {
	if l.ttl != 0 {
		l.touchAt(id, l.clock)
	}
}

// drop forgets id (its state was removed).
func (l *ttlList) drop(id int32) {
	if l.ttl != 0 && l.linked(id) {
		l.unlink(id)
	}
}

// expired reports whether id's last write is TTL or more ago (Flink's
// expiry: last write + ttl <= now).
func (l *ttlList) expired(id int32) bool {
	return l.ttl != 0 && l.linked(id) && l.at[id]+l.ttl <= l.clock
}

// sweep frees, oldest first, at most budget expired ids, calling free
// for each after it left the list; free returns false to stop (an id
// that cannot go yet).
func (l *ttlList) sweep(budget int, free func(id int32) bool) int {
	n := 0
	for ; n < budget && l.head != ttlNone && l.expired(l.head); n++ {
		id := l.head
		if !free(id) {
			break
		}
		l.drop(id)
	}
	return n
}

// each calls f for every id in the list, the oldest write first.
func (l *ttlList) each(f func(id int32, at int64)) {
	for id := l.head; id != ttlNone; id = l.next[id] {
		f(id, l.at[id])
	}
}

// ttlKeys is a ttlList over keys of any comparable type, for the
// operators whose state is a Go map.
type ttlKeys[K comparable] struct {
	list ttlList
	ids  map[K]int32
	keys []K
	free []int32
}

func (t *ttlKeys[K]) set(c StateTTL) {
	t.list.set(c)
	t.ids = map[K]int32{}
}

func (t *ttlKeys[K]) on() bool { return t.list.on() }
func (t *ttlKeys[K]) tick()    { t.list.tick() }

func (t *ttlKeys[K]) id(k K) int32 {
	if id, ok := t.ids[k]; ok {
		return id
	}
	var id int32
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
		t.keys[id] = k
	} else {
		id = int32(len(t.keys))
		t.keys = append(t.keys, k)
	}
	t.ids[k] = id
	return id
}

// touch records a write of k now.
func (t *ttlKeys[K]) touch(k K) {
	if t.list.ttl != 0 {
		t.list.touch(t.id(k))
	}
}

// touchAt records a write of k at time at (restore, in time order).
func (t *ttlKeys[K]) touchAt(k K, at int64) {
	if t.list.ttl != 0 {
		t.list.touchAt(t.id(k), at)
	}
}

// drop forgets k.
func (t *ttlKeys[K]) drop(k K) {
	if t.list.ttl == 0 {
		return
	}
	id, ok := t.ids[k]
	if !ok {
		return
	}
	t.list.drop(id)
	delete(t.ids, k)
	var zero K
	t.keys[id] = zero
	t.free = append(t.free, id)
}

// expired reports whether k's state is expired.
func (t *ttlKeys[K]) expired(k K) bool {
	if t.list.ttl == 0 {
		return false
	}
	id, ok := t.ids[k]
	return ok && t.list.expired(id)
}

// sweep frees at most budget expired keys, oldest first; free removes
// the key's state and returns false to keep it for now.
func (t *ttlKeys[K]) sweep(budget int, free func(K) bool) {
	if t.list.ttl == 0 {
		return
	}
	for n := 0; n < budget && t.list.head != ttlNone && t.list.expired(t.list.head); n++ {
		k := t.keys[t.list.head]
		if !free(k) {
			return
		}
		t.drop(k)
	}
}

// each calls f for every key, the oldest write first.
func (t *ttlKeys[K]) each(f func(k K, at int64)) {
	t.list.each(func(id int32, at int64) { f(t.keys[id], at) })
}

// appendTimes encodes the keys' last writes, oldest first: a count, then
// per key enc(key) and the time in milliseconds.
func (t *ttlKeys[K]) appendTimes(buf []byte, enc func([]byte, K) []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(t.list.n))
	t.each(func(k K, at int64) {
		buf = enc(buf, k)
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

// readTimes decodes appendTimes' layout into the keys' write times,
// kept in order when the TTL is on (and read past when it is off).
func (t *ttlKeys[K]) readTimes(d *row.Decoder, dec func(*row.Decoder) K) {
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

// reset empties the keys (before a restore).
func (t *ttlKeys[K]) reset() {
	if t.list.ttl == 0 {
		return
	}
	c := StateTTL{TTL: time.Duration(t.list.ttl) * time.Millisecond, Now: t.list.now}
	clock := t.list.clock
	*t = ttlKeys[K]{}
	t.set(c)
	t.list.clock = clock
}
