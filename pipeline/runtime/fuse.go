package runtime

import (
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

// fusion is a source node's fused Calcs and their nodes: one per reader
// of the source node, several when each of its readers is a Calc (the
// views of one source, as the Nexmark DDL's person, auction and bid).
type fusion struct {
	src *SourceNode
	// readers are the fused Calcs, in the order of the operator nodes
	// in the graph; with several, each mapped batch holds a batch for
	// each (fusedOrigin.parts).
	readers []*fusedReader
	// slabs holds the slabs of mapped batches their reader is done with.
	slabs *slabPool
	// outs are, with several readers, the source node's outputs their
	// nodes read, in the same order (set when the source starts).
	outs []chan message
	// picked: the source decodes the Calc's columns itself
	// (connector.ColumnSource), and its batches pass as they are;
	// recycle, if set, takes them back once their reader is done. Only
	// with one reader.
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
	// whole, if set, is a Calc whose filter reads the source's whole
	// rows, which pass as they are (filterWhole): filter is its Filter.
	whole *Calc
	// times: the source has a watermark, which reads picked rows as
	// SourceNode.picked says (timedBatch).
	times bool
	// decoded are the source's columns the decoders write (picked: the
	// picked layout; all of them otherwise), for textRecycle.
	decoded []int
	// madeBack, if set, gives a made batch back to the source once no
	// value of it is read any more (holdText).
	madeBack func(*row.Batch)
	// local, if set, folds each mapped batch for the aggregate that
	// reads the Calc's rows (fuse_local.go).
	local operator.LocalFolder
	// keyCols and keyWidth are the local phase's key columns and the
	// width of a partial batch's rows; keyStrings, that a key may be a
	// STRING; decodedBack gives a decoded batch back to the source.
	keyCols     []int
	keyWidth    int
	keyStrings  bool
	decodedBack func(*row.Batch)
}

// fusedReader is a fused Calc, a reader of the source node, and its
// node.
type fusedReader struct {
	calc *Calc
	op   *OpNode
	// next, if set, is a projecting Calc that is the only reader of
	// calc's node (a query's SELECT over a view's), run in the decoders
	// too over calc's rows, and nextOp its node.
	next   *Calc
	nextOp *OpNode
	// early and rest split calc's columns for next's filter to run
	// before the rest are projected (earlyFilter); early nil: it does not.
	early, rest []int
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
	// sparse: instead of before and rowTimes, which a source whose rows
	// carry their event time needs only where a row's time is at or
	// below the watermark of the rows before it (source_cut.go), behind
	// holds those rows (timedBatch), for a row of in-order data none.
	sparse bool
	behind []wmBehind
	// slabs are the memory of the batch's rows, and pool where they go
	// back once the batch's reader keeps none of them (release).
	slabs [][]row.Value
	pool  *slabPool
	// same: the batch is the source's own, its changes the decoded
	// ones (from is unused); recycle gives it back to the source.
	same    bool
	recycle func(*row.Batch)
	// by is the node that may release the batch (fusedReader.releaser).
	by *Node
	// parts, for a source read by several fused Calcs, are their
	// batches, one per fusion.readers (the batch itself holds no
	// change): each part's origin is a fusedOrigin of its own, and
	// before and rowTimes are this one's, for every row decoded (the
	// source cuts all parts at the same rows, source_fuse.go).
	parts []*row.Batch
	// partial, if set, is the local phase's fold of the batch, whose
	// changes are then one row per key (fuse_local.go).
	partial operator.Partial
	// back, if set, gives the batch back to the source once released,
	// for its read buffer (a made batch of a local phase's fusion:
	// connector.MappedTextRecycler).
	back func(*row.Batch)
}

// fuse finds the Calcs to run in their sources' decoders and tells the
// sources; it returns the fusion of each source node that has one.
func fuse(g *Graph) map[*SourceNode]*fusion {
	if readsWatermark(g) {
		return nil
	}
	readers, reader, opOf := readersOf(g)
	var out map[*SourceNode]*fusion
	for _, s := range g.Sources {
		f := fuseSource(g, s, readers, reader, opOf)
		if f == nil {
			continue
		}
		if out == nil {
			out = map[*SourceNode]*fusion{}
		}
		f.recycle = textRecycle(g, s, f.recycle, f.readers[0].releaser, f.picked && noText(s.Columns, f.decoded))
		holdText(g, f, readers, reader, opOf)
		out[s] = f
	}
	return out
}

// fuseSource returns the fusion of s, nil when it has none: each of its
// readers must be a Calc that may run per batch.
func fuseSource(g *Graph, s *SourceNode, readers map[*Node]int, reader map[*Node]*Node, opOf map[*Node]*OpNode) *fusion {
	var ops []*OpNode
	for _, op := range g.Ops {
		if op.Input == &s.Node {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 || len(ops) != readers[&s.Node] {
		return nil // a union or a sink reads the source too
	}
	if u, ok := s.Source.(connector.UpdatingSource); ok && u.Updating() {
		return nil // a Calc over updates pairs -U with +U: not per batch
	}
	if _, ok := s.Source.(connector.SplitSource); ok && s.EventTime != nil {
		return nil // the watermark is per split: on the source's goroutine
	}
	ms, ok := s.Source.(connector.MappingSource)
	if !ok {
		return nil
	}
	f := &fusion{src: s, slabs: newSlabPool()}
	for _, op := range ops {
		c, ok := op.Op.(*Calc)
		if !ok || c.Sequential {
			return nil // a Sequential Calc runs its rows in order
		}
		if s.Calc != nil && (s.Compute == nil || c.Project == nil) {
			// Computed columns run in the decoders only in the form
			// made for several goroutines, and only before a
			// projection, which copies the rows out of its scratch.
			return nil
		}
		rd := &fusedReader{calc: c, op: op}
		if readers[&op.Node] == 1 {
			rd.releaser = reader[&op.Node]
		}
		f.readers = append(f.readers, rd)
	}
	if len(ops) == 1 {
		var next *OpNode
		if readers[&ops[0].Node] == 1 {
			next = opOf[reader[&ops[0].Node]]
		}
		f.pickColumns(next)
	}
	// The mapped rows are new when every Calc projects them.
	fresh := true
	for _, rd := range f.readers {
		if !f.picked && readers[&rd.op.Node] == 1 {
			rd.chain(opOf[reader[&rd.op.Node]], readers, reader)
		}
		fresh = fresh && (rd.calc.Project != nil || rd.next != nil)
	}
	if !ms.MapBatches(f.mapBatch, fresh) {
		return nil
	}
	f.setLocal(opOf)
	for _, rd := range f.readers {
		rd.calc.fused = true
		if rd.next != nil {
			rd.next.fused = true
		}
	}
	return f
}

// readersOf counts the readers of each node of g; reader is a node's
// reader that may give its batches back, when it has one (an operator
// or a sink, which pass no input batch on as it is: a union does), and
// opOf the operator node of each node that is one.
func readersOf(g *Graph) (readers map[*Node]int, reader map[*Node]*Node, opOf map[*Node]*OpNode) {
	readers, reader, opOf = map[*Node]int{}, map[*Node]*Node{}, map[*Node]*OpNode{}
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
	return readers, reader, opOf
}

// poolCalcs gives each Calc node whose output one node reads, an
// operator or a sink, a pool for the slabs its rows are carved from
// (batchEmitter.carve): that reader gives each batch's slabs back once
// it keeps nothing of it (release), for the batches after. A Calc read
// by several nodes, or by a union, which passes its batches on, carves
// from new slabs. So does another operator that carves its rows
// (operator.Carving: a batch hash join's joined rows, a GROUP BY's
// output).
func poolCalcs(g *Graph) {
	readers, reader, _ := readersOf(g)
	for _, op := range g.Ops {
		_, calc := op.Op.(*Calc)
		if cv, ok := op.Op.(operator.Carving); ok && cv.CarvesRows() {
			calc = true
		}
		if !calc || readers[&op.Node] != 1 || reader[&op.Node] == nil {
			continue
		}
		op.slabs, op.slabsBy = newSlabPool(), reader[&op.Node]
	}
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
				sk.recycle = textRecycle(g, s, r.Recycle, &sk.Node, false)
			}
		}
	}
}

// textRecycle returns how the batches of source node s go back to it
// when by, the one node that gives them back with recycle, keeps no
// byte of their text once it did: a sink that encodes them
// (connector.TextCopier, and no Tap), or any node when no value of the
// batches points into text (noText: the decoded columns are numbers and
// times; their memory is only the rows', which recycle already reuses).
// It is then the source's TextRecycle, which reuses the memory the text
// is in too (a file's read buffers), when it has one; recycle otherwise.
func textRecycle(g *Graph, s *SourceNode, recycle func(*row.Batch), by *Node, textless bool) func(*row.Batch) {
	tr, ok := s.Source.(connector.TextRecycler)
	if recycle == nil || by == nil || !ok {
		return recycle
	}
	if textless {
		return tr.TextRecycle()
	}
	for _, sk := range g.Sinks {
		if &sk.Node != by {
			continue
		}
		if c, ok := sk.Sink.(connector.TextCopier); ok && c.CopiesText() && sk.Tap == nil {
			return tr.TextRecycle()
		}
	}
	return recycle
}

// noText reports whether no value of the columns cols of schema (all of
// them when cols is nil) can point into the text it was decoded from:
// none is a STRING, BYTES or a composite (whose elements may be
// either). The other types' values are held in the value itself (a
// DECIMAL's high word, if any, in memory of its own).
func noText(schema row.Schema, cols []int) bool {
	if cols == nil {
		cols = make([]int, schema.Len())
		for i := range cols {
			cols[i] = i
		}
	}
	for _, c := range cols {
		if c < 0 || c >= schema.Len() {
			return false
		}
		switch schema.Fields[c].Type.ID {
		case row.String, row.Bytes, row.Array, row.Map, row.Struct, row.Null:
			return false
		}
	}
	return true
}

// chain makes next, the only reader of the fused Calc's node, part of
// the fusion when it is a Calc: a Calc over inserts keeps no state, and
// the fused Calc's rows are inserts. Its rows are then made in the
// decoders (the fused Calc's own only in a scratch row), and the reader
// of its node, if it is the only one, gives them back. A next Calc that
// only filters (a WHERE over a view's SELECT) is chained when the fused
// Calc projects: the rows that pass are copied out of the scratch row
// (readerMap.add), so that the rows the filter drops are never made,
// nor sent to its node.
func (rd *fusedReader) chain(next *OpNode, readers map[*Node]int, reader map[*Node]*Node) {
	if next == nil {
		return
	}
	c, ok := next.Op.(*Calc)
	if !ok || c.Sequential || (c.Project == nil && (rd.calc.Project == nil || c.narrow != 0)) {
		return
	}
	rd.next, rd.nextOp = c, next
	rd.early, rd.rest = earlyFilter(rd.calc, c)
	rd.releaser = nil
	if readers[&next.Node] == 1 {
		rd.releaser = reader[&next.Node]
	}
}

// mapBatch runs the source's watermark expression and the fused Calc
// over b, on one of the source's decode goroutines; nil when a row's
// expressions fail (the batch then takes the serial way, in which
// on_error sees the row in order).
func (f *fusion) mapBatch(b *row.Batch) *row.Batch {
	out := f.mapRows(b)
	if f.local != nil && out != nil {
		return f.foldLocal(b, out)
	}
	return out
}

// mapRows is mapBatch's map, before the local phase.
func (f *fusion) mapRows(b *row.Batch) *row.Batch {
	if f.times {
		return f.timedBatch(b)
	}
	if f.picked && f.filter != nil {
		return f.filterBatch(b)
	}
	if f.picked {
		// The source decoded the Calc's rows: b is the result.
		b.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin}, records: row.RecordsIn(b), kept: b.Len(), wm: operator.NoWatermark,
			same: true, recycle: f.recycle, by: f.readers[0].releaser}
		return b
	}
	return f.calcRows(b)
}

// SlabRowsOnly implements operator.SlabRows: the rows a fusion mapped
// into slabs of its own, not a source's batch it gives back (recycle).
func (fo *fusedOrigin) SlabRowsOnly() bool { return fo.recycle == nil && !fo.same && fo.parts == nil }

// Position implements row.Origin.
func (fo *fusedOrigin) Position(i int) string {
	switch {
	case fo.parent == nil:
		return ""
	case fo.direct():
		return fo.parent.Position(i)
	}
	return fo.derivedOrigin.Position(i)
}

// Record implements row.RecordOrigin.
func (fo *fusedOrigin) Record(i int) (string, int64, bool) {
	if fo.parent == nil {
		return "", 0, false
	}
	if fo.direct() {
		if ro, ok := fo.parent.(row.RecordOrigin); ok {
			return ro.Record(i)
		}
		return "", 0, false
	}
	return fo.derivedOrigin.Record(i)
}

// Locate implements row.Locator.
func (fo *fusedOrigin) Locate(i int) (row.Location, bool) {
	if fo.parent == nil {
		return row.Location{}, false
	}
	if fo.direct() {
		if lo, ok := fo.parent.(row.Locator); ok {
			return lo.Locate(i)
		}
		return row.Location{}, false
	}
	return fo.derivedOrigin.Locate(i)
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
	// changes keeps the change lists of the batches given back, for the
	// next batches' (getChanges).
	changes chan []row.Change
}

// slabsKept bounds the slabs a pool holds: more than the batches in
// flight between the decoders and the aggregate use (a few blocks of
// some thousand rows), 8 MiB at most.
const slabsKept = 256

func newSlabPool() *slabPool {
	return &slabPool{free: make(chan []row.Value, slabsKept), changes: make(chan []row.Change, changesKept)}
}

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
	// Room for slabValues, so that a slab serves a reader of rows of any
	// width after (get(n) of another n).
	return make([]row.Value, n, max(n, slabValues))
}

// put keeps s for get, unless the pool is full.
func (p *slabPool) put(s []row.Value) {
	select {
	case p.free <- s:
	default:
	}
}

// changesKept bounds the change lists a pool holds: the batches in
// flight between a node and its reader.
const changesKept = 32

// getChanges returns an empty change list with room for n changes: a
// kept one, or a new one.
func (p *slabPool) getChanges(n int) []row.Change {
	select {
	case c := <-p.changes:
		if cap(c) >= n {
			return c
		}
	default:
	}
	return make([]row.Change, 0, n)
}

// putChanges keeps the list c for getChanges, unless the pool is full;
// its changes are cleared, so that it holds no row alive.
func (p *slabPool) putChanges(c []row.Change) {
	if cap(c) == 0 {
		return
	}
	clear(c)
	select {
	case p.changes <- c[:0]:
	default:
	}
}

// release gives the rows of b, a batch node n is done with, back to the
// fusion that mapped them, if one did and n is the one reader it gave
// them to; b's rows must not be read after.
func release(b *row.Batch, n *Node) {
	if so, ok := b.Origin.(*slabOrigin); ok {
		if so.by == n && so.pool != nil {
			for _, s := range so.slabs {
				so.pool.put(s)
			}
			so.pool.putChanges(b.Changes)
			so.slabs, so.pool = nil, nil
			b.Changes = nil
		}
		return
	}
	fo := fusedOf(b)
	if fo == nil || fo.by != n || fo.pool == nil && fo.recycle == nil && fo.back == nil {
		return // not the fusion's to take back, or not n's alone
	}
	if back := fo.back; back != nil {
		fo.back = nil
		defer back(b) // its read buffer, once its rows are given back
	}
	if fo.pool != nil {
		for _, s := range fo.slabs {
			fo.pool.put(s)
		}
		if fo.recycle == nil {
			fo.pool.putChanges(b.Changes) // the mapped batch's, not the source's own
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

// releaseEmpty gives back a batch a fusion mapped whose rows all failed
// the filter, which the source node sends no node: as its reader would
// have (release). Small blocks (a buffer's last lines) often come out
// empty; a selective filter leaves most of them so.
func releaseEmpty(b *row.Batch) {
	if fo := fusedOf(b); fo != nil && fo.by != nil && fo.parts == nil && b.Len() == 0 {
		text := takeHold(b, fo.by) // before release, which may give b back
		release(b, fo.by)
		if text != nil {
			text.done()
		}
	}
}

// fusedOf returns the mark of a batch a fusion mapped, or nil.
func fusedOf(b *row.Batch) *fusedOrigin {
	if b == nil {
		return nil
	}
	fo, _ := b.Origin.(*fusedOrigin)
	return fo
}
