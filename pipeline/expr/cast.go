package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// castFunc converts one non-NULL value; NULL casts to NULL before it is
// called.
type castFunc func(v row.Value) (row.Value, error)

// CanCast reports whether CAST(from AS to) is allowed, following Flink's
// cast rules: anything casts to STRING; STRING casts to everything;
// numbers and BOOLEAN cast to numbers; numbers and STRING to BOOLEAN;
// DATE and the timestamps among each other. Refused, as in Flink: numbers
// to and from timestamps (TO_TIMESTAMP_LTZ and UNIX_TIMESTAMP say which
// unit), BOOLEAN to a time, DATE to a number, BYTES to anything but STRING
// and BYTES.
func CanCast(from, to row.Type) bool {
	_, err := castKernel(from, to, nil)
	return err == nil
}

func (c *compiler) cast(e *sql.Cast) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	to := e.Type
	if to.ID == row.Null {
		return nil, errAt(e.TypeAt, "cannot CAST to %s", e.TypeText)
	}
	k, err := castKernel(x.t, to, c.zone)
	if err != nil {
		return nil, errAt(e.At, "%v", err)
	}
	k = padFixed(e, to, k)
	// A DECIMAL too narrow for the value gives NULL (Flink's
	// DecimalData.fromBigDecimal), so such a CAST is nullable even over a
	// NOT NULL input. Flink keeps the input's nullability there
	// (SqlCastFunction.deriveType) and then carries a NULL in a NOT NULL
	// column; etld keeps the type honest instead.
	to.NotNull = x.t.NotNull && !e.Try && !decimalCastCanOverflow(x.t, to)
	if x.t.Nullable() == to.Nullable() {
		n := *x
		n.t, n.e = to, e
		return &n, nil
	}
	text := exprString(e)
	ev := x.eval
	var f evalFn
	if e.Try {
		f = func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return v, err
			}
			out, err := k(v)
			if err != nil {
				return row.NullValue, nil
			}
			return out, nil
		}
	} else {
		f = func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return v, err
			}
			out, err := k(v)
			if err != nil {
				return row.NullValue, evalErr(text, err)
			}
			return out, nil
		}
	}
	n, err := c.finish(e, to, f, x)
	if err == nil && n.konst && !n.val.IsNull() && x.t.NotNull && !e.Try {
		n.t.NotNull = true // a constant that fits stays NOT NULL
	}
	return n, err
}

// castKernel converts from to to in the session zone (nil for UTC).
func castKernel(from, to row.Type, zone *time.Location) (castFunc, error) {
	if from.ID == row.Null {
		return func(row.Value) (row.Value, error) { return row.NullValue, nil }, nil
	}
	if to.ID.Nested() {
		if sameShape(from, to) {
			return func(v row.Value) (row.Value, error) { return v, nil }, nil
		}
		return castNested(from, to, zone)
	}
	if zone != nil && zoneConv(from.ID, to.ID) {
		return zonedCast(from, to, zone)
	}
	var k castFunc
	switch to.ID {
	case row.String:
		k = castToString(from, to)
	case row.Bytes:
		if from.ID == row.String || from.ID == row.Bytes {
			// VARBINARY(n) and BINARY(n) keep the first n bytes, as
			// Flink's cast does.
			n := to.Length
			k = func(v row.Value) (row.Value, error) {
				b := v.Str()
				if n > 0 && len(b) > n {
					b = b[:n]
				}
				return row.BytesValue([]byte(b)), nil
			}
		}
	case row.Boolean:
		k = castToBool(from)
	case row.Int, row.BigInt, row.Float, row.Double, row.Decimal:
		k = castToNumber(from, to)
	case row.Date:
		k = castToDate(from)
	case row.Timestamp, row.TimestampLTZ:
		k = castToTimestamp(from, to)
	case row.Time:
		k = castToTime(from, to)
	}
	if k == nil {
		msg := fmt.Sprintf("cannot CAST %s to %s", typeName(from), typeName(to))
		switch {
		case from.ID.Numeric() && to.ID == row.TimestampLTZ:
			msg += "; use TO_TIMESTAMP_LTZ(epoch, 0) for seconds or TO_TIMESTAMP_LTZ(epoch, 3) for milliseconds"
		case from.ID.Numeric() && to.ID == row.Timestamp:
			msg += "; use TO_TIMESTAMP(FROM_UNIXTIME(seconds)), or TO_TIMESTAMP_LTZ(epoch, 3)"
		case isTimestamp(from.ID) && to.ID.Numeric():
			msg += "; UNIX_TIMESTAMP(CAST(ts AS STRING)) gives epoch seconds, EXTRACT(EPOCH FROM ts) too"
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return k, nil
}

func castToString(from, to row.Type) castFunc {
	n := to.Length
	trunc := func(s string) string {
		if n > 0 && len(s) > n && utf8.RuneCountInString(s) > n {
			i, k := 0, 0
			for k < n {
				_, w := utf8.DecodeRuneInString(s[i:])
				i += w
				k++
			}
			return s[:i]
		}
		return s
	}
	switch from.ID {
	case row.String:
		return func(v row.Value) (row.Value, error) { return row.StringValue(trunc(v.Str())), nil }
	case row.Bytes:
		return func(v row.Value) (row.Value, error) {
			return row.StringValue(trunc(strings.ToValidUTF8(v.Str(), "\uFFFD"))), nil
		}
	case typeInterval:
		return func(v row.Value) (row.Value, error) {
			return row.StringValue(trunc(intervalDayTimeText(v.Int64()))), nil
		}
	case typeIntervalYM:
		return func(v row.Value) (row.Value, error) {
			return row.StringValue(trunc(intervalYearMonthText(v.Int64()))), nil
		}
	}
	// The text is copied into chunks the results share (row.SharedText,
	// one allocation for hundreds of them): a window's
	// CAST(window_start AS STRING) runs once an output row, its text
	// written to a buffer on the stack, so it allocates nothing itself.
	txt := new(row.SharedText)
	generic := func(v row.Value) (row.Value, error) {
		return row.StringValue(trunc(txt.String(row.AppendText(nil, v, from)))), nil
	}
	if from.ID == row.Timestamp || from.ID == row.TimestampLTZ {
		return func(v row.Value) (row.Value, error) {
			if v.Type() != from.ID {
				return generic(v)
			}
			var buf [48]byte
			return row.StringValue(trunc(txt.String(row.AppendTimestampText(buf[:0], v.Micros(), from.Precision)))), nil
		}
	}
	return generic
}

func castToBool(from row.Type) castFunc {
	switch from.ID {
	case row.Boolean:
		return func(v row.Value) (row.Value, error) { return v, nil }
	case row.Int, row.BigInt, row.Decimal:
		return func(v row.Value) (row.Value, error) { return row.BoolValue(v.Int64() != 0), nil }
	case row.Float, row.Double:
		return func(v row.Value) (row.Value, error) { return row.BoolValue(v.Float64() != 0), nil }
	case row.String:
		bt := row.Type{ID: row.Boolean}
		return func(v row.Value) (row.Value, error) { return row.ParseText(v.Str(), bt) }
	}
	return nil
}

// javaToInt32 is Java's (int) of a double.
func javaToInt32(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int64(int32(f))
}

// numberValue builds a value of numeric type t from an int64 (already
// scaled for DECIMAL) or a float64.
func intResult(t row.Type, i int64) row.Value {
	if t.ID == row.Int {
		return row.IntValue(int32(t.WrapInt(i)))
	}
	return row.BigIntValue(i)
}

func castToNumber(from, to row.Type) castFunc {
	switch from.ID {
	case row.Int, row.BigInt, row.Float, row.Double, row.Decimal:
		return numToNum(from, to)
	case row.Boolean:
		conv := numToNum(row.Type{ID: row.BigInt}, to)
		return func(v row.Value) (row.Value, error) { return conv(row.BigIntValue(int64(b2i(v.Bool())))) }
	case row.String:
		return stringToNumber(to)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decimalCastCanOverflow reports whether CAST(from AS to) may meet a value
// whose integer part needs more digits than to has: the CAST then gives
// NULL.
func decimalCastCanOverflow(from, to row.Type) bool {
	if to.ID != row.Decimal {
		return false
	}
	room := to.Precision - to.Scale
	switch from.ID {
	case row.Int, row.BigInt:
		return room < from.IntDigits()
	case row.Decimal:
		return room < from.Precision-from.Scale
	case row.Boolean:
		return room < 1
	case row.Null, row.String:
		return false // a text that does not fit is an error
	}
	return true // FLOAT, DOUBLE
}

// numToNum converts between numeric types as Java and Flink do: integer
// narrowing wraps, floating point to integer truncates and saturates,
// DECIMAL to integer truncates, anything to DECIMAL rounds half up and
// gives NULL when the integer part does not fit (Flink's
// DecimalDataUtils.castFrom returns DecimalData.fromBigDecimal, which is
// null when the precision overflows).
func numToNum(from, to row.Type) castFunc {
	switch to.ID {
	case row.Int, row.BigInt:
		switch from.ID {
		case row.Int, row.BigInt:
			return func(v row.Value) (row.Value, error) { return intResult(to, v.Int64()), nil }
		case row.Decimal:
			return func(v row.Value) (row.Value, error) {
				if v.WideDecimal() {
					return intResult(to, wideToLong(v)), nil
				}
				u, s := v.Unscaled(), v.Scale()
				if s < len(pow10) {
					u /= pow10[s]
				} else {
					u = 0
				}
				return intResult(to, u), nil
			}
		}
		if to.ID == row.Int {
			// Java's (byte) and (short) of a double go through int.
			return func(v row.Value) (row.Value, error) { return intResult(to, javaToInt32(v.Float64())), nil }
		}
		return func(v row.Value) (row.Value, error) { return row.BigIntValue(row.JavaLong(v.Float64())), nil }
	case row.Float:
		return func(v row.Value) (row.Value, error) { return row.FloatValue(float32(toFloat(v))), nil }
	case row.Double:
		return func(v row.Value) (row.Value, error) { return row.DoubleValue(toFloat(v)), nil }
	case row.Decimal:
		p, s := to.Precision, to.Scale
		switch from.ID {
		case row.Int, row.BigInt, row.Decimal:
			return func(v row.Value) (row.Value, error) {
				if !v.WideDecimal() {
					if u, ok := rescale(v.Int64(), v.Scale(), s); ok && fits(u, p) {
						return row.DecimalValue(u, s), nil
					}
				}
				return bigResult(roundHalfUp(bigOf(v), v.Scale()-s), s, p), nil
			}
		}
		return func(v row.Value) (row.Value, error) {
			u, err := decFromFloat(v.Float64(), s, p)
			if err != nil {
				if errors.Is(err, errDecimalOverflow) {
					return wideFromFloat(v.Float64(), s, p), nil
				}
				return row.NullValue, err
			}
			return row.DecimalValue(u, s), nil
		}
	}
	return nil
}

// toFloat reads any numeric value as float64 exactly as Java widens it.
func toFloat(v row.Value) float64 {
	if v.Type() == row.Decimal {
		if v.WideDecimal() {
			return v.Float64()
		}
		return decToFloat(v.Unscaled(), v.Scale())
	}
	return v.Float64()
}

func stringToNumber(to row.Type) castFunc {
	return func(v row.Value) (row.Value, error) {
		s := strings.TrimSpace(v.Str())
		switch to.ID {
		case row.Int, row.BigInt:
			bitSize := to.IntBits()
			i, err := strconv.ParseInt(s, 10, bitSize)
			if err != nil {
				// Flink accepts a fraction and drops it: '12.7' is 12.
				if ip, frac, ok := strings.Cut(s, "."); ok && allDigits(frac) && ip != "" && ip != "-" && ip != "+" {
					i, err = strconv.ParseInt(ip, 10, bitSize)
				}
			}
			if err != nil {
				return row.NullValue, &row.ParseError{Text: v.Str(), Type: to, Err: rangeErr(err)}
			}
			return intResult(to, i), nil
		}
		// A text whose number does not fit the DECIMAL is an error, not
		// NULL: Flink 2.3 fails with "For input string: '123456'.
		// Overflow." (the conformance case fn-cast-string-decimal-overflow),
		// where a number that does not fit gives NULL.
		return row.ParseText(s, to)
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func rangeErr(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
		return errors.New("out of range")
	}
	return nil
}

const microsPerDay = 86400 * 1e6

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func castToDate(from row.Type) castFunc {
	switch from.ID {
	case row.Date:
		return func(v row.Value) (row.Value, error) { return v, nil }
	case row.Timestamp, row.TimestampLTZ:
		return func(v row.Value) (row.Value, error) {
			return row.DateValue(int32(floorDiv(v.Micros(), microsPerDay))), nil
		}
	case row.String:
		dt := row.Type{ID: row.Date}
		return func(v row.Value) (row.Value, error) {
			d, err := row.ParseText(v.Str(), dt)
			if err == nil {
				return d, nil
			}
			// A timestamp text gives its date, as Flink's parseDate.
			if ts, err2 := row.ParseTimestamp(strings.TrimSpace(v.Str()), row.Timestamp); err2 == nil {
				return row.DateValue(int32(floorDiv(ts.Micros(), microsPerDay))), nil
			}
			return row.NullValue, err
		}
	}
	return nil
}

// truncMicros cuts a timestamp to p fraction digits (p < 6).
func truncMicros(us int64, p int) int64 {
	if p >= 6 {
		return us
	}
	unit := pow10[6-p]
	return floorDiv(us, unit) * unit
}

func tsValue(id row.TypeID, us int64) row.Value {
	if id == row.TimestampLTZ {
		return row.TimestampLTZValue(us)
	}
	return row.TimestampValue(us)
}

// castToTime is CAST(x AS TIME(p)) from a text, a timestamp (its wall
// clock; an instant in the session zone, UTC) or a TIME, keeping p
// fraction digits.
func castToTime(from, to row.Type) castFunc {
	p := to.Precision
	switch from.ID {
	case row.Time:
		return func(v row.Value) (row.Value, error) { return row.TimeOfDayValue(truncMicros(v.Micros(), p)), nil }
	case row.Timestamp, row.TimestampLTZ:
		return func(v row.Value) (row.Value, error) { return row.TimeOfTimestamp(truncMicros(v.Micros(), p)), nil }
	case row.String:
		return func(v row.Value) (row.Value, error) { return row.ParseText(v.Str(), to) }
	}
	return nil
}

func castToTimestamp(from, to row.Type) castFunc {
	id, p := to.ID, to.Precision
	switch from.ID {
	case row.Timestamp, row.TimestampLTZ:
		// The session time zone is UTC: both hold the same microseconds.
		return func(v row.Value) (row.Value, error) { return tsValue(id, truncMicros(v.Micros(), p)), nil }
	case row.Date:
		return func(v row.Value) (row.Value, error) { return tsValue(id, int64(v.Days())*microsPerDay), nil }
	case row.Time:
		// A TIME is that time on 1970-01-01, as in Flink.
		return func(v row.Value) (row.Value, error) { return tsValue(id, v.Micros()), nil }
	case row.String:
		return func(v row.Value) (row.Value, error) {
			ts, err := row.ParseText(v.Str(), to)
			if err != nil {
				return row.NullValue, err
			}
			return tsValue(id, truncMicros(ts.Micros(), p)), nil
		}
	}
	return nil
}
