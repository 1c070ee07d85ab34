package joinop

// The batch interval hash join's rows held, and its end: both sides'
// rows laid out by key and time, then joined key by key.

import (
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// ihSide is one side's rows held: each one's key id (-1: a NULL in it),
// time and encoding's offset in arena, in the order they came until the
// end, then by key and time (byKey).
type ihSide struct {
	kids  []int32
	rows  []ihRow
	arena []byte
}

// add holds row r (the side's held columns) of key kid and time at.
func (s *ihSide) add(kid int32, at int64, lay *row.Layout, r row.Row) {
	s.kids = append(s.kids, kid)
	s.rows = append(s.rows, ihRow{at: at, off: len(s.arena)})
	s.arena = lay.Append(s.arena, r)
}

// bytes is the memory the side holds.
func (s *ihSide) bytes() int64 {
	return int64(cap(s.arena)) + int64(cap(s.rows))*16 + int64(cap(s.kids))*4
}

// byKey lays the side's rows out by key id, those of a NULL key first,
// a key's in time order (ties in the order they came), and copies their
// encodings into a new arena in that order, so that the join reads
// both front to back rather than a cache miss a row. It returns where
// each key's rows start: those of key k are rows[start[k+1]:start[k+2]],
// those of a NULL key rows[:start[1]].
func (s *ihSide) byKey(keys int) []int32 {
	start := make([]int32, keys+2)
	for _, kid := range s.kids {
		start[kid+2]++
	}
	for b := range keys + 1 {
		start[b+1] += start[b]
	}
	// sorted's offsets are, until the copy, indexes into rows.
	sorted := make([]ihRow, len(s.rows))
	next := slices.Clone(start[:keys+1])
	for i, kid := range s.kids {
		sorted[next[kid+1]] = ihRow{at: s.rows[i].at, off: i}
		next[kid+1]++
	}
	s.kids = nil
	for b := range keys + 1 {
		seg := sorted[start[b]:start[b+1]]
		if !slices.IsSortedFunc(seg, byTime) {
			slices.SortStableFunc(seg, byTime)
		}
	}
	arena := make([]byte, 0, len(s.arena))
	for k := range sorted {
		i := sorted[k].off
		end := len(s.arena)
		if i+1 < len(s.rows) {
			end = s.rows[i+1].off
		}
		sorted[k].off = len(arena)
		arena = append(arena, s.arena[s.rows[i].off:end]...)
	}
	s.rows, s.arena = sorted, arena
	return start
}

func byTime(a, b ihRow) int {
	switch {
	case a.at < b.at:
		return -1
	case a.at > b.at:
		return 1
	}
	return 0
}

// ihCols are the columns the join holds of each side's rows. Without
// Output, or with a residual (which reads the whole joined row), every
// column in order (keep nil). Otherwise the columns Output picks of the
// side first, then the key and time columns (a snapshot writes them,
// which the sorted join reads), no other: the join decodes the first
// out[side] columns of a held row alone. A self-join holds the columns
// of both sides' in one row.
type ihCols struct {
	keep [2][]int
	lays [2]*row.Layout
	out  [2]int
	// pick is, for each column of Output, its side and its column in
	// that side's held row.
	pick []ihPick
}

type ihPick struct {
	side int
	col  int
}

func holdCols(s *IntervalJoinSpec, self bool) ihCols {
	var c ihCols
	types := [2][]row.TypeID{typesOf(s.LeftTypes, s.LeftWidth), typesOf(s.RightTypes, s.RightWidth)}
	if s.Output == nil || s.Residual != nil {
		c.lays = [2]*row.Layout{row.NewLayout(types[0]), row.NewLayout(types[1])}
		if self {
			c.lays[1] = c.lays[0]
		}
		return c
	}
	at := [2]map[int]int{{}, {}} // input column -> held column
	hold := func(side, col int) int {
		if self {
			side = 0
		}
		if k, ok := at[side][col]; ok {
			return k
		}
		at[side][col] = len(c.keep[side])
		c.keep[side] = append(c.keep[side], col)
		return at[side][col]
	}
	for _, oc := range s.Output {
		side, col := 0, oc
		if oc >= s.LeftWidth {
			side, col = 1, oc-s.LeftWidth
		}
		c.pick = append(c.pick, ihPick{side: side, col: hold(side, col)})
	}
	c.out = [2]int{len(c.keep[0]), len(c.keep[1])}
	for side, keys := range [2][]int{s.LeftKeys, s.RightKeys} {
		for _, k := range keys {
			hold(side, k)
		}
		hold(side, [2]int{s.LeftTime, s.RightTime}[side])
	}
	if self {
		c.keep[1], c.out[1] = c.keep[0], c.out[0]
	}
	for side := range c.lays {
		c.lays[side] = row.NewLayout(pickTypes(types[side], c.keep[side]))
	}
	return c
}

// pickTypes is types at cols.
func pickTypes(types []row.TypeID, cols []int) []row.TypeID {
	out := make([]row.TypeID, len(cols))
	for k, c := range cols {
		out[k] = types[c]
	}
	return out
}

// eachHeld calls f with each row held of side, decoded into a row of
// the input's width (the columns not held NULL), in the order they
// came; f must not keep the row.
func (j *IntervalHashJoin) eachHeld(side int, f func(row.Row) error) error {
	s := &j.sides[side]
	if j.self {
		s = &j.sides[0]
	}
	keep, lay := j.cols.keep[side], j.cols.lays[side]
	view := make(row.Row, [2]int{j.spec.LeftWidth, j.spec.RightWidth}[side])
	held := make(row.Row, len(keep))
	for i, h := range s.rows {
		if side == 1 && s.kids[i] < 0 {
			continue // a self-join's row of a NULL key: left only
		}
		if keep == nil {
			lay.Decode(view, s.arena[h.off:], nil)
		} else {
			lay.Decode(held, s.arena[h.off:], nil)
			for k, c := range keep {
				view[c] = held[k]
			}
		}
		if err := f(view); err != nil {
			return err
		}
	}
	return nil
}

// join lays the rows held out by key and time, then joins them key by
// key, once, and frees them all.
func (j *IntervalHashJoin) join(out operator.Emitter) error {
	if j.joined {
		return nil
	}
	j.joined = true
	keys := int(j.nkeys)
	left := &j.sides[0]
	lstart := left.byKey(keys)
	right, rstart := left, lstart
	if !j.self {
		right = &j.sides[1]
		rstart = right.byKey(keys)
	}
	// The rows of a NULL key (bucket 0) meet no right row.
	for b := range keys + 1 {
		var rows []ihRow
		if b > 0 {
			rows = right.rows[rstart[b]:rstart[b+1]]
		}
		if err := j.joinKey(left.rows[lstart[b]:lstart[b+1]], left.arena, rows, right.arena, out); err != nil {
			return err
		}
	}
	*j = IntervalHashJoin{Widening: j.Widening, spec: j.spec, inner: j.inner, joined: true, index: state.NewKeyIDs()}
	return nil
}

// joinKey joins the left rows of one key, in time order, with the right
// rows of that key, in time order, within the bounds:
// left time - Upper <= right time <= left time - Lower. The first right
// row within a left row's bounds is never before the previous one's.
func (j *IntervalHashJoin) joinKey(lrows []ihRow, larena []byte, rrows []ihRow, rarena []byte, out operator.Emitter) error {
	s := &j.spec
	c := &j.cols
	outer := s.Kind == LeftJoin
	lw, w := s.LeftWidth, s.LeftWidth+s.RightWidth
	lv, rv := j.views[0], j.views[1]
	first := 0
	for _, l := range lrows {
		lo, hi := subSat(l.at, s.Upper), subSat(l.at, s.Lower)
		for first < len(rrows) && rrows[first].at < lo {
			first++
		}
		matched := false
		if c.keep[0] != nil {
			// The picked columns alone (IntervalJoinSpec.Output).
			c.lays[0].DecodeFirst(lv, c.out[0], larena[l.off:], &j.text)
			for i := first; i < len(rrows) && rrows[i].at <= hi; i++ {
				c.lays[1].DecodeFirst(rv, c.out[1], rarena[rrows[i].off:], &j.text)
				jr := j.slab.get(len(c.pick))
				for k, p := range c.pick {
					if p.side == 0 {
						jr[k] = lv[p.col]
					} else {
						jr[k] = rv[p.col]
					}
				}
				matched = true
				out.Emit(row.Insert, jr)
			}
			if !matched && outer {
				jr := j.slab.get(len(c.pick))
				for k, p := range c.pick {
					if p.side == 0 {
						jr[k] = lv[p.col]
					}
				}
				out.Emit(row.Insert, jr)
			}
			continue
		}
		c.lays[0].Decode(lv, larena[l.off:], &j.text)
		for i := first; i < len(rrows) && rrows[i].at <= hi; i++ {
			jr := j.slab.get(w)
			copy(jr, lv)
			c.lays[1].Decode(jr[lw:], rarena[rrows[i].off:], &j.text)
			if s.Residual != nil {
				ok, err := s.Residual(jr)
				if err != nil {
					j.slab.unget(jr)
					return err
				}
				if !ok {
					j.slab.unget(jr)
					continue
				}
			}
			matched = true
			out.Emit(row.Insert, j.project(jr))
		}
		if !matched && outer {
			out.Emit(row.Insert, j.project(padRow(0, lv, s.LeftWidth, s.RightWidth)))
		}
	}
	return nil
}

// project returns the columns Output of the joined or padded row jr
// (jr itself without Output): a residual reads the whole row first.
func (j *IntervalHashJoin) project(jr row.Row) row.Row { return j.slab.pick(jr, j.spec.Output) }

// subSat is a - b, held within int64.
func subSat(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		if b > 0 {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	return d
}
