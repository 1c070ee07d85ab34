package windowop

import (
	"cmp"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// session is one open session window of one key: [start, end) on the
// instants' clock (UTC microseconds), its state under id in its owner
// (SessionAgg's accumulators, SessionTable's rows). seq orders sessions
// created earlier first among those ending together. A session holds no
// pointer: its key is the set's key id kid (sessionSet.key), and the set
// keeps its sessions in chunks the GC need not scan, reused once fired.
type session struct {
	start, end int64
	seq        uint64
	id         int32
	kid        int32
	hash       uint32 // the key's hash in the set's keys
	dead       bool   // merged into another session or fired
	// sole: the session is its key's only one, in its entry's one.
	// Firing it then writes the entry, and reads nothing of it.
	sole bool
}

// sessionTimer is a session's end as it was when scheduled. A session
// whose end moved on (rows extended it, or it merged) keeps its one timer
// until it comes up, and is then scheduled again at its new end: a
// session never has more than one timer. It holds its session's seq (a
// session's never changes), so that ordering two timers reads no
// session: the heap's swaps stay in its own array.
type sessionTimer struct {
	end int64
	seq uint64
	s   *session
}

// before orders timers by end, then by the sessions' creation.
func (x *sessionTimer) before(y *sessionTimer) bool {
	return x.end < y.end || x.end == y.end && x.seq < y.seq
}

// sessionState is what the owner of a session set keeps per session.
type sessionState interface {
	// newState returns the id of empty state for a new session of key
	// (a view valid for the call).
	newState(key []byte) int32
	// mergeState moves the state of session from into session into's,
	// after what into holds, and frees from's.
	mergeState(into, from int32)
}

// sessionChunk is how many sessions the set allocates at once.
const sessionChunk = 256

// sessionSet is the open session windows of every key, merged as Flink's
// MergingWindowSet merges TimeWindows: windows of one key that overlap
// or touch are one session, so a row falling into the gap between two
// sessions joins them. The set keeps the windows and their timers; its
// owner keeps each session's state.
//
// Keys with open sessions have an id in keys (a state.KeyIDs: no string
// made to look a row's key up, no map entry for the GC); by id, byKey
// holds the key's sessions, its only one in the entry itself (the
// session knows it: sole). The key's bytes are the table's (key):
// no string is made for a key. A key whose last session fires gives its
// id back. What a session's firing reads is few lines of memory, each
// likely a miss (a session fires seconds of rows after it opened, with
// the batches' data through the caches in between): the session, its
// accumulators, the key table's bucket and entry, and for a key with
// more than one session its entry here; a list of one's array, a key
// string and the entry of a key with one were three more. Sessions come from chunks and
// go back to free when no timer refers to them any more: at their
// firing, or for a session merged into another at its timer's turn. In
// M-session's shape (each row its own session, 100k keys) a row made a
// session, its key's string and list, and a map entry, and a firing
// looked the key up and deleted it: most of the operator's time.
type sessionSet struct {
	gap    int64
	keys   *state.KeyIDs
	byKey  []sessionKey // by key id
	free   []*session
	timers state.RunHeap[sessionTimer] // sessions open mostly in time order
	seq    uint64                      // the next session's
	live   int
	// zone, when set, is the session zone of sessions over a
	// TIMESTAMP_LTZ: their times are its wall clock (Flink merges such
	// sessions on the wall clock), and a session ends at the instant its
	// end stands for.
	zone *time.Location
}

// due is the watermark at which a session ending at end fires.
func (ss *sessionSet) due(end int64) int64 {
	if ss.zone == nil {
		return lastMilli(end)
	}
	return lastMilli(row.AtZoneLater(ss.zone, end))
}

// sessionKey is what a session set keeps of a key with open sessions.
type sessionKey struct {
	// one is the key's session while it has one and list is empty (the
	// common case: sessions of a key rarely overlap in time).
	one [1]*session
	// list is the key's sessions once it had two at once, sorted by
	// start and disjoint (two that touch have merged); one is nil then.
	list []*session
}

// sessions is the key's sessions, sorted by start: a view of k, valid
// until byKey grows or k changes.
func (k *sessionKey) sessions() []*session {
	if k.one[0] != nil {
		return k.one[:]
	}
	return k.list
}

// insert puts s at index i of the key's sessions.
func (k *sessionKey) insert(i int, s *session) {
	switch {
	case len(k.list) > 0:
		k.list = slices.Insert(k.list, i, s)
	case k.one[0] == nil:
		k.one[0], s.sole = s, true
	default: // a second session: the two go to list, in order
		k.one[0].sole = false
		k.list = slices.Insert(append(k.list[:0], k.one[0]), i, s)
		k.one[0] = nil
	}
}

// remove drops the key's sessions [i, j); one left goes back to one.
func (k *sessionKey) remove(i, j int) {
	if k.one[0] != nil { // i, j = 0, 1
		k.one[0].sole, k.one[0] = false, nil
		return
	}
	k.list = slices.Delete(k.list, i, j)
	if len(k.list) == 1 {
		k.one[0], k.list[0].sole = k.list[0], true
		k.list = slices.Delete(k.list, 0, 1) // keeps its array for the key's next
	}
}

func newSessionSet(gap int64) sessionSet {
	return sessionSet{gap: gap, keys: state.NewKeyIDs(), timers: state.NewRunHeap((*sessionTimer).before)}
}

// key is session s's key: a view of the key table's bytes, valid until
// the set changes.
func (ss *sessionSet) key(s *session) []byte { return ss.keys.Bytes(s.kid) }

// keyCount is the number of keys with open sessions.
func (ss *sessionSet) keyCount() int { return ss.keys.Len() }

// alloc returns a zeroed session, a freed one if there is one.
func (ss *sessionSet) alloc() *session {
	if len(ss.free) == 0 {
		chunk := make([]session, sessionChunk)
		for i := range chunk {
			ss.free = append(ss.free, &chunk[len(chunk)-1-i])
		}
	}
	s := ss.free[len(ss.free)-1]
	ss.free = ss.free[:len(ss.free)-1]
	*s = session{}
	return s
}

// keyID is key's id, given one with an empty list if it has none.
func (ss *sessionSet) keyID(key []byte, h uint32) int32 {
	if kid, ok := ss.keys.FindHashed(key, h); ok {
		return kid
	}
	return ss.newKey(key, h)
}

// newKey gives key, which has no id, one with an empty list.
func (ss *sessionSet) newKey(key []byte, h uint32) int32 {
	kid, fresh := ss.keys.AddHashed(key, h)
	if fresh {
		ss.byKey = append(ss.byKey, sessionKey{})
	}
	return kid
}

// add puts the window [ts, ts+gap) of key in the set and returns the
// session that holds it now: a new one, or the earliest of the sessions
// it overlaps or touches, into which the others merged (in time order,
// so that list aggregates such as FIRST_VALUE and LISTAGG keep it). A
// new window that ends by the watermark wm is late: add returns nil.
// The session returned is valid until the next fire.
func (ss *sessionSet) add(key []byte, ts, wm int64, st sessionState) *session {
	start, end := ts, ts+ss.gap
	h := ss.keys.Hash(key)
	var list []*session
	kid, ok := ss.keys.FindHashed(key, h)
	if ok {
		list = ss.byKey[kid].sessions()
	}
	// The sessions [i, j) overlap or touch [start, end): Flink's
	// TimeWindow.intersects (start <= other.end && end >= other.start).
	i, _ := slices.BinarySearchFunc(list, start, func(s *session, t int64) int { return cmp.Compare(s.end, t) })
	j := i
	for j < len(list) && list[j].start <= end {
		j++
	}
	if i == j {
		if ss.due(end) <= wm {
			return nil
		}
		if !ok { // looked up above: no second probe
			kid = ss.newKey(key, h)
		}
		s := ss.alloc()
		*s = session{start: start, end: end, id: st.newState(key), seq: ss.seq, kid: kid, hash: h}
		ss.seq++
		ss.live++
		ss.byKey[kid].insert(i, s)
		ss.timers.Push(sessionTimer{end: end, seq: s.seq, s: s})
		return s
	}
	s := list[i]
	for _, o := range list[i+1 : j] {
		st.mergeState(s.id, o.id)
		o.dead = true
		ss.live--
	}
	s.start = min(s.start, start)
	s.end = max(list[j-1].end, end)
	if j-i > 1 {
		ss.byKey[kid].remove(i+1, j)
	}
	return s
}

// fire calls f with every session whose end the watermark wm has
// reached, in end order and those ending together in creation order,
// after taking it out of the set; f emits the session and frees its
// state, and must not keep s, which the set reuses. An error of f stops
// the firing and is returned.
func (ss *sessionSet) fire(wm int64, f func(*session) error) error {
	for ss.timers.Len() > 0 && ss.due(ss.timers.Top().end) <= wm {
		t := ss.timers.Pop()
		s := t.s
		if s.dead { // merged: this was its last reference
			ss.free = append(ss.free, s)
			continue
		}
		if s.end != t.end {
			ss.timers.Push(sessionTimer{end: s.end, seq: s.seq, s: s})
			continue
		}
		empty := s.sole
		if empty {
			ss.byKey[s.kid].one[0], s.sole = nil, false
		} else {
			k := &ss.byKey[s.kid]
			if i := slices.Index(k.sessions(), s); i >= 0 {
				k.remove(i, i+1)
			}
			empty = k.one[0] == nil && len(k.list) == 0
		}
		s.dead = true
		ss.live--
		err := f(s)
		if empty { // after f, which reads the key
			ss.keys.DropID(s.kid, s.hash)
		}
		ss.free = append(ss.free, s)
		if err != nil {
			return err
		}
	}
	return nil
}

// sessions returns the open sessions in creation order, as a snapshot
// writes them.
func (ss *sessionSet) sessions() []*session {
	all := make([]*session, 0, ss.live)
	for i := range ss.byKey {
		all = append(all, ss.byKey[i].sessions()...)
	}
	slices.SortFunc(all, func(a, b *session) int { return cmp.Compare(a.seq, b.seq) })
	return all
}

// restore replaces the set with a snapshot's sessions, each with its
// state id and its key in keys (by index); seq is the next session's
// sequence number. The set keeps copies of all.
func (ss *sessionSet) restore(seq uint64, all []*session, keys []string) {
	*ss = newSessionSet(ss.gap)
	timers := make([]sessionTimer, 0, len(all))
	for i, o := range all {
		h := ss.keys.Hash([]byte(keys[i]))
		kid := ss.keyID([]byte(keys[i]), h)
		s := ss.alloc()
		*s = *o
		s.kid, s.hash, s.dead, s.sole = kid, h, false, false
		k := &ss.byKey[kid]
		k.insert(len(k.sessions()), s)
		timers = append(timers, sessionTimer{end: s.end, seq: s.seq, s: s})
	}
	for i := range ss.byKey {
		slices.SortFunc(ss.byKey[i].sessions(), func(a, b *session) int { return cmp.Compare(a.start, b.start) })
	}
	ss.timers.Fill(timers)
	ss.seq, ss.live = seq, len(all)
}
