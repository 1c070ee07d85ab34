package parquet

import (
	"encoding/binary"

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

// add appends v, a value of the top-level scalar column col, to it: a
// definition level for an optional column, the value in the slice of its
// physical type unless it is NULL. The writer takes each row's values as
// the row comes (bulkWriter.Write) and keeps nothing of the row itself.
// On an error the row's values are partly in; the writer then fails for
// good, as on any other error.
func (s *shredder) add(v row.Value, col *column) error {
	if v.IsNull() {
		if !col.optional {
			return errNull
		}
		col.defs = append(col.defs, 0)
		col.rows++
		return nil
	}
	switch s.t.ID {
	case row.BigInt:
		col.i64 = append(col.i64, v.Int64())
	case row.Int, row.Date:
		col.i32 = append(col.i32, int32(v.Int64()))
	case row.Time:
		col.i32 = append(col.i32, int32(v.Micros()/1000))
	case row.Boolean:
		col.bools = append(col.bools, v.Bool())
	case row.Float:
		col.f32 = append(col.f32, float32(v.Float64()))
	case row.Double:
		col.f64 = append(col.f64, v.Float64())
	case row.String, row.Bytes:
		// The string is shared, not copied: strings do not change, and
		// the column lets go of them once its row group is encoded.
		col.strs = append(col.strs, v.Str())
	case row.Timestamp, row.TimestampLTZ:
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
				return err
			}
			col.i64 = append(col.i64, ns)
		}
	case row.Decimal:
		if err := s.addDecimal(v, col); err != nil {
			return err
		}
	default:
		panic("parquet: flat column of type " + s.t.String())
	}
	if col.optional {
		col.defs = append(col.defs, 1)
	}
	col.rows++
	return nil
}

// addDecimal is add for a DECIMAL that is not NULL: one of the column's
// scale that fits 64 bits is its unscaled value once its digits are
// checked; another goes through decimal128, which rescales it.
func (s *shredder) addDecimal(v row.Value, col *column) error {
	t := s.t
	var x row.Int128
	if u := v.Unscaled(); t.Precision <= 18 && !v.WideDecimal() && v.Scale() == t.Scale && u < pow10[t.Precision] && u > -pow10[t.Precision] {
		x = row.Int128Of(u)
	} else {
		var err error
		if x, err = decimal128(v, t); err != nil {
			return err
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
	return nil
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
