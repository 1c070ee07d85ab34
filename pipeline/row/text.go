// SQL text of values: what CAST(v AS STRING) writes and the csv and json
// formats carry, DECIMAL in each of BigDecimal's forms, timestamps written
// by hand.

package row

import (
	"math"
	"strconv"
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
		return AppendDate(dst, int64(v.Days()))
	case Time:
		return appendSQLTime(dst, v, t)
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

// appendMagnitude appends the decimal digits of |u|.
func appendMagnitude(dst []byte, u int64) []byte {
	m := uint64(u)
	if u < 0 {
		m = -m
	}
	return strconv.AppendUint(dst, m, 10)
}

// Micros at 0000-01-01 00:00:00 and at 10000-01-01 00:00:00 UTC: within
// them a timestamp has the four-digit year that appendSQLTimestamp writes
// by hand.
const (
	minFastMicros = -62167219200 * 1e6
	endFastMicros = 253402300800 * 1e6
)

// InTimestampRange reports whether micros falls in the years 0000 to
// 9999: SQL's TIMESTAMP range, the one a four-digit year spells (one
// past it is written with java.time's sign, appendISOYear). A reader of
// epoch numbers refuses the others, as Flink's TO_TIMESTAMP_LTZ does.
func InTimestampRange(micros int64) bool { return micros >= minFastMicros && micros < endFastMicros }

// InDateRange reports whether days since 1970-01-01 fall in the years
// 0000 to 9999, as InTimestampRange.
func InDateRange(days int64) bool {
	return days >= minFastMicros/86400e6 && days < endFastMicros/86400e6
}

// AppendTimestampText is AppendText of a TIMESTAMP or TIMESTAMP_LTZ
// value of micros at precision. Unlike AppendText's, its dst does not
// escape, so that a caller can format into a buffer on its stack.
func AppendTimestampText(dst []byte, micros int64, precision int) []byte {
	return appendSQLTimestamp(dst, micros, precision)
}

// appendSQLTimestamp writes "2006-01-02 15:04:05" and precision digits
// of the fraction (at most 9), as SQL's CAST(ts AS STRING). Window
// aggregates write two per row, so the digits are written by hand (a
// civil-from-days conversion) instead of through time.AppendFormat and
// fmt; a year outside 0000..9999 is written as java.time writes it
// (appendISOYear: +10000, -0001), the form Flink's writers use and its
// json reader takes back.
func appendSQLTimestamp(dst []byte, micros int64, precision int) []byte {
	if precision > 9 {
		precision = 9
	}
	days, of := splitMicros(micros)
	sod, frac := of/1e6, of%1e6
	var y int64
	var m, d int
	fast := micros >= minFastMicros && micros < endFastMicros
	if fast {
		y, m, d = cachedCivilFromDays(days)
	} else {
		y, m, d = civilFromDays(days)
	}
	var b [29]byte // "YYYY-MM-DD hh:mm:ss.fffffffff"
	put4(b[0:], int(y%10000))
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
	n := 19
	if precision > 0 {
		b[19] = '.'
		// Micros give six digits; nanos 7..9 are zeros. Two halves of
		// three digits, whose divisions do not wait on each other (a
		// loop of six, each on the last one's quotient, was most of
		// the time).
		f := int(frac)
		put3(b[20:], f/1000)
		put3(b[23:], f%1000)
		b[26], b[27], b[28] = '0', '0', '0'
		n = 20 + precision
	}
	if fast {
		return append(dst, b[:n]...)
	}
	dst = appendISOYear(dst, y)
	return append(dst, b[4:n]...)
}

func put2(b []byte, v int) {
	b[0] = byte('0' + v/10)
	b[1] = byte('0' + v%10)
}

// put3 writes v (0..999) as three digits.
func put3(b []byte, v int) {
	b[0] = byte('0' + v/100)
	b[1] = byte('0' + v/10%10)
	b[2] = byte('0' + v%10)
}

func put4(b []byte, v int) {
	put2(b, v/100)
	put2(b[2:], v%100)
}
