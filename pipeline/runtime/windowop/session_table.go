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
	spec    WindowTable
	wm      int64
	timeID  row.TypeID
	open    map[string][]*session
	timers  state.Heap[sessionTimer]
	seq     uint64
	Held    [][]row.Row // by session id
	keyOf   []string    // by session id
	free    []int32     // ids of fired or merged sessions, to reuse
	live    int
	rows    int64
	width   int
	kbuf    []byte
	dropped int64
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
	t := &SessionTable{spec: spec, wm: operator.NoWatermark, open: map[string][]*session{}, timers: newSessionTimers()}
	t.width = spec.Spec.TimeCol + 1
	for _, k := range spec.Keys {
		t.width = max(t.width, k+1)
	}
	return t, nil
}

// Dropped counts late rows.
func (t *SessionTable) Dropped() (int64, string) { return t.dropped, "late" }

// StateEntries implements StateSizer: the rows held.
func (t *SessionTable) StateEntries() int64 { return t.rows }

func (t *SessionTable) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("session table", in, out, func(_ int, c *row.Change) error {
		return t.add(c.Kind, c.Row)
	})
}

func (t *SessionTable) add(k row.Kind, r row.Row) error {
	ts, err := eventTime(k, r, t.width, t.spec.Spec.TimeCol, &t.timeID)
	if err != nil {
		return err
	}
	t.kbuf = row.KeyOf(t.kbuf[:0], r, t.spec.Keys)
	wm := t.wm
	if t.spec.Batch {
		wm = operator.NoWatermark
	}
	start, end := ts, ts+t.spec.Spec.Gap
	ss := t.open[string(t.kbuf)]
	// The sessions [i, j) overlap or touch [start, end), as in SessionAgg.
	i, _ := slices.BinarySearchFunc(ss, start, func(s *session, at int64) int { return cmp.Compare(s.end, at) })
	j := i
	for j < len(ss) && ss[j].start <= end {
		j++
	}
	t.rows++
	if i == j {
		if end <= wm {
			t.rows--
			t.dropped++
			return nil
		}
		key := string(t.kbuf)
		s := &session{start: start, end: end, id: t.alloc(key), seq: t.seq}
		t.seq++
		t.live++
		t.open[key] = slices.Insert(ss, i, s)
		t.timers.Push(sessionTimer{end: end, s: s})
		t.Held[s.id] = append(t.Held[s.id], row.Detach(r)) // kept: must not pin its batch
		return nil
	}
	// Merge into the earliest session; the rows of the later ones follow
	// its own.
	s := ss[i]
	for _, o := range ss[i+1 : j] {
		t.Held[s.id] = append(t.Held[s.id], t.Held[o.id]...)
		t.release(o.id)
		o.dead = true
		t.live--
	}
	s.start = min(s.start, start)
	s.end = max(ss[j-1].end, end)
	if j-i > 1 {
		t.open[string(t.kbuf)] = slices.Delete(ss, i+1, j)
	}
	t.Held[s.id] = append(t.Held[s.id], row.Detach(r)) // kept: must not pin its batch
	return nil
}

func (t *SessionTable) alloc(key string) int32 {
	if n := len(t.free); n > 0 {
		id := t.free[n-1]
		t.free = t.free[:n-1]
		t.keyOf[id] = key
		return id
	}
	t.Held = append(t.Held, nil)
	t.keyOf = append(t.keyOf, key)
	return int32(len(t.Held) - 1)
}

func (t *SessionTable) release(id int32) {
	clear(t.Held[id])
	t.Held[id] = t.Held[id][:0]
	t.keyOf[id] = ""
	t.free = append(t.free, id)
}

// Watermark emits every session whose end the watermark has reached.
func (t *SessionTable) Watermark(wm int64, out operator.Emitter) error {
	if wm <= t.wm || (t.spec.Batch && wm != operator.MaxWatermark) {
		return nil
	}
	t.wm = wm
	t.fire(out)
	return nil
}

// Finish emits what is left.
func (t *SessionTable) Finish(out operator.Emitter) error {
	t.wm = operator.MaxWatermark
	t.fire(out)
	return nil
}

func (t *SessionTable) fire(out operator.Emitter) {
	for t.timers.Len() > 0 && t.timers.Top().end <= t.wm {
		tm := t.timers.Pop()
		s := tm.s
		if s.dead {
			continue
		}
		if s.end != tm.end {
			t.timers.Push(sessionTimer{end: s.end, s: s})
			continue
		}
		ws, we, wt := row.TimestampValue(s.start), row.TimestampValue(s.end), row.TimestampValue(s.end-1000)
		if t.timeID == row.TimestampLTZ {
			wt = row.TimestampLTZValue(s.end - 1000)
		}
		for _, r := range t.Held[s.id] {
			o := make(row.Row, len(r), len(r)+3)
			copy(o, r)
			out.Emit(row.Insert, append(o, ws, we, wt))
		}
		t.rows -= int64(len(t.Held[s.id]))
		key := t.keyOf[s.id]
		ss := t.open[key]
		if i := slices.Index(ss, s); i >= 0 {
			ss = slices.Delete(ss, i, i+1)
		}
		if len(ss) == 0 {
			delete(t.open, key)
		} else {
			t.open[key] = ss
		}
		t.release(s.id)
		s.dead = true
		t.live--
	}
}

const sessionTableStateVersion = 1

// Snapshot encodes the open sessions: a version byte, the watermark, the
// time attribute's type, the late count, the next sequence number, then
// each open session in sequence order: start, end, sequence, key and its
// rows.
func (t *SessionTable) Snapshot() ([]byte, error) {
	buf := aggop.AppendClock(sessionTableStateVersion, t.wm, t.timeID, t.dropped)
	buf = binary.AppendUvarint(buf, t.seq)
	all := make([]*session, 0, t.live)
	for _, ss := range t.open {
		all = append(all, ss...)
	}
	slices.SortFunc(all, func(a, b *session) int { return cmp.Compare(a.seq, b.seq) })
	buf = binary.AppendUvarint(buf, uint64(len(all)))
	for _, s := range all {
		buf = binary.AppendVarint(buf, s.start)
		buf = binary.AppendVarint(buf, s.end)
		buf = binary.AppendUvarint(buf, s.seq)
		buf = row.AppendString(buf, t.keyOf[s.id])
		rows := t.Held[s.id]
		buf = binary.AppendUvarint(buf, uint64(len(rows)))
		for _, r := range rows {
			buf = row.AppendRow(buf, r)
		}
	}
	return buf, nil
}

// Restore replaces the operator's state with a snapshot's.
func (t *SessionTable) Restore(state []byte) error {
	d := row.NewDecoder(state)
	var err error
	if t.wm, t.timeID, t.dropped, err = aggop.ReadClock(d, sessionTableStateVersion, "session table"); err != nil {
		return err
	}
	t.seq = d.Uvarint()
	t.open, t.Held, t.keyOf, t.free, t.rows = map[string][]*session{}, nil, nil, nil, 0
	n := d.Count(5)
	timers := make([]sessionTimer, 0, n)
	for range n {
		s := &session{start: d.Varint(), end: d.Varint(), seq: d.Uvarint()}
		key := d.Str()
		s.id = t.alloc(key)
		rows := make([]row.Row, d.Count(1))
		for i := range rows {
			rows[i] = d.Row()
		}
		t.Held[s.id] = rows
		t.rows += int64(len(rows))
		t.open[key] = append(t.open[key], s)
		timers = append(timers, sessionTimer{end: s.end, s: s})
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("session table: restore: %w", err)
	}
	for _, ss := range t.open {
		slices.SortFunc(ss, func(a, b *session) int { return cmp.Compare(a.start, b.start) })
	}
	t.timers.Fill(timers)
	t.live = n
	return nil
}

var (
	_ operator.Operator    = (*SessionTable)(nil)
	_ operator.Counters    = (*SessionTable)(nil)
	_ operator.Snapshotter = (*SessionTable)(nil)
	_ operator.StateSizer  = (*SessionTable)(nil)
)
