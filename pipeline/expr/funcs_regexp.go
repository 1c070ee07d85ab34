package expr

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// Regular expressions: Flink uses java.util.regex; etld uses Go's RE2,
// which matches in linear time but lacks backreferences (\1), lookahead
// and lookbehind ((?=, (?!, (?<=, (?<!), possessive quantifiers (a*+),
// atomic groups and \Z. Everything else common (classes, \d \w \s \b,
// (?i), named groups (?<name>...), lazy quantifiers) means the same.
// Functions search (Java's Matcher.find), they do not anchor.

func init() {
	register(map[string]*funcDef{
		"REGEXP":         {min: 2, max: 2, build: buildRegexp},
		"REGEXP_EXTRACT": {min: 2, max: 3, build: buildRegexpExtract},
		"REGEXP_REPLACE": {min: 3, max: 3, build: buildRegexpReplace},
	})
}

func compileRegexp(p string) (*pattern, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, fmt.Errorf("invalid regular expression %q: %s (etld uses RE2 syntax: no backreferences, lookaround or possessive quantifiers)", p, msg)
	}
	return newPattern(re), nil
}

type reCache struct {
	pattern string
	re      *pattern
	tmpl    string // REGEXP_REPLACE: the replacement, translated
	repl    string
}

// regexpArg compiles argument i as a pattern: once when it is a constant
// (a bad one is a plan error at its position), else per distinct value,
// remembering the last.
type regexpArg struct {
	fixed *pattern
	last  atomic.Pointer[reCache]
}

func newRegexpArg(e *sql.Call, args []*node, i int) (*regexpArg, error) {
	ra := &regexpArg{}
	if a := args[i]; a.konst && !a.val.IsNull() {
		re, err := compileRegexp(a.val.Str())
		if err != nil {
			return nil, errAt(a.e.Pos(), "%s: %v", e.Name, err)
		}
		ra.fixed = re
	}
	return ra, nil
}

func (ra *regexpArg) get(p string) (*pattern, error) {
	if ra.fixed != nil {
		return ra.fixed, nil
	}
	if c := ra.last.Load(); c != nil && c.pattern == p {
		return c.re, nil
	}
	re, err := compileRegexp(p)
	if err != nil {
		return nil, err
	}
	ra.last.Store(&reCache{pattern: p, re: re})
	return re, nil
}

func buildRegexp(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	ra, err := newRegexpArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	t := row.Type{ID: row.Boolean, NotNull: allNotNull(args...)}
	return c.fn2(e, t, args[0], args[1], func(s, p row.Value) (row.Value, error) {
		re, err := ra.get(p.Str())
		if err != nil {
			return row.NullValue, err
		}
		return boolOf(re.MatchString(s.Str())), nil
	})
}

// buildRegexpExtract is REGEXP_EXTRACT(s, regex [, group]): group 0 (the
// default) is the whole match; no match, a group out of range or a group
// that did not take part gives NULL, as in Flink.
func buildRegexpExtract(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0, 1); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 2); err != nil {
		return nil, err
	}
	ra, err := newRegexpArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	if len(args) == 3 && args[2].konst && !args[2].val.IsNull() && ra.fixed != nil {
		if g := args[2].val.Int64(); g < 0 || g > int64(ra.fixed.NumSubexp()) {
			return nil, errAt(args[2].e.Pos(), "REGEXP_EXTRACT: group %d does not exist; the pattern has %d", g, ra.fixed.NumSubexp())
		}
	}
	extract := func(s, p string, g int64) (row.Value, error) {
		re, err := ra.get(p)
		if err != nil {
			return row.NullValue, err
		}
		if g < 0 || g > int64(re.NumSubexp()) {
			return row.NullValue, nil
		}
		m := re.FindStringSubmatchIndex(s)
		if m == nil || m[2*g] < 0 {
			return row.NullValue, nil
		}
		return row.StringValue(s[m[2*g]:m[2*g+1]]), nil
	}
	t := row.Type{ID: row.String}
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(s, p row.Value) (row.Value, error) {
			return extract(s.Str(), p.Str(), 0)
		})
	}
	return c.fn3(e, t, args[0], args[1], args[2], func(s, p, g row.Value) (row.Value, error) {
		return extract(s.Str(), p.Str(), g.Int64())
	})
}

// literalTemplate is repl as a Go Expand template that writes it as it
// is: Flink's REGEXP_REPLACE takes the replacement literally (Java's
// Matcher.quoteReplacement), so '$2 $1' is written as "$2 $1", not as
// group references (the conformance case fn-regexp-replace).
func literalTemplate(repl string) string { return strings.ReplaceAll(repl, "$", "$$") }

func replaceAll(re *pattern, s, tmpl string) string {
	if re.cannotMatch(s) {
		return s
	}
	if re.matchesEmpty {
		return javaReplaceAll(re, s, tmpl)
	}
	if !strings.Contains(tmpl, "$") {
		return re.ReplaceAllLiteralString(s, tmpl)
	}
	return re.ReplaceAllString(s, tmpl)
}

// javaReplaceAll replaces the matches Java's replaceAll replaces, the
// empty one right after a non-empty one too ('[a-z]*' in "abc" by X is XX
// in Java, X in Go's ReplaceAllString; see javaFindAll).
func javaReplaceAll(re *pattern, s, tmpl string) string {
	var out []byte
	last := 0
	for _, m := range javaFindAll(re, s) {
		out = append(out, s[last:m[0]]...)
		out = re.ExpandString(out, tmpl, s, m)
		last = m[1]
	}
	return string(append(out, s[last:]...))
}

// buildRegexpReplace is REGEXP_REPLACE(s, regex, replacement): every
// match replaced by the replacement, taken literally as Flink does.
func buildRegexpReplace(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	ra, err := newRegexpArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	t := strType(args...)
	if ra.fixed != nil && args[2].konst && !args[2].val.IsNull() {
		re := ra.fixed
		tmpl := literalTemplate(args[2].val.Str())
		return c.fn1(e, t, args[0], func(s row.Value) (row.Value, error) {
			return row.StringValue(replaceAll(re, s.Str(), tmpl)), nil
		})
	}
	var last atomic.Pointer[reCache]
	return c.fn3(e, t, args[0], args[1], args[2], func(s, p, r row.Value) (row.Value, error) {
		if lc := last.Load(); lc != nil && lc.pattern == p.Str() && lc.repl == r.Str() {
			return row.StringValue(replaceAll(lc.re, s.Str(), lc.tmpl)), nil
		}
		re, err := ra.get(p.Str())
		if err != nil {
			return row.NullValue, err
		}
		tmpl := literalTemplate(r.Str())
		last.Store(&reCache{pattern: p.Str(), re: re, repl: r.Str(), tmpl: tmpl})
		return row.StringValue(replaceAll(re, s.Str(), tmpl)), nil
	})
}
