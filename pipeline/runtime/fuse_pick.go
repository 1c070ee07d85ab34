package runtime

import (
	"slices"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A fused Calc that passes the source's rows on as they are, all its
// columns or some of them picked (SELECT *, SELECT k, amount), with or
// without a filter: the decoded batch is the Calc's, filtered in place,
// and its reader can give it back to the source.

// pickColumns has the source decode the columns a Calc that only picks
// columns projects (Calc.Columns), when it can and nothing else reads
// the source's rows (a watermark): the Calc then has at most its filter
// left to do, and its rows are never copied. The source's rows are then
// the Calc's, serial or parallel, mapped or not. A filter reads a picked
// row's columns where they are (filterPicked); the columns it reads that
// the Calc does not project are decoded after the projected ones, and
// the rows that pass are cut to the projected ones (Calc.narrow).
// next is the only reader of the Calc's node, if an operator.
func (f *fusion) pickColumns(next *OpNode) {
	s, c := f.src, f.readers[0].calc
	if s.Calc != nil {
		return // the Calc reads the table's row, not the decoded one
	}
	if c.Columns == nil && c.Project == nil && c.Filter != nil && s.EventTime == nil {
		f.filterWhole(next)
		return
	}
	if c.Columns == nil {
		return
	}
	layout := c.Columns
	var reads, times []pickedRead
	width := 0
	if c.Filter != nil {
		if c.FilterReads == nil || c.InputWidth <= 0 {
			return // the columns it reads, or the rows' width, not known
		}
		layout, reads, width = pickedLayout(c.Columns, c.FilterReads)
	}
	if s.EventTime != nil {
		// The watermark and the rows' times read the columns TimeReads
		// names, decoded after the Calc's (and its filter's), from a
		// whole row of the source's width (pickedTimes).
		if s.TimeReads == nil || c.Input.Len() != s.Columns.Len() || c.Input.Len() == 0 {
			return
		}
		layout, times, _ = pickedLayout(layout, s.TimeReads)
	}
	cs, ok := s.Source.(connector.ColumnSource)
	if !ok || !cs.SelectColumns(layout) {
		return
	}
	c.Project = nil
	if len(layout) > len(c.Columns) {
		f.narrow, c.narrow = len(c.Columns), len(c.Columns)
	}
	if times != nil {
		s.picked = &pickedTimes{reads: times, layout: layout, width: s.Columns.Len()}
		if sh := s.TimeShift; sh != nil && s.RowTime != nil && sh.Column == s.TimeReads[0] {
			s.picked.shift, s.picked.at = sh, slices.Index(layout, sh.Column)
		}
		s.timeScratch = make(row.Row, s.picked.width)
		f.times = true
	}
	if c.Filter != nil {
		f.filter, f.reads, f.width = c.Filter, reads, width
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
	f.picked, f.decoded = true, layout
	f.recycleDecoded()
}

// filterWhole fuses a Calc that filters the source's rows and passes
// those that pass as they are (SELECT * ... WHERE): the decoders filter
// each batch in place, and the Calc's reader gives it back to the source
// once done with it, which writes its next rows into it (when its
// decoder writes every value of a row: BatchRecycler). Mapped the
// general way (calcRows), the rows would go on in a new batch and the
// decoded one would never be reused: a new batch per block, as wide as
// the table (30 columns: about 1 MB per 1024 rows), zeroed, faulted in
// and collected. Not when the reader is a projecting Calc: chained
// (fusedReader.chain), it projects in the decoders, and the decoded
// batch is reused already.
func (f *fusion) filterWhole(next *OpNode) {
	if next != nil {
		if nc, ok := next.Op.(*Calc); ok && nc.Project != nil {
			return
		}
	}
	c := f.readers[0].calc
	f.filter, f.whole, f.picked = c.Filter, c, true
	f.recycleDecoded()
}

// recycleDecoded has the Calc's reader give the decoded batches back to
// the source, when the source takes them (connector.BatchRecycler) and
// the reader says when it is done with one.
func (f *fusion) recycleDecoded() {
	if r, ok := f.src.Source.(connector.BatchRecycler); ok && f.readers[0].releaser != nil {
		f.recycle = r.Recycle
	}
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
	var scratch, memo row.Row
	if f.whole != nil {
		memo = f.whole.newMemo() // this goroutine's own
	} else {
		scratch = make(row.Row, f.width)
	}
	pass := make([]int32, 0, b.Len())
	for i, ch := range b.Changes {
		var ok bool
		var err error
		if f.whole != nil {
			ok, err = f.filter(f.whole.memoRow(memo, ch.Row))
		} else {
			ok, err = filterPicked(f.filter, scratch, f.reads, ch.Row, f.memoOf(scratch))
		}
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
		recycle: f.recycle, by: f.readers[0].releaser}
	return b
}
