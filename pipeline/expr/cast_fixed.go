package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// padFixed makes a CAST to CHAR(n) or BINARY(n) give exactly n characters
// or bytes, as Flink's does: a shorter value is padded with spaces
// (an empty text CAST AS CHAR(3) is three spaces) or zero bytes; a longer one is cut
// by the kernel already (k). etld types both as VARCHAR(n) and
// VARBINARY(n), so the width is read from the type as written
// (sql.Cast's SizedType). A CHAR column read from a source keeps its
// text, as in Flink.
func padFixed(e *sql.Cast, to row.Type, k castFunc) castFunc {
	name, n := e.SizedType()
	if name != "CHAR" && name != "BINARY" || n <= 0 || k == nil || (to.ID != row.String && to.ID != row.Bytes) {
		return k
	}
	if name == "BINARY" {
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
