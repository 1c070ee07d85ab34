package sql

import "strings"

// castTypeDefaults gives a CAST's CHAR and BINARY written without a
// length the length Calcite gives them, 1: Flink's CAST(s AS CHAR) is
// s's first character (a space for an empty s) and CAST(b AS BINARY) its
// first byte (a zero byte for an empty b), where etld took them as
// unbounded. CHARACTER is CHAR. VARCHAR and VARBINARY without a length
// stay unbounded: Flink's CAST to them keeps the whole value.
func castTypeDefaults(text string) string {
	name, rest := text, ""
	if i := strings.IndexAny(text, "( "); i >= 0 {
		name, rest = text[:i], text[i:]
	}
	up := strings.ToUpper(name)
	switch up {
	case "CHARACTER":
		up = "CHAR"
	case "CHAR", "BINARY":
	default:
		return text
	}
	if !strings.HasPrefix(strings.TrimSpace(rest), "(") {
		return up + "(1)" + rest
	}
	return up + rest
}
