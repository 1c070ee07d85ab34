package expr

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// OVERLAY(s PLACING r FROM n [FOR len]) as Flink 2.3 computes it
// (SqlFunctionUtils.overlay): over Java's UTF-16 code units, len r's
// length by default. s is returned as it is when n is not within it; r
// replaces the len units from n, but with len at most 0, or reaching
// past s's end, nothing of s follows r. len is narrowed to a Java int
// and the arithmetic wraps as Java's does, so that a len that makes the
// place to go on from negative fails the row, as it fails Flink's job.

func init() {
	register(map[string]*funcDef{
		"OVERLAY": {min: 3, max: 4, build: buildOverlay},
	})
}

// javaUnits is s as Java's UTF-16 code units.
func javaUnits(s string) []uint16 { return utf16.Encode([]rune(s)) }

// javaUnitsString is Java's units written as UTF-8 the way Flink writes
// a Java string: a surrogate without its pair becomes '?'.
func javaUnitsString(u []uint16) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := rune(u[i])
		switch {
		case utf16.IsSurrogate(c) && c < 0xDC00 && i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] <= 0xDFFF:
			b.WriteRune(utf16.DecodeRune(c, rune(u[i+1])))
			i++
		case utf16.IsSurrogate(c):
			b.WriteByte('?')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// overlay is Flink's overlay(s, r, start, length).
func overlay(s, r string, start, length int64) (string, error) {
	if start <= 0 {
		return s, nil
	}
	ascii := isASCII(s)
	var su []uint16
	n := int64(len(s))
	if !ascii {
		su = javaUnits(s)
		n = int64(len(su))
	}
	if start > n {
		return s, nil
	}
	pos, l := int32(start), int32(length)
	slice := func(lo, hi int32) string {
		if ascii {
			return s[lo:hi]
		}
		return javaUnitsString(su[lo:hi])
	}
	var b strings.Builder
	b.WriteString(slice(0, pos-1))
	b.WriteString(r)
	if pos+l <= int32(n) && l > 0 {
		from := pos - 1 + l
		if from < 0 || int64(from) > n {
			return "", fmt.Errorf("begin %d, end %d, length %d: out of the string (StringIndexOutOfBoundsException in Flink)", from, n, n)
		}
		b.WriteString(slice(from, int32(n)))
	}
	return b.String(), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// javaLength is s's length in UTF-16 code units.
func javaLength(s string) int64 {
	n := int64(0)
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// buildOverlay is OVERLAY(s, r, n [, len]) as the parser reads
// OVERLAY(s PLACING r FROM n [FOR len]): STRING, NULL when an argument
// is.
func buildOverlay(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0, 1); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 2, 3); err != nil {
		return nil, err
	}
	t := strType(args...)
	if len(args) == 3 {
		return c.fn3(e, t, args[0], args[1], args[2], func(s, r, n row.Value) (row.Value, error) {
			out, err := overlay(s.Str(), r.Str(), n.Int64(), javaLength(r.Str()))
			return row.StringValue(out), err
		})
	}
	return c.fnN(e, t, args, func(v []row.Value) (row.Value, error) {
		out, err := overlay(v[0].Str(), v[1].Str(), v[2].Int64(), v[3].Int64())
		return row.StringValue(out), err
	})
}
