package joinop

// The batch interval hash join's rows held, and its end: both sides'
// rows laid out by key and time, then joined key by key.

import (
	"encoding/binary"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// ihSide is one side's rows held: each one's key id (-1: a NULL in it),
// time and encoding, in the order they came until the end, then by key
// and time (byKey). Until the end they are in chunks that are filled
// and never moved (an append that grows a slice copies what it holds
// again and again): a row's offset is its chunk's index << 32 and its
// place in it.
//
// A row's leading columns, those the join reads at the end, are beside
// it as well when their encoding takes 8 bytes or less (the header and
// one or two small numbers, say): heads. If every row's does (no row
// was long), the end lays those out by key and time and reads nothing
// else: no copy of the encodings into key order, no arena.
type ihSide struct {
	kids   [][]int32
	rows   [][]ihRow
	heads  [][]uint64
	long   bool
	chunks [][]byte
	n      int
	enc    []byte // a row's encoding, before it goes to a chunk
	held   int64  // the chunks' bytes
}

// The chunks' sizes (variables: tests make them small).
var (
	ihRowsShift = 14      // a chunk of kids and rows holds 1 << ihRowsShift
	ihChunk     = 1 << 20 // an arena chunk's bytes, at least
)

// add holds row r (the side's held columns, of layout lay, the join
// reading its first read ones at the end) of key kid and time at.
func (s *ihSide) add(kid int32, at int64, lay *row.Layout, read int, r row.Row) {
	s.enc = lay.Append(s.enc[:0], r)
	last := len(s.chunks) - 1
	if last < 0 || cap(s.chunks[last])-len(s.chunks[last]) < len(s.enc) {
		s.chunks = append(s.chunks, make([]byte, 0, max(ihChunk, len(s.enc))))
		last++
		s.held += int64(cap(s.chunks[last]))
	}
	if s.n&(1<<ihRowsShift-1) == 0 {
		s.kids = append(s.kids, make([]int32, 0, 1<<ihRowsShift))
		s.rows = append(s.rows, make([]ihRow, 0, 1<<ihRowsShift))
		s.heads = append(s.heads, make([]uint64, 0, 1<<ihRowsShift))
		s.held += int64(4+16+8) << ihRowsShift
	}
	var head uint64
	if !s.long {
		if n := lay.Size(s.enc, read); n <= 8 {
			var b [8]byte
			copy(b[:], s.enc[:n])
			head = binary.LittleEndian.Uint64(b[:])
		} else {
			s.long = true
		}
	}
	c := s.n >> ihRowsShift
	s.heads[c] = append(s.heads[c], head)
	s.kids[c] = append(s.kids[c], kid)
	s.rows[c] = append(s.rows[c], ihRow{at: at, off: last<<32 | len(s.chunks[last])})
	s.chunks[last] = append(s.chunks[last], s.enc...)
	s.n++
}

// bytes is the memory the side holds.
func (s *ihSide) bytes() int64 { return s.held }

// at returns row i held, its key id and its encoding (and what follows
// it in its chunk).
func (s *ihSide) at(i int) (int32, ihRow, []byte) {
	h := s.rows[i>>ihRowsShift][i&(1<<ihRowsShift-1)]
	return s.kids[i>>ihRowsShift][i&(1<<ihRowsShift-1)], h, s.chunks[h.off>>32][h.off&(1<<32-1):]
}

// byKey lays the side's rows out by key id, those of a NULL key first,
// a key's in time order (ties in the order they came), and copies their
// encodings into one arena in that order, so that the join reads both
// front to back rather than a cache miss a row. It returns the rows,
// their arena and where each key's rows start: those of key k are
// rows[start[k+1]:start[k+2]], those of a NULL key rows[:start[1]].
// With no long row the arena is nil and each row's offset its head
// (encAt). The side holds nothing after.
func (s *ihSide) byKey(keys int) (start []int32, rows []ihRow, arena []byte) {
	inline := !s.long
	if inline {
		// The end reads the heads alone: the encodings (kept for a
		// snapshot) go before the laid-out rows take their room.
		s.chunks = nil
	}
	start = make([]int32, keys+2)
	for _, kids := range s.kids {
		for _, kid := range kids {
			start[kid+2]++
		}
	}
	for b := range keys + 1 {
		start[b+1] += start[b]
	}
	// rows' offsets are, until the copy, indexes of the rows held.
	rows = make([]ihRow, s.n)
	next := slices.Clone(start[:keys+1])
	size := 0
	for c, kids := range s.kids {
		for k, kid := range kids {
			off := c<<ihRowsShift | k
			if inline {
				off = int(s.heads[c][k])
			}
			rows[next[kid+1]] = ihRow{at: s.rows[c][k].at, off: off}
			next[kid+1]++
		}
	}
	for _, ch := range s.chunks {
		size += len(ch)
	}
	s.kids = nil
	for b := range keys + 1 {
		seg := rows[start[b]:start[b+1]]
		if !slices.IsSortedFunc(seg, byTime) {
			slices.SortStableFunc(seg, byTime)
		}
	}
	if inline {
		*s = ihSide{}
		return start, rows, nil
	}
	arena = make([]byte, 0, size)
	for k := range rows {
		i := rows[k].off
		h := s.rows[i>>ihRowsShift][i&(1<<ihRowsShift-1)]
		ch := s.chunks[h.off>>32]
		from, end := h.off&(1<<32-1), len(ch)
		if i+1 < s.n {
			if nx := s.rows[(i+1)>>ihRowsShift][(i+1)&(1<<ihRowsShift-1)].off; nx>>32 == h.off>>32 {
				end = nx & (1<<32 - 1)
			}
		}
		rows[k].off = len(arena)
		arena = append(arena, ch[from:end]...)
	}
	*s = ihSide{}
	return start, rows, arena
}

// encAt is the encoding of the laid row at off of arena, or with no
// arena (byKey) its leading columns, inline in off, copied into buf.
func encAt(arena []byte, off int, buf *[8]byte) []byte {
	if arena == nil {
		binary.LittleEndian.PutUint64(buf[:], uint64(off))
		return buf[:]
	}
	return arena[off:]
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
	// read are the columns of a held row the end reads: out, or every
	// one.
	read [2]int
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
		c.read = [2]int{s.LeftWidth, s.RightWidth}
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
	c.read = c.out
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
	for i := range s.n {
		kid, _, enc := s.at(i)
		if side == 1 && kid < 0 {
			continue // a self-join's row of a NULL key: left only
		}
		if keep == nil {
			lay.Decode(view, enc, nil)
		} else {
			lay.Decode(held, enc, nil)
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
	lstart, lrows, larena := j.sides[0].byKey(keys)
	rstart, rrows, rarena := lstart, lrows, larena
	if !j.self {
		rstart, rrows, rarena = j.sides[1].byKey(keys)
	}
	// The rows of a NULL key (bucket 0) meet no right row.
	for b := range keys + 1 {
		var rows []ihRow
		if b > 0 {
			rows = rrows[rstart[b]:rstart[b+1]]
		}
		if err := j.joinKey(lrows[lstart[b]:lstart[b+1]], larena, rows, rarena, out); err != nil {
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
	var lbuf, rbuf [8]byte
	first := 0
	for _, l := range lrows {
		lo, hi := subSat(l.at, s.Upper), subSat(l.at, s.Lower)
		for first < len(rrows) && rrows[first].at < lo {
			first++
		}
		matched := false
		if c.keep[0] != nil {
			// The picked columns alone (IntervalJoinSpec.Output).
			c.lays[0].DecodeFirst(lv, c.out[0], encAt(larena, l.off, &lbuf), &j.text)
			for i := first; i < len(rrows) && rrows[i].at <= hi; i++ {
				c.lays[1].DecodeFirst(rv, c.out[1], encAt(rarena, rrows[i].off, &rbuf), &j.text)
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
		c.lays[0].Decode(lv, encAt(larena, l.off, &lbuf), &j.text)
		for i := first; i < len(rrows) && rrows[i].at <= hi; i++ {
			jr := j.slab.get(w)
			copy(jr, lv)
			c.lays[1].Decode(jr[lw:], encAt(rarena, rrows[i].off, &rbuf), &j.text)
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
