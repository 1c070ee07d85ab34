package windowop

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

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
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	operator.Late     // reports the rows dropped as late (late_rows)
	timeCol           int
	keys              []int
	opt               WindowOptions
	st                *aggop.Store
	width             int
	wm                int64
	timeID            row.TypeID
	set               sessionSet // the sessions; their accumulators are in st, by id
	kbuf              []byte
	arena             aggop.RowArena
	dropped           int64
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
		keys:    keys,
		opt:     opt,
		st:      aggop.NewStore(aggs, true, false), // the keys are the set's (slotKeys)
		width:   max(width, timeCol+1),
		wm:      operator.NoWatermark,
		set:     newSessionSet(gap),
	}, nil
}

// Dropped counts late rows.
func (g *SessionAgg) Dropped() (int64, string) { return g.dropped, "late" }

// StateEntries implements StateSizer: the open sessions.
func (g *SessionAgg) StateEntries() int64 { return int64(g.set.live) }

func (g *SessionAgg) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("session window aggregate", in, out, func(i int, c *row.Change) error {
		g.At(i)
		return g.add(c.Kind, c.Row)
	})
}

// ReleasesInput implements operator.InputReleaser: a row is folded into
// its session's accumulators and nothing of it is kept (the key is
// copied into the session set, values kept are detached copies), so the
// node gives the batch's rows back to the decoders that made them, as
// WindowAgg's.
func (g *SessionAgg) ReleasesInput() bool { return true }

func (g *SessionAgg) add(k row.Kind, r row.Row) error {
	ts, err := eventTime(k, r, g.width, g.timeCol, &g.timeID)
	if err != nil {
		return err
	}
	if g.zoned() {
		ts = row.WallMicros(g.opt.Zone, ts)
	}
	if err := g.st.Check(r); err != nil {
		return err
	}
	g.kbuf = row.KeyOf(g.kbuf[:0], r, g.keys)
	wm := g.wm
	if g.opt.Batch {
		wm = operator.NoWatermark
	}
	s := g.set.add(g.kbuf, ts, wm, g)
	if s == nil {
		g.dropped++
		g.Drop()
		return nil
	}
	g.st.Update(s.id, r, true)
	return nil
}

// newState and mergeState keep each session's accumulators in a slot of
// the store, which keeps no key: a snapshot takes the slots' keys from
// the set (slotKeys).
func (g *SessionAgg) newState([]byte) int32 { return g.st.Alloc("") }

func (g *SessionAgg) mergeState(into, from int32) {
	g.st.Merge(into, from)
	g.st.Release(from)
}

// Watermark fires every session whose end the watermark has reached.
func (g *SessionAgg) Watermark(wm int64, out operator.Emitter) error {
	if wm <= g.wm || (g.opt.Batch && !g.opt.Sorted && wm != operator.MaxWatermark) {
		return nil
	}
	g.wm = wm
	g.zoned()
	return errors.Join(g.fire(out), g.st.Err())
}

// zoned says whether sessions are on the Zone's wall clock (a
// TIMESTAMP_LTZ attribute in a Zone), and then tells the set so.
func (g *SessionAgg) zoned() bool {
	if g.opt.Zone == nil || g.timeID != row.TimestampLTZ {
		return false
	}
	g.set.zone = g.opt.Zone
	return true
}

// Finish fires what is left (see WindowAgg.Finish).
func (g *SessionAgg) Finish(out operator.Emitter) error {
	g.wm = operator.MaxWatermark
	g.zoned()
	return errors.Join(g.fire(out), g.st.Err())
}

func (g *SessionAgg) fire(out operator.Emitter) error {
	return g.set.fire(g.wm, func(s *session) error {
		if err := g.emit(s, out); err != nil {
			return err
		}
		g.st.Release(s.id)
		return nil
	})
}

func (g *SessionAgg) emit(s *session, out operator.Emitter) error {
	nk := len(g.keys)
	r := g.arena.RowFrom(operator.CarverOf(out), nk+3+len(g.st.Aggs))
	if err := aggop.DecodeKeyView(r[:nk], g.set.key(s)); err != nil {
		return fmt.Errorf("session window aggregate: %w", err)
	}
	// In a Zone the sessions are on its wall clock already.
	r[nk] = row.TimestampValue(s.start)
	r[nk+1] = row.TimestampValue(s.end)
	if g.timeID == row.TimestampLTZ {
		r[nk+2] = row.TimestampLTZValue(windowTimeLTZ(g.set.zone, s.end, s.end))
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
// the aggregate store with every slot's key (a free slot's empty).
func (g *SessionAgg) Snapshot() ([]byte, error) {
	buf := aggop.AppendClock(sessionStateVersion, g.wm, g.timeID, g.dropped)
	buf = binary.AppendUvarint(buf, g.set.seq)
	all := g.set.sessions()
	buf = binary.AppendUvarint(buf, uint64(len(all)))
	for _, s := range all {
		buf = binary.AppendVarint(buf, s.start)
		buf = binary.AppendVarint(buf, s.end)
		buf = binary.AppendUvarint(buf, uint64(s.id))
		buf = binary.AppendUvarint(buf, s.seq)
	}
	buf = g.st.AppendState(buf, g.slotKeys(all))
	return buf, g.st.Err()
}

// slotKeys returns the store slots' keys (store.AppendState's key
// function): each open session's, from the set; a free slot's none.
func (g *SessionAgg) slotKeys(open []*session) func(id int32) []byte {
	kids := make([]int32, g.st.Slots)
	for i := range kids {
		kids[i] = -1
	}
	for _, s := range open {
		kids[s.id] = s.kid
	}
	return func(id int32) []byte {
		if kids[id] < 0 {
			return nil
		}
		return g.set.keys.Bytes(kids[id])
	}
}

// Restore replaces the operator's state with a snapshot's.
func (g *SessionAgg) Restore(state []byte) error {
	d := g.Decoder(state)
	var err error
	if g.wm, g.timeID, g.dropped, err = aggop.ReadClock(d, sessionStateVersion, "session window aggregate"); err != nil {
		return err
	}
	seq := d.Uvarint()
	all := make([]*session, d.Count(4))
	for i := range all {
		all[i] = &session{start: d.Varint(), end: d.Varint(), id: int32(min(d.Uvarint(), 1<<31-1)), seq: d.Uvarint()}
	}
	var slotKeys []string // by slot
	g.st.RestoreState(d, func(id int32, key []byte) { slotKeys = append(slotKeys, string(key)) })
	if err := d.End(); err != nil {
		return fmt.Errorf("session window aggregate: restore: %w", err)
	}
	keys := make([]string, len(all))
	for i, s := range all {
		if s.id < 0 || int(s.id) >= len(slotKeys) {
			return fmt.Errorf("session window aggregate: restore: slot %d of %d", s.id, g.st.Slots)
		}
		keys[i] = slotKeys[s.id]
	}
	g.set.restore(seq, all, keys)
	return nil
}

var (
	_ operator.Operator      = (*SessionAgg)(nil)
	_ operator.Counters      = (*SessionAgg)(nil)
	_ operator.InputReleaser = (*SessionAgg)(nil)
	_ operator.Snapshotter   = (*SessionAgg)(nil)
	_ operator.StateSizer    = (*SessionAgg)(nil)
)
