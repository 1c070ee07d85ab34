package windowop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// session is one open session window of one group key: [start, end) on
// the instants' clock (UTC microseconds), its accumulators in slot id.
// seq orders sessions created earlier first among those ending together.
type session struct {
	start, end int64
	id         int32
	seq        uint64
	dead       bool // merged into another session or fired
}

// sessionTimer is a session's end as it was when scheduled. A session
// whose end moved on (rows extended it, or it merged) keeps its one timer
// until it comes up, and is then scheduled again at its new end: a
// session never has more than one timer.
type sessionTimer struct {
	end int64
	s   *session
}

// before orders timers by end, then by the sessions' creation.
func (x *sessionTimer) before(y *sessionTimer) bool {
	return x.end < y.end || x.end == y.end && x.s.seq < y.s.seq
}

func newSessionTimers() state.Heap[sessionTimer] { return state.NewHeap((*sessionTimer).before) }

// SessionAgg is a window aggregate over SESSION windows (Flink's session
// window TVF aggregation). Each row opens the window [ts, ts + gap) of its
// group key; windows of one key that overlap or touch merge into one
// session, as Flink's MergingWindowSet merges TimeWindows, so a row
// falling into the gap between two sessions joins them. When the
// watermark reaches a session's end, the session emits one +I and its
// state is freed: sessions in end order, those ending together in the
// order they were opened. A row whose window (after merging) has ended by
// the watermark is late: dropped and counted (Dropped, "late").
//
// Output rows: [key columns..., window_start, window_end, window_time,
// aggregate results...], as WindowAgg's.
type SessionAgg struct {
	timeCol int
	gap     int64
	keys    []int
	opt     WindowOptions
	st      *aggop.Store
	width   int
	wm      int64
	timeID  row.TypeID
	// open holds each key's sessions, sorted by start and disjoint (two
	// that touch have merged).
	open    map[string][]*session
	timers  state.Heap[sessionTimer]
	seq     uint64
	live    int
	kbuf    []byte
	arena   aggop.RowArena
	dropped int64
}

// NewSessionAgg builds the operator: the event time is column timeCol,
// the gap in microseconds. An invalid gap or call is an error.
func NewSessionAgg(timeCol int, gap int64, keys []int, aggs []aggop.AggCall, opt WindowOptions) (*SessionAgg, error) {
	width, err := aggop.InputWidth(keys, aggs)
	switch {
	case err != nil:
	case timeCol < 0:
		err = fmt.Errorf("time column %d is negative", timeCol)
	case gap <= 0 || gap >= maxEventTime/4:
		err = fmt.Errorf("SESSION window gap must be positive, got %s", micros(gap))
	}
	if err != nil {
		return nil, fmt.Errorf("session window aggregate: %w", err)
	}
	return &SessionAgg{
		timeCol: timeCol,
		gap:     gap,
		keys:    keys,
		opt:     opt,
		st:      aggop.NewStore(aggs, true, true),
		width:   max(width, timeCol+1),
		wm:      operator.NoWatermark,
		open:    map[string][]*session{},
		timers:  newSessionTimers(),
	}, nil
}

// Dropped counts late rows.
func (g *SessionAgg) Dropped() (int64, string) { return g.dropped, "late" }

// StateEntries implements StateSizer: the open sessions.
func (g *SessionAgg) StateEntries() int64 { return int64(g.live) }

func (g *SessionAgg) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("session window aggregate", in, out, func(_ int, c *row.Change) error {
		return g.add(c.Kind, c.Row)
	})
}

// eventTime reads an insert-only window input row's event time, checking
// its kind, width and type; timeID is the type seen first, which every
// later row must have.
func eventTime(k row.Kind, r row.Row, width, col int, timeID *row.TypeID) (int64, error) {
	if k != row.Insert {
		return 0, fmt.Errorf("input planned as insert-only carries a %s change", k)
	}
	if len(r) < width {
		return 0, fmt.Errorf("row has %d columns, want at least %d", len(r), width)
	}
	tv := r[col]
	switch id := tv.Type(); {
	case id == row.Null:
		return 0, fmt.Errorf("event time column %d is NULL", col)
	case id != row.Timestamp && id != row.TimestampLTZ:
		return 0, fmt.Errorf("event time column %d has type %s, want TIMESTAMP or TIMESTAMP_LTZ", col, id)
	case *timeID == row.Null:
		*timeID = id
	case id != *timeID:
		return 0, fmt.Errorf("event time column %d has type %s after %s", col, id, *timeID)
	}
	ts := tv.Micros()
	if ts >= maxEventTime || ts <= -maxEventTime {
		return 0, fmt.Errorf("event time %s is out of range", tv)
	}
	return ts, nil
}

func (g *SessionAgg) add(k row.Kind, r row.Row) error {
	ts, err := eventTime(k, r, g.width, g.timeCol, &g.timeID)
	if err != nil {
		return err
	}
	if err := g.st.Check(r); err != nil {
		return err
	}
	g.kbuf = row.KeyOf(g.kbuf[:0], r, g.keys)
	wm := g.wm
	if g.opt.Batch {
		wm = operator.NoWatermark
	}
	start, end := ts, ts+g.gap
	ss := g.open[string(g.kbuf)]
	// The sessions [i, j) overlap or touch [start, end): Flink's
	// TimeWindow.intersects (start <= other.end && end >= other.start).
	i, _ := slices.BinarySearchFunc(ss, start, func(s *session, t int64) int { return cmp.Compare(s.end, t) })
	j := i
	for j < len(ss) && ss[j].start <= end {
		j++
	}
	if i == j {
		if end <= wm {
			g.dropped++
			return nil
		}
		key := string(g.kbuf)
		s := &session{start: start, end: end, id: g.st.Alloc(key), seq: g.seq}
		g.seq++
		g.live++
		g.open[key] = slices.Insert(ss, i, s)
		g.timers.Push(sessionTimer{end: end, s: s})
		g.st.Update(s.id, r, true)
		return nil
	}
	// Merge into the earliest session, so that list aggregates
	// (FIRST_VALUE, LISTAGG) keep the sessions' time order.
	s := ss[i]
	for _, o := range ss[i+1 : j] {
		g.st.Merge(s.id, o.id)
		g.st.Release(o.id)
		o.dead = true
		g.live--
	}
	s.start = min(s.start, start)
	s.end = max(ss[j-1].end, end)
	if j-i > 1 {
		g.open[string(g.kbuf)] = slices.Delete(ss, i+1, j)
	}
	g.st.Update(s.id, r, true)
	return nil
}

// Watermark fires every session whose end the watermark has reached.
func (g *SessionAgg) Watermark(wm int64, out operator.Emitter) error {
	if wm <= g.wm || (g.opt.Batch && wm != operator.MaxWatermark) {
		return nil
	}
	g.wm = wm
	return g.fire(out)
}

// Finish fires what is left (see WindowAgg.Finish).
func (g *SessionAgg) Finish(out operator.Emitter) error {
	g.wm = operator.MaxWatermark
	return g.fire(out)
}

func (g *SessionAgg) fire(out operator.Emitter) error {
	for g.timers.Len() > 0 && g.timers.Top().end <= g.wm {
		t := g.timers.Pop()
		s := t.s
		if s.dead {
			continue
		}
		if s.end != t.end {
			g.timers.Push(sessionTimer{end: s.end, s: s})
			continue
		}
		key := g.st.Keys[s.id]
		if err := g.emit(s, key, out); err != nil {
			return err
		}
		ss := g.open[key]
		if i := slices.Index(ss, s); i >= 0 {
			ss = slices.Delete(ss, i, i+1)
		}
		if len(ss) == 0 {
			delete(g.open, key)
		} else {
			g.open[key] = ss
		}
		g.st.Release(s.id)
		s.dead = true
		g.live--
	}
	return nil
}

func (g *SessionAgg) emit(s *session, key string, out operator.Emitter) error {
	nk := len(g.keys)
	r := g.arena.Row(nk + 3 + len(g.st.Aggs))
	if err := aggop.DecodeKey(r[:nk], key); err != nil {
		return fmt.Errorf("session window aggregate: %w", err)
	}
	start, end := s.start, s.end
	if g.opt.Zone != nil && g.timeID == row.TimestampLTZ {
		// window_start and window_end are the zone's wall clock, as for
		// the other window TVFs over a TIMESTAMP_LTZ attribute.
		start += zoneOffset(g.opt.Zone, start)
		end += zoneOffset(g.opt.Zone, end)
	}
	r[nk] = row.TimestampValue(start)
	r[nk+1] = row.TimestampValue(end)
	if g.timeID == row.TimestampLTZ {
		r[nk+2] = row.TimestampLTZValue(s.end - 1000)
	} else {
		r[nk+2] = row.TimestampValue(s.end - 1000)
	}
	g.st.Results(s.id, r[nk+3:])
	out.Emit(row.Insert, r)
	return nil
}

const sessionStateVersion = 1

// Snapshot encodes the open sessions: a version byte, the watermark, the
// time attribute's type, the late count, the next sequence number, each
// open session (start, end, slot id, sequence) in sequence order, then
// the aggregate store, which keeps every slot's key.
func (g *SessionAgg) Snapshot() ([]byte, error) {
	buf := aggop.AppendClock(sessionStateVersion, g.wm, g.timeID, g.dropped)
	buf = binary.AppendUvarint(buf, g.seq)
	all := make([]*session, 0, g.live)
	for _, ss := range g.open {
		all = append(all, ss...)
	}
	slices.SortFunc(all, func(a, b *session) int { return cmp.Compare(a.seq, b.seq) })
	buf = binary.AppendUvarint(buf, uint64(len(all)))
	for _, s := range all {
		buf = binary.AppendVarint(buf, s.start)
		buf = binary.AppendVarint(buf, s.end)
		buf = binary.AppendUvarint(buf, uint64(s.id))
		buf = binary.AppendUvarint(buf, s.seq)
	}
	return g.st.AppendState(buf, nil), nil
}

// Restore replaces the operator's state with a snapshot's.
func (g *SessionAgg) Restore(state []byte) error {
	d := row.NewDecoder(state)
	var err error
	if g.wm, g.timeID, g.dropped, err = aggop.ReadClock(d, sessionStateVersion, "session window aggregate"); err != nil {
		return err
	}
	g.seq = d.Uvarint()
	all := make([]*session, d.Count(4))
	for i := range all {
		all[i] = &session{start: d.Varint(), end: d.Varint(), id: int32(min(d.Uvarint(), 1<<31-1)), seq: d.Uvarint()}
	}
	g.st.RestoreState(d)
	if err := d.End(); err != nil {
		return fmt.Errorf("session window aggregate: restore: %w", err)
	}
	g.open = map[string][]*session{}
	timers := make([]sessionTimer, 0, len(all))
	for _, s := range all {
		if s.id < 0 || s.id >= g.st.Slots {
			return fmt.Errorf("session window aggregate: restore: slot %d of %d", s.id, g.st.Slots)
		}
		key := g.st.Keys[s.id]
		g.open[key] = append(g.open[key], s)
		timers = append(timers, sessionTimer{end: s.end, s: s})
	}
	for _, ss := range g.open {
		slices.SortFunc(ss, func(a, b *session) int { return cmp.Compare(a.start, b.start) })
	}
	g.timers.Fill(timers)
	g.live = len(all)
	return nil
}

var (
	_ operator.Operator    = (*SessionAgg)(nil)
	_ operator.Counters    = (*SessionAgg)(nil)
	_ operator.Snapshotter = (*SessionAgg)(nil)
	_ operator.StateSizer  = (*SessionAgg)(nil)
)
