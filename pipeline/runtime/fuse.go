package runtime

import (
	"slices"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Fusion: a Calc (projection and filter) that is the only reader of an
// insert-only source whose decoding runs on several goroutines
// (connector.MappingSource) runs there too, together with the source's
// watermark expression and computed columns (SourceNode.Compute: a
// scratch row per batch, which the Calc projects out of). A Calc over inserts keeps no
// state (it holds a -U only until its +U), so each batch maps on its
// own, and the source returns the batches in order. The Calc's node stays
// in the graph, for its counters and checkpoints, and passes the mapped
// batches on as they are; a batch that could not be mapped (a row whose
// expressions failed goes to on_error in order, on the source's goroutine)
// comes as the source decoded it and takes the usual way. explain is not
// changed: the plan is the same, only where its Calc runs.

// fusion is a source node's fused Calc and that Calc's node.
type fusion struct {
	src  *SourceNode
	calc *Calc
	op   *OpNode
	// next, if set, is a projecting Calc that is the only reader of
	// calc's node (a query's SELECT over a view's), run in the decoders
	// too over calc's rows, and nextOp its node.
	next   *Calc
	nextOp *OpNode
	// slabs holds the slabs of mapped batches their reader is done with.
	slabs *slabPool
	// picked: the source decodes the Calc's columns itself
	// (connector.ColumnSource), and its batches pass as they are;
	// recycle, if set, takes them back once their reader is done.
	picked  bool
	recycle func(*row.Batch)
	// filter is the Calc's filter over whole input rows, when the source
	// picks columns for a Calc that has one; it reads the columns of a
	// picked row as reads says, from a scratch row width long.
	filter func(row.Row) (bool, error)
	reads  []pickedRead
	width  int
	// memoAt, if not 0, is where the filter's memo starts in its scratch
	// row (Calc.memoRow).
	memoAt int
	// narrow, if not 0, is the width the rows that pass are cut to: the
	// filter read columns after the projected ones.
	narrow int
	// releaser is the one node that may give the batches back (release):
	// the Calc node's only reader, an operator or a sink. nil when the
	// node has several readers, which all get the same batches, or a
	// union, which passes them on as they are.
	releaser *Node
}

// fusedOrigin marks a batch the fusion mapped, and is its Origin: change
// i came from change from[i] of the decoded batch. records is the
// number of records decoded, kept the number of rows the source's
// computed columns let through (the counters of the source node and of
// the Calc's), wm the largest event time among them (NoWatermark for
// none).
type fusedOrigin struct {
	derivedOrigin
	records, kept int
	wm            int64
	// mid is how many rows the fused Calc let through to the next one
	// (fusion.next), which let the batch's through.
	mid int
	// before holds, for each change, the largest watermark candidate of
	// the rows decoded before its row (also of those the filter left
	// out), and rowTimes its event time (SourceNode.RowTime): where the
	// source node cuts the batch for a watermark (source_cut.go). nil
	// without a watermark.
	before, rowTimes []int64
	// slabs are the memory of the batch's rows, and pool where they go
	// back once the batch's reader keeps none of them (release).
	slabs [][]row.Value
	pool  *slabPool
	// same: the batch is the source's own, its changes the decoded
	// ones (from is unused); recycle gives it back to the source.
	same    bool
	recycle func(*row.Batch)
	// by is the node that may release the batch (fusion.releaser).
	by *Node
}

// fuse finds the Calcs to run in their sources' decoders and tells the
// sources; it returns the fusion of each source node that has one.
func fuse(g *Graph) map[*SourceNode]*fusion {
	readers := map[*Node]int{}
	// reader is a node's reader that may give its batches back: an
	// operator or a sink, which pass no input batch on as it is (a union
	// does).
	reader := map[*Node]*Node{}
	opOf := map[*Node]*OpNode{}
	for _, op := range g.Ops {
		opOf[&op.Node] = op
		readers[op.Input]++
		reader[op.Input] = &op.Node
	}
	for _, u := range g.Unions {
		for _, in := range u.Inputs {
			readers[in]++
			reader[in] = nil
		}
	}
	for _, s := range g.Sinks {
		readers[s.Input]++
		reader[s.Input] = &s.Node
	}
	var out map[*SourceNode]*fusion
	for _, op := range g.Ops {
		c, ok := op.Op.(*Calc)
		if !ok || readers[op.Input] != 1 {
			continue
		}
		for _, s := range g.Sources {
			if &s.Node != op.Input {
				continue
			}
			if u, ok := s.Source.(connector.UpdatingSource); ok && u.Updating() {
				break // a Calc over updates pairs -U with +U: not per batch
			}
			if s.Calc != nil && (s.Compute == nil || c.Project == nil) {
				// Computed columns run in the decoders only in the
				// form made for several goroutines, and only before a
				// projection, which copies the rows out of its scratch.
				break
			}
			if _, ok := s.Source.(connector.SplitSource); ok && s.EventTime != nil {
				break // the watermark is per split: on the source's goroutine
			}
			ms, ok := s.Source.(connector.MappingSource)
			if !ok {
				break
			}
			f := &fusion{src: s, calc: c, op: op, slabs: newSlabPool()}
			if readers[&op.Node] == 1 {
				f.releaser = reader[&op.Node]
			}
			f.pickColumns()
			if !f.picked && readers[&op.Node] == 1 {
				f.chain(opOf[reader[&op.Node]], readers, reader)
			}
			// The mapped rows are new when a Calc projects them.
			if !ms.MapBatches(f.mapBatch, c.Project != nil || f.next != nil) {
				break
			}
			c.fused = true
			if f.next != nil {
				f.next.fused = true
			}
			if out == nil {
				out = map[*SourceNode]*fusion{}
			}
			out[s] = f
		}
	}
	return out
}

// recycleDirect lets a sink that is the only reader of a source node
// give the batches back to the source once it wrote them (SinkNode.recycle;
// the sink must also copy its rows, which it says per batch), as a
// fusion's releaser does: when nothing is between them, the node sends
// the batches on as the source returned them (no computed columns, no
// watermark to cut them at, no fused Calc). The nodes' outputs must be
// linked: the sink is then the only one that sees the batches.
func recycleDirect(g *Graph, fused map[*SourceNode]*fusion) {
	for _, sk := range g.Sinks {
		if len(sk.Input.outs) != 1 {
			continue
		}
		for _, s := range g.Sources {
			if &s.Node != sk.Input || fused[s] != nil || s.Calc != nil || s.Compute != nil || s.EventTime != nil {
				continue
			}
			if r, ok := s.Source.(connector.BatchRecycler); ok {
				sk.recycle = r.Recycle
			}
		}
	}
}

// chain makes next, the only reader of the fused Calc's node, part of
// the fusion when it is a projecting Calc: a Calc over inserts keeps no
// state, and the fused Calc's rows are inserts. Its rows are then made in
// the decoders (the fused Calc's own only in a scratch row), and the
// reader of its node, if it is the only one, gives them back.
func (f *fusion) chain(next *OpNode, readers map[*Node]int, reader map[*Node]*Node) {
	if next == nil {
		return
	}
	c, ok := next.Op.(*Calc)
	if !ok || c.Project == nil {
		return
	}
	f.next, f.nextOp = c, next
	f.releaser = nil
	if readers[&next.Node] == 1 {
		f.releaser = reader[&next.Node]
	}
}

// pickColumns has the source decode the columns a Calc that only picks
// columns projects (Calc.Columns), when it can and nothing else reads
// the source's rows (a watermark): the Calc then has at most its filter
// left to do, and its rows are never copied. The source's rows are then
// the Calc's, serial or parallel, mapped or not. A filter reads a picked
// row's columns where they are (filterPicked); the columns it reads that
// the Calc does not project are decoded after the projected ones, and
// the rows that pass are cut to the projected ones (Calc.narrow).
func (f *fusion) pickColumns() {
	s, c := f.src, f.calc
	if c.Columns == nil || s.EventTime != nil || s.Calc != nil {
		return // the Calc reads the table's row, not the decoded one
	}
	layout := c.Columns
	var reads []pickedRead
	width := 0
	if c.Filter != nil {
		if c.FilterReads == nil || c.InputWidth <= 0 {
			return // the columns it reads, or the rows' width, not known
		}
		layout, reads, width = pickedLayout(c.Columns, c.FilterReads)
	}
	cs, ok := s.Source.(connector.ColumnSource)
	if !ok || !cs.SelectColumns(layout) {
		return
	}
	c.Project = nil
	if c.Filter != nil {
		f.filter, f.reads, f.width = c.Filter, reads, width
		if len(layout) > len(c.Columns) {
			f.narrow, c.narrow = len(c.Columns), len(c.Columns)
		}
		// The Calc's node filters the batches the decoders did not map
		// (one goroutine: one scratch row).
		if c.Memo > 0 {
			// The filter's shared subexpressions keep their values
			// after the columns it reads (Calc.memoRow).
			width = max(width, c.MemoAt+c.Memo)
			f.width, f.memoAt = width, c.MemoAt
		}
		scratch := make(row.Row, width)
		c.Filter = func(r row.Row) (bool, error) { return filterPicked(f.filter, scratch, reads, r, f.memoOf(scratch)) }
		inWidth := c.InputWidth
		c.widen = func(r row.Row) row.Row {
			whole := make(row.Row, inWidth)
			for j, col := range layout {
				whole[col] = r[j]
			}
			return whole
		}
	}
	f.picked = true
	if r, ok := s.Source.(connector.BatchRecycler); ok && f.releaser != nil {
		f.recycle = r.Recycle
	}
}

// mapBatch runs the source's watermark expression and the fused Calc
// over b, on one of the source's decode goroutines; nil when a row's
// expressions fail (the batch then takes the serial way, in which
// on_error sees the row in order).
func (f *fusion) mapBatch(b *row.Batch) *row.Batch {
	if f.picked && f.filter != nil {
		return f.filterBatch(b)
	}
	if f.picked {
		// The source decoded the Calc's rows: b is the result.
		b.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin}, records: row.RecordsIn(b), kept: b.Len(), wm: operator.NoWatermark,
			same: true, recycle: f.recycle, by: f.releaser}
		return b
	}
	return f.calcRows(b, b.Changes, nil, b.Len())
}

// pickedRead is a column a filter reads: full in a whole input row,
// picked in a picked row.
type pickedRead struct{ full, picked int }

// pickedLayout returns the columns to decode for a Calc projecting cols
// whose filter reads the columns reads: cols, then those of reads not
// among them; where the filter finds each column it reads in such a row;
// and the width of a whole row the filter can read them from.
func pickedLayout(cols, reads []int) (layout []int, placed []pickedRead, width int) {
	layout = cols
	for _, full := range reads {
		j := slices.Index(layout, full)
		if j < 0 {
			layout = append(slices.Clip(layout), full)
			j = len(layout) - 1
		}
		placed = append(placed, pickedRead{full: full, picked: j})
		width = max(width, full+1)
	}
	return layout, placed, width
}

// filterPicked runs filter, over whole rows, on the picked row r: the
// columns it reads are put where it reads them in scratch, and taken out
// after (scratch keeps no value of r alive).
func filterPicked(filter func(row.Row) (bool, error), scratch row.Row, reads []pickedRead, r row.Row, memo row.Row) (bool, error) {
	for _, m := range reads {
		scratch[m.full] = r[m.picked]
	}
	ok, err := filter(scratch)
	for _, m := range reads {
		scratch[m.full] = row.NullValue
	}
	// The memo's values are the row's too, and the next row starts with
	// it cleared.
	clear(memo)
	return ok, err
}

// memoOf is the memo part of a scratch row for filterPicked, nil when
// the filter shares no subexpressions.
func (f *fusion) memoOf(scratch row.Row) row.Row {
	if f.memoAt == 0 {
		return nil
	}
	return scratch[f.memoAt:]
}

// filterBatch is mapBatch for picked columns and a filter: b's changes
// whose rows pass, in place; nil when the filter fails on a row (b is
// then as it was, for the serial way).
func (f *fusion) filterBatch(b *row.Batch) *row.Batch {
	scratch := make(row.Row, f.width)
	pass := make([]int32, 0, b.Len())
	for i, ch := range b.Changes {
		ok, err := filterPicked(f.filter, scratch, f.reads, ch.Row, f.memoOf(scratch))
		if err != nil {
			return nil
		}
		if ok {
			pass = append(pass, int32(i))
		}
	}
	read, records := b.Len(), row.RecordsIn(b)
	for j, i := range pass {
		b.Changes[j] = b.Changes[i]
		if n := f.narrow; n > 0 {
			b.Changes[j].Row = b.Changes[j].Row[:n:n]
		}
	}
	b.Changes = b.Changes[:len(pass)]
	b.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin, from: pass}, records: records, kept: read, wm: operator.NoWatermark,
		recycle: f.recycle, by: f.releaser}
	return b
}

// calcRows evaluates the watermark and the Calc over rows, the source
// node's output for b; srcFrom maps rows to b's changes (nil: one to
// one).
func (f *fusion) calcRows(b *row.Batch, rows []row.Change, srcFrom []int32, kept int) *row.Batch {
	s, c := f.src, f.calc
	wm := operator.NoWatermark
	var before, rowTimes []int64
	if s.EventTime != nil {
		before = make([]int64, 0, len(rows))
		if s.RowTime != nil {
			rowTimes = make([]int64, 0, len(rows))
		}
	}
	// The computed columns, if any, into a scratch row the Calc projects
	// out of before the next row.
	var compute func(row.Row) (row.Row, error)
	if s.Calc != nil {
		compute = s.Compute()
	}
	// One pass: the watermark, the filter and the projection, into slabs
	// for the batch; with a next Calc, the fused one's row goes into mid
	// and the next one's into the slabs.
	pass := make([]int32, 0, len(rows))
	out := &row.Batch{Changes: make([]row.Change, 0, len(rows))}
	var slabs [][]row.Value
	var slab, mid row.Row
	last := c
	if f.next != nil {
		last = f.next
		if c.Project != nil {
			mid = make(row.Row, len(c.Project))
		}
	}
	// The rows the Calcs' shared subexpressions are kept in (memoRow),
	// this goroutine's own.
	memoC, memoL := c.newMemo(), memoOf(last, c)
	midRows := 0
	w := len(last.Project)
	for i, ch := range rows {
		r := ch.Row
		if compute != nil {
			var err error
			if r, err = compute(r); err != nil {
				return nil
			}
		}
		prev := wm
		if s.EventTime != nil {
			ts, has, err := s.EventTime(r)
			if err != nil {
				return nil
			}
			if has && ts > wm {
				wm = ts
			}
		}
		rc := c.memoRow(memoC, r)
		if c.Filter != nil {
			ok, err := c.Filter(rc)
			if err != nil {
				return nil
			}
			if !ok {
				continue
			}
		}
		// in is the row the last Calc reads, inL the same for its
		// expressions (memoRow).
		in, inL := r, rc
		if f.next != nil {
			if mid != nil {
				if err := c.projectInto(rc, mid); err != nil {
					return nil
				}
				in = mid
			}
			inL = last.memoRow(memoL, in)
			midRows++
			if last.Filter != nil {
				ok, err := last.Filter(inL)
				if err != nil {
					return nil
				}
				if !ok {
					continue
				}
			}
		}
		pass = append(pass, int32(i))
		if before != nil {
			before = append(before, prev)
			if rowTimes != nil {
				rowTimes = append(rowTimes, s.RowTime(r))
			}
		}
		if last.Project == nil {
			out.Append(ch.Kind, in)
			continue
		}
		if len(slab) < w {
			slab = f.slabs.get(max(w, slabValues/max(w, 1)*w))
			slabs = append(slabs, slab)
		}
		pr := slab[:w:w]
		slab = slab[w:]
		if err := last.projectInto(inL, pr); err != nil {
			return nil
		}
		out.Append(ch.Kind, pr)
	}
	// from maps out's changes to b's, for their positions.
	from := pass
	if srcFrom != nil {
		for j, i := range pass {
			from[j] = srcFrom[i]
		}
	}
	fo := &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin, from: from}, records: row.RecordsIn(b), kept: kept, wm: wm,
		before: before, rowTimes: rowTimes, mid: midRows}
	if f.releaser != nil {
		fo.slabs, fo.pool, fo.by = slabs, f.slabs, f.releaser
	}
	out.Origin = fo
	return out
}

// memoOf is newMemo of last, the Calc a fusion's rows come out of, when
// it is not first, the fused one.
func memoOf(last, first *Calc) row.Row {
	if last == first {
		return nil
	}
	return last.newMemo()
}

// Position implements row.Origin.
func (fo *fusedOrigin) Position(i int) string {
	switch {
	case fo.parent == nil:
		return ""
	case fo.same:
		return fo.parent.Position(i)
	}
	return fo.derivedOrigin.Position(i)
}

// Record implements row.RecordOrigin.
func (fo *fusedOrigin) Record(i int) (string, int64, bool) {
	if fo.parent == nil {
		return "", 0, false
	}
	if fo.same {
		if ro, ok := fo.parent.(row.RecordOrigin); ok {
			return ro.Record(i)
		}
		return "", 0, false
	}
	return fo.derivedOrigin.Record(i)
}

// slabValues is how many values the rows of a mapped batch are carved
// from at a time: 32 KiB, the largest allocation Go makes without taking
// the heap lock (a batch's arena in one piece cost more than the rest of
// the Calc).
const slabValues = 1024

// slabPool keeps the slabs of mapped batches whose reader is done with
// them, for the next batches the decoders map. A batch's rows are then
// written into memory already allocated: a Calc in front of an aggregate
// costs no allocation per row, nor the zeroing and the collections that
// came with it (they were a fifth of a streaming GROUP BY's time).
type slabPool struct {
	free chan []row.Value
}

// slabsKept bounds the slabs a pool holds: more than the batches in
// flight between the decoders and the aggregate use (a few blocks of
// some thousand rows), 8 MiB at most.
const slabsKept = 256

func newSlabPool() *slabPool { return &slabPool{free: make(chan []row.Value, slabsKept)} }

// get returns a slab of n values: a kept one (its old values are
// overwritten before they are read), or a new one.
func (p *slabPool) get(n int) []row.Value {
	select {
	case s := <-p.free:
		if cap(s) >= n {
			return s[:n]
		}
	default:
	}
	return make([]row.Value, n)
}

// put keeps s for get, unless the pool is full.
func (p *slabPool) put(s []row.Value) {
	select {
	case p.free <- s:
	default:
	}
}

// release gives the rows of b, a batch node n is done with, back to the
// fusion that mapped them, if one did and n is the one reader it gave
// them to; b's rows must not be read after.
func release(b *row.Batch, n *Node) {
	fo := fusedOf(b)
	if fo == nil || fo.by != n || fo.pool == nil && fo.recycle == nil {
		return // not the fusion's to take back, or not n's alone
	}
	if fo.pool != nil {
		for _, s := range fo.slabs {
			fo.pool.put(s)
		}
		fo.slabs, fo.pool = nil, nil
	}
	if fo.recycle != nil {
		r := fo.recycle
		fo.recycle = nil
		r(b) // the source's own batch (same)
		return
	}
	b.Changes = nil
}

// fusedOf returns the mark of a batch a fusion mapped, or nil.
func fusedOf(b *row.Batch) *fusedOrigin {
	if b == nil {
		return nil
	}
	fo, _ := b.Origin.(*fusedOrigin)
	return fo
}
