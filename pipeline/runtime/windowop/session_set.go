package windowop

import (
	"cmp"
	"slices"

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
	dead       bool // merged into another session or fired
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
	// newState returns the id of empty state for a new session of key.
	newState(key string) int32
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
// holds the key's sessions, its key as a string (made once while the
// key has sessions: the owner's store keeps it) and its hash, side by
// side: adding a key's session and firing it read all three. A key whose
// last session fires gives its id back. Sessions come from chunks and
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
}

// sessionKey is what a session set keeps of a key with open sessions.
type sessionKey struct {
	list []*session // sorted by start and disjoint (two that touch have merged)
	name string     // the key
	hash uint32     // the key's hash in keys
}

func newSessionSet(gap int64) sessionSet {
	return sessionSet{gap: gap, keys: state.NewKeyIDs(), timers: state.NewRunHeap((*sessionTimer).before)}
}

// key is session s's key.
func (ss *sessionSet) key(s *session) string { return ss.byKey[s.kid].name }

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
	k := &ss.byKey[kid]
	k.name, k.hash = string(key), h
	return kid
}

// dropKey frees key id kid, whose list is empty.
func (ss *sessionSet) dropKey(kid int32) {
	k := &ss.byKey[kid]
	ss.keys.DropID(kid, k.hash)
	k.name = ""
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
		list = ss.byKey[kid].list
	}
	// The sessions [i, j) overlap or touch [start, end): Flink's
	// TimeWindow.intersects (start <= other.end && end >= other.start).
	i, _ := slices.BinarySearchFunc(list, start, func(s *session, t int64) int { return cmp.Compare(s.end, t) })
	j := i
	for j < len(list) && list[j].start <= end {
		j++
	}
	if i == j {
		if lastMilli(end) <= wm {
			return nil
		}
		if !ok { // looked up above: no second probe
			kid = ss.newKey(key, h)
		}
		k := &ss.byKey[kid]
		s := ss.alloc()
		*s = session{start: start, end: end, id: st.newState(k.name), seq: ss.seq, kid: kid}
		ss.seq++
		ss.live++
		k.list = slices.Insert(k.list, i, s)
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
		ss.byKey[kid].list = slices.Delete(list, i+1, j)
	}
	return s
}

// fire calls f with every session whose end the watermark wm has
// reached, in end order and those ending together in creation order,
// after taking it out of the set; f emits the session and frees its
// state, and must not keep s, which the set reuses. An error of f stops
// the firing and is returned.
func (ss *sessionSet) fire(wm int64, f func(*session) error) error {
	for ss.timers.Len() > 0 && lastMilli(ss.timers.Top().end) <= wm {
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
		k := &ss.byKey[s.kid]
		list := k.list
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		k.list = list
		s.dead = true
		ss.live--
		err := f(s)
		if len(list) == 0 { // after f, which reads the key
			ss.dropKey(s.kid)
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
	for _, k := range ss.byKey {
		all = append(all, k.list...)
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
		kid := ss.keyID([]byte(keys[i]), ss.keys.Hash([]byte(keys[i])))
		s := ss.alloc()
		*s = *o
		s.kid, s.dead = kid, false
		ss.byKey[kid].list = append(ss.byKey[kid].list, s)
		timers = append(timers, sessionTimer{end: s.end, seq: s.seq, s: s})
	}
	for _, k := range ss.byKey {
		slices.SortFunc(k.list, func(a, b *session) int { return cmp.Compare(a.start, b.start) })
	}
	ss.timers.Fill(timers)
	ss.seq, ss.live = seq, len(all)
}
