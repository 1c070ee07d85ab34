package windowop

import (
	"fmt"
	"math"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Unbounded is OverSpec.Preceding for UNBOUNDED PRECEDING.
const Unbounded int64 = -1

// OverSpec is an OVER aggregate's window: PARTITION BY Keys ORDER BY the
// event time in column TimeCol (or, ProcTime, the processing time there),
// with a frame ending at the current row and starting Preceding rows
// (Rows) or microseconds (RANGE) before it, or at the partition's first
// row (Unbounded). Funcs are the window's LAG, LEAD, ROW_NUMBER, RANK and
// DENSE_RANK (over_fn.go), whose results follow the aggregates'.
type OverSpec struct {
	Keys      []int
	TimeCol   int
	ProcTime  bool
	Rows      bool
	Preceding int64
	Aggs      []aggop.AggCall
	Funcs     []RowFunc
	// Output, when set, are the columns of that row (the input's, then
	// the results) to emit instead of the whole row: the pick of a Calc
	// over the OVER that only picks columns, run here so that a row is
	// built once, of the columns read.
	Output []int
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
// rows for LAG (oldest first). What every row reads comes first, in as
// few cache lines as it fits (over many partitions each is a miss): the
// slot, the waiting count, the queues and the frame.
type overPart struct {
	id int32
	// waiting counts its rows in the queue: a partition with rows still
	// to emit does not expire (see over_ttl.go).
	waiting int
	// ext are its MIN and MAX queues of a sliding frame, pushed and
	// popped its frame rows so far (over_extreme.go).
	pushed, popped int64
	ext            []extQueue
	frame          frameRing
	hist           rowRing
	// rows counts its rows so far and times their distinct times
	// (ROW_NUMBER, RANK, DENSE_RANK); group is the last step that saw
	// it, start its row count before that step and last the index of its
	// last row in that step (over_fn.go).
	rows, times int64
	group       uint64
	start       int64
	last        int
	// lastTrig, cleanupAt and cleanupSet are Flink's lastTriggeringTs
	// and cleanupTsState of a bounded RANGE frame (over_cleanup.go).
	lastTrig   int64
	cleanupAt  int64
	cleanupSet bool
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

func (q *rowRing) len() int { return q.n }

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

// OverAgg is an OVER aggregate (Flink's RowTimeRowsBoundedPrecedingFunction,
// RowTimeRangeBoundedPrecedingFunction, their unbounded kin and their
// ProcTime counterparts). Ordered by event time, input rows wait until
// the watermark reaches their time; then, in event-time order, each row
// is emitted once (+I) with its input columns followed by the aggregate
// results over its frame, then the row functions' (Funcs). In a ROWS
// frame rows of equal time are ordered by arrival, each seeing those
// before it; in a RANGE frame they are peers: every one of them sees all
// of them. A row whose time is at or behind the watermark is late:
// dropped and counted (Dropped, "late"), as Flink drops it. Ordered by
// processing time, rows are emitted as they arrive (over_fn.go).
type OverAgg struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	operator.Late     // reports the rows dropped as late (late_rows)
	spec              OverSpec
	opt               WindowOptions
	st                *aggop.Store
	width             int
	maxLag            int
	group             uint64      // steps so far, to find a partition's first row in one
	fnv               []row.Value // the row functions' results of a step, a row after another
	leads             []row.Value // LEAD's results of a batch run, by row (over_fn.go)
	wm                int64
	timeID            row.TypeID
	parts             map[string]*overPart
	queue             state.RunHeap[overWait] // rows come mostly in time order
	held              []overRow               // the waiting rows, by slot
	vacant            []int32                 // slots of held to reuse
	seq               uint64
	ready             []overRow
	kbuf              []byte
	arena             aggop.RowArena
	dropped           int64
	nullTimes
	ttl state.TTLKeys[string] // partitions' last writes (over_ttl.go)
	operator.Expiry
	cleanups state.Heap[overCleanup] // bounded RANGE frame's timers (over_cleanup.go)
	// ext are the MIN and MAX calls kept in queues, rest the store's
	// calls' indices among the spec's, scratch their results
	// (over_extreme.go); nil unless the frame slides (bounded).
	ext     []overExt
	rest    []int
	scratch []row.Value
	res     []row.Value // a row's results, when Output picks among them
	// direct: a batch run over input sorted by time (WindowOptions.Sorted,
	// no LEAD) steps each batch's rows as they come (over_sorted.go);
	// lastTime is the time of the last row stepped so.
	direct   bool
	lastTime int64
	// frameKept are the columns a frame row keeps, ascending: the
	// aggregates' arguments and filters and the time (the rest of it no
	// one reads again); frameTime is the time's index among them, and
	// frameWide a row of the input's columns up to the last kept, the
	// others NULL, that a retracted frame row is spread into for the
	// store (which reads arguments by their input column).
	frameKept []int
	frameTime int
	frameWide row.Row
}

// NewOverAgg builds the operator; an invalid spec or call is an error.
func NewOverAgg(s OverSpec, opt WindowOptions) (*OverAgg, error) {
	return newOverAgg(s, opt, true)
}

// newOverAgg is NewOverAgg; queues false keeps a sliding frame's MIN and
// MAX in the store, the general path the queues must agree with (tests).
func newOverAgg(s OverSpec, opt WindowOptions, queues bool) (*OverAgg, error) {
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
		queue: state.NewRunHeap((*overWait).before),
	}
	g.cleanups = state.NewHeap((*overCleanup).before)
	if err := g.checkFuncs(); err != nil {
		return nil, err
	}
	g.direct = opt.Batch && opt.Sorted && !s.ProcTime && !g.hasLead()
	g.lastTime = math.MinInt64
	if s.TimeCol < 0 || s.Preceding < Unbounded || s.Preceding >= maxEventTime/4 {
		return nil, fmt.Errorf("over aggregate: bad window: time column %d, %s", s.TimeCol, s)
	}
	aggs := s.Aggs
	if queues && s.Preceding != Unbounded {
		aggs, g.ext, g.rest = splitExtremes(s.Aggs)
		if g.ext == nil {
			g.rest = nil
		}
		g.scratch = make([]row.Value, len(aggs))
	}
	g.st = aggop.NewStore(aggs, s.Preceding == Unbounded, true)
	var keep []bool
	mark := func(c int) {
		if c >= 0 {
			keep = append(keep, make([]bool, max(0, c+1-len(keep)))...)
			keep[c] = true
		}
	}
	mark(s.TimeCol)
	for _, a := range s.Aggs {
		mark(a.Arg)
		if a.HasFilter {
			mark(a.Filter)
		}
	}
	index := make([]int, len(keep)) // an input column's index among the kept
	for c, k := range keep {
		if k {
			index[c] = len(g.frameKept)
			g.frameKept = append(g.frameKept, c)
		}
	}
	g.frameTime = index[s.TimeCol]
	g.frameWide = make(row.Row, len(keep))
	for k := range g.ext {
		g.ext[k].kept = index[g.ext[k].arg]
	}
	g.InitExpiry(g.ttl.Set, g.ttl.Tick, g.sweep)
	return g, nil
}

// Dropped counts late rows and those without an event time.
func (g *OverAgg) Dropped() (int64, string) { return g.droppedWith(g.dropped) }

// StateEntries implements StateSizer: the partitions seen and the rows
// waiting for the watermark.
func (g *OverAgg) StateEntries() int64 { return int64(len(g.parts) + g.queue.Len()) }

func (g *OverAgg) Process(in *row.Batch, out operator.Emitter) error {
	defer g.Begin(len(in.Changes))()
	err := operator.EachChange("over aggregate", in, out, func(i int, c *row.Change) error {
		g.At(i)
		return g.add(c.Kind, c.Row)
	})
	if g.arrival() || g.direct {
		if err == nil {
			if g.direct {
				err = g.emitSorted(out)
			} else {
				err = g.emitArrived(out)
			}
		}
		clear(g.ready)
		g.ready = g.ready[:0]
	}
	return err
}

func (g *OverAgg) add(k row.Kind, r row.Row) error {
	ts, err := eventTime(k, r, g.width, g.spec.TimeCol, &g.timeID)
	if g.skipNull(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := g.st.Check(r); err != nil {
		return err
	}
	if g.direct {
		if err := g.inOrder(ts); err != nil {
			return err
		}
	}
	if g.arrival() || g.direct {
		g.ready = append(g.ready, overRow{p: g.partition(r), r: r})
		return nil
	}
	p := g.existing(r)
	if !g.opt.Batch && g.late(p, ts) {
		g.dropped++
		g.Drop()
		return nil
	}
	p = g.ensure(p)
	if g.rangeCleanup() {
		g.registerCleanup(p, ts)
	}
	g.queue.Push(overWait{ts: ts, seq: g.seq, slot: g.hold(overRow{p: p, r: r})})
	g.seq++
	p.waiting++
	return nil
}

// existing finds r's partition, nil when it has none or its state
// expired.
func (g *OverAgg) existing(r row.Row) *overPart {
	g.kbuf = row.KeyOf(g.kbuf[:0], r, g.spec.Keys)
	p := g.parts[string(g.kbuf)]
	if p != nil && g.expire(p) {
		return nil
	}
	return p
}

// partition finds (or starts) r's partition and refreshes its TTL.
func (g *OverAgg) partition(r row.Row) *overPart {
	return g.ensure(g.existing(r))
}

// ensure starts the partition of the key in kbuf when p is nil, and
// refreshes its TTL.
func (g *OverAgg) ensure(p *overPart) *overPart {
	if p == nil {
		key := string(g.kbuf)
		p = &overPart{id: g.st.Alloc(key)}
		g.parts[key] = p
	}
	if g.ttl.On() {
		g.ttl.Touch(string(g.kbuf))
	}
	return p
}

// late reports whether a row of partition p (nil: none yet) at time ts
// comes too late, as Flink decides: with an unbounded frame when ts is
// at or below the watermark (AbstractRowTimeUnboundedPrecedingOver);
// with a bounded one when ts is at or below the time of the partition's
// last emitted row, 0 before the first (lastTriggeringTs of
// RowTimeRowsBoundedPrecedingFunction and RowTimeRangeBoundedPreceding-
// Function), so a row behind the watermark still counts in a partition
// that has not emitted up to it. A RANGE frame's cleanup timers move that
// time too (over_cleanup.go); a ROWS frame keeps the partition's last
// emitted row last, so its time needs no state of its own.
func (g *OverAgg) late(p *overPart, ts int64) bool {
	if g.spec.Preceding == Unbounded {
		return ts <= g.wm
	}
	last := int64(0)
	if g.rangeCleanup() {
		if p != nil {
			last = p.lastTrig
		}
	} else if p != nil && p.frame.n > 0 {
		last = p.frame.kept(p.frame.n - 1)[g.frameTime].Micros()
	}
	return ts <= last
}

// Watermark emits, in event-time order, every waiting row whose time is
// at or below the watermark: no row of that time can arrive any more.
func (g *OverAgg) Watermark(wm int64, out operator.Emitter) error {
	if wm <= g.wm || (g.opt.Batch && !g.opt.Sorted && wm != operator.MaxWatermark) {
		return nil
	}
	g.wm = wm
	if err := g.emitBelow(wm, out); err != nil {
		return err
	}
	if g.rangeCleanup() {
		g.fireCleanups(wm)
	}
	return nil
}

// Finish emits what is left (see WindowAgg.Finish).
func (g *OverAgg) Finish(out operator.Emitter) error {
	g.wm = operator.MaxWatermark
	return g.emitBelow(operator.MaxWatermark, out)
}

func (g *OverAgg) emitBelow(wm int64, out operator.Emitter) error {
	if wm == operator.MaxWatermark && g.hasLead() {
		return g.emitAll(out)
	}
	for g.queue.Len() > 0 && g.queue.Top().ts <= wm {
		// The rows of one time, all partitions, in arrival order.
		ts := g.queue.Top().ts
		g.ready = g.ready[:0]
		for g.queue.Len() > 0 && g.queue.Top().ts == ts {
			x := g.take(g.queue.Pop().slot)
			x.p.waiting--
			g.ready = append(g.ready, x)
		}
		if err := g.step(g.ready, 0, out); err != nil {
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

// step applies rows, all of one time, to their partitions and emits
// them; base is the first one's index in a LEAD run (emitAll).
func (g *OverAgg) step(rows []overRow, base int, out operator.Emitter) error {
	s := &g.spec
	c := operator.CarverOf(out)
	if s.Rows {
		for i, x := range rows {
			g.accumulate(x.p, x.r)
			if s.Preceding != Unbounded && int64(x.p.frame.n) > s.Preceding+1 {
				g.retractOldest(x.p)
			}
			g.funcs(rows[i:i+1], base+i)
			if err := g.emit(x.p, x.r, 0, c, out); err != nil {
				return err
			}
		}
		return nil
	}
	ts := rows[0].r[s.TimeCol].Micros()
	// RANGE: retract what fell out of each partition's frame, add all the
	// peers, then emit each with the same results.
	for i, x := range rows {
		if s.Preceding != Unbounded && !seenBefore(rows[:i], x.p) {
			limit := ts - s.Preceding
			for x.p.frame.n > 0 && x.p.frame.kept(0)[g.frameTime].Micros() < limit {
				g.retractOldest(x.p)
			}
		}
		g.accumulate(x.p, x.r)
	}
	g.funcs(rows, base)
	for i, x := range rows {
		x.p.lastTrig = ts
		if err := g.emit(x.p, x.r, i, c, out); err != nil {
			return err
		}
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
		if p.frame.slots == 0 && g.spec.Rows {
			// n PRECEDING holds n+1 rows, and one more between push and pop.
			p.frame.reserve(int(min(g.spec.Preceding+2, 1024)), g.frameKept)
		}
		p.frame.pushKept(r, g.frameKept)
		if g.ext != nil {
			g.extPush(p, p.frame.kept(p.frame.n-1))
		}
	}
}

// emit sends r with its aggregates' results and the row functions' of
// the step's i-th row, in a row carved from c's memory when it lends it
// (every value written: a carved row's old values are garbage).
func (g *OverAgg) emit(p *overPart, r row.Row, i int, c operator.RowCarver, out operator.Emitter) error {
	n, na, nf := len(r), len(g.spec.Aggs), len(g.spec.Funcs)
	fns := g.fnv[i*nf : (i+1)*nf]
	if pick := g.spec.Output; pick != nil {
		g.res = slices.Grow(g.res[:0], na)[:na]
		g.results(p, g.res)
		o := g.arena.RowFrom(c, len(pick))
		for k, col := range pick {
			switch {
			case col < n:
				o[k] = r[col]
			case col < n+na:
				o[k] = g.res[col-n]
			case col < n+na+nf:
				o[k] = fns[col-n-na]
			default:
				o[k] = row.NullValue
			}
		}
		out.Emit(row.Insert, o)
		return nil
	}
	o := g.arena.RowFrom(c, n+na+nf)
	copy(o, r)
	g.results(p, o[n:n+na])
	copy(o[n+na:], fns)
	out.Emit(row.Insert, o)
	return nil
}

// overStateVersion is the layout Snapshot writes; version 1 (and 2, its
// TTL form) lacked the partitions' row and time counts.
const overStateVersion = 3
