package windowop

import "github.com/etld/etld/pipeline/row"

// ringRows are the rows of a ring, the oldest first: what a snapshot and
// a dump of the state read of a frame and of LAG's rows alike.
type ringRows interface {
	len() int
	at(i int) row.Row
}

// frameRing is a bounded frame's rows, the oldest first, in a ring of
// slots all in one array that grows when full: a row pushed or
// retracted is a place next to its partition's other rows, not a slice
// of its own a pointer away (a row a partition's state misses in the
// cache costs more than the rest of the row's work). Once the frame has
// its size it allocates nothing a row.
//
// A slot holds only the columns the frame reads again (cols: the
// aggregates' arguments and filters and the time, OverAgg.frameKept),
// not the row's width: half the memory of M-over's frames, each a
// partition's and touched at random. kept reads a slot so (the hot
// path, by the kept column's index); at gives the row back at its width
// (width: the widest pushed), the other columns NULL, as a snapshot
// and a dump have always shown it.
type frameRing struct {
	vals           []row.Value
	cols           []int
	width          int
	head, n, slots int
}

// reserve sizes an empty ring for slots rows of the columns cols.
func (q *frameRing) reserve(slots int, cols []int) {
	q.vals, q.cols, q.slots, q.head, q.n = make([]row.Value, slots*len(cols)), cols, slots, 0, 0
}

// grow doubles the slots of a full ring.
func (q *frameRing) grow() {
	slots, w := max(4, 2*q.slots), len(q.cols)
	vals := make([]row.Value, slots*w)
	for i := range q.n {
		copy(vals[i*w:], q.kept(i))
	}
	q.vals, q.slots, q.head = vals, slots, 0
}

// slot is the index in vals of the i-th slot from head.
func (q *frameRing) slot(i int) int {
	s := q.head + i
	if s >= q.slots {
		s -= q.slots
	}
	return s * len(q.cols)
}

// kept is the i-th row's kept columns (cols), the oldest first: the
// ring's memory, which the next push may overwrite once the row was
// popped.
func (q *frameRing) kept(i int) row.Row {
	s, w := q.slot(i), len(q.cols)
	return q.vals[s : s+w : s+w]
}

// at is the i-th row, the oldest first, at its width: a copy, the
// columns not kept NULL (a snapshot's and a dump's; ringRows).
func (q *frameRing) at(i int) row.Row {
	r := make(row.Row, q.width)
	for j, v := range q.kept(i) {
		if c := q.cols[j]; c < len(r) {
			r[c] = v
		}
	}
	return r
}

func (q *frameRing) len() int { return q.n }

// pushKept appends a copy of r's columns cols (NULL past its end); the
// values are the frame's own (row.DetachValue), so a frame pins no
// input batch. A restored row goes in the same way: the columns a frame
// does not keep are never read again.
func (q *frameRing) pushKept(r row.Row, cols []int) {
	if q.cols == nil {
		q.cols = cols
	}
	if q.n == q.slots {
		q.grow()
	}
	dst := q.kept(q.n)
	for j, c := range q.cols {
		dst[j] = row.NullValue
		if c < len(r) {
			dst[j] = row.DetachValue(r[c])
		}
	}
	q.width = max(q.width, len(r))
	q.n++
}

// popKept drops the oldest row; its slot's values stay until a push
// overwrites them (they are the frame's own copies: they pin nothing).
func (q *frameRing) popKept() {
	q.head++
	if q.head == q.slots {
		q.head = 0
	}
	q.n--
}
