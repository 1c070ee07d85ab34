package runtime

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Picked columns under a watermark. The source's watermark expression
// and its rows' times (SourceNode.EventTime, RowTime) read the table's
// whole rows; a source that decodes a fused Calc's columns only
// (pickColumns) decodes the columns they read too, after the Calc's, and
// they read them from a whole row of the source's width that holds
// those (pickedTimes.fill): in the decoders, each batch with a row of
// its own (timedBatch), and in the serial way the source goroutine's
// (SourceNode.prepare). A row on which they fail goes to on_error as the
// whole row it would have been (the columns nothing reads are NULL
// either way: the planner's projection leaves them undecoded), and the
// rows that go on are cut to the Calc's columns (Calc.narrow).

// pickedTimes is where the columns the watermark reads are in a picked
// row (reads), the columns a picked row holds (layout), and the width of
// a whole row.
type pickedTimes struct {
	reads  []pickedRead
	layout []int
	width  int
	// shift, if set, is the watermark as the event-time column, at
	// picked column at, plus a constant (SourceNode.TimeShift).
	shift *TimeShift
	at    int
}

// shifted returns the watermark candidate and the event time of the
// picked row r when the watermark is a shifted column; ok is false when
// the column is NULL or the sum overflows (EventTime then says how, on
// the serial way).
func (p *pickedTimes) shifted(r row.Row) (ts, rt int64, ok bool) {
	v := r[p.at]
	if v.IsNull() {
		return 0, 0, false
	}
	us, by := v.Micros(), p.shift.Micros
	if t := us + by; (us >= 0) != (by >= 0) || (t >= 0) == (us >= 0) {
		return t, us, true
	}
	return 0, 0, false
}

// fill puts the columns of the picked row r the watermark reads where it
// reads them in whole, and returns whole.
func (p *pickedTimes) fill(whole, r row.Row) row.Row {
	for _, m := range p.reads {
		whole[m.full] = r[m.picked]
	}
	return whole
}

// clear takes the values fill put out of whole, which then keeps no
// value of a row alive.
func (p *pickedTimes) clear(whole row.Row) {
	for _, m := range p.reads {
		whole[m.full] = row.NullValue
	}
}

// whole returns the picked row r as a new row of the source's width, for
// a bad record.
func (p *pickedTimes) whole(r row.Row) row.Row {
	w := make(row.Row, p.width)
	for j, col := range p.layout {
		if j < len(r) {
			w[col] = r[j]
		}
	}
	return w
}

// timeRow returns the row the source's EventTime and RowTime read of its
// decoded row r: r, or with picked columns the source goroutine's whole
// row holding r's columns they read.
func (s *SourceNode) timeRow(r row.Row) row.Row {
	if s.picked == nil {
		return r
	}
	return s.picked.fill(s.timeScratch, r)
}

// timedBatch is mapBatch for picked columns under a watermark: the
// watermark and the times of b's rows, then the fused Calc's filter, if
// any, with b's rows that pass kept in place and cut to the Calc's
// columns; nil when the watermark or the filter fails on a row (b is
// then as it was, for the serial way).
func (f *fusion) timedBatch(b *row.Batch) *row.Batch {
	s, p := f.src, f.src.picked
	var whole row.Row
	if p.shift == nil {
		whole = make(row.Row, p.width)
	}
	var scratch row.Row
	if f.filter != nil {
		scratch = make(row.Row, f.width)
	}
	n := b.Len()
	// With the rows' event times, the rows a cut may come before are
	// those at or below the watermark of the rows before them (behind);
	// without, every rise of the watermark is one (before, every row's).
	exact := s.RowTime != nil
	var before []int64
	var behind []wmBehind
	if !exact {
		before = make([]int64, 0, n)
	}
	var pass []int32
	if f.filter != nil {
		pass = make([]int32, 0, n)
	}
	wm := operator.NoWatermark
	kept := 0
	for i, ch := range b.Changes {
		var ts, rt int64
		has := true
		if p.shift != nil {
			var ok bool
			if ts, rt, ok = p.shifted(ch.Row); !ok {
				return nil
			}
		} else {
			tr := p.fill(whole, ch.Row)
			var err error
			if ts, has, err = s.EventTime(tr); err != nil {
				return nil
			}
			if exact {
				rt = s.RowTime(tr)
			}
		}
		prev := wm
		if has && ts > wm {
			wm = ts
		}
		if f.filter != nil {
			ok, err := filterPicked(f.filter, scratch, f.reads, ch.Row, f.memoOf(scratch))
			if err != nil {
				return nil
			}
			if !ok {
				continue
			}
			pass = append(pass, int32(i))
		}
		if !exact {
			before = append(before, prev)
		} else if rt <= prev {
			behind = append(behind, wmBehind{at: int32(kept), wm: prev})
		}
		kept++
	}
	if whole != nil {
		p.clear(whole)
	}
	records := row.RecordsIn(b)
	fo := &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin, from: pass}, records: records, kept: n, wm: wm,
		before: before, behind: behind, sparse: exact, recycle: f.recycle, by: f.readers[0].releaser}
	if f.filter == nil {
		fo.same = true
	} else {
		for j, i := range pass {
			b.Changes[j] = b.Changes[i]
		}
		b.Changes = b.Changes[:len(pass)]
	}
	if k := f.narrow; k > 0 {
		for j := range b.Changes {
			b.Changes[j].Row = b.Changes[j].Row[:k:k]
		}
	}
	b.Origin = fo
	return b
}
