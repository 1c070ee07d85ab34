package sql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseMatchRecognize reads `MATCH_RECOGNIZE ( ... ) [AS alias]` after
// its input (ast_match.go).
func (p *parser) parseMatchRecognize(input FromItem) (FromItem, *Error) {
	kw := p.next()
	m := &MatchRecognize{At: kw.pos, Input: input}
	open := p.tok()
	if !p.acceptPunct("(") {
		return nil, p.expected("( after MATCH_RECOGNIZE", "(")
	}
	if p.acceptWord("PARTITION") {
		if err := p.expectWord("BY", "after PARTITION"); err != nil {
			return nil, err
		}
		for {
			x, err := p.expectExpr("PARTITION BY")
			if err != nil {
				return nil, err
			}
			m.PartitionBy = append(m.PartitionBy, x)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if err := p.matchOrderBy(m); err != nil {
		return nil, err
	}
	if p.acceptWord("MEASURES") {
		for {
			x, err := p.expectExpr("MEASURES")
			if err != nil {
				return nil, err
			}
			if err := p.expectWord("AS", "and a name after a measure"); err != nil {
				return nil, err
			}
			name, err := p.expectName("a measure's name after AS")
			if err != nil {
				return nil, err
			}
			m.Measures = append(m.Measures, &SelectItem{Expr: x, Alias: name})
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if err := p.matchRowsPerMatch(m); err != nil {
		return nil, err
	}
	if err := p.matchSkip(m); err != nil {
		return nil, err
	}
	if err := p.expectWord("PATTERN", "in MATCH_RECOGNIZE"); err != nil {
		return nil, err
	}
	pat, err := p.parsePattern()
	if err != nil {
		return nil, err
	}
	m.Pattern = pat
	if t := p.tok(); t.is("WITHIN") {
		p.next()
		m.WithinAt = t.pos
		if m.Within, err = p.expectExpr("WITHIN"); err != nil {
			return nil, err
		}
	}
	if p.acceptWord("SUBSET") {
		return nil, p.errAt(p.toks[p.i-1], "SUBSET is not supported: Flink supports no SUBSET in MATCH_RECOGNIZE")
	}
	if err := p.expectWord("DEFINE", "in MATCH_RECOGNIZE"); err != nil {
		return nil, err
	}
	for {
		v, err := p.expectName("a pattern variable in DEFINE")
		if err != nil {
			return nil, err
		}
		if err := p.expectWord("AS", "after the pattern variable "+v.Name); err != nil {
			return nil, err
		}
		cond, err := p.expectExpr("AS")
		if err != nil {
			return nil, err
		}
		m.Define = append(m.Define, &PatternDefine{Var: v, Cond: cond})
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectClose(")", "MATCH_RECOGNIZE (", open.pos); err != nil {
		return nil, err
	}
	if m.Alias, err = p.fromAlias(); err != nil {
		return nil, err
	}
	return m, nil
}

func (p *parser) matchOrderBy(m *MatchRecognize) *Error {
	if err := p.expectWord("ORDER", "BY in MATCH_RECOGNIZE"); err != nil {
		return err
	}
	if err := p.expectWord("BY", "after ORDER"); err != nil {
		return err
	}
	for {
		x, err := p.expectExpr("ORDER BY")
		if err != nil {
			return err
		}
		o := &MatchOrder{X: x}
		if p.acceptWord("DESC") {
			o.Desc = true
		} else {
			p.acceptWord("ASC")
		}
		m.OrderBy = append(m.OrderBy, o)
		if !p.acceptPunct(",") {
			return nil
		}
	}
}

// matchRowsPerMatch reads [ONE ROW PER MATCH | ALL ROWS PER MATCH].
func (p *parser) matchRowsPerMatch(m *MatchRecognize) *Error {
	t := p.tok()
	switch {
	case t.is("ONE"):
		p.next()
		if err := p.expectWord("ROW", "after ONE"); err != nil {
			return err
		}
	case t.is("ALL"):
		p.next()
		m.AllRows = true
		if err := p.expectWord("ROWS", "after ALL"); err != nil {
			return err
		}
	default:
		return nil
	}
	m.RowsAt = t.pos
	if err := p.expectWord("PER", "in "+strings.ToUpper(t.text)+" ROW(S) PER MATCH"); err != nil {
		return err
	}
	return p.expectWord("MATCH", "after PER")
}

// matchSkip reads [AFTER MATCH SKIP ...].
func (p *parser) matchSkip(m *MatchRecognize) *Error {
	t := p.tok()
	if !t.is("AFTER") {
		return nil
	}
	p.next()
	m.SkipAt = t.pos
	if err := p.expectWord("MATCH", "after AFTER"); err != nil {
		return err
	}
	if err := p.expectWord("SKIP", "after AFTER MATCH"); err != nil {
		return err
	}
	if p.acceptWord("PAST") {
		m.Skip = SkipPastLastRow
		if err := p.expectWord("LAST", "after SKIP PAST"); err != nil {
			return err
		}
		return p.expectWord("ROW", "after SKIP PAST LAST")
	}
	if err := p.expectWord("TO", "or PAST after SKIP"); err != nil {
		return err
	}
	switch t := p.tok(); {
	case t.is("NEXT"):
		p.next()
		m.Skip = SkipToNextRow
		return p.expectWord("ROW", "after SKIP TO NEXT")
	case t.is("FIRST") && !p.peek(1).is("ROW"):
		p.next()
		m.Skip = SkipToFirst
	case t.is("LAST") && !p.peek(1).is("ROW"):
		p.next()
		m.Skip = SkipToLast
	default:
		// SKIP TO v is SKIP TO LAST v.
		m.Skip = SkipToLast
	}
	var err *Error
	m.SkipVar, err = p.expectName("a pattern variable after SKIP TO")
	return err
}

// parsePattern reads PATTERN's parenthesised pattern from the text
// itself: its quantifiers ({n,m}, ?) are no SQL tokens. The tokens after
// the closing parenthesis are lexed afresh.
func (p *parser) parsePattern() (*Pattern, *Error) {
	open := p.tok()
	if !open.isPunct("(") {
		return nil, p.expected("( after PATTERN", "(")
	}
	s := &lexer{src: p.src, off: open.pos.Offset, line: open.pos.Line, col: open.pos.Col}
	s.advance(1)
	pat := &Pattern{At: open.pos}
	fail := func(msg string) (*Pattern, *Error) { return nil, &Error{Pos: s.pos(), Msg: msg} }
	for {
		for s.off < len(s.src) && strings.IndexByte(" \t\r\n", s.src[s.off]) >= 0 {
			s.advance(1)
		}
		if s.off >= len(s.src) {
			return fail("unexpected end of query: missing ) for PATTERN ( at " + open.pos.String())
		}
		switch c := s.src[s.off]; {
		case c == ')':
			if len(pat.Terms) == 0 {
				return fail("expected a pattern variable, got \")\"")
			}
			s.advance(1)
			p.toks = append(p.toks[:p.i:p.i], lexFrom(p.src, s.pos())...)
			return pat, nil
		case c == '(':
			return fail("pattern groups are not supported: Flink applies quantifiers to single variables only, as in (A B+ C)")
		case c == '|':
			return fail("alternation (|) in a pattern is not supported by Flink")
		case c == '^' || c == '$':
			return fail("anchors (^, $) in a pattern are not supported by Flink")
		case c == '{':
			return fail("pattern exclusion ({- ... -}) is not supported by Flink; a quantifier follows a variable")
		}
		term, msg := scanPatternVar(s)
		if msg != "" {
			return fail(msg)
		}
		if strings.EqualFold(term.Var.Name, "PERMUTE") && !term.Var.Quoted && s.off < len(s.src) && s.src[s.off] == '(' {
			return nil, &Error{Pos: term.Var.At, Msg: "PERMUTE is not supported by Flink"}
		}
		if msg := scanQuantifier(s, term); msg != "" {
			return nil, &Error{Pos: term.QuantAt, Msg: msg}
		}
		pat.Terms = append(pat.Terms, term)
	}
}

// scanPatternVar reads a variable name at s.
func scanPatternVar(s *lexer) (*PatternTerm, string) {
	at := s.pos()
	if s.src[s.off] == '`' {
		end := strings.IndexByte(s.src[s.off+1:], '`')
		if end <= 0 {
			return nil, "expected a pattern variable, got an unclosed or empty quoted name"
		}
		name := s.src[s.off+1 : s.off+1+end]
		s.advance(end + 2)
		return &PatternTerm{Var: Ident{At: at, Name: name, Quoted: true}, Min: 1, Max: 1}, ""
	}
	i := s.off
	for i < len(s.src) {
		r, size := utf8.DecodeRuneInString(s.src[i:])
		if i == s.off && !isIdentStart(r) || i > s.off && !isIdentPart(r) {
			break
		}
		i += size
	}
	if i == s.off {
		r, _ := utf8.DecodeRuneInString(s.src[s.off:])
		return nil, "expected a pattern variable, got " + quoteRune(r)
	}
	name := s.src[s.off:i]
	s.advance(i - s.off)
	return &PatternTerm{Var: Ident{At: at, Name: name}, Min: 1, Max: 1}, ""
}

// scanQuantifier reads the quantifier after a variable, if any.
func scanQuantifier(s *lexer, t *PatternTerm) string {
	for s.off < len(s.src) && strings.IndexByte(" \t\r\n", s.src[s.off]) >= 0 {
		s.advance(1)
	}
	if s.off >= len(s.src) {
		return ""
	}
	start, at := s.off, s.pos()
	t.QuantAt = at
	switch s.src[s.off] {
	case '*':
		t.Min, t.Max = 0, PatternUnbounded
		s.advance(1)
	case '+':
		t.Min, t.Max = 1, PatternUnbounded
		s.advance(1)
	case '?':
		t.Min, t.Max = 0, 1
		s.advance(1)
	case '{':
		s.advance(1)
		if s.off < len(s.src) && s.src[s.off] == '-' {
			return "pattern exclusion ({- ... -}) is not supported by Flink"
		}
		lo, hasLo := scanCount(s)
		hi, hasHi, comma := lo, hasLo, false
		if s.off < len(s.src) && s.src[s.off] == ',' {
			comma = true
			s.advance(1)
			hi, hasHi = scanCount(s)
		}
		if s.off >= len(s.src) || s.src[s.off] != '}' {
			return "expected a quantifier {n}, {n,}, {n,m} or {,m}"
		}
		s.advance(1)
		switch {
		case !hasLo && !comma, !hasLo && !hasHi:
			return "expected a quantifier {n}, {n,}, {n,m} or {,m}"
		case comma && !hasHi:
			hi = PatternUnbounded
		}
		if !hasLo {
			lo = 0
		}
		if hi != PatternUnbounded && hi < lo {
			return "the quantifier's upper bound " + strconv.Itoa(hi) + " is below its lower bound " + strconv.Itoa(lo)
		}
		t.Min, t.Max = lo, hi
	default:
		return ""
	}
	if s.off < len(s.src) && s.src[s.off] == '?' {
		t.Reluctant = true
		s.advance(1)
	}
	t.Quant, t.QuantAt = s.src[start:s.off], at
	return ""
}

// scanCount reads a non-negative count, with spaces around it.
func scanCount(s *lexer) (int, bool) {
	skip := func() {
		for s.off < len(s.src) && (s.src[s.off] == ' ' || s.src[s.off] == '\t') {
			s.advance(1)
		}
	}
	skip()
	i := s.off
	for i < len(s.src) && isDigit(s.src[i]) && i-s.off < 9 {
		i++
	}
	if i == s.off {
		return 0, false
	}
	n, _ := strconv.Atoi(s.src[s.off:i])
	s.advance(i - s.off)
	skip()
	return n, true
}
