package windowop

import (
	"bytes"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// SessionTable is the SESSION window TVF read as a table, as under a
// window Top-N or window deduplication: SELECT ... FROM TABLE(SESSION(TABLE
// t PARTITION BY k, DESCRIPTOR(ts), gap)). A row's session is known only
// once no later row can extend it, so each row waits in its key's session
// (sessions merge as SessionAgg's do) until the watermark reaches the
// session's end; then the session's rows are emitted (in arrival order
// within each of the sessions that merged into it, those one after the
// other), each with window_start, window_end and window_time appended,
// and its state is freed. A row whose session has already ended by the
// watermark is late: dropped and counted. In batch execution every
// session is emitted at the end of input. Insert-only in and out.
type SessionTable struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	spec              WindowTable
	wm                int64
	timeID            row.TypeID
	set               sessionSet
	Held              [][]row.Row // each session's rows, by its id; optest's retention test reads them
	free              []int32     // ids of fired or merged sessions, to reuse
	rows              int64
	width             int
	kbuf              []byte
	dropped           int64
	nullTimes
}

// NewSessionTable builds the operator for spec, whose Spec.Kind is
// Session; Keys are the PARTITION BY columns. Another kind or an invalid
// spec is an error.
func NewSessionTable(spec WindowTable) (*SessionTable, error) {
	if spec.Spec.Kind != Session {
		return nil, fmt.Errorf("session table: window %s is not SESSION", spec.Spec.Kind)
	}
	if err := spec.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("session table: %w", err)
	}
	t := &SessionTable{spec: spec, wm: operator.NoWatermark, set: newSessionSet(spec.Spec.Gap)}
	t.width = spec.Spec.TimeCol + 1
	for _, k := range spec.Keys {
		t.width = max(t.width, k+1)
	}
	return t, nil
}

// Dropped counts late rows and those without an event time.
func (t *SessionTable) Dropped() (int64, string) { return t.droppedWith(t.dropped) }

// StateEntries implements StateSizer: the rows held.
func (t *SessionTable) StateEntries() int64 { return t.rows }

func (t *SessionTable) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("session table", in, out, func(_ int, c *row.Change) error {
		return t.add(c.Kind, c.Row)
	})
}

func (t *SessionTable) add(k row.Kind, r row.Row) error {
	ts, err := eventTime(k, r, t.width, t.spec.Spec.TimeCol, &t.timeID)
	if t.skipNull(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.zoned() {
		ts = row.WallMicros(t.spec.Zone, ts)
	}
	t.kbuf = row.KeyOf(t.kbuf[:0], r, t.spec.Keys)
	wm := t.wm
	if t.spec.Batch {
		wm = operator.NoWatermark
	}
	s := t.set.add(t.kbuf, ts, wm, t)
	if s == nil {
		t.dropped++
		return nil
	}
	t.Held[s.id] = append(t.Held[s.id], row.Detach(r)) // kept: must not pin its batch
	t.rows++
	return nil
}

// newState returns a free id, its rows empty.
func (t *SessionTable) newState([]byte) int32 {
	if n := len(t.free); n > 0 {
		id := t.free[n-1]
		t.free = t.free[:n-1]
		return id
	}
	t.Held = append(t.Held, nil)
	return int32(len(t.Held) - 1)
}

// mergeState appends the rows of session from to those of into.
func (t *SessionTable) mergeState(into, from int32) {
	t.Held[into] = append(t.Held[into], t.Held[from]...)
	t.release(from)
}

func (t *SessionTable) release(id int32) {
	clear(t.Held[id])
	t.Held[id] = t.Held[id][:0]
	t.free = append(t.free, id)
}

// Watermark emits every session whose end the watermark has reached.
func (t *SessionTable) Watermark(wm int64, out operator.Emitter) error {
	if wm <= t.wm || (t.spec.Batch && wm != operator.MaxWatermark) {
		return nil
	}
	t.wm = wm
	return t.fire(out)
}

// Finish emits what is left.
func (t *SessionTable) Finish(out operator.Emitter) error {
	t.wm = operator.MaxWatermark
	return t.fire(out)
}

// zoned says whether sessions are on the Zone's wall clock (as
// SessionAgg.zoned), and then tells the set so.
func (t *SessionTable) zoned() bool {
	if t.spec.Zone == nil || t.timeID != row.TimestampLTZ {
		return false
	}
	t.set.zone = t.spec.Zone
	return true
}

func (t *SessionTable) fire(out operator.Emitter) error {
	t.zoned()
	return t.set.fire(t.wm, func(s *session) error {
		// In a Zone the sessions are on its wall clock already.
		ws, we, wt := row.TimestampValue(s.start), row.TimestampValue(s.end), row.TimestampValue(s.end-1000)
		if t.timeID == row.TimestampLTZ {
			wt = row.TimestampLTZValue(windowTimeLTZ(t.set.zone, s.end, s.end))
		}
		for _, r := range t.Held[s.id] {
			o := make(row.Row, len(r), len(r)+3)
			copy(o, r)
			out.Emit(row.Insert, append(o, ws, we, wt))
		}
		t.rows -= int64(len(t.Held[s.id]))
		t.release(s.id)
		return nil
	})
}

const sessionTableStateVersion = 1

// Snapshot encodes the open sessions: a version byte, the watermark, the
// time attribute's type, the late count, the next sequence number, then
// each open session in sequence order: start, end, sequence, key and its
// rows.
func (t *SessionTable) Snapshot() ([]byte, error) {
	var b bytes.Buffer
	err := t.SnapshotTo(&b)
	return b.Bytes(), err
}

// Restore replaces the operator's state with a snapshot's.
func (t *SessionTable) Restore(state []byte) error { return t.restore(row.NewDecoder(state)) }

// restore reads a snapshot from d, the bytes of one or a stream of them.
func (t *SessionTable) restore(d *row.Decoder) error {
	t.Widen(d)
	var err error
	if t.wm, t.timeID, t.dropped, err = aggop.ReadClock(d, sessionTableStateVersion, "session table"); err != nil {
		return err
	}
	seq := d.Uvarint()
	t.Held, t.free, t.rows = nil, nil, 0
	all := make([]*session, d.Count(5))
	keys := make([]string, len(all))
	for i := range all {
		s := &session{start: d.Varint(), end: d.Varint(), seq: d.Uvarint()}
		keys[i] = d.KeyStr()
		s.id = t.newState(nil)
		rows := make([]row.Row, d.Count(1))
		for i := range rows {
			rows[i] = d.Row()
		}
		t.Held[s.id] = rows
		t.rows += int64(len(rows))
		all[i] = s
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("session table: restore: %w", err)
	}
	t.set.restore(seq, all, keys)
	return nil
}

var (
	_ operator.Operator    = (*SessionTable)(nil)
	_ operator.Counters    = (*SessionTable)(nil)
	_ operator.Snapshotter = (*SessionTable)(nil)
	_ operator.StateSizer  = (*SessionTable)(nil)
)
