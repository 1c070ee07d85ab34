package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"

	"github.com/etld/etld/pipeline/row"
)

// shredder writes the values of one column into the values of its leaf
// columns, with the repetition and definition levels that say where each
// one sits (the Dremel encoding Parquet stores nested data in).
type shredder struct {
	t        row.Type
	optional bool
	// leaf is the leaf column of a scalar; first and last bound the leaf
	// columns under the node.
	leaf, first, last int
	// rep is the repetition level of a LIST's or MAP's repeated group.
	rep int
	// kids: a ROW's fields, a LIST's element, a MAP's key and value.
	kids []*shredder
	unit unit
}

// newShredder builds the shredder of a column of type t; leaf counts the
// leaf columns before it and is moved past its own.
func newShredder(t row.Type, fixed unit, leaf *int) (*shredder, error) {
	return shredderAt(t, fixed, leaf, 0)
}

func shredderAt(t row.Type, fixed unit, leaf *int, rep int) (*shredder, error) {
	s := &shredder{t: t, optional: !t.NotNull, first: *leaf}
	var kids []row.Type
	switch t.ID {
	case row.Array:
		s.rep, kids = rep+1, []row.Type{t.Elem()}
	case row.Map:
		key := t.Key()
		key.NotNull = true
		s.rep, kids = rep+1, []row.Type{key, t.Elem()}
	case row.Struct:
		for _, f := range t.Fields() {
			kids = append(kids, f.Type)
		}
		s.rep = rep
	case row.Timestamp, row.TimestampLTZ:
		s.unit = unitOf(t.Precision, fixed)
		fallthrough
	default:
		s.leaf = *leaf
		*leaf++
	}
	for _, k := range kids {
		c, err := shredderAt(k, fixed, leaf, s.rep)
		if err != nil {
			return nil, err
		}
		s.kids = append(s.kids, c)
	}
	s.last = *leaf
	return s, nil
}

// errNull is a NULL in a NOT NULL column or a MAP's key.
var errNull = errors.New("NULL where the type is NOT NULL")

// shred appends the values of v to out, one slice per leaf column: r is
// the repetition level of its first value and d the definition level of
// the node's parent.
func (s *shredder) shred(v row.Value, r, d int, out [][]pq.Value) error {
	if v.IsNull() {
		if !s.optional {
			return errNull
		}
		s.nulls(r, d, out)
		return nil
	}
	if s.optional {
		d++
	}
	switch s.t.ID {
	case row.Array, row.Map:
		pairs := s.t.ID == row.Map
		if v.Len() == 0 {
			s.nulls(r, d, out) // the list is there, its repeated group is not
			return nil
		}
		var key row.Value
		for i, x := range v.Items() {
			n := i
			if pairs {
				n = i / 2
				if i%2 == 0 {
					key = x
					continue
				}
			}
			rk := r
			if n > 0 {
				rk = s.rep
			}
			if pairs {
				if err := s.kids[0].shred(key, rk, d+1, out); err != nil {
					return fmt.Errorf("a key: %w", err)
				}
				if err := s.kids[1].shred(x, rk, d+1, out); err != nil {
					return err
				}
				continue
			}
			if err := s.kids[0].shred(x, rk, d+1, out); err != nil {
				return err
			}
		}
		return nil
	case row.Struct:
		i := 0
		for _, x := range v.Items() {
			if i == len(s.kids) {
				break
			}
			if err := s.kids[i].shred(x, r, d, out); err != nil {
				return fmt.Errorf("field %s: %w", s.t.Fields()[i].Name, err)
			}
			i++
		}
		for ; i < len(s.kids); i++ {
			if err := s.kids[i].shred(row.NullValue, r, d, out); err != nil {
				return fmt.Errorf("field %s: %w", s.t.Fields()[i].Name, err)
			}
		}
		return nil
	}
	pv, err := s.scalar(v)
	if err != nil {
		return err
	}
	out[s.leaf] = append(out[s.leaf], pv.Level(r, d, s.leaf))
	return nil
}

// nulls writes a node that is absent at definition level d: one value
// in each of its leaves.
func (s *shredder) nulls(r, d int, out [][]pq.Value) {
	for c := s.first; c < s.last; c++ {
		out[c] = append(out[c], pq.NullValue().Level(r, d, c))
	}
}

// scalar is the Parquet value of a leaf's v.
func (s *shredder) scalar(v row.Value) (pq.Value, error) {
	switch s.t.ID {
	case row.Boolean:
		return pq.BooleanValue(v.Bool()), nil
	case row.Int, row.Date:
		return pq.Int32Value(int32(v.Int64())), nil
	case row.BigInt:
		return pq.Int64Value(v.Int64()), nil
	case row.Float:
		return pq.FloatValue(float32(v.Float64())), nil
	case row.Double:
		return pq.DoubleValue(v.Float64()), nil
	case row.String, row.Bytes:
		str := v.Str()
		// parquet-go copies the bytes into its column buffer.
		return pq.ByteArrayValue(unsafe.Slice(unsafe.StringData(str), len(str))), nil
	case row.Time:
		return pq.Int32Value(int32(v.Micros() / 1000)), nil
	case row.Timestamp, row.TimestampLTZ:
		return timestampValue(v.Micros(), s.unit)
	case row.Decimal:
		return decimalValue(v, s.t)
	}
	return pq.Value{}, fmt.Errorf("type %s has no Parquet type", s.t)
}

// timestampValue is micros since the epoch in unit u, the sub-millisecond
// digits of a millis column dropped (toward the past, as Flink does).
func timestampValue(us int64, u unit) (pq.Value, error) {
	switch u {
	case millis:
		ms := us / 1000
		if us%1000 < 0 {
			ms--
		}
		return pq.Int64Value(ms), nil
	case micros:
		return pq.Int64Value(us), nil
	}
	ns, err := timestampNanos(us)
	return pq.Int64Value(ns), err
}

// timestampNanos is micros since the epoch in nanoseconds, or an error
// past the range of an int64 of them.
func timestampNanos(us int64) (int64, error) {
	if us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
		return 0, fmt.Errorf("timestamp %d µs is out of the range of nanoseconds (1677 to 2262); set timestamp_unit: micros", us)
	}
	return us * 1000, nil
}

// decimalValue is v's unscaled value at the column's scale, as INT32,
// INT64 or big-endian two's complement bytes.
func decimalValue(v row.Value, t row.Type) (pq.Value, error) {
	x, err := decimal128(v, t)
	if err != nil {
		return pq.Value{}, err
	}
	switch {
	case t.Precision <= 9:
		return pq.Int32Value(int32(x.Lo)), nil
	case t.Precision <= 18:
		return pq.Int64Value(int64(x.Lo)), nil
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(x.Hi))
	binary.BigEndian.PutUint64(b[8:], x.Lo)
	n := decimalBytes(t.Precision)
	return pq.FixedLenByteArrayValue(append([]byte(nil), b[16-n:]...)), nil
}

// decimal128 is v's unscaled value at the column's scale, checked to fit
// its precision.
func decimal128(v row.Value, t row.Type) (row.Int128, error) {
	x := v.Decimal128()
	if v.Scale() != t.Scale {
		var err error
		if x, err = rescale(x, v.Scale(), t.Scale); err != nil {
			return x, err
		}
	}
	if !x.DigitsFit(t.Precision) {
		return x, fmt.Errorf("%s does not fit %s", v, t)
	}
	return x, nil
}

// rescale moves an unscaled value from scale from to scale to; a value
// that would lose digits is an error.
func rescale(x row.Int128, from, to int) (row.Int128, error) {
	z := x.Big(new(big.Int))
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(to-from))), nil)
	if to > from {
		z.Mul(z, p)
	} else {
		var m big.Int
		if z.QuoRem(z, p, &m); m.Sign() != 0 {
			return x, fmt.Errorf("a DECIMAL of scale %d loses digits at scale %d", from, to)
		}
	}
	y, ok := row.Int128FromBig(z)
	if !ok {
		return x, fmt.Errorf("a DECIMAL of scale %d overflows at scale %d", from, to)
	}
	return y, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
