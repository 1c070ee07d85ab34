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

// Unbounded is OverSpec.Preceding for UNBOUNDED PRECEDING.
const Unbounded int64 = -1

// LagCall is LAG(x, offset, default): the value of column Arg Offset rows
// before the current row of its partition (in event-time order, rows of
// equal time in arrival order), or column Default of the current row when
// there is no such row (-1: NULL). The frame does not matter to it.
type LagCall struct {
	Arg, Offset, Default int
}

// OverSpec is an OVER aggregate's window: PARTITION BY Keys ORDER BY the
// event time in column TimeCol, with a frame ending at the current row
// and starting Preceding rows (Rows) or microseconds (RANGE) before it,
// or at the partition's first row (Unbounded).
type OverSpec struct {
	Keys      []int
	TimeCol   int
	Rows      bool
	Preceding int64
	Aggs      []aggop.AggCall
	Lags      []LagCall
}

// String is Flink's description of the frame, for errors and tests.
func (s OverSpec) String() string {
	unit, start := "RANGE", "UNBOUNDED"
	if s.Rows {
		unit = "ROWS"
	}
	switch {
	case s.Preceding == Unbounded:
	case s.Rows:
		start = fmt.Sprint(s.Preceding)
	default:
		start = micros(s.Preceding).String()
	}
	return fmt.Sprintf("%s BETWEEN %s PRECEDING AND CURRENT ROW", unit, start)
}

// overPart is one partition's state: its aggregate slot, the rows of its
// frame that a sliding frame retracts later (oldest first), and its last
// rows for LAG (oldest first).
type overPart struct {
	id    int32
	frame rowRing
	hist  rowRing
	// waiting counts its rows in the queue: a partition with rows still
	// to emit does not expire (see over_ttl.go).
	waiting int
}

// rowRing is a FIFO of rows in a ring that grows when full: a sliding
// frame costs no allocation per row once it has its size.
type rowRing struct {
	buf     []row.Row
	head, n int
}

func (q *rowRing) push(r row.Row) {
	if q.n == len(q.buf) {
		grown := make([]row.Row, max(4, 2*len(q.buf)))
		for i := range q.n {
			grown[i] = q.at(i)
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = row.Detach(r) // kept: must not pin its batch (row.Detach)
	q.n++
}

// at is the i-th row, the oldest first.
func (q *rowRing) at(i int) row.Row { return q.buf[(q.head+i)%len(q.buf)] }

func (q *rowRing) pop() {
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
}

// overRow is an input row waiting for the watermark to pass its time.
type overRow struct {
	p *overPart
	r row.Row
}

// overWait is a waiting row's place in the queue: its time, its arrival
// and its slot in OverAgg.held. It holds no pointer: the queue, on the
// path of every row, moves 24 bytes a swap and no write barrier.
type overWait struct {
	ts   int64
	seq  uint64
	slot int32
}

// before orders waiting rows by time, then arrival.
func (x *overWait) before(y *overWait) bool {
	return x.ts < y.ts || x.ts == y.ts && x.seq < y.seq
}

// OverAgg is an event-time OVER aggregate (Flink's RowTimeRowsBounded-
// PrecedingFunction, RowTimeRangeBoundedPrecedingFunction and their
// unbounded kin). Input rows wait until the watermark passes their event
// time; then, in event-time order, each row is emitted once (+I) with its
// input columns followed by the aggregate results over its frame, then the
// LAG values. In a ROWS frame rows of equal time are ordered by arrival,
// each seeing those before it; in a RANGE frame they are peers: every one
// of them sees all of them. A row that arrives behind the watermark is
// late: dropped and counted (Dropped, "late").
type OverAgg struct {
	operator.Late // reports the rows dropped as late (late_rows)
	spec          OverSpec
	opt           WindowOptions
	st            *aggop.Store
	width         int
	maxLag        int
	wm            int64
	timeID        row.TypeID
	parts         map[string]*overPart
	queue         state.Heap[overWait]
	held          []overRow // the waiting rows, by slot
	vacant        []int32   // slots of held to reuse
	seq           uint64
	ready         []overRow
	kbuf          []byte
	arena         aggop.RowArena
	dropped       int64
	ttl           state.TTLKeys[string] // partitions' last writes (over_ttl.go)
	operator.Expiry
}

// NewOverAgg builds the operator; an invalid spec or call is an error.
func NewOverAgg(s OverSpec, opt WindowOptions) (*OverAgg, error) {
	width, err := aggop.InputWidth(s.Keys, s.Aggs)
	if err != nil {
		return nil, fmt.Errorf("over aggregate: %w", err)
	}
	g := &OverAgg{
		spec:  s,
		opt:   opt,
		width: max(width, s.TimeCol+1),
		wm:    operator.NoWatermark,
		parts: map[string]*overPart{},
		queue: state.NewHeap((*overWait).before),
	}
	for _, l := range s.Lags {
		if l.Offset < 0 || l.Arg < 0 {
			return nil, fmt.Errorf("over aggregate: LAG($%d, %d): bad argument or offset", l.Arg, l.Offset)
		}
		g.width = max(g.width, l.Arg+1, l.Default+1)
		g.maxLag = max(g.maxLag, l.Offset)
	}
	if s.TimeCol < 0 || s.Preceding < Unbounded || s.Preceding >= maxEventTime/4 {
		return nil, fmt.Errorf("over aggregate: bad window: time column %d, %s", s.TimeCol, s)
	}
	g.st = aggop.NewStore(s.Aggs, s.Preceding == Unbounded, true)
	g.InitExpiry(g.ttl.Set, g.ttl.Tick, g.sweep)
	return g, nil
}

// Dropped counts late rows.
func (g *OverAgg) Dropped() (int64, string) { return g.dropped, "late" }

// StateEntries implements StateSizer: the partitions seen and the rows
// waiting for the watermark.
func (g *OverAgg) StateEntries() int64 { return int64(len(g.parts) + g.queue.Len()) }

func (g *OverAgg) Process(in *row.Batch, out operator.Emitter) error {
	defer g.Begin(len(in.Changes))()
	return operator.EachChange("over aggregate", in, out, func(i int, c *row.Change) error {
		g.At(i)
		return g.add(c.Kind, c.Row)
	})
}

func (g *OverAgg) add(k row.Kind, r row.Row) error {
	ts, err := eventTime(k, r, g.width, g.spec.TimeCol, &g.timeID)
	if err != nil {
		return err
	}
	if err := g.st.Check(r); err != nil {
		return err
	}
	g.kbuf = row.KeyOf(g.kbuf[:0], r, g.spec.Keys)
	p := g.parts[string(g.kbuf)]
	if p != nil && g.expire(p) {
		p = nil
	}
	if !g.opt.Batch && g.late(p, ts) {
		g.dropped++
		g.Drop()
		return nil
	}
	if p == nil {
		key := string(g.kbuf)
		p = &overPart{id: g.st.Alloc(key)}
		g.parts[key] = p
	}
	g.queue.Push(overWait{ts: ts, seq: g.seq, slot: g.hold(overRow{p: p, r: r})})
	g.seq++
	p.waiting++
	if g.ttl.On() {
		g.ttl.Touch(string(g.kbuf))
	}
	return nil
}

// late reports whether a row of partition p (nil: none yet) at time ts
// comes too late, as Flink decides: with an unbounded frame when ts is
// at or below the watermark (AbstractRowTimeUnboundedPrecedingOver);
// with a bounded one when ts is at or below the time of the partition's
// last emitted row, 0 before the first (lastTriggeringTs of
// RowTimeRowsBoundedPrecedingFunction and RowTimeRangeBoundedPreceding-
// Function), so a row behind the watermark still counts in a partition
// that has not emitted up to it. A bounded frame keeps the partition's
// last emitted row last, so its time needs no state of its own.
func (g *OverAgg) late(p *overPart, ts int64) bool {
	if g.spec.Preceding == Unbounded {
		return ts <= g.wm
	}
	last := int64(0)
	if p != nil && p.frame.n > 0 {
		last = p.frame.at(p.frame.n - 1)[g.spec.TimeCol].Micros()
	}
	return ts <= last
}

// Watermark emits, in event-time order, every waiting row whose time is
// at or below the watermark: no row of that time can arrive any more.
func (g *OverAgg) Watermark(wm int64, out operator.Emitter) error {
	if wm <= g.wm || (g.opt.Batch && wm != operator.MaxWatermark) {
		return nil
	}
	g.wm = wm
	return g.emitBelow(wm, out)
}

// Finish emits what is left (see WindowAgg.Finish).
func (g *OverAgg) Finish(out operator.Emitter) error {
	g.wm = operator.MaxWatermark
	return g.emitBelow(operator.MaxWatermark, out)
}

func (g *OverAgg) emitBelow(wm int64, out operator.Emitter) error {
	for g.queue.Len() > 0 && (g.queue.Top().ts <= wm || wm == operator.MaxWatermark) {
		// The rows of one time, all partitions, in arrival order.
		ts := g.queue.Top().ts
		g.ready = g.ready[:0]
		for g.queue.Len() > 0 && g.queue.Top().ts == ts {
			x := g.take(g.queue.Pop().slot)
			x.p.waiting--
			g.ready = append(g.ready, x)
		}
		if err := g.step(ts, g.ready, out); err != nil {
			return err
		}
	}
	clear(g.ready)
	return nil
}

// hold keeps a waiting row and returns its slot.
func (g *OverAgg) hold(x overRow) int32 {
	if n := len(g.vacant); n > 0 {
		slot := g.vacant[n-1]
		g.vacant = g.vacant[:n-1]
		g.held[slot] = x
		return slot
	}
	g.held = append(g.held, x)
	return int32(len(g.held) - 1)
}

// take returns the row waiting in slot and frees the slot.
func (g *OverAgg) take(slot int32) overRow {
	x := g.held[slot]
	g.held[slot] = overRow{} // no reference kept past the row's wait
	g.vacant = append(g.vacant, slot)
	return x
}

// step applies the rows of time ts to their partitions and emits them.
func (g *OverAgg) step(ts int64, rows []overRow, out operator.Emitter) error {
	s := &g.spec
	if s.Rows {
		for _, x := range rows {
			g.accumulate(x.p, x.r)
			if s.Preceding != Unbounded && int64(x.p.frame.n) > s.Preceding+1 {
				g.st.Update(x.p.id, x.p.frame.at(0), false)
				x.p.frame.pop()
			}
			if err := g.emit(x.p, x.r, out); err != nil {
				return err
			}
			g.remember(x.p, x.r)
		}
		return nil
	}
	// RANGE: retract what fell out of each partition's frame, add all the
	// peers, then emit each with the same results.
	for i, x := range rows {
		if s.Preceding != Unbounded && !seenBefore(rows[:i], x.p) {
			limit := ts - s.Preceding
			for x.p.frame.n > 0 && x.p.frame.at(0)[s.TimeCol].Micros() < limit {
				g.st.Update(x.p.id, x.p.frame.at(0), false)
				x.p.frame.pop()
			}
		}
		g.accumulate(x.p, x.r)
	}
	for _, x := range rows {
		if err := g.emit(x.p, x.r, out); err != nil {
			return err
		}
		g.remember(x.p, x.r)
	}
	return nil
}

func seenBefore(rows []overRow, p *overPart) bool {
	for _, x := range rows {
		if x.p == p {
			return true
		}
	}
	return false
}

func (g *OverAgg) accumulate(p *overPart, r row.Row) {
	g.st.Update(p.id, r, true)
	if g.spec.Preceding != Unbounded {
		if p.frame.buf == nil && g.spec.Rows {
			// n PRECEDING holds n+1 rows, and one more between push and pop.
			p.frame.buf = make([]row.Row, min(g.spec.Preceding+2, 1024))
		}
		p.frame.push(r)
	}
}

// remember keeps r for LAG.
func (g *OverAgg) remember(p *overPart, r row.Row) {
	if g.maxLag == 0 {
		return
	}
	p.hist.push(r)
	if p.hist.n > g.maxLag {
		p.hist.pop()
	}
}

func (g *OverAgg) emit(p *overPart, r row.Row, out operator.Emitter) error {
	n, na := len(r), len(g.spec.Aggs)
	o := g.arena.Row(n + na + len(g.spec.Lags))
	copy(o, r)
	g.st.Results(p.id, o[n:n+na])
	for i, l := range g.spec.Lags {
		v := row.NullValue
		if l.Default >= 0 {
			v = r[l.Default]
		}
		if h := p.hist.n - l.Offset; l.Offset == 0 {
			v = r[l.Arg]
		} else if h >= 0 {
			v = p.hist.at(h)[l.Arg]
		}
		o[n+na+i] = v
	}
	out.Emit(row.Insert, o)
	return nil
}

const overStateVersion = 1

// Snapshot encodes the watermark, the time attribute's type, the late
// count, the next sequence number, each partition (its slot, its frame's
// and LAG's rows), the rows waiting for the watermark (sequence,
// partition slot, row) in their order, then the aggregate store, which
// keeps each partition's key.
func (g *OverAgg) Snapshot() ([]byte, error) {
	v := byte(overStateVersion)
	if g.ttl.On() {
		v = overTTLStateVersion
	}
	buf := aggop.AppendClock(v, g.wm, g.timeID, g.dropped)
	buf = binary.AppendUvarint(buf, g.seq)
	parts := make([]*overPart, 0, len(g.parts))
	for _, p := range g.parts {
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *overPart) int { return cmp.Compare(a.id, b.id) })
	appendRows := func(buf []byte, q *rowRing) []byte {
		buf = binary.AppendUvarint(buf, uint64(q.n))
		for i := range q.n {
			buf = row.AppendRow(buf, q.at(i))
		}
		return buf
	}
	buf = binary.AppendUvarint(buf, uint64(len(parts)))
	for _, p := range parts {
		buf = binary.AppendUvarint(buf, uint64(p.id))
		buf = appendRows(buf, &p.frame)
		buf = appendRows(buf, &p.hist)
	}
	queue := slices.Clone(g.queue.Items())
	slices.SortFunc(queue, func(a, b overWait) int { return cmp.Compare(a.seq, b.seq) })
	buf = binary.AppendUvarint(buf, uint64(len(queue)))
	for _, w := range queue {
		x := &g.held[w.slot]
		buf = binary.AppendUvarint(buf, w.seq)
		buf = binary.AppendUvarint(buf, uint64(x.p.id))
		buf = row.AppendRow(buf, x.r)
	}
	return g.appendTTL(g.st.AppendState(buf, nil)), nil
}

// Restore replaces the operator's state with a snapshot's.
func (g *OverAgg) Restore(snap []byte) error {
	d := row.NewDecoder(snap)
	v, err := overVersion(snap)
	if err != nil {
		return err
	}
	if g.wm, g.timeID, g.dropped, err = aggop.ReadClock(d, v, "over aggregate"); err != nil {
		return err
	}
	g.seq = d.Uvarint()
	readRows := func() rowRing {
		var q rowRing
		for range d.Count(1) {
			q.push(d.Row())
		}
		return q
	}
	slotID := func() int32 { return int32(min(d.Uvarint(), 1<<31-1)) }
	byID := map[int32]*overPart{}
	for range d.Count(3) {
		p := &overPart{id: slotID()}
		p.frame, p.hist = readRows(), readRows()
		byID[p.id] = p
	}
	type waiting struct {
		seq uint64
		id  int32
		r   row.Row
	}
	queue := make([]waiting, d.Count(3))
	for i := range queue {
		queue[i] = waiting{seq: d.Uvarint(), id: slotID(), r: d.Row()}
	}
	g.st.RestoreState(d)
	g.readTTL(d, v == overTTLStateVersion)
	if err := d.End(); err != nil {
		return fmt.Errorf("over aggregate: restore: %w", err)
	}
	g.parts = make(map[string]*overPart, len(byID))
	for id, p := range byID {
		if id < 0 || id >= g.st.Slots {
			return fmt.Errorf("over aggregate: restore: slot %d of %d", id, g.st.Slots)
		}
		g.parts[g.st.Keys[id]] = p
	}
	g.held, g.vacant = make([]overRow, 0, len(queue)), nil
	waits := make([]overWait, 0, len(queue))
	for _, w := range queue {
		p := byID[w.id]
		if p == nil || len(w.r) <= g.spec.TimeCol {
			return fmt.Errorf("over aggregate: restore: waiting row of unknown partition %d", w.id)
		}
		waits = append(waits, overWait{ts: w.r[g.spec.TimeCol].Micros(), seq: w.seq, slot: g.hold(overRow{p: p, r: w.r})})
		p.waiting++
	}
	g.queue.Fill(waits)
	return g.touchRestored()
}

var (
	_ operator.Operator    = (*OverAgg)(nil)
	_ operator.Counters    = (*OverAgg)(nil)
	_ operator.Snapshotter = (*OverAgg)(nil)
	_ operator.StateSizer  = (*OverAgg)(nil)
)
