package row

import (
	"bytes"
	"strconv"
	"strings"
)

// TIME(p) is a time of day, held as microseconds since midnight. Flink
// keeps a TIME in milliseconds whatever its precision, so etld does too:
// digits past the third are dropped when a TIME is made.

// MicrosPerDay is one past the largest TIME.
const MicrosPerDay = 86400 * 1_000_000

// TimeOfDayValue is the TIME micros after midnight (0 <= micros <
// MicrosPerDay), cut to milliseconds.
func TimeOfDayValue(micros int64) Value {
	return Value{id: Time, n: uint64(micros - micros%1000)}
}

// TimeOfTimestamp is the TIME of a TIMESTAMP's wall clock (or of an instant in
// UTC), given in microseconds since 1970-01-01.
func TimeOfTimestamp(micros int64) Value {
	m := micros % MicrosPerDay
	if m < 0 {
		m += MicrosPerDay
	}
	return TimeOfDayValue(m)
}

// parseTime reads H:mm[:ss[.fff...]] (one or two hour digits), as Flink's
// CAST(s AS TIME) does; fraction digits past the precision (and past
// milliseconds) are dropped.
func parseTime(s string, precision int) (Value, bool) {
	hms, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) < 2 || len(parts) > 3 || (hasFrac && len(parts) != 3) {
		return NullValue, false
	}
	limits := []int{24, 60, 60}
	var fields [3]int
	for i, p := range parts {
		if len(p) < 1 || len(p) > 2 || (i > 0 && len(p) != 2) {
			return NullValue, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n >= limits[i] {
			return NullValue, false
		}
		fields[i] = n
	}
	micros := int64(fields[0]*3600+fields[1]*60+fields[2]) * 1_000_000
	if hasFrac {
		if frac == "" || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
			return NullValue, false
		}
		digits := min(len(frac), precision, 3)
		if digits > 0 {
			n, _ := strconv.Atoi(frac[:digits])
			for i := digits; i < 6; i++ {
				n *= 10
			}
			micros += int64(n)
		}
	}
	return TimeOfDayValue(micros), true
}

// appendSQLTime writes a TIME as CAST(t AS STRING) does in Flink 2.3:
// HH:mm:ss, and for a precision above 0 the fraction without its
// trailing zeros but at least one digit (00:00:00.0, 07:05:09.1,
// 10:30:45.123).
func appendSQLTime(dst []byte, v Value, t Type) []byte {
	p := t.Precision
	if t.ID != Time {
		p = 3
	}
	start := len(dst)
	dst = AppendTimeTrimmed(dst, v)
	if p > 0 && bytes.IndexByte(dst[start:], '.') < 0 {
		dst = append(dst, ".0"...)
	}
	return dst
}

// AppendTimeTrimmed writes a TIME as Flink's csv and json formats do
// (SQL_TIME_FORMAT): HH:mm:ss and the fraction's digits up to the last
// that is not zero, none when it is zero.
func AppendTimeTrimmed(dst []byte, v Value) []byte {
	ts := appendSQLTimestamp(nil, int64(v.n), 3)[len("1970-01-01 "):]
	ts = bytes.TrimRight(ts, "0")
	if ts[len(ts)-1] == '.' {
		ts = ts[:len(ts)-1]
	}
	return append(dst, ts...)
}

// appendJavaLocalTime writes a TIME as Java's LocalTime.toString, the
// print connector's form: HH:mm, then :ss unless the seconds and the
// fraction are zero, then the fraction in groups of three digits.
func appendJavaLocalTime(dst []byte, v Value) []byte {
	ts := appendJavaLocalDateTime(nil, int64(v.n))
	return append(dst, ts[len("1970-01-01T"):]...)
}

// AppendTimestampTrimmed writes a TIMESTAMP's wall clock (micros since
// 1970-01-01) as Flink's csv writer does: yyyy-MM-dd HH:mm:ss and the
// fraction's digits up to the last that is not zero, none when it is
// zero (Go's layout 2006-01-02 15:04:05.999999), without package time
// for the years 0..9999, and a year past them as java.time writes it
// (+10000, -0001; appendISOYear), as Flink's writers do.
func AppendTimestampTrimmed(dst []byte, micros int64) []byte {
	dst = appendSQLTimestamp(dst, micros, 6)
	n := len(dst)
	for dst[n-1] == '0' {
		n--
	}
	if dst[n-1] == '.' {
		n--
	}
	return dst[:n]
}
