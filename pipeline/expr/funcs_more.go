package expr

import (
	"encoding/json"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// String functions Flink 2.3 added to its library: TRANSLATE, ELT and
// REGEXP_EXTRACT_ALL, with the NULL and range rules of Flink's
// implementations (checked on Flink 2.3).

func init() {
	register(map[string]*funcDef{
		"TRANSLATE":          {min: 3, max: 3, build: buildTranslate},
		"ELT":                {min: 2, max: -1, build: buildElt, lazyFrom: 1},
		"REGEXP_EXTRACT_ALL": {min: 2, max: 3, build: buildRegexpExtractAll},
	})
}

// translate replaces each character of s found in from by the one at the
// same place in to, and drops it when to is shorter; the first place of
// a character repeated in from counts.
func translate(s, from, to string) string {
	if from == "" {
		return s
	}
	repl := map[rune]rune{} // -1: drop
	toRunes := []rune(to)
	i := 0
	for _, r := range from {
		if _, seen := repl[r]; !seen {
			repl[r] = -1
			if i < len(toRunes) {
				repl[r] = toRunes[i]
			}
		}
		i++
	}
	var b strings.Builder
	for _, r := range s {
		if t, ok := repl[r]; ok {
			if t >= 0 {
				b.WriteRune(t)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// buildTranslate is TRANSLATE(s, from, to): NULL when s is; a NULL from
// leaves s as it is and a NULL to drops every character of from, as
// Flink's TranslateFunction does.
func buildTranslate(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	se, fe, te := args[0].eval, args[1].eval, args[2].eval
	f := func(r row.Row) (row.Value, error) {
		s, err := se(r)
		if err != nil || s.IsNull() {
			return row.NullValue, err
		}
		from, err := fe(r)
		if err != nil || from.IsNull() {
			return s, err
		}
		to, err := te(r)
		if err != nil {
			return row.NullValue, err
		}
		return row.StringValue(translate(s.Str(), from.Str(), to.Str())), nil
	}
	return c.finish(e, strType(args[0]), f, args...)
}

// buildElt is ELT(i, s1, s2, ...): the i-th string (from 1), NULL when i
// is NULL or out of range. Flink takes strings (or BYTES) only, and an
// INT index.
func buildElt(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "an INT", func(t row.Type) bool { return t.ID == row.Null || (t.ID == row.Int && t.IntBits() <= 32) }, 0); err != nil {
		return nil, err
	}
	t := row.Type{ID: row.Null}
	for i, a := range args[1:] {
		if a.t.ID != row.Null && a.t.ID != row.String && a.t.ID != row.Bytes {
			return nil, argError(e, i+1, args, "a STRING or BYTES, as in Flink")
		}
		ct, ok := commonType(t, a.t)
		if !ok {
			return nil, argError(e, i+1, args, "of the type of the others")
		}
		t = ct
	}
	if t.ID == row.Null {
		t = row.Type{ID: row.String}
	}
	t.NotNull, t.Length = false, 0
	evs := make([]evalFn, len(args))
	for i, a := range args {
		evs[i] = a.eval
	}
	f := func(r row.Row) (row.Value, error) {
		i, err := evs[0](r)
		if err != nil || i.IsNull() {
			return row.NullValue, err
		}
		n := i.Int64()
		if n < 1 || n >= int64(len(evs)) {
			return row.NullValue, nil
		}
		return evs[n](r)
	}
	return c.finish(e, t, f, args...)
}

// buildRegexpExtractAll is REGEXP_EXTRACT_ALL(s, re [, group]): the
// group (1 by default) of every match, an unmatched group as NULL; an
// empty array without a match, NULL for a group the pattern lacks.
func buildRegexpExtractAll(c *compiler, e *sql.Call, args []*node) (*node, error) {
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
	extract := func(s, p string, g int64) (row.Value, error) {
		re, err := ra.get(p)
		if err != nil {
			return row.NullValue, err
		}
		if g < 0 || g > int64(re.NumSubexp()) {
			return row.NullValue, nil
		}
		var out []row.Value
		for _, m := range javaFindAll(re, s) {
			if m[2*g] < 0 {
				out = append(out, row.NullValue)
				continue
			}
			out = append(out, row.StringValue(s[m[2*g]:m[2*g+1]]))
		}
		return row.ArrayValue(out), nil
	}
	t := row.ArrayOf(row.Type{ID: row.String})
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(s, p row.Value) (row.Value, error) {
			return extract(s.Str(), p.Str(), 1)
		})
	}
	return c.fn3(e, t, args[0], args[1], args[2], func(s, p, g row.Value) (row.Value, error) {
		return extract(s.Str(), p.Str(), g.Int64())
	})
}

// isJSON is x IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]: whether
// the text starts with a JSON value of that kind, as Flink's Jackson
// reads it (what follows the first value is not read); NULL is no JSON.
func (c *compiler) isJSON(e *sql.IsExpr, x *node) (*node, error) {
	if !isStringy(x.t) {
		return nil, errAt(e.OpAt, "IS %s needs a STRING, not %s", e.What, typeName(x.t))
	}
	what, neg, ev := e.What, e.Not, x.eval
	f := func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil {
			return row.NullValue, err
		}
		ok := false
		if !v.IsNull() {
			ok = jsonKindIs(v.Str(), what)
		}
		return boolOf(ok != neg), nil
	}
	return c.finish(e, row.Type{ID: row.Boolean, NotNull: true}, f, x)
}

// jsonKindIs reports whether s starts with a valid JSON value of kind.
func jsonKindIs(s string, kind sql.IsKind) bool {
	var raw json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if dec.Decode(&raw) != nil || len(raw) == 0 {
		return false
	}
	// Jackson wants a number at the top level followed by a blank or the
	// end: 01 and 1x are no JSON, 1 2 is.
	if end := int(dec.InputOffset()); raw[0] != '{' && raw[0] != '[' && raw[0] != '"' && end < len(s) && strings.IndexByte(" \t\r\n", s[end]) < 0 {
		return false
	}
	switch kind {
	case sql.IsJSONObject:
		return raw[0] == '{'
	case sql.IsJSONArray:
		return raw[0] == '['
	case sql.IsJSONScalar:
		return raw[0] != '{' && raw[0] != '['
	}
	return true
}
