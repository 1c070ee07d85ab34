package expr

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// likeItem is a literal run of text, or (lit == "") one character (_).
type likeItem struct{ lit string }

// likeSeg is the part of a pattern between two %.
type likeSeg []likeItem

func (s likeSeg) runes() int {
	n := 0
	for _, it := range s {
		if it.lit == "" {
			n++
		} else {
			n += utf8.RuneCountInString(it.lit)
		}
	}
	return n
}

// likePattern is a LIKE pattern split at its % signs: segs[0] must match
// at the start, the last at the end, the others anywhere in between, in
// order. With no % the single segment must match the whole text.
type likePattern struct {
	segs []likeSeg
	// simple forms, matched without the general loop
	kind byte // '=' equal, '^' prefix, '$' suffix, '*' contains, 0 general
	lit  string
}

// parseLike reads a pattern: % any run, _ one character, esc (0 when none)
// makes the next % _ or esc literal.
func parseLike(p string, esc rune) (*likePattern, error) {
	var segs []likeSeg
	var seg likeSeg
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			seg = append(seg, likeItem{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		r, w := utf8.DecodeRuneInString(p[i:])
		i += w
		switch {
		case esc != 0 && r == esc:
			if i >= len(p) {
				return nil, fmt.Errorf("LIKE pattern %q ends with the escape character", p)
			}
			n, w2 := utf8.DecodeRuneInString(p[i:])
			if n != '%' && n != '_' && n != esc {
				return nil, fmt.Errorf("invalid escape sequence %q in LIKE pattern %q: the escape character may precede only %%, _ or itself", string([]rune{r, n}), p)
			}
			i += w2
			lit.WriteRune(n)
		case r == '%':
			flush()
			segs = append(segs, seg)
			seg = nil
		case r == '_':
			flush()
			seg = append(seg, likeItem{})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	segs = append(segs, seg)
	lp := &likePattern{segs: segs}
	plain := func(s likeSeg) (string, bool) {
		switch len(s) {
		case 0:
			return "", true
		case 1:
			return s[0].lit, s[0].lit != ""
		}
		return "", false
	}
	switch len(segs) {
	case 1:
		if s, ok := plain(segs[0]); ok {
			lp.kind, lp.lit = '=', s
		}
	case 2:
		a, okA := plain(segs[0])
		b, okB := plain(segs[1])
		switch {
		case okA && okB && b == "":
			lp.kind, lp.lit = '^', a
		case okA && okB && a == "":
			lp.kind, lp.lit = '$', b
		}
	case 3:
		a, okA := plain(segs[0])
		b, okB := plain(segs[1])
		d, okD := plain(segs[2])
		if okA && okB && okD && a == "" && d == "" {
			lp.kind, lp.lit = '*', b
		}
	}
	return lp, nil
}

// matchAt matches seg at s[i:], returning where it ends.
func (s likeSeg) matchAt(str string, i int) (int, bool) {
	for _, it := range s {
		if it.lit == "" {
			if i >= len(str) {
				return 0, false
			}
			_, w := utf8.DecodeRuneInString(str[i:])
			i += w
			continue
		}
		if !strings.HasPrefix(str[i:], it.lit) {
			return 0, false
		}
		i += len(it.lit)
	}
	return i, true
}

func (p *likePattern) match(s string) bool {
	switch p.kind {
	case '=':
		return s == p.lit
	case '^':
		return strings.HasPrefix(s, p.lit)
	case '$':
		return strings.HasSuffix(s, p.lit)
	case '*':
		return strings.Contains(s, p.lit)
	}
	segs := p.segs
	if len(segs) == 1 {
		end, ok := segs[0].matchAt(s, 0)
		return ok && end == len(s)
	}
	pos, ok := segs[0].matchAt(s, 0)
	if !ok {
		return false
	}
	// The last segment takes a fixed number of characters off the end.
	last := segs[len(segs)-1]
	tail := len(s)
	for k := last.runes(); k > 0; k-- {
		if tail <= pos {
			return false
		}
		_, w := utf8.DecodeLastRuneInString(s[:tail])
		tail -= w
	}
	if tail < pos {
		return false
	}
	if end, ok := last.matchAt(s, tail); !ok || end != len(s) {
		return false
	}
	// Middle segments: leftmost match each, within s[pos:tail].
	limit := s[:tail]
	for _, seg := range segs[1 : len(segs)-1] {
		found := false
		for i := pos; i <= len(limit); {
			if end, ok := seg.matchAt(limit, i); ok {
				pos, found = end, true
				break
			}
			if i == len(limit) {
				break
			}
			_, w := utf8.DecodeRuneInString(limit[i:])
			i += w
		}
		if !found {
			return false
		}
	}
	return true
}

type likeCache struct {
	pattern string
	p       *likePattern
}

// like compiles x [NOT] LIKE pattern [ESCAPE esc]. A constant pattern is
// parsed once (and a bad one is a plan error); a computed one is parsed
// per row, remembering the last.
func (c *compiler) like(e *sql.Like) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	pat, err := c.compile(e.Pattern)
	if err != nil {
		return nil, err
	}
	if !isStringy(x.t) {
		return nil, errAt(e.X.Pos(), "LIKE needs a STRING, not %s", typeName(x.t))
	}
	if !isStringy(pat.t) {
		return nil, errAt(e.Pattern.Pos(), "a LIKE pattern must be a STRING, not %s", typeName(pat.t))
	}
	var esc rune
	t := row.Type{ID: row.Boolean, NotNull: x.t.NotNull && pat.t.NotNull}
	if e.Escape != nil {
		en, err := c.compile(e.Escape)
		if err != nil {
			return nil, err
		}
		if !en.konst || !isStringy(en.t) {
			return nil, errAt(e.Escape.Pos(), "the LIKE escape must be a constant STRING of one character")
		}
		if en.val.IsNull() {
			return constNode(e, t, row.NullValue), nil
		}
		s := en.val.Str()
		if utf8.RuneCountInString(s) != 1 {
			return nil, errAt(e.Escape.Pos(), "the LIKE escape must be one character, not %q", s)
		}
		esc, _ = utf8.DecodeRuneInString(s)
	}
	neg := e.Not
	if e.Similar {
		return c.similar(e, t, x, pat, esc)
	}
	if pat.konst {
		if pat.val.IsNull() {
			return constNode(e, t, row.NullValue), nil
		}
		lp, err := parseLike(pat.val.Str(), esc)
		if err != nil {
			return nil, errAt(e.Pattern.Pos(), "%v", err)
		}
		return c.fn1(e, t, x, func(v row.Value) (row.Value, error) { return boolOf(lp.match(v.Str()) != neg), nil })
	}
	var last atomic.Pointer[likeCache]
	return c.fn2(e, t, x, pat, func(v, p row.Value) (row.Value, error) {
		lc := last.Load()
		if lc == nil || lc.pattern != p.Str() {
			lp, err := parseLike(p.Str(), esc)
			if err != nil {
				return row.NullValue, err
			}
			lc = &likeCache{pattern: p.Str(), p: lp}
			last.Store(lc)
		}
		return boolOf(lc.p.match(v.Str()) != neg), nil
	})
}
