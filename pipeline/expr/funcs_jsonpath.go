package expr

import (
	"errors"
	"strconv"
	"strings"
)

// Jayway JsonPath's steps that select several values, as Flink's
// JSON_VALUE, JSON_QUERY and JSON_EXISTS run them: .* and [*] (every
// member or element), ..step (the step applied to the value and to every
// value inside it, the value first, as Jayway's deep scan walks), [1,3]
// (several indexes), [lo:hi] (a slice, negative bounds counting from the
// end) and [?(filter)] (the elements for which the filter holds). A path
// with any of them is indefinite: its result is a list of what was found,
// even one value or none, which JSON_QUERY writes as a JSON array, which
// JSON_VALUE refuses as no scalar and which JSON_EXISTS counts as found.
// Members or elements that are missing are skipped.

type jsonStepKind uint8

const (
	stepPlain jsonStepKind = iota
	stepDeep
	stepWildcard
	stepIndexes
	stepSlice
	stepFilter
)

// jsonMulti holds the parameters of the steps that select several values.
type jsonMulti struct {
	indexes      []int
	lo, hi       int
	hasLo, hasHi bool
	pred         *jsonPred
}

func jsonIndefinite(path []jsonStep) bool {
	for _, st := range path {
		if st.kind != stepPlain {
			return true
		}
	}
	return false
}

// parseJSONSubscript reads the inside of [...] when it is *, a list of
// indexes or a slice.
func parseJSONSubscript(inner string) (jsonStep, bool) {
	if inner == "*" {
		return jsonStep{kind: stepWildcard, index: -1}, true
	}
	if lo, hi, ok := strings.Cut(inner, ":"); ok {
		m := &jsonMulti{}
		var err error
		if lo = strings.TrimSpace(lo); lo != "" {
			m.hasLo = true
			if m.lo, err = strconv.Atoi(lo); err != nil {
				return jsonStep{}, false
			}
		}
		if hi = strings.TrimSpace(hi); hi != "" {
			m.hasHi = true
			if m.hi, err = strconv.Atoi(hi); err != nil {
				return jsonStep{}, false
			}
		}
		return jsonStep{kind: stepSlice, index: -1, multi: m}, true
	}
	if !strings.Contains(inner, ",") {
		return jsonStep{}, false
	}
	m := &jsonMulti{}
	for _, part := range strings.Split(inner, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return jsonStep{}, false
		}
		m.indexes = append(m.indexes, n)
	}
	return jsonStep{kind: stepIndexes, index: -1, multi: m}, true
}

// jsonItems calls f with each member value of an object or each element
// of an array (raw, valid JSON), in order; key is "" for elements.
func jsonItems(raw string, f func(key, v string)) {
	i := skipWS(raw, 0)
	if i >= len(raw) || (raw[i] != '{' && raw[i] != '[') {
		return
	}
	obj := raw[i] == '{'
	i = skipWS(raw, i+1)
	for i < len(raw) && raw[i] != '}' && raw[i] != ']' {
		key := ""
		if obj {
			end := skipString(raw, i)
			key = jsonString(raw[i:end])
			i = skipWS(raw, end) + 1 // the colon
			i = skipWS(raw, i)
		}
		end := skipValue(raw, i)
		f(key, raw[i:end])
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
}

func isJSONArray(raw string) bool  { return raw != "" && raw[0] == '[' }
func isJSONObject(raw string) bool { return raw != "" && raw[0] == '{' }

// jsonApply applies one step to each value, in order.
func jsonApply(vals []string, st jsonStep) []string {
	var out []string
	for _, v := range vals {
		switch st.kind {
		case stepPlain:
			if i, ok := jsonStepInto(v, 0, st); ok {
				out = append(out, v[i:skipValue(v, i)])
			}
		case stepWildcard:
			jsonItems(v, func(_, x string) { out = append(out, x) })
		case stepIndexes, stepSlice:
			if !isJSONArray(v) {
				continue
			}
			var items []string
			jsonItems(v, func(_, x string) { items = append(items, x) })
			out = append(out, pickItems(items, st)...)
		case stepFilter:
			switch {
			case isJSONArray(v):
				jsonItems(v, func(_, x string) {
					if st.multi.pred.holds(x) {
						out = append(out, x)
					}
				})
			case isJSONObject(v) && st.multi.pred.holds(v):
				out = append(out, v)
			}
		}
	}
	return out
}

func pickItems(items []string, st jsonStep) []string {
	m := st.multi
	var out []string
	if st.kind == stepIndexes {
		for _, n := range m.indexes {
			if n < len(items) {
				out = append(out, items[n])
			}
		}
		return out
	}
	lo, hi := 0, len(items)
	if m.hasLo {
		lo = m.lo
		if lo < 0 {
			lo = max(len(items)+lo, 0)
		}
	}
	if m.hasHi {
		hi = m.hi
		if hi < 0 {
			hi = len(items) + hi
		}
	}
	for i := lo; i < min(hi, len(items)); i++ {
		out = append(out, items[i])
	}
	return out
}

// jsonDescend lists v and every value inside it, each before its
// contents (Jayway's deep scan order).
func jsonDescend(v string, out []string) []string {
	out = append(out, v)
	jsonItems(v, func(_, x string) {
		if isJSONArray(x) || isJSONObject(x) {
			out = jsonDescend(x, out)
		}
	})
	return out
}

// jsonSelectAll follows an indefinite path in doc (valid JSON) and writes
// the values found as a compact JSON array. As in Jayway, a member or
// element missing before the first step of several values makes the path
// lead nowhere (ok false); one missing after it is skipped.
func jsonSelectAll(doc string, path []jsonStep) (string, bool) {
	vals := []string{strings.TrimSpace(doc)}
	definite := true
	for i := 0; i < len(path); i++ {
		st := path[i]
		if st.kind != stepPlain {
			definite = false
		}
		if st.kind == stepDeep {
			var all []string
			for _, v := range vals {
				all = jsonDescend(v, all)
			}
			vals = all
			continue
		}
		vals = jsonApply(vals, st)
		if definite && len(vals) == 0 {
			return "", false
		}
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(compactJSON(v))
	}
	b.WriteByte(']')
	return b.String(), true
}

// A jsonPred is a filter: comparisons of @-paths and literals joined by
// && and ||, or a lone @-path that holds when something is there.
type jsonPred struct {
	or, and []*jsonPred // one of: alternatives, conjuncts
	l, r    *jsonOperand
	op      string // "" for a lone operand (existence)
}

type jsonOperand struct {
	path []jsonStep // from @
	lit  string     // a JSON literal, when path is nil
	self bool       // @ itself
}

// parseJSONFilter reads [?(...)] at the start of s and returns the step
// and the characters read.
func parseJSONFilter(s string) (jsonStep, int, error) {
	fp := &filterParser{s: s, i: len("[?(")}
	pred, err := fp.or()
	if err != nil {
		return jsonStep{}, 0, err
	}
	fp.ws()
	if !strings.HasPrefix(s[fp.i:], ")]") {
		return jsonStep{}, 0, errors.New("a filter ends with )]")
	}
	return jsonStep{kind: stepFilter, index: -1, multi: &jsonMulti{pred: pred}}, fp.i + 2, nil
}

type filterParser struct {
	s string
	i int
}

func (p *filterParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *filterParser) or() (*jsonPred, error) {
	var alts []*jsonPred
	for {
		a, err := p.and()
		if err != nil {
			return nil, err
		}
		alts = append(alts, a)
		p.ws()
		if !strings.HasPrefix(p.s[p.i:], "||") {
			break
		}
		p.i += 2
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &jsonPred{or: alts}, nil
}

func (p *filterParser) and() (*jsonPred, error) {
	var all []*jsonPred
	for {
		c, err := p.cmp()
		if err != nil {
			return nil, err
		}
		all = append(all, c)
		p.ws()
		if !strings.HasPrefix(p.s[p.i:], "&&") {
			break
		}
		p.i += 2
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return &jsonPred{and: all}, nil
}

func (p *filterParser) cmp() (*jsonPred, error) {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, errors.New("unclosed ( in a filter")
		}
		p.i++
		return inner, nil
	}
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	p.ws()
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(p.s[p.i:], op) {
			p.i += len(op)
			r, err := p.operand()
			if err != nil {
				return nil, err
			}
			return &jsonPred{l: l, r: r, op: op}, nil
		}
	}
	if l.path == nil && !l.self {
		return nil, errors.New("a filter compares @ with ==, !=, <, <=, > or >=")
	}
	return &jsonPred{l: l}, nil
}

func (p *filterParser) operand() (*jsonOperand, error) {
	p.ws()
	start := p.i
	if p.i >= len(p.s) {
		return nil, errors.New("unfinished filter")
	}
	switch c := p.s[p.i]; {
	case c == '@':
		p.i++
		for p.i < len(p.s) && !strings.ContainsRune(" \t=!<>&|)", rune(p.s[p.i])) {
			if p.s[p.i] == '[' {
				if end := strings.IndexByte(p.s[p.i:], ']'); end > 0 {
					p.i += end
				}
			}
			p.i++
		}
		rel := p.s[start+1 : p.i]
		if rel == "" {
			return &jsonOperand{self: true}, nil
		}
		steps, _, err := parseJSONPathMode("$" + rel)
		if err != nil || jsonIndefinite(steps) {
			return nil, errors.New("a filter's @ path must name one value")
		}
		return &jsonOperand{path: steps}, nil
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.s[p.i+1:], c)
		if end < 0 {
			return nil, errors.New("unclosed string in a filter")
		}
		p.i += end + 2
		return &jsonOperand{lit: strconv.Quote(p.s[start+1 : p.i-1])}, nil
	}
	for p.i < len(p.s) && !strings.ContainsRune(" \t=!<>&|)", rune(p.s[p.i])) {
		p.i++
	}
	lit := p.s[start:p.i]
	if lit != "true" && lit != "false" && lit != "null" {
		if _, err := strconv.ParseFloat(lit, 64); err != nil {
			return nil, errors.New("a filter compares with a number, a quoted string, true, false or null, not " + strconv.Quote(lit))
		}
	}
	return &jsonOperand{lit: lit}, nil
}

// value is the operand's raw JSON at the element x, false when missing.
func (o *jsonOperand) value(x string) (string, bool) {
	switch {
	case o.self:
		return x, true
	case o.path == nil:
		return o.lit, true
	}
	i := 0
	for _, st := range o.path {
		var ok bool
		if i, ok = jsonStepInto(x, i, st); !ok {
			return "", false
		}
	}
	i = skipWS(x, i)
	return x[i:skipValue(x, i)], true
}

func (p *jsonPred) holds(x string) bool {
	switch {
	case p.or != nil:
		for _, a := range p.or {
			if a.holds(x) {
				return true
			}
		}
		return false
	case p.and != nil:
		for _, a := range p.and {
			if !a.holds(x) {
				return false
			}
		}
		return true
	}
	l, ok := p.l.value(x)
	if p.op == "" || !ok {
		return ok
	}
	r, ok := p.r.value(x)
	if !ok {
		return false
	}
	c, comparable := compareJSONScalars(l, r)
	switch p.op {
	case "==":
		return comparable && c == 0
	case "!=":
		return !comparable || c != 0
	case "<":
		return comparable && c < 0
	case "<=":
		return comparable && c <= 0
	case ">":
		return comparable && c > 0
	}
	return comparable && c >= 0
}

// compareJSONScalars orders two numbers or two strings; other values are
// only equal when written alike.
func compareJSONScalars(a, b string) (int, bool) {
	if a == "" || b == "" {
		return 0, false
	}
	num := func(s string) bool { return s[0] == '-' || (s[0] >= '0' && s[0] <= '9') }
	switch {
	case num(a) && num(b):
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case a[0] == '"' && b[0] == '"':
		return strings.Compare(jsonString(a), jsonString(b)), true
	case a == b:
		return 0, true
	}
	return 0, false
}
