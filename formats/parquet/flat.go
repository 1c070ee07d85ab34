package parquet

import (
	"unsafe"

	pq "github.com/parquet-go/parquet-go"

	"github.com/etld/etld/pipeline/row"
)

// flat appends column c of rows, a top-level scalar column, to its leaf
// in out: what shred does for each value, with the type's conversion
// chosen once for the column rather than once per value. Each type has a
// loop of its own, the Parquet value built in place, because a
// conversion called through a function value, and parquet-go's Level,
// are not inlined, and cost more than the conversion itself. It returns
// the row of an error.
func (s *shredder) flat(rows []row.Row, c int, out [][]pq.Value) (int, error) {
	leaf := s.leaf
	col := out[leaf]
	start := len(col)
	// The values are appended without their levels, set afterwards in
	// one pass (levels).
	defer func() { out[leaf] = levels(col, start, s.optional, leaf) }()
	null := pq.NullValue()
	switch s.t.ID {
	case row.BigInt:
		for k, r := range rows {
			if v := r[c]; !v.IsNull() {
				col = append(col, pq.Int64Value(v.Int64()))
			} else if col = append(col, null); !s.optional {
				return k, errNull
			}
		}
	case row.Int, row.Date:
		for k, r := range rows {
			if v := r[c]; !v.IsNull() {
				col = append(col, pq.Int32Value(int32(v.Int64())))
			} else if col = append(col, null); !s.optional {
				return k, errNull
			}
		}
	case row.Double:
		for k, r := range rows {
			if v := r[c]; !v.IsNull() {
				col = append(col, pq.DoubleValue(v.Float64()))
			} else if col = append(col, null); !s.optional {
				return k, errNull
			}
		}
	case row.String, row.Bytes:
		for k, r := range rows {
			if v := r[c]; !v.IsNull() {
				str := v.Str()
				// parquet-go copies the bytes into its column buffer.
				col = append(col, pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(str), len(str))))
			} else if col = append(col, null); !s.optional {
				return k, errNull
			}
		}
	case row.Timestamp, row.TimestampLTZ:
		switch s.unit {
		case micros:
			for k, r := range rows {
				if v := r[c]; !v.IsNull() {
					col = append(col, pq.Int64Value(v.Micros()))
				} else if col = append(col, null); !s.optional {
					return k, errNull
				}
			}
		case millis:
			for k, r := range rows {
				if v := r[c]; !v.IsNull() {
					us := v.Micros()
					ms := us / 1000
					if us%1000 < 0 {
						ms--
					}
					col = append(col, pq.Int64Value(ms))
				} else if col = append(col, null); !s.optional {
					return k, errNull
				}
			}
		default:
			return s.flatScalar(rows, c, null, &col)
		}
	case row.Decimal:
		if s.t.Precision > 18 {
			return s.flatScalar(rows, c, null, &col)
		}
		// A DECIMAL of the column's scale that fits 64 bits is its
		// unscaled value once its digits are checked; another goes
		// through decimalValue, which rescales it.
		limit, scale, wide := pow10[s.t.Precision], s.t.Scale, s.t.Precision > 9
		for k, r := range rows {
			v := r[c]
			if v.IsNull() {
				if col = append(col, null); !s.optional {
					return k, errNull
				}
				continue
			}
			x := v.Unscaled()
			if v.WideDecimal() || v.Scale() != scale || x >= limit || x <= -limit {
				pv, err := decimalValue(v, s.t)
				if err != nil {
					return k, err
				}
				col = append(col, pv)
				continue
			}
			if wide {
				col = append(col, pq.Int64Value(x))
			} else {
				col = append(col, pq.Int32Value(int32(x)))
			}
		}
	default:
		return s.flatScalar(rows, c, null, &col)
	}
	return 0, nil
}

// flatScalar is flat for the other scalar types, each value converted by
// scalar.
func (s *shredder) flatScalar(rows []row.Row, c int, null pq.Value, col *[]pq.Value) (int, error) {
	for k, r := range rows {
		v := r[c]
		if v.IsNull() {
			if *col = append(*col, null); !s.optional {
				return k, errNull
			}
			continue
		}
		pv, err := s.scalar(v)
		if err != nil {
			return k, err
		}
		*col = append(*col, pv)
	}
	return 0, nil
}

// levels sets the levels of col's values from start on, a top-level
// column's: repetition level 0, definition level 1 for a value of an
// optional column, 0 for a NULL or a value of a required one.
func levels(col []pq.Value, start int, optional bool, leaf int) []pq.Value {
	for i := start; i < len(col); i++ {
		p := &col[i]
		if optional && !p.IsNull() {
			p.SetDefinitionLevel(1)
		}
		p.SetColumnIndex(leaf)
	}
	return col
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
