package row

import (
	"encoding/binary"
	"unsafe"
)

// Layout encodes the rows of one schema for state held in memory, where
// AppendRow's encoding (a type byte and a varint per value) costs a
// switch and a varint per value to read back: a row a join keeps is read
// again for every row of the other side it matches. Knowing each
// column's type, a Layout writes no type and no width:
//
//	header   2 bits a column, little-endian within each byte: 0 NULL,
//	         1 the column's type in its own form below, 2 AppendValue's
//	         encoding (a value whose type is not the column's, or a type
//	         without a form of its own: DECIMAL)
//	values   the non-NULL columns in order: BOOLEAN, INT, BIGINT, DATE,
//	         TIME as a zig-zag varint (the ids and counts of a row are
//	         small); FLOAT, DOUBLE, TIMESTAMP(_LTZ) as 8 bytes of the
//	         payload, little-endian (a varint of microseconds since 1970
//	         takes 8 too); STRING, BYTES, ARRAY, MAP, ROW as a uvarint
//	         length and the bytes
//
// Every value reads back identical to the one written, whatever its
// type: the header's 2 falls back to the tagged form. The encoding is for
// memory only, never for a checkpoint: it has no version and no checks,
// and Decode trusts its input (bytes that did not come from Append of the
// same Layout may panic).
type Layout struct {
	ids   []TypeID
	kinds []layoutKind
	head  int
}

type layoutKind uint8

const (
	layoutTagged layoutKind = iota
	layoutFixed
	layoutVarint
	layoutText
)

// The 2-bit states of a column in a Layout's header.
const (
	layoutNull  = 0
	layoutTyped = 1
	layoutTag   = 2
)

// NewLayout returns the layout of rows whose columns have the types ids;
// a Null there is a column of no known type (its values tagged).
func NewLayout(ids []TypeID) *Layout {
	l := &Layout{ids: append([]TypeID(nil), ids...), kinds: make([]layoutKind, len(ids)), head: (len(ids) + 3) / 4}
	for i, id := range ids {
		switch id {
		case Float, Double, Timestamp, TimestampLTZ:
			l.kinds[i] = layoutFixed
		case Boolean, Int, BigInt, Date, Time:
			l.kinds[i] = layoutVarint
		case String, Bytes, Array, Map, Struct:
			l.kinds[i] = layoutText
		}
	}
	return l
}

// Width is the number of columns.
func (l *Layout) Width() int { return len(l.ids) }

// Append appends r's encoding (r has Width columns) to dst.
func (l *Layout) Append(dst []byte, r Row) []byte { return l.AppendWithout(dst, r, -1) }

// AppendWithout appends r's encoding (r has Width columns) with column
// skip written NULL, whatever it holds: for a holder that keeps that
// value beside the row, with no copy of the row made to blank it.
func (l *Layout) AppendWithout(dst []byte, r Row, skip int) []byte {
	start := len(dst)
	for range l.head {
		dst = append(dst, 0)
	}
	for i, v := range r {
		state := byte(layoutTag)
		switch {
		case v.id == Null || i == skip:
			state = layoutNull
		case v.id == l.ids[i] && v.scale == 0 && l.kinds[i] == layoutFixed && v.s == "":
			state = layoutTyped
			dst = binary.LittleEndian.AppendUint64(dst, v.n)
		case v.id == l.ids[i] && v.scale == 0 && l.kinds[i] == layoutVarint && v.s == "":
			state = layoutTyped
			dst = binary.AppendVarint(dst, int64(v.n))
		case v.id == l.ids[i] && v.scale == 0 && l.kinds[i] == layoutText && v.n == 0:
			state = layoutTyped
			dst = binary.AppendUvarint(dst, uint64(len(v.s)))
			dst = append(dst, v.s...)
		default:
			dst = AppendValue(dst, v)
		}
		dst[start+i>>2] |= state << (2 * (i & 3))
	}
	return dst
}

// Decode decodes b, one row of Append's encoding, into dst (of Width
// columns). Text is copied into text; with text nil it aliases b, for a
// caller that is done with the row before b changes.
func (l *Layout) Decode(dst Row, b []byte, text *Text) { l.DecodeFirst(dst, len(l.ids), b, text) }

// DecodeFirst decodes the first n columns of b, one row of Append's
// encoding, into dst[:n], as Decode does: a reader of a row's leading
// columns alone reads none of the others.
func (l *Layout) DecodeFirst(dst Row, n int, b []byte, text *Text) {
	dst = dst[:n]
	off := l.head
	for i := range dst {
		switch b[i>>2] >> (2 * (i & 3)) & 3 {
		case layoutNull:
			dst[i] = Value{}
		case layoutTyped:
			switch l.kinds[i] {
			case layoutFixed:
				dst[i] = Value{id: l.ids[i], n: binary.LittleEndian.Uint64(b[off:])}
				off += 8
				continue
			case layoutVarint:
				n, w := binary.Varint(b[off:])
				dst[i] = Value{id: l.ids[i], n: uint64(n)}
				off += w
				continue
			}
			n, w := binary.Uvarint(b[off:])
			off += w
			dst[i] = Value{id: l.ids[i], s: text.String(b[off : off+int(n)])}
			off += int(n)
		default:
			d := Decoder{buf: b[off:], alias: true}
			v := d.value()
			off += d.off
			if v.s != "" && text != nil {
				v.s = text.String(unsafe.Slice(unsafe.StringData(v.s), len(v.s)))
			}
			dst[i] = v
		}
	}
}

// Size returns the bytes of b's header and of its first n columns'
// values (b one row of Append's encoding, or more): a copy of those
// bytes reads back with DecodeFirst(n).
func (l *Layout) Size(b []byte, n int) int {
	off := l.head
	for i := range n {
		switch b[i>>2] >> (2 * (i & 3)) & 3 {
		case layoutNull:
		case layoutTyped:
			switch l.kinds[i] {
			case layoutFixed:
				off += 8
			case layoutVarint:
				_, w := binary.Varint(b[off:])
				off += w
			default:
				m, w := binary.Uvarint(b[off:])
				off += w + int(m)
			}
		default:
			d := Decoder{buf: b[off:], alias: true}
			d.value()
			off += d.off
		}
	}
	return off
}

// Text holds copies of strings in chunks that many of them share: the
// text of rows decoded from state for a batch, one allocation for a
// chunk's worth of strings rather than one each. A string keeps its whole
// chunk alive, as a string read from a source's block does (an operator
// that keeps a value detaches it: Detach). The zero Text is ready; a nil
// *Text copies nothing.
type Text struct{ buf []byte }

// textChunk is a Text's chunk size; a string of more than a quarter of
// it gets an allocation of its own.
const textChunk = 16 << 10

// String returns a copy of b (b itself as a string on a nil Text).
func (t *Text) String(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case t == nil:
		return unsafe.String(unsafe.SliceData(b), len(b))
	case len(b) > textChunk/4:
		return string(b)
	}
	if len(b) > cap(t.buf)-len(t.buf) {
		t.buf = make([]byte, 0, textChunk)
	}
	at := len(t.buf)
	t.buf = append(t.buf, b...)
	return unsafe.String(&t.buf[at], len(b))
}
