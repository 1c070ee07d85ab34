package windowop

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// NonTimeSpec is an OVER aggregate ordered by a column that is not a
// time attribute: PARTITION BY Keys ORDER BY column Order ascending (NULL
// first), over ROWS (Rows) or RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW, the only frame Flink runs there. Funcs (ROW_NUMBER, RANK
// and DENSE_RANK) follow the aggregates: in streaming, as Flink's
// accumulators give them, the count of rows up to the row (ROW_NUMBER,
// whose frame is ROWS) or up to its last peer (RANK and DENSE_RANK
// alike); in batch mode the row's position, 1 + the rows before its
// peers, and 1 + the distinct values before them.
type NonTimeSpec struct {
	Keys  []int
	Order int
	Rows  bool
	// Bounded, with Rows: the frame is ROWS BETWEEN Preceding PRECEDING
	// AND CURRENT ROW instead (over_nontime_bounded.go), aggregates only.
	Bounded   bool
	Preceding int
	Aggs      []aggop.AggCall
	Funcs     []FuncKind
	// Calls, in batch mode, are Funcs with their arguments (LAG's and
	// LEAD's value, offset and default, NTILE's buckets), one a func;
	// nil when none takes any.
	Calls []RowFunc
}

// ntRow is a row of a partition with the results last emitted for it.
type ntRow struct {
	r, res row.Row
}

// NonTimeOver is an OVER aggregate ordered by a non-time column, as
// Flink's NonTimeRangeUnboundedPrecedingFunction and NonTimeRowsUnbounded-
// PrecedingFunction run it. Each partition keeps its rows sorted by the
// order column, ties in arrival order. A row arriving (+I, or +U) is
// emitted at once (+I, or +U) with the results over the rows up to it
// (RANGE: up to its last peer); a row removed (-D, or -U) is emitted as
// -D with the results it had. Every row after it whose results change
// is retracted (-U, its old results) and emitted again (+U), in the
// partition's order (walk). In RANGE the changed row's peers are
// updated too (before it when it arrives; around it, in order, when it
// leaves), unless their results stay the same. In batch mode rows are emitted once, at the end
// of the input, with their final results.
type NonTimeOver struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	spec              NonTimeSpec
	opt               WindowOptions
	st                *aggop.Store
	slot              int32
	width             int
	parts             map[string]*ntPart
	kbuf              []byte
	// final: every aggregate's result is all its state (COUNT, SUM,
	// MIN, MAX), so a row whose results did not change ends the walk.
	final bool
	ttl   state.TTLKeys[string] // partitions' last writes
	operator.Expiry
}

// ntPart is one partition's rows in order, and total, the aggregate
// slot of all of them (-1: none yet, or stale after a removal), which
// makes a row arriving last cost no walk.
type ntPart struct {
	rows  []ntRow
	total int32
}

// NewNonTimeOver builds the operator; an invalid spec or call is an
// error.
func NewNonTimeOver(s NonTimeSpec, opt WindowOptions) (*NonTimeOver, error) {
	width, err := aggop.InputWidth(s.Keys, s.Aggs)
	if err != nil {
		return nil, fmt.Errorf("over aggregate: %w", err)
	}
	if s.Order < 0 {
		return nil, fmt.Errorf("over aggregate: bad order column %d", s.Order)
	}
	argWidth := 0
	for i, f := range s.Funcs {
		switch f {
		case RowNumber, Rank, DenseRank:
		case Lag, Lead, NTile, PercentRank, CumeDist:
			if !opt.Batch || (f == Lag || f == Lead || f == NTile) && (len(s.Calls) != len(s.Funcs) || s.Calls[i].Kind != f) {
				return nil, fmt.Errorf("over aggregate: %s over a non-time order is supported in batch mode only, with its arguments", f)
			}
			if c := s.Calls[i]; f != NTile {
				argWidth = max(argWidth, c.Arg+1, c.Default+1)
			} else if c.Offset < 1 {
				return nil, fmt.Errorf("over aggregate: NTILE(%d): the bucket count must be positive", c.Offset)
			}
		default:
			return nil, fmt.Errorf("over aggregate: %s over a non-time order is not supported", f)
		}
	}
	if s.Bounded && (!s.Rows || s.Preceding < 0 || len(s.Funcs) > 0) {
		return nil, fmt.Errorf("over aggregate: a bounded frame over a non-time order is ROWS, N >= 0 PRECEDING, aggregates only")
	}
	g := &NonTimeOver{
		spec:  s,
		opt:   opt,
		width: max(width, s.Order+1, argWidth),
		parts: map[string]*ntPart{},
		st:    aggop.NewStore(s.Aggs, true, false),
	}
	g.slot = g.st.Alloc("")
	g.final = !slices.ContainsFunc(s.Aggs, func(a aggop.AggCall) bool {
		switch a.Func {
		case aggop.CountStar, aggop.Count, aggop.Sum, aggop.Min, aggop.Max:
			return a.Distinct
		}
		return true
	})
	g.InitExpiry(g.ttl.Set, g.ttl.Tick, g.sweep)
	return g, nil
}

// StateEntries implements StateSizer: the rows kept.
func (g *NonTimeOver) StateEntries() int64 {
	n := 0
	for _, p := range g.parts {
		n += len(p.rows)
	}
	return int64(n)
}

func (g *NonTimeOver) Process(in *row.Batch, out operator.Emitter) error {
	defer g.Begin(len(in.Changes))()
	return operator.EachChange("over aggregate", in, out, func(_ int, c *row.Change) error {
		if len(c.Row) < g.width {
			return fmt.Errorf("over aggregate: row of %d columns, want at least %d", len(c.Row), g.width)
		}
		if err := g.st.Check(c.Row); err != nil {
			return err
		}
		key, p := g.partition(c.Row)
		if g.ttl.On() {
			g.ttl.Touch(key)
		}
		switch add := c.Kind == row.Insert || c.Kind == row.UpdateAfter; {
		case g.spec.Bounded && add:
			g.insertBounded(p, c.Kind, c.Row, out)
			return nil
		case g.spec.Bounded:
			g.removeBounded(p, c.Row, out)
		case add:
			g.insert(p, c.Kind, c.Row, out)
			return nil
		default:
			g.remove(p, c.Row, out)
		}
		if len(p.rows) == 0 {
			g.free(key)
		}
		return nil
	})
}

// partition finds (or starts) r's partition, dropping it first when its
// state expired.
func (g *NonTimeOver) partition(r row.Row) (string, *ntPart) {
	g.kbuf = row.KeyOf(g.kbuf[:0], r, g.spec.Keys)
	p := g.parts[string(g.kbuf)]
	key := string(g.kbuf)
	if p != nil && g.ttl.Expired(key) {
		g.free(key)
		p = nil
	}
	if p == nil {
		p = &ntPart{total: -1}
		g.parts[key] = p
	}
	return key, p
}

func (g *NonTimeOver) order(r row.Row) row.Value { return r[g.spec.Order] }

// peers returns the bounds [lo, hi) of the rows whose order value is v.
func (g *NonTimeOver) peers(p *ntPart, v row.Value) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(p.rows, v, func(x ntRow, v row.Value) int { return row.Compare(g.order(x.r), v) })
	hi = lo
	for hi < len(p.rows) && row.Compare(g.order(p.rows[hi].r), v) == 0 {
		hi++
	}
	return lo, hi
}

// insert places r after its peers and emits it with its results, then
// updates what it changes.
func (g *NonTimeOver) insert(p *ntPart, k row.Kind, r row.Row, out operator.Emitter) {
	lo, at := g.peers(p, g.order(r))
	last := at == len(p.rows)
	if last && !g.opt.Batch {
		g.totalOf(p)
	}
	p.rows = slices.Insert(p.rows, at, ntRow{r: row.Detach(r)})
	if g.opt.Batch {
		return
	}
	// The total adds the rows in their order (FIRST_VALUE, LISTAGG and
	// a floating SUM depend on it): a row in the middle makes it stale.
	if last {
		g.st.Update(p.total, r, true)
	} else {
		g.dropTotal(p)
	}
	// slot holds the rows up to r (ROWS) or its last peer (RANGE): the
	// total when r is last, else the scratch.
	slot := p.total
	if g.spec.Rows {
		if !last {
			slot = g.accumulateTo(p, at+1)
		}
		p.rows[at].res = g.results(slot, at, at+1)
		emit(out, k, r, p.rows[at].res)
		if !last {
			g.walk(p, at+1, out)
		}
		return
	}
	if !last {
		slot = g.accumulateTo(p, at+1)
	}
	res := g.results(slot, lo, at+1)
	if at > lo && !sameRow(p.rows[lo].res, res) {
		for i := lo; i < at; i++ {
			g.update(&p.rows[i], res, out)
		}
	}
	for i := lo; i < at; i++ {
		p.rows[i].res = res
	}
	p.rows[at].res = res
	emit(out, k, r, res)
	if !last {
		g.walk(p, at+1, out)
	}
}

// totalOf returns p's total slot, accumulating its rows when it has
// none.
func (g *NonTimeOver) totalOf(p *ntPart) int32 {
	if p.total < 0 {
		p.total = g.st.Alloc("")
		for _, x := range p.rows {
			g.st.Update(p.total, x.r, true)
		}
	}
	return p.total
}

// remove takes out the first row equal to r among its peers, emits it
// as deleted with the results it had, and updates what it changes. A
// row not held is ignored, as Flink does.
func (g *NonTimeOver) remove(p *ntPart, r row.Row, out operator.Emitter) {
	lo, hi := g.peers(p, g.order(r))
	at := slices.IndexFunc(p.rows[lo:hi], func(x ntRow) bool { return sameRow(x.r, r) })
	if at < 0 {
		return
	}
	at += lo
	gone := p.rows[at]
	g.dropTotal(p)
	if g.opt.Batch {
		p.rows = slices.Delete(p.rows, at, at+1)
		return
	}
	if g.spec.Rows {
		p.rows = slices.Delete(p.rows, at, at+1)
		emit(out, row.Delete, gone.r, gone.res)
		g.accumulateTo(p, at)
		g.walk(p, at, out)
		return
	}
	// RANGE: the peers left take the results without the row; they are
	// updated, and the row deleted, in the group's order.
	g.accumulateTo(p, lo)
	for i := lo; i < hi; i++ {
		if i != at {
			g.st.Update(g.slot, p.rows[i].r, true)
		}
	}
	res := g.results(g.slot, lo, hi-1)
	same := sameRow(gone.res, res)
	for i := lo; i < hi; i++ {
		switch {
		case i == at:
			emit(out, row.Delete, gone.r, gone.res)
		case !same:
			g.update(&p.rows[i], res, out)
		}
	}
	p.rows = slices.Delete(p.rows, at, at+1)
	g.walk(p, hi-1, out)
}

// accumulateTo resets the scratch aggregate, adds p's rows before n
// and returns its slot.
func (g *NonTimeOver) accumulateTo(p *ntPart, n int) int32 {
	g.st.Release(g.slot)
	g.slot = g.st.Alloc("")
	for _, x := range p.rows[:n] {
		g.st.Update(g.slot, x.r, true)
	}
	return g.slot
}

// dropTotal forgets p's total (a row left it: the aggregates add only).
func (g *NonTimeOver) dropTotal(p *ntPart) {
	if p.total >= 0 {
		g.st.Release(p.total)
		p.total = -1
	}
}

// walk recomputes the results of p's rows from i on, the scratch
// aggregate holding the rows before i, and updates the rows whose
// results changed. Flink stops at the first row (ROWS) or peer group
// (RANGE) whose accumulators did not change; so does the walk at the
// first whose results did not when the results are the whole state
// (final). Otherwise (an AVG the same over other rows) it goes on, and
// skips the rows whose results stay the same, where Flink re-emits
// them unchanged.
func (g *NonTimeOver) walk(p *ntPart, i int, out operator.Emitter) {
	for i < len(p.rows) {
		j := i + 1
		if !g.spec.Rows {
			for j < len(p.rows) && row.Compare(g.order(p.rows[j].r), g.order(p.rows[i].r)) == 0 {
				j++
			}
		}
		for _, x := range p.rows[i:j] {
			g.st.Update(g.slot, x.r, true)
		}
		res := g.results(g.slot, i, j)
		switch {
		case !sameRow(p.rows[i].res, res):
			for k := i; k < j; k++ {
				g.update(&p.rows[k], res, out)
			}
		case g.final:
			return
		}
		i = j
	}
}

// update retracts x with its old results and emits it with res.
func (g *NonTimeOver) update(x *ntRow, res row.Row, out operator.Emitter) {
	emit(out, row.UpdateBefore, x.r, x.res)
	x.res = res
	emit(out, row.UpdateAfter, x.r, res)
}

// results is slot's aggregate results, a new row, then the
// functions' for the rows [i, j) of a partition, j the count of rows up
// to the last of them.
func (g *NonTimeOver) results(slot int32, i, j int) row.Row {
	na := len(g.spec.Aggs)
	res := make(row.Row, na+len(g.spec.Funcs))
	g.st.Results(slot, res[:na])
	for k := range g.spec.Funcs {
		res[na+k] = row.BigIntValue(int64(j))
	}
	return res
}

// batchFuncs sets the functions' results of the row at position k, of
// the peers from position i, the group-th distinct value, in batch mode.
func (g *NonTimeOver) batchFuncs(res row.Row, i, k, group int) {
	na := len(g.spec.Aggs)
	for n, f := range g.spec.Funcs {
		v := i + 1
		switch f {
		case RowNumber:
			v = k + 1
		case DenseRank:
			v = group
		}
		res[na+n] = row.BigIntValue(int64(v))
	}
}

// wholeFuncs sets, in batch mode, the results of the functions that
// read the whole partition p (LAG, LEAD, NTILE, PERCENT_RANK,
// CUME_DIST) for its row at position k.
func (g *NonTimeOver) wholeFuncs(res row.Row, p *ntPart, k int) {
	if len(g.spec.Calls) == 0 {
		return
	}
	na, n := len(g.spec.Aggs), len(p.rows)
	v := g.order(p.rows[k].r)
	lo, hi := k, k+1
	for lo > 0 && row.Compare(g.order(p.rows[lo-1].r), v) == 0 {
		lo--
	}
	for hi < n && row.Compare(g.order(p.rows[hi].r), v) == 0 {
		hi++
	}
	byPosition := cumeByPosition(g.spec.Calls)
	for m, f := range g.spec.Calls {
		switch f.Kind {
		case Lag, Lead:
			at := k - f.Offset
			if f.Kind == Lead {
				at = k + f.Offset
			}
			switch {
			case at >= 0 && at < n:
				res[na+m] = p.rows[at].r[f.Arg]
			case f.Default >= 0:
				res[na+m] = p.rows[k].r[f.Default]
			default:
				res[na+m] = row.NullValue
			}
		case NTile, PercentRank, CumeDist:
			res[na+m] = wholeFunc(f, k, n, lo, hi, byPosition)
		}
	}
}

func emit(out operator.Emitter, k row.Kind, r, res row.Row) {
	o := make(row.Row, len(r)+len(res))
	copy(o, r)
	copy(o[len(r):], res)
	out.Emit(k, o)
}

func (g *NonTimeOver) Watermark(int64, operator.Emitter) error { return nil }

// Finish emits, in batch mode, every row with its final results, each
// partition in order.
func (g *NonTimeOver) Finish(out operator.Emitter) error {
	if !g.opt.Batch {
		return nil
	}
	keys := slices.Sorted(maps.Keys(g.parts))
	for _, k := range keys {
		p := g.parts[k]
		if g.spec.Bounded {
			for i, x := range p.rows {
				emit(out, row.Insert, x.r, g.frameResults(p, i))
			}
			continue
		}
		g.accumulateTo(p, 0)
		for i, group := 0, 1; i < len(p.rows); group++ {
			j := i + 1
			if !g.spec.Rows {
				for j < len(p.rows) && row.Compare(g.order(p.rows[j].r), g.order(p.rows[i].r)) == 0 {
					j++
				}
			}
			for _, x := range p.rows[i:j] {
				g.st.Update(g.slot, x.r, true)
			}
			res := g.results(g.slot, i, j)
			for n, x := range p.rows[i:j] {
				g.batchFuncs(res, i, i+n, group)
				g.wholeFuncs(res, p, i+n)
				emit(out, row.Insert, x.r, res)
			}
			i = j
		}
		delete(g.parts, k)
	}
	return nil
}

// SetStateTTL implements TTLSetter: a partition not written for the TTL
// is dropped whole, its next row starting from empty state. Batch mode
// keeps no TTL.
func (g *NonTimeOver) SetStateTTL(c operator.StateTTL) {
	if !g.opt.Batch {
		g.Expiry.SetStateTTL(c)
	}
}

func (g *NonTimeOver) sweep(budget int) {
	g.ttl.Sweep(budget, func(k string) bool {
		g.forget(k)
		return true
	})
}

// free drops partition k and its TTL entry.
func (g *NonTimeOver) free(k string) {
	g.forget(k)
	g.ttl.Drop(k)
}

func (g *NonTimeOver) forget(k string) {
	if p := g.parts[k]; p != nil {
		g.dropTotal(p)
		delete(g.parts, k)
	}
}

// nonTimeStateVersion is the layout Snapshot writes; with a TTL set the
// partitions' last writes follow.
const nonTimeStateVersion = 1

// Snapshot encodes whether the TTL times follow, then each partition in
// key order: its key, its rows in order, each with its results, then the
// TTL times.
func (g *NonTimeOver) Snapshot() ([]byte, error) {
	timed := byte(0)
	if g.ttl.On() {
		timed = 1
	}
	buf := []byte{nonTimeStateVersion, timed}
	keys := slices.Sorted(maps.Keys(g.parts))
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, k := range keys {
		p := g.parts[k]
		buf = row.AppendString(buf, k)
		buf = binary.AppendUvarint(buf, uint64(len(p.rows)))
		for _, x := range p.rows {
			buf = row.AppendRow(buf, x.r)
			buf = row.AppendRow(buf, x.res)
		}
	}
	if timed == 1 {
		buf = g.ttl.AppendTimes(buf, row.AppendString)
	}
	return buf, nil
}

// Restore replaces the operator's state with a snapshot's.
func (g *NonTimeOver) Restore(snap []byte) error {
	if len(snap) < 2 || snap[0] != nonTimeStateVersion {
		return fmt.Errorf("over aggregate: restore: not a version %d state", nonTimeStateVersion)
	}
	d := g.Decoder(snap[2:])
	parts := map[string]*ntPart{}
	for range d.Count(2) {
		k := d.KeyStr()
		p := &ntPart{total: -1}
		for range d.Count(2) {
			r := d.Row()
			p.rows = append(p.rows, ntRow{r: r, res: d.Row()})
		}
		parts[k] = p
	}
	g.ttl.Reset()
	g.ttl.Tick()
	if snap[1] == 1 {
		g.ttl.ReadTimes(d, (*row.Decoder).KeyStr)
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("over aggregate: restore: %w", err)
	}
	for k, p := range parts {
		for i, x := range p.rows {
			if len(x.r) < g.width || len(x.res) != len(g.spec.Aggs)+len(g.spec.Funcs) ||
				i > 0 && row.Compare(g.order(p.rows[i-1].r), g.order(x.r)) > 0 {
				return fmt.Errorf("over aggregate: restore: partition %q: row %d out of shape or order", k, i)
			}
		}
	}
	g.parts = parts
	if g.ttl.On() {
		for k := range parts {
			if _, ok := g.ttl.IDs[k]; !ok {
				g.ttl.Touch(k)
			}
		}
	}
	return nil
}

var (
	_ operator.Operator    = (*NonTimeOver)(nil)
	_ operator.Snapshotter = (*NonTimeOver)(nil)
	_ operator.StateSizer  = (*NonTimeOver)(nil)
	_ operator.TTLSetter   = (*NonTimeOver)(nil)
	_ operator.Sweeper     = (*NonTimeOver)(nil)
)

// sameRow reports whether a and b hold equal values (NULL equal to NULL).
func sameRow(a, b row.Row) bool {
	return slices.EqualFunc(a, b, row.Equal)
}
