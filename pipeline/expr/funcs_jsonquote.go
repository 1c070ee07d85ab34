package expr

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// JSON_QUOTE and JSON_UNQUOTE of Flink 2.3, NULL for NULL.

func init() {
	register(map[string]*funcDef{
		"JSON_QUOTE":   {min: 1, max: 1, build: buildJSONQuote},
		"JSON_UNQUOTE": {min: 1, max: 1, build: buildJSONQuote},
	})
}

// jsonQuote wraps s in double quotes as Flink's JSON_QUOTE does: the
// quote, the backslash, the slash, \b \f \n \r \t escaped, every
// character beyond ASCII as \uXXXX (its UTF-16 units), other control
// characters as they are.
func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x80 {
				b.WriteRune(r)
				continue
			}
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsonUnquote is s without its double quotes and escapes when it is a
// JSON string literal, else s as it is.
func jsonUnquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	var out string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return s
	}
	return out
}

func buildJSONQuote(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	f := jsonQuote
	if strings.EqualFold(e.Name, "JSON_UNQUOTE") {
		f = jsonUnquote
	}
	return c.fn1(e, strType(args...), args[0], func(v row.Value) (row.Value, error) {
		return row.StringValue(f(v.Str())), nil
	})
}
