package expr

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
)

// padFixed makes a CAST to CHAR(n) or BINARY(n) give exactly n characters
// or bytes, as Flink's does: a shorter value is padded with spaces
// (an empty text CAST AS CHAR(3) is three spaces) or zero bytes; a longer one is cut
// by the kernel already (k). etld types both as VARCHAR(n) and
// VARBINARY(n), so the width is read from the type as written (typeText).
// A CHAR column read from a source keeps its text, as in Flink.
func padFixed(typeText string, to row.Type, k castFunc) castFunc {
	n, binary := fixedWidth(typeText)
	if n <= 0 || k == nil || (to.ID != row.String && to.ID != row.Bytes) {
		return k
	}
	if binary {
		return func(v row.Value) (row.Value, error) {
			out, err := k(v)
			if err != nil || out.IsNull() || len(out.Str()) >= n {
				return out, err
			}
			b := make([]byte, n)
			copy(b, out.Str())
			return row.BytesValue(b), nil
		}
	}
	return func(v row.Value) (row.Value, error) {
		out, err := k(v)
		if err != nil || out.IsNull() {
			return out, err
		}
		s := out.Str()
		if short := n - utf8.RuneCountInString(s); short > 0 {
			return row.StringValue(s + strings.Repeat(" ", short)), nil
		}
		return out, nil
	}
}

// fixedWidth is n of a type written CHAR(n) or BINARY(n),
// and whether it is BINARY; 0 for any other type.
func fixedWidth(typeText string) (int, bool) {
	up := strings.ToUpper(strings.TrimSpace(typeText))
	up = strings.TrimSuffix(up, "NOT NULL")
	name, rest, ok := strings.Cut(up, "(")
	if !ok {
		return 0, false
	}
	name = strings.TrimSpace(name)
	if name != "CHAR" && name != "BINARY" {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ")")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil {
		return 0, false
	}
	return n, name == "BINARY"
}
