package row

import (
	"cmp"
	"encoding/binary"
	"math"
	"strings"
	"time"
)

// Value is one SQL value held without a heap allocation for numbers,
// booleans and times: a tag, a 64-bit payload and a string for text and
// bytes. The zero Value is NULL.
//
// Payload by type: BOOLEAN 0/1; INT and BIGINT the integer; FLOAT and
// DOUBLE the float64 bits; DECIMAL the unscaled integer (scale beside it)
// when it fits an int64, else its low word with the high word's 8 bytes in
// s (Decimal128Value);
// DATE days since 1970-01-01; TIMESTAMP and TIMESTAMP_LTZ microseconds since
// 1970-01-01 00:00:00 (UTC for LTZ, wall-clock for TIMESTAMP).
type Value struct {
	s     string
	n     uint64
	id    TypeID
	scale uint8
}

// NullValue is SQL NULL.
var NullValue = Value{}

func BoolValue(b bool) Value {
	if b {
		return Value{id: Boolean, n: 1}
	}
	return Value{id: Boolean}
}
func IntValue(i int32) Value      { return Value{id: Int, n: uint64(int64(i))} }
func BigIntValue(i int64) Value   { return Value{id: BigInt, n: uint64(i)} }
func FloatValue(f float32) Value  { return Value{id: Float, n: math.Float64bits(float64(f))} }
func DoubleValue(f float64) Value { return Value{id: Double, n: math.Float64bits(f)} }
func StringValue(s string) Value  { return Value{id: String, s: s} }

// BytesValue copies b.
func BytesValue(b []byte) Value { return Value{id: Bytes, s: string(b)} }

// DecimalValue is unscaled × 10^-scale.
func DecimalValue(unscaled int64, scale int) Value {
	return Value{id: Decimal, n: uint64(unscaled), scale: uint8(scale)}
}

// Decimal128Value is unscaled × 10^-scale for any unscaled value of up to
// 38 digits. The form is canonical, so Equal and AppendKey need no
// special case: an unscaled value that fits an int64 is held as
// DecimalValue holds it, a wider one keeps its high word in s.
func Decimal128Value(unscaled Int128, scale int) Value {
	if unscaled.IsInt64() {
		return DecimalValue(int64(unscaled.Lo), scale)
	}
	return Value{id: Decimal, n: unscaled.Lo, s: hiString(unscaled.Hi), scale: uint8(scale)}
}

// DateValue is a day count since 1970-01-01.
func DateValue(days int32) Value { return Value{id: Date, n: uint64(int64(days))} }

// TimestampValue is a wall-clock time, in microseconds since 1970-01-01.
func TimestampValue(micros int64) Value { return Value{id: Timestamp, n: uint64(micros)} }

// TimestampLTZValue is an instant, in microseconds since the Unix epoch.
func TimestampLTZValue(micros int64) Value { return Value{id: TimestampLTZ, n: uint64(micros)} }

// TimeValue converts t to a TIMESTAMP (its wall clock in t's location) or a
// TIMESTAMP_LTZ (its instant).
func TimeValue(id TypeID, t time.Time) Value {
	if id == TimestampLTZ {
		return TimestampLTZValue(t.UnixMicro())
	}
	_, off := t.Zone()
	return TimestampValue(t.UnixMicro() + int64(off)*1e6)
}

func (v Value) IsNull() bool { return v.id == Null }
func (v Value) Type() TypeID { return v.id }
func (v Value) Bool() bool   { return v.n != 0 }
func (v Value) Int64() int64 { return int64(v.n) }
func (v Value) Float64() float64 {
	switch v.id {
	case Float, Double:
		return math.Float64frombits(v.n)
	case Decimal:
		if v.s != "" {
			return wideFloat(v)
		}
		return float64(int64(v.n)) / math.Pow10(int(v.scale))
	}
	return float64(int64(v.n))
}
func (v Value) Str() string   { return v.s }
func (v Value) Scale() int    { return int(v.scale) }
func (v Value) Micros() int64 { return int64(v.n) }
func (v Value) Days() int32   { return int32(int64(v.n)) }

// Unscaled is a DECIMAL's unscaled value when it fits an int64 (see
// WideDecimal); Decimal128 gives every one.
func (v Value) Unscaled() int64 { return int64(v.n) }

// WideDecimal reports a DECIMAL whose unscaled value needs more than 64
// bits: Unscaled does not hold it, Decimal128 does.
func (v Value) WideDecimal() bool { return v.id == Decimal && v.s != "" }

// Decimal128 is a DECIMAL's unscaled value.
func (v Value) Decimal128() Int128 {
	if v.s == "" {
		return Int128Of(int64(v.n))
	}
	return Int128{Hi: int64(binary.LittleEndian.Uint64([]byte(v.s))), Lo: v.n}
}

// Time returns a TIMESTAMP as its wall clock in UTC, a TIMESTAMP_LTZ as its
// instant in UTC, and a DATE as its midnight.
func (v Value) Time() time.Time {
	if v.id == Date {
		return time.Unix(int64(v.Days())*86400, 0).UTC()
	}
	return time.UnixMicro(int64(v.n)).UTC()
}

// Equal reports whether a and b are the same value of the same type. NULL
// equals NULL here: this is identity for grouping and retraction, not SQL's
// three-valued comparison.
func Equal(a, b Value) bool {
	if a.id != b.id {
		return false
	}
	switch a.id {
	case Float, Double:
		return math.Float64frombits(a.n) == math.Float64frombits(b.n) || a.n == b.n
	}
	return a.n == b.n && a.s == b.s && a.scale == b.scale
}

// Compare orders two non-NULL values of the same type family; NULL sorts
// first. Numbers of different types compare by value.
func Compare(a, b Value) int {
	switch {
	case a.id == Null && b.id == Null:
		return 0
	case a.id == Null:
		return -1
	case b.id == Null:
		return 1
	}
	switch a.id {
	case String, Bytes:
		return strings.Compare(a.s, b.s)
	case Array, Map, Struct:
		if b.id == a.id {
			return compareNested(a, b)
		}
	case Boolean:
		return cmp.Compare(a.n, b.n)
	case Int, BigInt, Date, Timestamp, TimestampLTZ, Time:
		if b.id == a.id || (b.id.Integral() && a.id.Integral()) {
			return cmp.Compare(int64(a.n), int64(b.n))
		}
	case Decimal:
		if b.id == Decimal {
			if a.scale == b.scale {
				if a.s == "" && b.s == "" {
					return cmp.Compare(int64(a.n), int64(b.n))
				}
				return a.Decimal128().Cmp(b.Decimal128())
			}
			return CompareDecimals(a, b)
		}
	}
	return cmp.Compare(a.Float64(), b.Float64())
}

// AppendKey appends an injective binary encoding of v to dst, for use as (part
// of) a map key: equal values give equal bytes, different ones different.
func AppendKey(dst []byte, v Value) []byte {
	if v.id == Decimal && v.s != "" {
		// A wide DECIMAL: the scale byte's top bit marks the 16 bytes,
		// so narrow ones keep the encoding old state was written with.
		dst = append(dst, byte(v.id), v.scale|wideKeyBit)
		dst = binary.LittleEndian.AppendUint64(dst, v.n)
		return append(dst, v.s...)
	}
	dst = append(dst, byte(v.id), v.scale)
	switch v.id {
	case Null:
		return dst
	case String, Bytes, Array, Map, Struct:
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		return append(dst, v.s...)
	case Float, Double:
		f := math.Float64frombits(v.n)
		if f == 0 { // -0 and +0 are one group
			return binary.LittleEndian.AppendUint64(dst, 0)
		}
	}
	return binary.LittleEndian.AppendUint64(dst, v.n)
}

// KeyOf encodes the columns idx of r as a map key.
func KeyOf(dst []byte, r Row, idx []int) []byte {
	for _, i := range idx {
		dst = AppendKey(dst, r[i])
	}
	return dst
}

// JavaLong is Java's (long) cast of a double, which Flink's casts and
// aggregates inherit: truncation toward zero, NaN to 0, saturation at the
// int64 range.
func JavaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// Detach returns a copy of r that shares no memory with it: a slice of its
// own and its own copy of every value's text. A row an operator keeps for
// long (a Top-N's rows) must not hold on to the batch slab its slice was
// carved from, nor to the read block its strings point into: each of those
// is shared by thousands of rows.
func Detach(r Row) Row {
	out := make(Row, len(r))
	for i, v := range r {
		out[i] = DetachValue(v)
	}
	return out
}

// DetachValue returns v with its own copy of its text (Detach for one
// value): an aggregate's MIN, a DISTINCT set's members.
func DetachValue(v Value) Value {
	if v.s != "" {
		v.s = strings.Clone(v.s)
	}
	return v
}
