package windowop

import "github.com/etld/etld/pipeline/row"

// ringRows are the rows of a ring, the oldest first: what a snapshot and
// a dump of the state read of a frame and of LAG's rows alike.
type ringRows interface {
	len() int
	at(i int) row.Row
}

// frameRing is a bounded frame's rows, the oldest first, in a ring of
// slots of w values each, all in one array that grows when full: a row
// pushed or retracted is a place next to its partition's other rows,
// not a slice of its own a pointer away (a row a partition's state
// misses in the cache costs more than the rest of the row's work). Once
// the frame has its size it allocates nothing a row.
type frameRing struct {
	vals           []row.Value
	w              int
	head, n, slots int
}

// reserve sizes an empty ring for slots rows of width w.
func (q *frameRing) reserve(slots, w int) {
	q.vals, q.w, q.slots, q.head, q.n = make([]row.Value, slots*w), w, slots, 0, 0
}

// grow makes room for one more row of width w: twice the slots when
// full, a wider slot for a wider row (the narrower rows' other columns
// NULL).
func (q *frameRing) grow(w int) {
	slots, nw := q.slots, max(q.w, w)
	if q.n == slots {
		slots = max(4, 2*slots)
	}
	vals := make([]row.Value, slots*nw)
	for i := range q.n {
		copy(vals[i*nw:], q.at(i))
	}
	q.vals, q.w, q.slots, q.head = vals, nw, slots, 0
}

// slot is the index in vals of the i-th slot from head.
func (q *frameRing) slot(i int) int {
	s := q.head + i
	if s >= q.slots {
		s -= q.slots
	}
	return s * q.w
}

// at is the i-th row, the oldest first: the ring's memory, which the
// next push may overwrite once the row was popped.
func (q *frameRing) at(i int) row.Row {
	s := q.slot(i)
	return q.vals[s : s+q.w : s+q.w]
}

func (q *frameRing) len() int { return q.n }

// pushKept appends a copy of r that holds only the columns keep marks
// (the others NULL): a frame keeps what its aggregates read and its
// time. The values are the frame's own (row.DetachValue), so a frame
// pins no input batch.
func (q *frameRing) pushKept(r row.Row, keep []bool) {
	if q.n == q.slots || len(r) > q.w {
		q.grow(len(r))
	}
	dst := q.at(q.n)
	for i := range dst {
		switch {
		case i < len(r) && i < len(keep) && keep[i]:
			dst[i] = row.DetachValue(r[i])
		default:
			dst[i] = row.NullValue
		}
	}
	q.n++
}

// pushAll appends a copy of every value of r (a restored frame row,
// which holds what it held when saved).
func (q *frameRing) pushAll(r row.Row) {
	if q.n == q.slots || len(r) > q.w {
		q.grow(len(r))
	}
	dst := q.at(q.n)
	for i := range dst {
		dst[i] = row.NullValue
		if i < len(r) {
			dst[i] = row.DetachValue(r[i])
		}
	}
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
