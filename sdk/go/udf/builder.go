package udf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Builder writes a column of results, one value per Append call in row
// order. A value of a kind the column's type cannot take is an error
// that fails the whole call (Err).
type Builder struct {
	Type  *Type
	nulls []byte
	fixed []byte
	offs  []uint32
	data  []byte
	// elem, key and fields build nested values' parts.
	elem, key *Builder
	fields    []*Builder
	err       error
}

// NewBuilder makes a builder of values of t.
func NewBuilder(t *Type) *Builder {
	b := &Builder{Type: t}
	b.reset()
	return b
}

func (b *Builder) reset() {
	b.nulls, b.fixed, b.data, b.err = b.nulls[:0], b.fixed[:0], b.data[:0], nil
	b.offs = append(b.offs[:0], 0)
	switch b.Type.Code {
	case Array, Map:
		if b.elem == nil {
			b.elem = NewBuilder(b.Type.Elem)
		}
		b.elem.reset()
		if b.Type.Code == Map {
			if b.key == nil {
				b.key = NewBuilder(b.Type.Key)
			}
			b.key.reset()
		}
	case Row:
		if b.fields == nil {
			for _, f := range b.Type.Fields {
				b.fields = append(b.fields, NewBuilder(f.Type))
			}
		}
		for _, f := range b.fields {
			f.reset()
		}
	}
}

// Len is the number of values appended.
func (b *Builder) Len() int { return len(b.nulls) }

// Err is the first value the column could not take.
func (b *Builder) Err() error { return b.err }

func (b *Builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// AppendNull appends NULL.
func (b *Builder) AppendNull() {
	b.nulls = append(b.nulls, 1)
	if w := b.Type.Code.Width(); w > 0 {
		b.fixed = append(b.fixed, make([]byte, w)...)
		return
	}
	switch b.Type.Code {
	case String, Bytes, Array, Map:
		b.offs = append(b.offs, b.offs[len(b.offs)-1])
	case Row:
		for _, f := range b.fields {
			f.AppendNull()
		}
	}
}

// Bool appends a BOOLEAN.
func (b *Builder) Bool(v bool) {
	if b.Type.Code != Boolean {
		b.fail("a BOOLEAN in a column of code %d", b.Type.Code)
		return
	}
	b.nulls = append(b.nulls, 0)
	if v {
		b.fixed = append(b.fixed, 1)
	} else {
		b.fixed = append(b.fixed, 0)
	}
}

// Int64 appends an integer to a column of an integer type, DATE, TIME,
// TIMESTAMP or TIMESTAMP_LTZ (in the units Column.Int64 and Int32 give),
// FLOAT or DOUBLE; a value the type cannot hold is an error.
func (b *Builder) Int64(v int64) {
	le := binary.LittleEndian
	switch b.Type.Code {
	case TinyInt:
		if v < math.MinInt8 || v > math.MaxInt8 {
			b.fail("%d does not fit a TINYINT", v)
			return
		}
		b.fixed = append(b.fixed, byte(v))
	case SmallInt:
		if v < math.MinInt16 || v > math.MaxInt16 {
			b.fail("%d does not fit a SMALLINT", v)
			return
		}
		b.fixed = le.AppendUint16(b.fixed, uint16(v))
	case Int, Date:
		if v < math.MinInt32 || v > math.MaxInt32 {
			b.fail("%d does not fit an INT", v)
			return
		}
		b.fixed = le.AppendUint32(b.fixed, uint32(v))
	case BigInt, Time, Timestamp, TimestampLTZ:
		b.fixed = le.AppendUint64(b.fixed, uint64(v))
	case Float, Double:
		b.Float64(float64(v))
		return
	default:
		b.fail("an integer in a column of code %d", b.Type.Code)
		return
	}
	b.nulls = append(b.nulls, 0)
}

// Float64 appends to a DOUBLE or FLOAT column.
func (b *Builder) Float64(v float64) {
	switch b.Type.Code {
	case Double:
		b.fixed = binary.LittleEndian.AppendUint64(b.fixed, math.Float64bits(v))
	case Float:
		b.fixed = binary.LittleEndian.AppendUint32(b.fixed, math.Float32bits(float32(v)))
	default:
		b.fail("a float in a column of code %d", b.Type.Code)
		return
	}
	b.nulls = append(b.nulls, 0)
}

// Decimal appends a DECIMAL's unscaled value (in the column's scale).
func (b *Builder) Decimal(lo uint64, hi int64) {
	if b.Type.Code != Decimal {
		b.fail("a DECIMAL in a column of code %d", b.Type.Code)
		return
	}
	b.fixed = binary.LittleEndian.AppendUint64(b.fixed, lo)
	b.fixed = binary.LittleEndian.AppendUint64(b.fixed, uint64(hi))
	b.nulls = append(b.nulls, 0)
}

// String appends to a STRING or BYTES column.
func (b *Builder) String(s string) {
	if b.Type.Code != String && b.Type.Code != Bytes {
		b.fail("a string in a column of code %d", b.Type.Code)
		return
	}
	b.data = append(b.data, s...)
	b.offs = append(b.offs, uint32(len(b.data)))
	b.nulls = append(b.nulls, 0)
}

// Bytes appends to a BYTES or STRING column.
func (b *Builder) Bytes(v []byte) {
	if b.Type.Code != String && b.Type.Code != Bytes {
		b.fail("bytes in a column of code %d", b.Type.Code)
		return
	}
	b.data = append(b.data, v...)
	b.offs = append(b.offs, uint32(len(b.data)))
	b.nulls = append(b.nulls, 0)
}

// Append appends a Go value as Column.Value gives them (nil is NULL;
// an int is taken as int64; a ROW is []any by field, a MAP []KV).
func (b *Builder) Append(v any) {
	switch x := v.(type) {
	case nil:
		b.AppendNull()
	case bool:
		b.Bool(x)
	case int:
		b.Int64(int64(x))
	case int32:
		b.Int64(int64(x))
	case int64:
		b.Int64(x)
	case float32:
		b.Float64(float64(x))
	case float64:
		b.Float64(x)
	case Dec:
		b.Decimal(x.Lo, x.Hi)
	case string:
		b.String(x)
	case []byte:
		b.Bytes(x)
	case []KV:
		if b.Type.Code != Map {
			b.fail("a map in a column of code %d", b.Type.Code)
			return
		}
		for _, kv := range x {
			b.key.Append(kv.Key)
			b.elem.Append(kv.Value)
		}
		b.offs = append(b.offs, uint32(b.elem.Len()))
		b.nulls = append(b.nulls, 0)
	case []any:
		switch b.Type.Code {
		case Array:
			for _, e := range x {
				b.elem.Append(e)
			}
			b.offs = append(b.offs, uint32(b.elem.Len()))
		case Row:
			if len(x) != len(b.fields) {
				b.fail("a ROW of %d fields, the type has %d", len(x), len(b.fields))
				return
			}
			for k, f := range b.fields {
				f.Append(x[k])
			}
		default:
			b.fail("a list in a column of code %d", b.Type.Code)
			return
		}
		b.nulls = append(b.nulls, 0)
	default:
		b.fail("a value of Go type %T", v)
	}
}

// firstErr is the first error of b and its parts.
func (b *Builder) firstErr() error {
	if b.err != nil {
		return b.err
	}
	for _, p := range append([]*Builder{b.key, b.elem}, b.fields...) {
		if p != nil {
			if err := p.firstErr(); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendColumn writes the column: its type, then its body.
func (b *Builder) appendColumn(dst []byte) []byte {
	return b.appendBody(appendType(dst, b.Type))
}

func (b *Builder) appendBody(dst []byte) []byte {
	dst = append(dst, b.nulls...)
	if b.Type.Code.Width() > 0 {
		return append(dst, b.fixed...)
	}
	switch b.Type.Code {
	case String, Bytes:
		for _, o := range b.offs {
			dst = binary.LittleEndian.AppendUint32(dst, o)
		}
		return append(dst, b.data...)
	case Array, Map:
		for _, o := range b.offs {
			dst = binary.LittleEndian.AppendUint32(dst, o)
		}
		if b.key != nil {
			dst = b.key.appendBody(dst)
		}
		return b.elem.appendBody(dst)
	case Row:
		for _, f := range b.fields {
			dst = f.appendBody(dst)
		}
	}
	return dst
}
