package parquet

import (
	"unsafe"

	pq "github.com/parquet-go/parquet-go"

	"github.com/etld/etld/pipeline/row"
)

// flat appends column c of rows, a top-level scalar column, to its leaf
// in out: what shred does for each value, with the type's conversion
// chosen once for the column rather than once per value (the commonest
// types; the others through scalar). It returns the row of an error.
func (s *shredder) flat(rows []row.Row, c int, out [][]pq.Value) (int, error) {
	if !s.flatType() {
		for k, r := range rows {
			if err := s.shred(r[c], 0, 0, out); err != nil {
				return k, err
			}
		}
		return 0, nil
	}
	leaf := s.leaf
	col := out[leaf]
	defer func() { out[leaf] = col }()
	d := 0
	if s.optional {
		d = 1
	}
	null := pq.NullValue().Level(0, 0, leaf)
	// each appends the value of every row, NULLs as the leaf's NULL.
	each := func(conv func(v row.Value) pq.Value) (int, error) {
		for k, r := range rows {
			v := r[c]
			if v.IsNull() {
				if !s.optional {
					return k, errNull
				}
				col = append(col, null)
				continue
			}
			col = append(col, conv(v).Level(0, d, leaf))
		}
		return 0, nil
	}
	switch s.t.ID {
	case row.BigInt:
		return each(func(v row.Value) pq.Value { return pq.Int64Value(v.Int64()) })
	case row.Int, row.Date:
		return each(func(v row.Value) pq.Value { return pq.Int32Value(int32(v.Int64())) })
	case row.Double:
		return each(func(v row.Value) pq.Value { return pq.DoubleValue(v.Float64()) })
	case row.String, row.Bytes:
		return each(func(v row.Value) pq.Value {
			str := v.Str()
			// parquet-go copies the bytes into its column buffer.
			return pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(str), len(str)))
		})
	case row.Timestamp, row.TimestampLTZ:
		if s.unit == micros {
			return each(func(v row.Value) pq.Value { return pq.Int64Value(v.Micros()) })
		}
		if s.unit == millis {
			return each(func(v row.Value) pq.Value {
				us := v.Micros()
				ms := us / 1000
				if us%1000 < 0 {
					ms--
				}
				return pq.Int64Value(ms)
			})
		}
	}
	panic("flat: a type flatType does not take")
}

// flatType reports whether flat converts the column's type itself.
func (s *shredder) flatType() bool {
	switch s.t.ID {
	case row.BigInt, row.Int, row.Date, row.Double, row.String, row.Bytes:
		return true
	case row.Timestamp, row.TimestampLTZ:
		return s.unit == micros || s.unit == millis
	}
	return false
}
