package row

import (
	"strconv"
	"unsafe"
)

// Origin names the input records a batch's changes came from, so that an
// error a change causes downstream (a CAST that fails in a transform) can
// name the record: "orders.csv:2", "orders/0/17". A source sets
// Batch.Origin; the runtime gives an operator's output batches an origin
// that maps each change back to the input change that caused it.
// Position is called only when an error names a change, never per row.
type Origin interface {
	// Position names the record change i came from, or "" when no one
	// record did (a window's result, fired by a watermark).
	Position(i int) string
}

// RecordOrigin is an Origin that also gives the record as values, without
// rendering a string: the input (a file's name, a topic's partition) and
// the record's number in it. A sink that writes each record's position
// beside its output (the Kafka sink's exactly-once headers) reads it per
// change. ok is false when no one record made change i.
type RecordOrigin interface {
	Origin
	Record(i int) (input string, num int64, ok bool)
}

// RecordCounter is an Origin that knows how many records its batch's
// changes came from: fewer than the changes when a record decodes into
// several (a changelog update's -U and +U, a Canal message's rows).
type RecordCounter interface {
	Records() int
}

// RecordsIn is the number of records b's changes came from: its changes
// unless its Origin counts them.
func RecordsIn(b *Batch) int {
	if rc, ok := b.Origin.(RecordCounter); ok {
		return rc.Records()
	}
	return b.Len()
}

// Positions is a source's Origin: change i came from record number num
// of a named input, written input, separator, num: "orders.csv:2" (a
// file and its line, separator ":") or "orders/0/17" (a topic's partition
// and the offset, separator "/"). A source marks each record after
// decoding it; that costs no allocation per row.
type Positions struct {
	sep string
	// nums holds each change's record number; spans the inputs, each
	// from the change it starts at, in order.
	nums  []int64
	spans []span
	// offs holds each change's record's byte offset (-1: not known),
	// once a record was marked with MarkAt.
	offs []int64
}

type span struct {
	input string
	// id is the identity of the file the input names (MarkAt).
	id   string
	from int
}

// Location is where a record starts in the file it was read from: beyond
// the name and line Position gives, its byte offset and the file's
// identity ("device:inode", "" where the system has none), which stay
// true when the file is renamed, as a rotated log is, and tell apart the
// files one name stood for.
type Location struct {
	File   string
	ID     string
	Line   int64
	Offset int64
}

// Locator is an Origin that locates its changes' records in files.
type Locator interface {
	// Locate returns the location of change i's record; ok is false
	// when it is not known.
	Locate(i int) (loc Location, ok bool)
}

// NewPositions makes Positions for a batch of up to capacity changes.
func NewPositions(capacity int, separator string) *Positions {
	return &Positions{sep: separator, nums: make([]int64, 0, capacity)}
}

// Mark says that the changes of the batch from the last mark up to its
// length n came from record num of input. An n below the length marked so
// far forgets the changes past it (a record given back to the reader).
func (p *Positions) Mark(n int, input string, num int64) {
	p.mark(n, input, "", num, -1)
}

// MarkAt is Mark for a record read from a file: it also keeps the
// record's byte offset in the file and the file's identity id
// ("device:inode", or ""), for Locate. The same name with another
// identity (a log rotated under it) is another input.
func (p *Positions) MarkAt(n int, input, id string, num, offset int64) {
	// The common mark, once per record of one change: the next change,
	// of the input and file of the last span, room in both slices.
	if k := len(p.nums); n == k+1 && k < cap(p.nums) && p.offs != nil && k < cap(p.offs) {
		if last := len(p.spans) - 1; last >= 0 && sameString(p.spans[last].input, input) && sameString(p.spans[last].id, id) {
			p.nums, p.offs = p.nums[:n], p.offs[:n]
			p.nums[k], p.offs[k] = num, offset
			return
		}
	}
	if p.offs == nil && n > len(p.nums) {
		p.offs = make([]int64, len(p.nums), cap(p.nums))
		for i := range p.offs {
			p.offs[i] = -1
		}
	}
	p.mark(n, input, id, num, offset)
}

func (p *Positions) mark(n int, input, id string, num, offset int64) {
	if n <= len(p.nums) {
		p.truncate(n)
		return
	}
	if k := len(p.spans); k == 0 || p.spans[k-1].input != input || p.spans[k-1].id != id {
		p.spans = append(p.spans, span{input: input, id: id, from: len(p.nums)})
	}
	for len(p.nums) < n {
		p.nums = append(p.nums, num)
		if p.offs != nil {
			p.offs = append(p.offs, offset)
		}
	}
}

func (p *Positions) truncate(n int) {
	p.nums = p.nums[:n]
	if p.offs != nil {
		p.offs = p.offs[:n]
	}
	for k := len(p.spans); k > 0 && p.spans[k-1].from >= n; k-- {
		p.spans = p.spans[:k-1]
	}
}

// Input returns the input change i came from ("" if not marked).
func (p *Positions) Input(i int) string {
	if i < 0 || i >= len(p.nums) || len(p.spans) == 0 {
		return ""
	}
	return p.span(i).input
}

// span returns the span change i falls in.
func (p *Positions) span(i int) span {
	k := len(p.spans) - 1
	for k > 0 && p.spans[k].from > i {
		k--
	}
	return p.spans[k]
}

// Locate implements Locator for the records marked with MarkAt.
func (p *Positions) Locate(i int) (Location, bool) {
	if i < 0 || i >= len(p.offs) || p.offs[i] < 0 {
		return Location{}, false
	}
	sp := p.span(i)
	return Location{File: sp.input, ID: sp.id, Line: p.nums[i], Offset: p.offs[i]}, true
}

// Records implements RecordCounter: the changes whose record differs
// from the one before them.
func (p *Positions) Records() int {
	n, k := 0, 0
	for i, num := range p.nums {
		start := k+1 < len(p.spans) && p.spans[k+1].from == i
		if start {
			k++
		}
		if i == 0 || start || num != p.nums[i-1] {
			n++
		}
	}
	return n
}

// Position implements Origin.
func (p *Positions) Position(i int) string {
	if i < 0 || i >= len(p.nums) {
		return ""
	}
	return p.span(i).input + p.sep + strconv.FormatInt(p.nums[i], 10)
}

// Record implements RecordOrigin.
func (p *Positions) Record(i int) (string, int64, bool) {
	if i < 0 || i >= len(p.nums) {
		return "", 0, false
	}
	return p.span(i).input, p.nums[i], true
}

// Sequence is the Origin of a batch whose change i is record First+i of
// one input (a generator's rows, counted from 1).
type Sequence struct {
	Prefix string
	First  int64
}

// Position implements Origin.
func (s Sequence) Position(i int) string {
	if i < 0 {
		return ""
	}
	return s.Prefix + strconv.FormatInt(s.First+int64(i), 10)
}

// Record implements RecordOrigin: the input is the prefix.
func (s Sequence) Record(i int) (string, int64, bool) {
	if i < 0 {
		return "", 0, false
	}
	return s.Prefix, s.First + int64(i), true
}

// sameString is a == b, without comparing bytes when both are the same
// string (a source marks its rows with the same name each time).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
