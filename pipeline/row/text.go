package row

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// AppendText appends v as SQL's CAST(v AS STRING) writes it: the text form
// that CSV and JSON files carry, but for DECIMAL, which CAST writes plain
// (Flink's DecimalData.toString is toPlainString) and the csv and json
// formats write with AppendDecimal. NULL appends nothing; callers that need
// a null literal check IsNull first.
func AppendText(dst []byte, v Value, t Type) []byte {
	switch v.id {
	case Null:
		return dst
	case Boolean:
		if v.n != 0 {
			return append(dst, "TRUE"...)
		}
		return append(dst, "FALSE"...)
	case Int, BigInt:
		return strconv.AppendInt(dst, int64(v.n), 10)
	case Float:
		return appendJavaFloat(dst, math.Float64frombits(v.n), 32)
	case Double:
		return appendJavaFloat(dst, math.Float64frombits(v.n), 64)
	case Decimal:
		return appendDecimal(dst, v)
	case String, Bytes:
		return append(dst, v.s...)
	case Date:
		return v.Time().AppendFormat(dst, time.DateOnly)
	case Timestamp, TimestampLTZ:
		p := t.Precision
		if t.ID != v.id {
			p = 3
		}
		return appendSQLTimestamp(dst, int64(v.n), p)
	case Array, Map, Struct:
		return appendNestedText(dst, v, t)
	}
	return dst
}

// Text is AppendText into a new string.
func (v Value) Text(t Type) string { return string(AppendText(nil, v, t)) }

// AppendPrint appends v as Flink's print connector shows it (Java's
// toString of the external type): null, true, 1.0, 2024-01-01T10:00,
// 2024-01-01T10:00:00Z, and DECIMAL as BigDecimal.toString (0E-7).
func (v Value) AppendPrint(dst []byte) []byte {
	switch v.id {
	case Null:
		return append(dst, "null"...)
	case Boolean:
		return strconv.AppendBool(dst, v.n != 0)
	case Timestamp:
		return appendJavaLocalDateTime(dst, int64(v.n))
	case TimestampLTZ:
		return appendJavaInstant(dst, int64(v.n))
	case Bytes:
		return appendJavaBytes(dst, v.s)
	case Decimal:
		return appendJavaDecimal(dst, v)
	case Array, Map, Struct:
		return appendNestedPrint(dst, v)
	}
	return AppendText(dst, v, Type{})
}

// String renders v as the print connector does.
func (v Value) String() string { return string(v.AppendPrint(nil)) }

// AppendDecimal appends the DECIMAL v as Java's BigDecimal writes it:
// toPlainString when plain (CAST(d AS STRING), Flink's DecimalData.toString,
// JSON's encode.decimal-as-plain-number), else toString, which switches to
// exponent form when the adjusted exponent is below -6: 0 at scale 7 is
// 0E-7, 250000 at scale 12 is 2.50000E-7. It does not allocate.
func AppendDecimal(dst []byte, v Value, plain bool) []byte {
	if plain {
		return appendDecimal(dst, v)
	}
	return appendJavaDecimal(dst, v)
}

// AppendDecimalStripped writes v as Flink's csv and json writers do (the
// latter without encode.decimal-as-plain-number): Jackson's number node of
// the BigDecimal, whose trailing zeros are stripped, then toString: 17.50
// as 17.5, 100.00 as 1E+2, 0.00 as 0, 2.5E-7 at any scale as 2.5E-7.
func AppendDecimalStripped(dst []byte, v Value) []byte {
	var buf [40]byte
	digits, neg := decimalDigits(buf[:0], v)
	scale := int(v.scale)
	if len(digits) == 1 && digits[0] == '0' {
		// BigDecimal.stripTrailingZeros of any zero is BigDecimal.ZERO.
		return append(dst, '0')
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		scale--
	}
	adjusted := len(digits) - 1 - scale
	if scale >= 0 && adjusted >= -6 {
		return appendPlainDigits(dst, digits, neg, scale)
	}
	// BigDecimal.toString's scientific form: one digit, the rest after a
	// point, and E with the adjusted exponent (signed, + included).
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(adjusted), 10)
}

// appendDecimal writes BigDecimal.toPlainString of the DECIMAL v.
func appendDecimal(dst []byte, v Value) []byte {
	if v.s == "" && v.scale == 0 {
		return strconv.AppendInt(dst, int64(v.n), 10)
	}
	var buf [40]byte
	digits, neg := decimalDigits(buf[:0], v)
	return appendPlainDigits(dst, digits, neg, int(v.scale))
}

// decimalDigits appends the digits of |unscaled| of the DECIMAL v.
func decimalDigits(dst []byte, v Value) ([]byte, bool) {
	if v.s == "" {
		return appendMagnitude(dst, int64(v.n)), int64(v.n) < 0
	}
	x := v.Decimal128()
	return appendMagnitude128(dst, x), x.Hi < 0
}

func appendPlainDigits(dst, digits []byte, neg bool, scale int) []byte {
	if neg {
		dst = append(dst, '-')
	}
	if scale == 0 {
		return append(dst, digits...)
	}
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for i := len(digits); i < scale; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}

// appendJavaDecimal writes BigDecimal.toString of the DECIMAL v (scale >=
// 0 in etld): plain while the adjusted exponent, the power of ten of the
// first digit, is at least -6; below that one digit, the others after a
// point, and E-n.
func appendJavaDecimal(dst []byte, v Value) []byte {
	var buf [40]byte
	digits, neg := decimalDigits(buf[:0], v)
	scale := int(v.scale)
	adjusted := len(digits) - 1 - scale
	if adjusted >= -6 {
		return appendPlainDigits(dst, digits, neg, scale)
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(adjusted), 10)
}

// appendMagnitude appends the decimal digits of |u|.
func appendMagnitude(dst []byte, u int64) []byte {
	m := uint64(u)
	if u < 0 {
		m = -m
	}
	return strconv.AppendUint(dst, m, 10)
}

// appendJavaFloat writes a float as Java's Double.toString / Float.toString:
// shortest digits, at least one fractional digit, scientific notation
// outside [1e-3, 1e7). It writes straight into dst, allocating nothing: a
// retract CSV of aggregates spends much of its time here.
func appendJavaFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		// An integer below 1e7 (< 2^24) is exact in both widths, and its
		// shortest digits are its own: COUNTs and SUMs of integers skip
		// the shortest-digits search.
		if i := int64(f); float64(i) == f {
			dst = strconv.AppendInt(dst, i, 10)
			return append(dst, ".0"...)
		}
		if bits == 64 {
			if out, ok := appendFewDecimals(dst, f); ok {
				return out
			}
		}
		// Not an integer, so its digits have a point: an integer that
		// read as f would be f, since every integer below 1e7 is exact.
		return strconv.AppendFloat(dst, f, 'f', -1, bits)
	}
	// Go writes 1.5E-04 or 1E+07; Java 1.5E-4 and 1.0E7. The exponent is
	// never 0 here, so trimming its zeros leaves a digit.
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'E', -1, bits)
	e := start + bytes.LastIndexByte(dst[start:], 'E')
	negExp := dst[e+1] == '-'
	var exp [4]byte
	n := copy(exp[:], bytes.TrimLeft(dst[e+2:], "0"))
	hasDot := bytes.IndexByte(dst[start:e], '.') >= 0
	dst = dst[:e]
	if !hasDot {
		dst = append(dst, ".0"...)
	}
	dst = append(dst, 'E')
	if negExp {
		dst = append(dst, '-')
	}
	return append(dst, exp[:n]...)
}

// appendFewDecimals writes f, a DOUBLE in [1e-3, 1e7) that is not an
// integer, when its shortest digits have at most three fractional ones
// (readings such as 35.8), as strconv's shortest 'f' form would, and
// reports false otherwise (AVGs and the like: the caller asks strconv).
// A miss mostly costs one multiplication and a rounding.
//
// Why it is exact: s and 1000 are exact doubles (s < 2^53), so the
// correctly rounded quotient s/1000 is the double that the decimal
// s·10^-3 reads as. When s reads as f and neither s-1 nor s+1 does, the
// decimals that read as f lie strictly between (s-1)·10^-3 and
// (s+1)·10^-3, so s·10^-3 is the only one with three or fewer fractional
// digits. None with more fractional digits has fewer significant ones:
// that would need the interval to hold a power of ten 10^m, m >= -3,
// which is itself such a decimal. So s·10^-3, its trailing zeros cut,
// is the shortest, whatever the rounding of f·1000 that found it.
func appendFewDecimals(dst []byte, f float64) ([]byte, bool) {
	m := f * 1000
	s := math.Round(m)
	// A first sieve without a division: when s·10^-3 reads as f, m is
	// within a few ulps of s (|m-s| <= 2^-51·|s| or so); most values
	// with more digits are far off, and a value let through is checked
	// exactly below.
	if d := m - s; d > 0x1p-45*math.Abs(s) || d < -0x1p-45*math.Abs(s) {
		return dst, false
	}
	if s/1000 != f || (s-1)/1000 == f || (s+1)/1000 == f {
		return dst, false
	}
	u := int64(s)
	if u < 0 {
		dst = append(dst, '-')
		u = -u
	}
	dst = strconv.AppendInt(dst, u/1000, 10)
	frac := u % 1000 // not 0: f is not an integer
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for n > 1 && digits[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, digits[:n]...), true
}

// Micros at 0000-01-01 00:00:00 and at 10000-01-01 00:00:00 UTC: within
// them a timestamp has the four-digit year that appendSQLTimestamp writes
// by hand.
const (
	minFastMicros = -62167219200 * 1e6
	endFastMicros = 253402300800 * 1e6
)

// appendSQLTimestamp writes "2006-01-02 15:04:05" and precision digits
// of the fraction (at most 9), as SQL's CAST(ts AS STRING). Window
// aggregates write two per row, so the digits are written by hand (a
// civil-from-days conversion) instead of through time.AppendFormat and
// fmt; years outside 0000..9999 take time's path, which spells them as
// Go does.
func appendSQLTimestamp(dst []byte, micros int64, precision int) []byte {
	if precision > 9 {
		precision = 9
	}
	if micros < minFastMicros || micros >= endFastMicros {
		return appendSQLTimestampSlow(dst, micros, precision)
	}
	secs := micros / 1e6
	frac := micros - secs*1e6
	if frac < 0 {
		secs--
		frac += 1e6
	}
	days := secs / 86400
	sod := secs - days*86400
	if sod < 0 {
		days--
		sod += 86400
	}
	y, m, d := cachedCivilFromDays(days)
	var b [29]byte // "YYYY-MM-DD hh:mm:ss.fffffffff"
	put4(b[0:], int(y))
	b[4] = '-'
	put2(b[5:], m)
	b[7] = '-'
	put2(b[8:], d)
	b[10] = ' '
	put2(b[11:], int(sod/3600))
	b[13] = ':'
	put2(b[14:], int(sod/60%60))
	b[16] = ':'
	put2(b[17:], int(sod%60))
	if precision <= 0 {
		return append(dst, b[:19]...)
	}
	b[19] = '.'
	// Micros give six digits; nanos 7..9 are zeros.
	f := int(frac)
	for i := 25; i >= 20; i-- {
		b[i] = byte('0' + f%10)
		f /= 10
	}
	b[26], b[27], b[28] = '0', '0', '0'
	return append(dst, b[:20+precision]...)
}

func appendSQLTimestampSlow(dst []byte, micros int64, precision int) []byte {
	t := time.UnixMicro(micros).UTC()
	dst = t.AppendFormat(dst, time.DateTime)
	if precision > 0 {
		frac := fmt.Sprintf("%09d", t.Nanosecond())
		dst = append(dst, '.')
		dst = append(dst, frac[:precision]...)
	}
	return dst
}

// lastDay caches the last day that cachedCivilFromDays converted: its
// key (dayKey, never 0, so that 0 is empty) in the high 32 bits,
// year<<9 | month<<5 | day in the low ones. The rows of one window, and
// the windows of one day, share it. One word, so that goroutines share
// it without a lock.
var lastDay atomic.Uint64

// dayKey numbers the days of years 0..9999 from 1 (0000-01-01 is day
// -719528 of the Unix epoch).
func dayKey(days int64) uint64 { return uint64(days + 719528 + 1) }

func cachedCivilFromDays(days int64) (year int64, month, day int) {
	c := lastDay.Load()
	if c>>32 == dayKey(days) {
		return int64(c >> 9 & (1<<23 - 1)), int(c >> 5 & 15), int(c & 31)
	}
	year, month, day = civilFromDays(days)
	// Only years 0..9999 come here: the key and the year fit their fields.
	lastDay.Store(dayKey(days)<<32 | uint64(year)<<9 | uint64(month)<<5 | uint64(day))
	return year, month, day
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's days-to-civil algorithm, eras of 400 years).
func civilFromDays(days int64) (year int64, month, day int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], March first
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

func put2(b []byte, v int) {
	b[0] = byte('0' + v/10)
	b[1] = byte('0' + v%10)
}

func put4(b []byte, v int) {
	put2(b, v/100)
	put2(b[2:], v%100)
}

// appendJavaFraction writes Java's java.time fraction: nothing for zero,
// else groups of three digits.
func appendJavaFraction(dst []byte, nanos int) []byte {
	if nanos == 0 {
		return dst
	}
	switch {
	case nanos%1e6 == 0:
		return fmt.Appendf(dst, ".%03d", nanos/1e6)
	case nanos%1e3 == 0:
		return fmt.Appendf(dst, ".%06d", nanos/1e3)
	}
	return fmt.Appendf(dst, ".%09d", nanos)
}

func appendJavaLocalDateTime(dst []byte, micros int64) []byte {
	t := time.UnixMicro(micros).UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04")
	if t.Second() != 0 || t.Nanosecond() != 0 {
		dst = t.AppendFormat(dst, ":05")
	}
	return appendJavaFraction(dst, t.Nanosecond())
}

func appendJavaInstant(dst []byte, micros int64) []byte {
	t := time.UnixMicro(micros).UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	dst = appendJavaFraction(dst, t.Nanosecond())
	return append(dst, 'Z')
}

func appendJavaBytes(dst []byte, s string) []byte {
	dst = append(dst, '[')
	for i := 0; i < len(s); i++ {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, int64(int8(s[i])), 10)
	}
	return append(dst, ']')
}

// ParseError says why a text could not become a value of a type.
type ParseError struct {
	Text string
	Type Type
	Err  error
}

// Unwrap gives the reason, such as ErrDoesNotFit.
func (e *ParseError) Unwrap() error { return e.Err }

func (e *ParseError) Error() string {
	text := e.Text
	if len(text) > 40 {
		text = text[:40] + "..."
	}
	if e.Err != nil {
		return fmt.Sprintf("cannot parse %q as %s: %v", text, e.Type, e.Err)
	}
	return fmt.Sprintf("cannot parse %q as %s", text, e.Type)
}

// ParseText reads s, as CAST(s AS t) does: surrounding blanks are ignored
// for every type but strings.
func ParseText(s string, t Type) (Value, error) {
	if t.ID != String && t.ID != Bytes {
		s = strings.TrimSpace(s)
	}
	fail := func(err error) (Value, error) {
		return NullValue, &ParseError{Text: s, Type: t, Err: err}
	}
	switch t.ID {
	case String:
		return StringValue(s), nil
	case Bytes:
		return Value{id: Bytes, s: s}, nil
	case Boolean:
		switch strings.ToLower(s) {
		case "true", "t", "1", "yes", "y":
			return BoolValue(true), nil
		case "false", "f", "0", "no", "n":
			return BoolValue(false), nil
		}
		return fail(nil)
	case Int:
		i, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return fail(numErr(err))
		}
		return IntValue(int32(i)), nil
	case BigInt:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fail(numErr(err))
		}
		return BigIntValue(i), nil
	case Float:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return fail(numErr(err))
		}
		return FloatValue(float32(f)), nil
	case Double:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fail(numErr(err))
		}
		return DoubleValue(f), nil
	case Decimal:
		if strings.ContainsAny(s, "eE") {
			// Java's BigDecimal(String) reads 0E-7 and 2.5E+3, the form
			// BigDecimal.toString and so the csv and json formats write.
			plain, err := expandExponent(s)
			if err != nil {
				return fail(err)
			}
			s = plain
		}
		u, err := ParseDecimal128(s, t.Precision, t.Scale)
		if err != nil {
			return fail(err)
		}
		return Decimal128Value(u, t.Scale), nil
	case Date:
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return fail(nil)
		}
		return DateValue(int32(d.Unix() / 86400)), nil
	case Timestamp, TimestampLTZ:
		ts, err := ParseTimestamp(s, t.ID)
		if err != nil {
			return fail(nil)
		}
		return ts, nil
	}
	return fail(fmt.Errorf("no text form"))
}

func numErr(err error) error {
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return fmt.Errorf("out of range")
	}
	return nil
}

// ErrDoesNotFit marks a number too large for its DECIMAL type: CAST gives
// NULL for it, as Flink's DecimalData.fromBigDecimal does.
var ErrDoesNotFit = errors.New("does not fit")

// ParseDecimal reads a decimal text into its unscaled value at scale,
// rounding half up, and checks it fits the precision and an int64 (for
// DECIMAL(18) and narrower; ParseDecimal128 reads any).
func ParseDecimal(s string, precision, scale int) (int64, error) {
	u, err := ParseDecimal128(s, precision, scale)
	if err != nil {
		return 0, err
	}
	if !u.IsInt64() {
		return 0, fmt.Errorf("its unscaled value at scale %d needs more than 64 bits", scale)
	}
	return int64(u.Lo), nil
}

// ParseDecimal128 reads a decimal text into its unscaled value at scale,
// rounding half up, and checks it fits the precision (up to 38 digits).
func ParseDecimal128(s string, precision, scale int) (Int128, error) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return Int128{}, fmt.Errorf("not a number")
	}
	tooWide := func() (Int128, error) {
		return Int128{}, fmt.Errorf("%w DECIMAL(%d, %d)", ErrDoesNotFit, precision, scale)
	}
	if len(intPart)+scale <= MaxCompactDecimalPrecision {
		// The common case: at most 18 digits, all in a uint64.
		u, ok := parseCompact(intPart, frac, scale)
		if !ok {
			return Int128{}, fmt.Errorf("not a number")
		}
		if precision > 0 && precision <= MaxCompactDecimalPrecision && u >= pow10x128[precision][1] {
			return tooWide()
		}
		if neg {
			return Int128Of(-int64(u)), nil
		}
		return Int128Of(int64(u)), nil
	}
	// hi:lo accumulates the magnitude: at most 38 digits and a rounding
	// carry, well within 128 bits.
	var hi, lo uint64
	digits := 0
	for _, c := range []byte(intPart) {
		if c < '0' || c > '9' {
			return Int128{}, fmt.Errorf("not a number")
		}
		hi, lo = push10(hi, lo, c-'0')
		if hi != 0 || lo != 0 {
			digits++
		}
		if digits > MaxDecimalPrecision {
			return tooWide()
		}
	}
	if scale > MaxDecimalPrecision || digits+scale > MaxDecimalPrecision {
		return tooWide() // more than 38 digits unscaled
	}
	for i := 0; i < scale; i++ {
		d := byte('0')
		if i < len(frac) {
			d = frac[i]
		}
		if d < '0' || d > '9' {
			return Int128{}, fmt.Errorf("not a number")
		}
		hi, lo = push10(hi, lo, d-'0')
	}
	if len(frac) > scale {
		for _, c := range []byte(frac[scale:]) {
			if c < '0' || c > '9' {
				return Int128{}, fmt.Errorf("not a number")
			}
		}
		if frac[scale] >= '5' {
			var c uint64
			lo, c = bits.Add64(lo, 1, 0)
			hi += c
		}
	}
	u := Int128{Hi: int64(hi), Lo: lo}
	if !u.DigitsFit(MaxDecimalPrecision) || (precision > 0 && !u.DigitsFit(precision)) {
		return tooWide()
	}
	if neg {
		u = u.Neg()
	}
	return u, nil
}

// parseCompact reads intPart.frac at scale, rounding half up, when
// intPart and scale have at most 18 digits together (so the result,
// carry included, is at most 10^18).
func parseCompact(intPart, frac string, scale int) (uint64, bool) {
	var u uint64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	for i := 0; i < scale; i++ {
		c := byte('0')
		if i < len(frac) {
			c = frac[i]
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if len(frac) > scale {
		for i := scale; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, false
			}
		}
		if frac[scale] >= '5' {
			u++
		}
	}
	return u, true
}

// push10 is hi:lo × 10 + d, in 64 bits while it fits.
func push10(hi, lo uint64, d byte) (uint64, uint64) {
	if hi == 0 && lo < (1<<64-1)/10-9 {
		return 0, lo*10 + uint64(d)
	}
	h, l := bits.Mul64(lo, 10)
	l, c := bits.Add64(l, uint64(d), 0)
	return hi*10 + h + c, l
}

// expandExponent rewrites a number with an exponent (2.5E-7) as plain
// digits (0.00000025). An exponent far beyond what a DECIMAL holds gives
// ErrDoesNotFit when positive and zero when negative, as the value
// rounds there.
func expandExponent(s string) (string, error) {
	i := strings.IndexAny(s, "eE")
	mant, expText := s[:i], s[i+1:]
	sign := ""
	if mant != "" && (mant[0] == '-' || mant[0] == '+') {
		sign, mant = mant[:1], mant[1:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	exp, err := strconv.Atoi(expText)
	if digits == "" || !allDigits(digits) || (err != nil && !isRange(err)) {
		return "", fmt.Errorf("not a number")
	}
	const limit = 4 * MaxDecimalPrecision
	switch {
	case exp < -limit:
		return "0", nil
	case exp > limit:
		if strings.Trim(digits, "0") == "" {
			return "0", nil
		}
		return "", fmt.Errorf("%w", ErrDoesNotFit)
	}
	point := len(whole) + exp
	switch {
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits, nil
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)), nil
	}
	return sign + digits[:point] + "." + digits[point:], nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isRange(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	time.DateOnly,
}

// ParseTimestamp reads SQL ("2024-01-02 10:00:00.123") and ISO-8601
// ("2024-01-02T10:00:00Z") timestamps. A text with a zone gives its instant
// (LTZ) or its wall clock in UTC (TIMESTAMP); without a zone, LTZ texts are
// taken as UTC.
func ParseTimestamp(s string, id TypeID) (Value, error) {
	if micros, ok := parseSQLTimestamp(s); ok {
		if id == TimestampLTZ {
			return TimestampLTZValue(micros), nil
		}
		return TimestampValue(micros), nil
	}
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if id == TimestampLTZ {
				return TimestampLTZValue(t.UnixMicro()), nil
			}
			return TimestampValue(t.UTC().UnixMicro()), nil
		}
	}
	return NullValue, fmt.Errorf("not a timestamp")
}

// parseSQLTimestamp reads the common form YYYY-MM-DD HH:MM:SS with an
// optional fraction of 1 to 9 digits ('T' for the space too), without a
// zone, as time.Parse with the first two timestampLayouts does but
// without its layout interpretation (13% of a TUMBLE run went there). ok
// is false for every other text, valid or not: the layouts decide then.
// A test holds it to time.Parse on random texts.
func parseSQLTimestamp(s string) (micros int64, ok bool) {
	base, ok := parseSQLMinute(s)
	if !ok {
		return 0, false
	}
	sec, ok := parseSQLSeconds(s[17:])
	return base + sec, ok
}

// parseSQLMinute reads the first 17 bytes of parseSQLTimestamp's form,
// "YYYY-MM-DD HH:MM:", into the microseconds of that minute.
func parseSQLMinute(s string) (micros int64, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(month, year) || hour > 23 || minute > 59 {
		return 0, false
	}
	days := daysFromCivil(year, month, day)
	return ((days*24+int64(hour))*60 + int64(minute)) * 60_000_000, true
}

// parseSQLSeconds reads the rest, "SS" with an optional fraction of 1 to
// 9 digits, into microseconds (the digits past the sixth truncated).
func parseSQLSeconds(s string) (micros int64, ok bool) {
	if len(s) < 2 {
		return 0, false
	}
	second, ok := digits(s[:2])
	if !ok || second > 59 {
		return 0, false
	}
	frac := 0
	if len(s) > 2 {
		fd := s[3:]
		if s[2] != '.' || len(fd) == 0 || len(fd) > 9 {
			return 0, false
		}
		for i, c := range []byte(fd) {
			if c < '0' || c > '9' {
				return 0, false
			}
			if i < 6 {
				frac = frac*10 + int(c-'0')
			}
		}
		for i := len(fd); i < 6; i++ {
			frac *= 10
		}
	}
	return int64(second)*1_000_000 + int64(frac), true
}

// digits is the value of s, ASCII digits only.
func digits(s string) (int, bool) {
	v := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// TimestampReader reads texts of parseSQLTimestamp's form as it does, and
// a run of texts that share their minute (the rows of a log or a file,
// one a millisecond) faster: it keeps the last minute it read with its
// microseconds, and for a text of that minute reads only the seconds. One
// per decoder: it is not safe for concurrent use.
type TimestampReader struct {
	minute string // "YYYY-MM-DD HH:MM:" of the last text read, "" for none
	base   int64  // the microseconds of minute
}

// Micros is parseSQLTimestamp(s): ok is false for a text of any other
// form, valid or not (ParseText or ParseTimestamp decide then).
func (r *TimestampReader) Micros(s string) (int64, bool) {
	if len(s) < 19 {
		return 0, false
	}
	if r.minute == "" || s[:17] != r.minute {
		base, ok := parseSQLMinute(s)
		if !ok {
			return 0, false
		}
		// A copy: the text may point into a read block.
		r.minute, r.base = strings.Clone(s[:17]), base
	}
	sec, ok := parseSQLSeconds(s[17:])
	return r.base + sec, ok
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to the proleptic
// Gregorian date y-m-d (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
