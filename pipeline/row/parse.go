// Parsing text into values: CAST(s AS t), decimals up to 38 digits, and
// timestamps, the common SQL form read by hand.

package row

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

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
		i, err := strconv.ParseInt(s, 10, t.IntBits())
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
		// Two IndexBytes, not ContainsAny, which builds a set of its
		// characters each call (40% of a DECIMAL's parse).
		if strings.IndexByte(s, 'e') >= 0 || strings.IndexByte(s, 'E') >= 0 {
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
		if days, ok := parseSQLDate(s); ok {
			return DateValue(int32(days)), nil
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return fail(nil)
		}
		return DateValue(int32(d.Unix() / 86400)), nil
	case Time:
		v, ok := parseTime(s, t.Precision)
		if !ok {
			return fail(nil)
		}
		return v, nil
	case Timestamp, TimestampLTZ:
		ts, err := ParseTimestamp(s, t.ID)
		if err == errOutOfRange {
			return fail(err)
		}
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
			// A zone offset moves 9999-12-31T23:00:00-05:00 into the year
			// 10000 (and 0000-01-01T00:00:00+01:00 before 0000), which
			// the text's own four-digit year cannot: refused, as an epoch
			// number out of the range is (a year past the range is
			// written with its sign, +10000, which SignedYear reads).
			micros := t.UnixMicro()
			if !InTimestampRange(micros) {
				return NullValue, errOutOfRange
			}
			if id == TimestampLTZ {
				return TimestampLTZValue(micros), nil
			}
			return TimestampValue(micros), nil
		}
	}
	return NullValue, fmt.Errorf("not a timestamp")
}

// errOutOfRange is ParseTimestamp's error for a time past the years
// 0000 to 9999.
var errOutOfRange = errors.New("out of range (years 0000 to 9999)")

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

// parseSQLDate reads YYYY-MM-DD into days since 1970-01-01, as
// time.Parse(time.DateOnly) does but without its layout interpretation
// (13% of a CSV to Parquet run with a DATE column went there). ok is
// false for every other text, valid or not: time.Parse decides then. A
// test holds it to time.Parse on random texts.
func parseSQLDate(s string) (days int64, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	if !(ok1 && ok2 && ok3) || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return 0, false
	}
	return daysFromCivil(year, month, day), true
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
	// The common forms first, TIMESTAMP(0)'s "SS" and TIMESTAMP(3)'s
	// "SS.fff", each digit checked by one compare (a byte below '0'
	// wraps around to a large one); any other text takes the loop below.
	switch len(s) {
	case 2:
		d0, d1 := s[0]-'0', s[1]-'0'
		if d0 > 5 || d1 > 9 {
			return 0, false
		}
		return int64(d0*10+d1) * 1_000_000, true
	case 6:
		d0, d1, f0, f1, f2 := s[0]-'0', s[1]-'0', s[3]-'0', s[4]-'0', s[5]-'0'
		if s[2] == '.' && d0 <= 5 && d1 <= 9 && f0 <= 9 && f1 <= 9 && f2 <= 9 {
			return int64(d0*10+d1)*1_000_000 + (int64(f0)*100+int64(f1)*10+int64(f2))*1000, true
		}
	}
	return parseSQLSecondsAny(s)
}

// parseSQLSecondsAny is parseSQLSeconds without its common forms first.
func parseSQLSecondsAny(s string) (micros int64, ok bool) {
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
	// month is "YYYY-MM-" of the last date Days read ("" for none),
	// monthDays the day count of its first day and monthLen its days.
	month     string
	monthDays int64
	monthLen  int
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

// Minute is the minute of the last text Micros read, "YYYY-MM-DD
// HH:MM:" ("" for none), and its microseconds: a text of that minute
// is that many microseconds and its seconds'. A decoder that checks a
// text's minute a word at a time reads it so.
func (r *TimestampReader) Minute() (string, int64) { return r.minute, r.base }

// Days is parseSQLDate(s) ("YYYY-MM-DD") as a DATE's day count, with
// the last month read kept as the minute of Micros is: a run of dates of
// one month reads only the day. ok is false for a text of any other
// form, valid or not (ParseText decides then).
func (r *TimestampReader) Days(s string) (int32, bool) {
	if len(s) != 10 || s[7] != '-' {
		return 0, false
	}
	if r.month == "" || s[:8] != r.month {
		year, ok1 := digits(s[0:4])
		month, ok2 := digits(s[5:7])
		if !ok1 || !ok2 || s[4] != '-' || month < 1 || month > 12 {
			return 0, false
		}
		// A copy: the text may point into a read block.
		r.month, r.monthDays, r.monthLen = strings.Clone(s[:8]), daysFromCivil(year, month, 1), daysIn(month, year)
	}
	day, ok := digits(s[8:10])
	if !ok || day < 1 || day > r.monthLen {
		return 0, false
	}
	return int32(r.monthDays + int64(day-1)), true
}
