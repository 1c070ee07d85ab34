package row

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The implementations that the fast paths of text.go replaced, kept as
// the reference that their differential tests and benchmarks compare
// against. Do not call them outside tests.

func refAppendJavaFloat(dst []byte, f float64, bits int) []byte {
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
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bits)
		if !strings.ContainsRune(string(dst[start:]), '.') {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	s := strconv.FormatFloat(f, 'E', -1, bits)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	dst = append(dst, mant...)
	dst = append(dst, 'E')
	exp = strings.TrimPrefix(exp, "+")
	if strings.HasPrefix(exp, "-") {
		return append(dst, "-"+strings.TrimLeft(exp[1:], "0")...)
	}
	return append(dst, strings.TrimLeft(exp, "0")...)
}

func refAppendSQLTimestamp(dst []byte, micros int64, precision int) []byte {
	t := time.UnixMicro(micros).UTC()
	dst = appendJavaYearSign(dst, t)
	dst = t.AppendFormat(dst, time.DateTime)
	if precision > 0 {
		frac := fmt.Sprintf("%09d", t.Nanosecond())
		if precision > 9 {
			precision = 9
		}
		dst = append(dst, '.')
		dst = append(dst, frac[:precision]...)
	}
	return dst
}

// appendJavaYearSign writes the '+' that java.time's ISO formats put
// before a year past 9999 and Go's layouts do not (both write a year
// before 0000 as -0001).
func appendJavaYearSign(dst []byte, t time.Time) []byte {
	if t.Year() > 9999 {
		dst = append(dst, '+')
	}
	return dst
}
