package windowop

import (
	"cmp"
	"slices"

	"github.com/etld/etld/pipeline/runtime/state"
)

// session is one open session window of one key: [start, end) on the
// instants' clock (UTC microseconds), its state under id in its owner
// (SessionAgg's accumulators, SessionTable's rows). seq orders sessions
// created earlier first among those ending together.
type session struct {
	start, end int64
	seq        uint64
	key        string
	id         int32
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

// sessionSet is the open session windows of every key, merged as Flink's
// MergingWindowSet merges TimeWindows: windows of one key that overlap
// or touch are one session, so a row falling into the gap between two
// sessions joins them. The set keeps the windows and their timers; its
// owner keeps each session's state.
type sessionSet struct {
	gap int64
	// open holds each key's sessions, sorted by start and disjoint (two
	// that touch have merged).
	open   map[string][]*session
	timers state.RunHeap[sessionTimer] // sessions open mostly in time order
	seq    uint64                      // the next session's
	live   int
}

func newSessionSet(gap int64) sessionSet {
	return sessionSet{gap: gap, open: map[string][]*session{}, timers: state.NewRunHeap((*sessionTimer).before)}
}

// add puts the window [ts, ts+gap) of key in the set and returns the
// session that holds it now: a new one, or the earliest of the sessions
// it overlaps or touches, into which the others merged (in time order,
// so that list aggregates such as FIRST_VALUE and LISTAGG keep it). A
// new window that ends by the watermark wm is late: add returns nil.
func (ss *sessionSet) add(key []byte, ts, wm int64, st sessionState) *session {
	start, end := ts, ts+ss.gap
	list := ss.open[string(key)]
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
		k := string(key)
		s := &session{start: start, end: end, id: st.newState(k), seq: ss.seq, key: k}
		ss.seq++
		ss.live++
		ss.open[k] = slices.Insert(list, i, s)
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
		ss.open[s.key] = slices.Delete(list, i+1, j)
	}
	return s
}

// fire calls f with every session whose end the watermark wm has
// reached, in end order and those ending together in creation order,
// after taking it out of the set; f emits the session and frees its
// state. An error of f stops the firing and is returned.
func (ss *sessionSet) fire(wm int64, f func(*session) error) error {
	for ss.timers.Len() > 0 && lastMilli(ss.timers.Top().end) <= wm {
		t := ss.timers.Pop()
		s := t.s
		if s.dead {
			continue
		}
		if s.end != t.end {
			ss.timers.Push(sessionTimer{end: s.end, seq: s.seq, s: s})
			continue
		}
		list := ss.open[s.key]
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(ss.open, s.key)
		} else {
			ss.open[s.key] = list
		}
		s.dead = true
		ss.live--
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

// sessions returns the open sessions in creation order, as a snapshot
// writes them.
func (ss *sessionSet) sessions() []*session {
	all := make([]*session, 0, ss.live)
	for _, list := range ss.open {
		all = append(all, list...)
	}
	slices.SortFunc(all, func(a, b *session) int { return cmp.Compare(a.seq, b.seq) })
	return all
}

// restore replaces the set with a snapshot's sessions, each with its key
// and state id; seq is the next session's sequence number.
func (ss *sessionSet) restore(seq uint64, all []*session) {
	ss.open = map[string][]*session{}
	timers := make([]sessionTimer, 0, len(all))
	for _, s := range all {
		ss.open[s.key] = append(ss.open[s.key], s)
		timers = append(timers, sessionTimer{end: s.end, seq: s.seq, s: s})
	}
	for _, list := range ss.open {
		slices.SortFunc(list, func(a, b *session) int { return cmp.Compare(a.start, b.start) })
	}
	ss.timers.Fill(timers)
	ss.seq, ss.live = seq, len(all)
}
