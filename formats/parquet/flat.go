package parquet

import (
	"encoding/binary"
	"math"

	"github.com/etld/etld/pipeline/row"
)

// presize bounds the values a column's buffers are made for before they
// are needed.
const presize = 1 << 17

// newColumn is the typed buffer of a top-level scalar column of type t
// named name, made for n values.
func newColumn(name string, t row.Type, n int) *column {
	c := &column{name: name, optional: !t.NotNull}
	defer c.presize(n)
	switch t.ID {
	case row.Boolean:
		c.phys = physBoolean
	case row.Int, row.Date, row.Time:
		c.phys = physInt32
	case row.BigInt, row.Timestamp, row.TimestampLTZ:
		c.phys = physInt64
	case row.Float:
		c.phys = physFloat
	case row.Double:
		c.phys = physDouble
	case row.String:
		c.phys, c.dict = physBytes, true
	case row.Bytes:
		c.phys = physBytes
	case row.Decimal:
		switch {
		case t.Precision <= 9:
			c.phys = physInt32
		case t.Precision <= 18:
			c.phys = physInt64
		default:
			c.phys, c.width = physFixed, decimalBytes(t.Precision)
		}
	}
	return c
}

// flat appends column c of rows, a top-level scalar column, to col:
// each type has a loop of its own, the conversion chosen once for the
// column rather than once per value, since a conversion called through a
// function value costs more than the conversion itself. It returns the
// row of an error.
func (s *shredder) flat(rows []row.Row, c int, col *column) (int, error) {
	if k, err := col.addLevels(rows, c); err != nil {
		return k, err
	}
	col.rows += len(rows)
	switch s.t.ID {
	case row.BigInt:
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.i64 = append(col.i64, v.Int64())
			}
		}
	case row.Int, row.Date:
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.i32 = append(col.i32, int32(v.Int64()))
			}
		}
	case row.Time:
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.i32 = append(col.i32, int32(v.Micros()/1000))
			}
		}
	case row.Boolean:
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.bools = append(col.bools, v.Bool())
			}
		}
	case row.Float:
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.f32 = append(col.f32, float32(v.Float64()))
			}
		}
	case row.Double:
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.f64 = append(col.f64, v.Float64())
			}
		}
	case row.String, row.Bytes:
		// The strings are the rows', which the writer holds until the
		// group is encoded.
		for _, r := range rows {
			v := r[c]
			if !v.IsNull() {
				col.strs = append(col.strs, v.Str())
			}
		}
	case row.Timestamp, row.TimestampLTZ:
		for k, r := range rows {
			v := r[c]
			if v.IsNull() {
				continue
			}
			us := v.Micros()
			switch s.unit {
			case micros:
				col.i64 = append(col.i64, us)
			case millis:
				ms := us / 1000
				if us%1000 < 0 {
					ms--
				}
				col.i64 = append(col.i64, ms)
			default:
				ns, err := timestampNanos(us)
				if err != nil {
					return k, err
				}
				col.i64 = append(col.i64, ns)
			}
		}
	case row.Decimal:
		return s.flatDecimal(rows, c, col)
	default:
		panic("parquet: flat column of type " + s.t.String())
	}
	return 0, nil
}

// flatDecimal is flat for a DECIMAL: one of the column's scale that fits
// 64 bits is its unscaled value once its digits are checked; another goes
// through decimal128, which rescales it.
func (s *shredder) flatDecimal(rows []row.Row, c int, col *column) (int, error) {
	limit, scale, t := int64(math.MaxInt64), s.t.Scale, s.t
	if t.Precision <= 18 {
		limit = pow10[t.Precision]
	}
	for k, r := range rows {
		v := r[c]
		if v.IsNull() {
			continue
		}
		var x row.Int128
		if u := v.Unscaled(); !v.WideDecimal() && v.Scale() == scale && u < limit && u > -limit && t.Precision <= 18 {
			x = row.Int128Of(u)
		} else {
			var err error
			if x, err = decimal128(v, t); err != nil {
				return k, err
			}
		}
		switch col.phys {
		case physInt32:
			col.i32 = append(col.i32, int32(x.Lo))
		case physInt64:
			col.i64 = append(col.i64, int64(x.Lo))
		default:
			var b [16]byte
			binary.BigEndian.PutUint64(b[:8], uint64(x.Hi))
			binary.BigEndian.PutUint64(b[8:], x.Lo)
			col.fixed = append(col.fixed, b[16-col.width:]...)
		}
	}
	return 0, nil
}

// addLevels notes the definition level of each row's value, for an
// optional column, and refuses a NULL in a NOT NULL one: the loops of
// flat then only leave NULLs out.
func (col *column) addLevels(rows []row.Row, c int) (int, error) {
	if !col.optional {
		for k, r := range rows {
			if r[c].IsNull() {
				return k, errNull
			}
		}
		return 0, nil
	}
	for _, r := range rows {
		var d uint8
		if !r[c].IsNull() {
			d = 1
		}
		col.defs = append(col.defs, d)
	}
	return 0, nil
}

// pow10 are the powers of ten an int64 holds: a DECIMAL(p) value's
// magnitude is below pow10[p].
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()
