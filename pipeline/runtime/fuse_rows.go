package runtime

import (
	"context"
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The decoders' pass over a batch (calcRows): the source's computed
// columns once per row, then each fused Calc's filter and projection
// over them. A source read by several Calcs makes a batch for each
// (fusedOrigin.parts), which the source node sends to each reader's
// node alone (forwardParts), cut for the watermark at the same rows as
// the serial way would cut the batch it sends them all.

// calcRows evaluates the watermark and the fused Calcs over b's rows,
// the source node's output for b: nil when an expression fails on a row
// (the batch then takes the serial way).
func (f *fusion) calcRows(b *row.Batch) *row.Batch {
	s := f.src
	wm := operator.NoWatermark
	// With several readers, the watermark's candidates and the rows'
	// times are noted for every row, for cuts at the same rows in every
	// part; with one, for the rows that pass (fewer cuts).
	shared := len(f.readers) > 1
	var before, rowTimes []int64
	if s.EventTime != nil && shared {
		before = make([]int64, 0, b.Len())
		if s.RowTime != nil {
			rowTimes = make([]int64, 0, b.Len())
		}
	}
	// The computed columns, if any, into a scratch row the Calcs project
	// out of before the next row.
	var compute func(row.Row) (row.Row, error)
	if s.Calc != nil {
		compute = s.Compute()
	}
	maps := make([]readerMap, len(f.readers))
	for k, rd := range f.readers {
		maps[k].init(rd, f.slabs, b.Len(), s.EventTime != nil && !shared, s.RowTime != nil)
	}
	for i, ch := range b.Changes {
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
			if before != nil {
				before = append(before, prev)
				if rowTimes != nil {
					rowTimes = append(rowTimes, s.RowTime(r))
				}
			}
		}
		for k := range maps {
			if !maps[k].add(f, i, ch.Kind, r, prev) {
				return nil
			}
		}
	}
	records := row.RecordsIn(b)
	if !shared {
		return maps[0].batch(f, b, records, wm)
	}
	fo := &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin}, records: records, kept: b.Len(), wm: wm,
		before: before, rowTimes: rowTimes, parts: make([]*row.Batch, len(maps))}
	for k := range maps {
		fo.parts[k] = maps[k].batch(f, b, records, wm)
	}
	return &row.Batch{Origin: fo}
}

// readerMap is what one fused Calc (and the Calc chained after it)
// makes of a batch in the decoders.
type readerMap struct {
	rd   *fusedReader
	last *Calc // the Calc the rows come out of: rd.next, or rd.calc
	// mid is the fused Calc's row when a next Calc reads it; memoC and
	// memoL the rows the two Calcs' shared subexpressions are kept in
	// (memoRow), this goroutine's own.
	mid, memoC, memoL row.Row
	// pass maps the rows made to the batch's (for their positions).
	pass []int32
	out  *row.Batch
	// slab is what is left of the slab the rows are carved from, slabs
	// all the batch's.
	slab  row.Row
	slabs [][]row.Value
	// before and rowTimes: for each row made, the watermark candidate
	// of the rows before it and its event time (fusedOrigin).
	before, rowTimes []int64
	midRows          int
	// early and rest, when early is not nil, split the fused Calc's
	// columns in two: those the next Calc's filter reads, projected
	// before it runs, and the others, projected for the rows it keeps
	// (earlyFilter).
	early, rest []int
}

// earlyFilter returns the columns of c's projection that next's filter
// reads and the others, when the filter may run before the others are
// projected: c's projection cannot fail (so no row's error is missed for
// a row the filter drops), the filter says what it reads, and next reads
// the projected row no further through a memo of its own (the memo's
// copy of the row is taken before the filter). nil, nil otherwise.
func earlyFilter(c, next *Calc) (early, rest []int) {
	if !c.ProjectInfallible || next.Filter == nil || next.FilterReads == nil || (next.Memo != 0 && next.Project != nil) {
		return nil, nil
	}
	reads := make([]bool, len(c.Project))
	for _, j := range next.FilterReads {
		if j < 0 || j >= len(reads) {
			return nil, nil
		}
		reads[j] = true
	}
	early = []int{}
	for j, r := range reads {
		if r {
			early = append(early, j)
		} else {
			rest = append(rest, j)
		}
	}
	return early, rest
}

// projectSome computes columns cols of c's projection of r into out.
func projectSome(c *Calc, r, out row.Row, cols []int) error {
	for _, j := range cols {
		v, err := c.Project[j](r)
		if err != nil {
			return err
		}
		out[j] = v
	}
	return nil
}

func (m *readerMap) init(rd *fusedReader, pool *slabPool, n int, times, rowTimes bool) {
	c := rd.calc
	m.rd, m.last = rd, c
	if rd.next != nil {
		m.last = rd.next
		if c.Project != nil {
			m.mid = make(row.Row, len(c.Project))
			m.early, m.rest = rd.early, rd.rest
		}
	}
	m.memoC, m.memoL = c.newMemo(), memoOf(m.last, c)
	m.pass = make([]int32, 0, n)
	if rd.releaser != nil {
		// A list the reader gave back with its batch's slabs (release).
		m.out = &row.Batch{Changes: pool.getChanges(n)}
	} else {
		m.out = &row.Batch{Changes: make([]row.Change, 0, n)}
	}
	if times {
		m.before = make([]int64, 0, n)
		if rowTimes {
			m.rowTimes = make([]int64, 0, n)
		}
	}
}

// add runs the Calcs over r, change i of kind k of the batch, with prev
// the watermark candidate of the rows before it; false when an
// expression failed.
func (m *readerMap) add(f *fusion, i int, k row.Kind, r row.Row, prev int64) bool {
	c, last := m.rd.calc, m.last
	rc := c.memoRow(m.memoC, r)
	if c.Filter != nil {
		ok, err := c.Filter(rc)
		if err != nil {
			return false
		}
		if !ok {
			return true
		}
	}
	// in is the row the last Calc reads, inL the same for its
	// expressions (memoRow).
	in, inL := r, rc
	if m.rd.next != nil {
		if m.mid != nil {
			var err error
			if m.early != nil {
				err = projectSome(c, rc, m.mid, m.early)
			} else {
				err = c.projectInto(rc, m.mid)
			}
			if err != nil {
				return false
			}
			in = m.mid
		}
		inL = last.memoRow(m.memoL, in)
		m.midRows++
		if last.Filter != nil {
			ok, err := last.Filter(inL)
			if err != nil {
				return false
			}
			if !ok {
				return true
			}
		}
		if m.early != nil {
			if err := projectSome(c, rc, m.mid, m.rest); err != nil {
				return false
			}
		}
	}
	m.pass = append(m.pass, int32(i))
	if m.before != nil {
		m.before = append(m.before, prev)
		if m.rowTimes != nil {
			m.rowTimes = append(m.rowTimes, f.src.RowTime(r))
		}
	}
	if last.Project == nil && m.mid == nil {
		m.out.Append(k, in)
		return true
	}
	// A projection, or a filter alone after the fused Calc's projection,
	// whose rows are the scratch m.mid: copied out.
	w := len(last.Project)
	if last.Project == nil {
		w = len(m.mid)
	}
	if len(m.slab) < w {
		m.slab = f.slabs.get(max(w, slabValues/max(w, 1)*w))
		m.slabs = append(m.slabs, m.slab)
	}
	pr := m.slab[:w:w]
	m.slab = m.slab[w:]
	if last.Project == nil {
		copy(pr, m.mid)
	} else if err := last.projectInto(inL, pr); err != nil {
		return false
	}
	m.out.Append(k, pr)
	return true
}

// batch is the reader's batch made of b: records the records b was
// decoded from, wm the largest watermark candidate among its rows.
func (m *readerMap) batch(f *fusion, b *row.Batch, records int, wm int64) *row.Batch {
	fo := &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin, from: m.pass}, records: records, kept: b.Len(), wm: wm,
		before: m.before, rowTimes: m.rowTimes, mid: m.midRows}
	if m.rd.releaser != nil {
		fo.slabs, fo.pool, fo.by = m.slabs, f.slabs, m.rd.releaser
		if f.madeBack != nil {
			fo.hold, fo.holdBy = newTextHold(f.madeBack, m.out), m.rd.releaser
		}
	}
	m.out.Origin = fo
	return m.out
}

// memoOf is newMemo of last, the Calc a fusion's rows come out of, when
// it is not first, the fused one.
func memoOf(last, first *Calc) row.Row {
	if last == first {
		return nil
	}
	return last.newMemo()
}

// count counts for a fused Calc's node (and the one chained after it)
// what they would have counted of a part p of a mapped batch: the node
// counts the rows it is sent.
func (rd *fusedReader) count(fo *fusedOrigin, n int) {
	rd.op.Stats.RowsIn.Add(int64(fo.kept - n))
	if rd.next != nil {
		// The fused Calc sent mid rows to the next one.
		rd.op.Stats.RowsOut.Add(int64(fo.mid - n))
		rd.nextOp.Stats.RowsIn.Add(int64(fo.mid - n))
	}
}

// outputs returns, for each reader of the fusion, the output of its
// source node that its node reads.
func (f *fusion) outputs() []chan message {
	outs := make([]chan message, len(f.readers))
	for k, rd := range f.readers {
		for i, to := range f.src.outTo {
			if to == &rd.op.Node {
				outs[k] = f.src.outs[i]
			}
		}
	}
	return outs
}

// forwardParts sends the parts of a batch that a source read by several
// fused Calcs mapped, each to its reader's node, with the watermark cut
// in before the same rows as in the serial way (which sends every
// reader the whole batch, cut so, and each Calc filters its pieces).
// It returns the source's watermark.
func (s *SourceNode) forwardParts(ctx context.Context, fo *fusedOrigin, fz *fusion, outs []chan message, wm int64) (int64, error) {
	s.Stats.RowsIn.Add(int64(fo.records))
	s.Stats.RowsOut.Add(int64(fo.kept))
	for k, p := range fo.parts {
		fz.readers[k].count(fusedOf(p), p.Len())
	}
	cuts, next := s.fusedCuts(fo, len(fo.before), wm)
	// sent is how many of each part's rows went out; upTo sends each
	// part's rows that come from the batch's rows before at.
	sent := make([]int, len(fo.parts))
	upTo := func(at int) error {
		for k, p := range fo.parts {
			from, hi := fusedOf(p).from, sent[k]
			for hi < len(from) && int(from[hi]) < at {
				hi++
			}
			if hi > sent[k] {
				if err := s.sendTo(ctx, outs[k], message{batch: piece(p, sent[k], hi)}); err != nil {
					return err
				}
			}
			sent[k] = hi
		}
		return nil
	}
	for _, c := range cuts {
		if err := upTo(c.at); err != nil {
			return wm, err
		}
		wm = c.wm
		s.Stats.setWatermark(wm)
		if err := s.send(ctx, message{kind: msgWatermark, watermark: wm}); err != nil {
			return wm, err
		}
	}
	if err := upTo(math.MaxInt); err != nil {
		return wm, err
	}
	if next <= wm {
		return wm, nil
	}
	s.Stats.setWatermark(next)
	return next, s.send(ctx, message{kind: msgWatermark, watermark: next})
}
