// Java's toString forms: what Flink's print connector shows. Flink's CAST
// of a FLOAT or DOUBLE to STRING is Java's too, so AppendText writes floats
// with appendJavaFloat from here.

package row

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

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
	case Time:
		return appendJavaLocalTime(dst, v)
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

// appendJavaLocalDateTime writes LocalDateTime.toString: the date (its
// year as appendISOYear: +10000-01-01), T, HH:mm, :ss unless the seconds
// and the fraction are zero, the fraction as appendJavaFraction.
func appendJavaLocalDateTime(dst []byte, micros int64) []byte {
	return appendJavaDateTime(dst, micros, false)
}

// appendJavaInstant writes Instant.toString (ISO_INSTANT): the date as
// AppendDate, T, HH:mm:ss always, the fraction as appendJavaFraction, Z.
func appendJavaInstant(dst []byte, micros int64) []byte {
	return append(appendJavaDateTime(dst, micros, true), 'Z')
}

// appendJavaDateTime is the two above but the Z: the seconds written when
// not zero, or always with seconds set.
func appendJavaDateTime(dst []byte, micros int64, seconds bool) []byte {
	days, of := splitMicros(micros)
	dst = AppendDate(dst, days)
	sod, frac := of/1e6, of%1e6
	var b [9]byte
	b[0] = 'T'
	put2(b[1:], int(sod/3600))
	b[3] = ':'
	put2(b[4:], int(sod/60%60))
	n := 6
	if seconds || sod%60 != 0 || frac != 0 {
		b[6] = ':'
		put2(b[7:], int(sod%60))
		n = 9
	}
	dst = append(dst, b[:n]...)
	return appendJavaFraction(dst, int(frac)*1000)
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
