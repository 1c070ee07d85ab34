package udf

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"
)

// Column is one argument of a batch: a value for each row, read in place
// from the batch (a String or Bytes value is valid during the call only:
// copy what you keep).
type Column struct {
	Type *Type
	n    int
	// nulls holds a byte per row, 1 for NULL.
	nulls []byte
	// fixed holds the values of a fixed-width type.
	fixed []byte
	// offs holds n+1 u32 offsets: into data for STRING and BYTES, into
	// the element (or key and value) columns for ARRAY and MAP.
	offs []byte
	data []byte
	// elem is an ARRAY's elements or a MAP's values, key a MAP's keys,
	// fields a ROW's fields.
	elem, key *Column
	fields    []*Column
}

// column reads the body of n values of t into c (a new column when c is
// nil; a column of an earlier batch is reused, its parts too).
func (r *reader) column(c *Column, t *Type, n int, depth int) (*Column, error) {
	if depth > 64 {
		return nil, errors.New("etld udf: a column nested too deep")
	}
	if c == nil {
		c = &Column{}
	}
	c.Type, c.n = t, n
	var err error
	if c.nulls, err = r.take(n); err != nil {
		return nil, err
	}
	if w := t.Code.Width(); w > 0 {
		c.fixed, err = r.take(w * n)
		return c, err
	}
	switch t.Code {
	case String, Bytes:
		if c.offs, err = r.take(4 * (n + 1)); err != nil {
			return nil, err
		}
		c.data, err = r.take(c.end(n))
		return c, err
	case Array, Map:
		if c.offs, err = r.take(4 * (n + 1)); err != nil {
			return nil, err
		}
		m := c.end(n)
		if m > len(r.b)-r.at {
			return nil, errShort
		}
		if t.Code == Map {
			if c.key, err = r.column(c.key, t.Key, m, depth+1); err != nil {
				return nil, err
			}
		}
		c.elem, err = r.column(c.elem, t.Elem, m, depth+1)
		return c, err
	case Row:
		for len(c.fields) < len(t.Fields) {
			c.fields = append(c.fields, nil)
		}
		c.fields = c.fields[:len(t.Fields)]
		for k, f := range t.Fields {
			if c.fields[k], err = r.column(c.fields[k], f.Type, n, depth+1); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	return nil, errors.New("etld udf: a column of an unknown type")
}

func (c *Column) end(i int) int { return int(binary.LittleEndian.Uint32(c.offs[4*i:])) }

// Len is the number of values.
func (c *Column) Len() int { return c.n }

// IsNull reports whether value i is NULL.
func (c *Column) IsNull(i int) bool { return c.nulls[i] != 0 }

// Bool is BOOLEAN value i.
func (c *Column) Bool(i int) bool { return c.fixed[i] != 0 }

// Int32 is value i of TINYINT, SMALLINT, INT or DATE (days since
// 1970-01-01).
func (c *Column) Int32(i int) int32 {
	switch c.Type.Code {
	case TinyInt:
		return int32(int8(c.fixed[i]))
	case SmallInt:
		return int32(int16(binary.LittleEndian.Uint16(c.fixed[2*i:])))
	}
	return int32(binary.LittleEndian.Uint32(c.fixed[4*i:]))
}

// Int64 is value i of BIGINT, TIME (microseconds of the day), TIMESTAMP
// or TIMESTAMP_LTZ (microseconds since 1970-01-01), or of a narrower
// integer type.
func (c *Column) Int64(i int) int64 {
	if c.Type.Code.Width() == 8 && c.Type.Code != Double {
		return int64(binary.LittleEndian.Uint64(c.fixed[8*i:]))
	}
	return int64(c.Int32(i))
}

// Float64 is value i of DOUBLE or FLOAT.
func (c *Column) Float64(i int) float64 {
	if c.Type.Code == Float {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(c.fixed[4*i:])))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(c.fixed[8*i:]))
}

// Decimal is DECIMAL value i: its unscaled value as a 128-bit two's
// complement integer (low and high words); the scale is the type's.
func (c *Column) Decimal(i int) (lo uint64, hi int64) {
	b := c.fixed[16*i:]
	return binary.LittleEndian.Uint64(b), int64(binary.LittleEndian.Uint64(b[8:]))
}

// Bytes is BYTES or STRING value i, in place.
func (c *Column) Bytes(i int) []byte { return c.data[c.end(i):c.end(i+1)] }

// String is STRING value i, in place: valid during the call only.
func (c *Column) String(i int) string {
	b := c.Bytes(i)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Items is the range of elements of ARRAY (or entries of MAP) value i in
// Elem (and Key).
func (c *Column) Items(i int) (from, to int) { return c.end(i), c.end(i + 1) }

// Elem is an ARRAY's element column or a MAP's value column.
func (c *Column) Elem() *Column { return c.elem }

// Key is a MAP's key column.
func (c *Column) Key() *Column { return c.key }

// Field is a ROW's k-th field column.
func (c *Column) Field(k int) *Column { return c.fields[k] }

// Value is value i as a Go value: nil for NULL, bool, int32 (TINYINT,
// SMALLINT, INT, DATE), int64 (BIGINT, TIME, TIMESTAMP, TIMESTAMP_LTZ),
// float32, float64, Dec (DECIMAL), string, []byte, []any (ARRAY, and ROW
// by field), []KV (MAP).
func (c *Column) Value(i int) any {
	if c.IsNull(i) {
		return nil
	}
	switch c.Type.Code {
	case Boolean:
		return c.Bool(i)
	case TinyInt, SmallInt, Int, Date:
		return c.Int32(i)
	case BigInt, Time, Timestamp, TimestampLTZ:
		return c.Int64(i)
	case Float:
		return float32(c.Float64(i))
	case Double:
		return c.Float64(i)
	case Decimal:
		lo, hi := c.Decimal(i)
		return Dec{Lo: lo, Hi: hi, Scale: c.Type.Scale}
	case String:
		return string(c.Bytes(i))
	case Bytes:
		return append([]byte(nil), c.Bytes(i)...)
	case Array:
		from, to := c.Items(i)
		out := make([]any, 0, to-from)
		for j := from; j < to; j++ {
			out = append(out, c.elem.Value(j))
		}
		return out
	case Map:
		from, to := c.Items(i)
		out := make([]KV, 0, to-from)
		for j := from; j < to; j++ {
			out = append(out, KV{Key: c.key.Value(j), Value: c.elem.Value(j)})
		}
		return out
	case Row:
		out := make([]any, len(c.fields))
		for k, f := range c.fields {
			out[k] = f.Value(i)
		}
		return out
	}
	return nil
}

// Dec is a DECIMAL: Unscaled × 10^-Scale, Unscaled the 128-bit integer
// of words Hi and Lo.
type Dec struct {
	Lo    uint64
	Hi    int64
	Scale int
}

// KV is one entry of a MAP.
type KV struct{ Key, Value any }
