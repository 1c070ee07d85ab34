package expr

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// similarSpecials are the characters an ESCAPE may quote in a SQL
// regular expression; regexpSpecials those of them Go's regexp would
// read as syntax, so a quoted one gets a backslash.
const (
	similarSpecials = "[]()|^-+*_%?{}"
	regexpSpecials  = "[]()|^-+*?{}$\\."
)

// similarRegexp translates a SIMILAR TO pattern into a regular expression
// that matches the whole string, as Calcite's Like.sqlToRegexSimilar does
// for Flink: _ is any one character, % any run (newlines too), [..] a
// character class (a special character other than - and ^ inside it is an
// error), $ and \ are literal, . and the other regular expression syntax
// pass through as Calcite leaves them, and the escape character (0 when
// none) quotes a special character or itself.
func similarRegexp(pat string, esc rune) (*regexp.Regexp, error) {
	rs := []rune(pat)
	var b strings.Builder
	b.WriteString(`\A(?:`)
	inClass := false
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case esc != 0 && c == esc:
			if i == len(rs)-1 {
				return nil, fmt.Errorf("invalid escape sequence in SIMILAR TO pattern %q at %d", pat, i)
			}
			n := rs[i+1]
			switch {
			case strings.ContainsRune(similarSpecials, n):
				if strings.ContainsRune(regexpSpecials, n) {
					b.WriteByte('\\')
				}
				b.WriteRune(n)
			case n == esc:
				b.WriteString(regexp.QuoteMeta(string(n)))
			default:
				return nil, fmt.Errorf("invalid escape sequence in SIMILAR TO pattern %q at %d", pat, i)
			}
			i++
		case inClass && c == ']':
			inClass = false
			b.WriteByte(']')
		case inClass && c == '[' && i+1 < len(rs) && rs[i+1] == ':':
			return nil, fmt.Errorf("character classes [: :] in SIMILAR TO pattern %q are not supported yet", pat)
		case inClass && c != '-' && c != '^' && strings.ContainsRune(similarSpecials, c):
			return nil, fmt.Errorf("invalid regular expression %q: %c inside [ ] at %d", pat, c, i)
		case inClass:
			b.WriteRune(c)
		case c == '_':
			b.WriteByte('.')
		case c == '%':
			b.WriteString("(?s:.*)")
		case c == '[':
			inClass = true
			b.WriteByte('[')
		case c == ']':
			return nil, fmt.Errorf("invalid regular expression %q: ] without [ at %d", pat, i)
		case c == '\\', c == '$':
			b.WriteString(regexp.QuoteMeta(string(c)))
		default:
			b.WriteRune(c)
		}
	}
	if inClass {
		return nil, fmt.Errorf("invalid regular expression %q: [ without ]", pat)
	}
	b.WriteString(`)\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pat, err)
	}
	return re, nil
}

// similarCache is the last computed SIMILAR TO pattern and its regexp.
type similarCache struct {
	pattern string
	re      *regexp.Regexp
}

// similar compiles x [NOT] SIMILAR TO pattern once its operands are
// checked: a constant pattern is translated once (a bad one is a plan
// error), a computed one per row, remembering the last.
func (c *compiler) similar(e *sql.Like, t row.Type, x, pat *node, esc rune) (*node, error) {
	neg := e.Not
	if pat.konst {
		if pat.val.IsNull() {
			return constNode(e, t, row.NullValue), nil
		}
		re, err := similarRegexp(pat.val.Str(), esc)
		if err != nil {
			return nil, errAt(e.Pattern.Pos(), "%v", err)
		}
		return c.fn1(e, t, x, func(v row.Value) (row.Value, error) { return boolOf(re.MatchString(v.Str()) != neg), nil })
	}
	var last atomic.Pointer[similarCache]
	return c.fn2(e, t, x, pat, func(v, p row.Value) (row.Value, error) {
		sc := last.Load()
		if sc == nil || sc.pattern != p.Str() {
			re, err := similarRegexp(p.Str(), esc)
			if err != nil {
				return row.NullValue, err
			}
			sc = &similarCache{pattern: p.Str(), re: re}
			last.Store(sc)
		}
		return boolOf(sc.re.MatchString(v.Str()) != neg), nil
	})
}
