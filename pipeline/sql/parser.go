package sql

import "strings"

// maxDepth bounds expression and subquery nesting, so that hostile input
// (a megabyte of parentheses) fails fast with an error instead of growing
// the stack.
const maxDepth = 256

// Parse reads one query, as a transform's sql holds it, with an optional
// trailing semicolon. A failure is always an *Error.
func Parse(src string) (*Query, error) {
	p := newParser(src)
	q, err := p.parseTopQuery()
	if err != nil {
		return nil, err
	}
	return q, nil
}

// ParseExpr reads one expression: a computed column such as
// TO_TIMESTAMP_LTZ(ts, 3) or a watermark such as
// event_time - INTERVAL '5' SECOND. A failure is always an *Error.
func ParseExpr(src string) (Expr, error) {
	p := newParser(src)
	if p.tok().kind == tokEOF {
		return nil, p.errAt(p.tok(), "empty expression", "expression")
	}
	e, err := p.expectExpr("")
	if err != nil {
		return nil, err
	}
	if t := p.tok(); t.kind != tokEOF {
		return nil, p.errAt(t, "expected end of expression, got "+t.describe(), "end of expression")
	}
	return e, nil
}

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	// namedOvers are the OVER w calls read so far whose SELECT has not
	// resolved w yet (parse_frame.go).
	namedOvers []*Over
}

func newParser(src string) *parser {
	return &parser{src: src, toks: lex(src)}
}

// tok is the current token.
func (p *parser) tok() token { return p.toks[p.i] }

// peek is the token k places after the current one (the last token, EOF or
// an error, repeats forever).
func (p *parser) peek(k int) token { return p.toks[min(p.i+k, len(p.toks)-1)] }

// next consumes and returns the current token; it never moves past the
// last one.
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) acceptWord(kw string) bool {
	if p.tok().is(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if p.tok().isPunct(s) {
		p.next()
		return true
	}
	return false
}

// errAt builds an error at t. A lexing error token carries its own message,
// which takes precedence: the text there could not be read at all.
func (p *parser) errAt(t token, msg string, expected ...string) *Error {
	if t.kind == tokError {
		return &Error{Pos: t.pos, Msg: t.text}
	}
	return &Error{Pos: t.pos, Msg: msg, Expected: expected}
}

// expected fails at the current token: "expected <what>, got <token>".
func (p *parser) expected(what string, alternatives ...string) *Error {
	t := p.tok()
	if len(alternatives) == 0 {
		alternatives = []string{what}
	}
	return p.errAt(t, "expected "+what+", got "+t.describe(), alternatives...)
}

func (p *parser) expectWord(kw, context string) *Error {
	if p.acceptWord(kw) {
		return nil
	}
	msg := kw
	if context != "" {
		msg += " " + context
	}
	return p.expected(msg, kw)
}

// expectClose consumes the token that closes a construct opened at open,
// or explains what is missing.
func (p *parser) expectClose(closer, opener string, open Pos) *Error {
	t := p.tok()
	if (t.kind == tokPunct && t.text == closer) || t.is(closer) {
		p.next()
		return nil
	}
	if err := p.unsupportedHere(); err != nil {
		return err
	}
	if t.kind == tokEOF {
		return p.errAt(t, "unexpected end of query: missing "+closer+" for "+opener+" at "+open.String(), closer)
	}
	return p.errAt(t, "expected "+closer+" to close "+opener+" at "+open.String()+", got "+t.describe(), closer)
}

// enter guards recursion depth; every call must be paired with leave.
func (p *parser) enter() *Error {
	p.depth++
	if p.depth > maxDepth {
		return p.errAt(p.tok(), "query nested too deeply (more than 256 levels)")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// isName reports whether t can be an identifier: a backquoted name, or a
// word etld does not reserve.
func isName(t token) bool {
	return t.kind == tokQuoted || (t.kind == tokWord && !reserved[t.up])
}

// ident converts a name token.
func ident(t token) Ident {
	return Ident{At: t.pos, Name: t.text, Quoted: t.kind == tokQuoted}
}

// expectName consumes an identifier; what names it in the error ("a table
// name", "an alias after AS").
func (p *parser) expectName(what string) (Ident, *Error) {
	t := p.tok()
	if isName(t) {
		p.next()
		return ident(t), nil
	}
	if t.kind == tokWord {
		return Ident{}, p.errAt(t, "expected "+what+", got the keyword "+t.up+
			"; quote it as `"+t.text+"` to use it as a name", what)
	}
	return Ident{}, p.expected(what)
}

// optionalAlias reads `[AS] name`. Without AS only a name that cannot
// start a following clause is taken.
func (p *parser) optionalAlias() (Ident, *Error) {
	if p.acceptWord("AS") {
		return p.expectName("an alias after AS")
	}
	t := p.tok()
	if t.kind == tokQuoted || (t.kind == tokWord && !reserved[t.up] && !clauseWords[t.up]) {
		p.next()
		return ident(t), nil
	}
	return Ident{}, nil
}

// unsupportedHere reports a clause or operator etld recognises but does
// not implement yet, at its keyword, or nil.
func (p *parser) unsupportedHere() *Error {
	t := p.tok()
	if t.kind != tokWord && !t.isPunct(",") {
		return nil
	}
	msg := ""
	switch {
	case t.is("ORDER") && p.peek(1).is("BY"):
		return nil // the query's ORDER BY (parse_order.go)
	case t.is("LIMIT"), t.is("FETCH"), t.is("OFFSET") && p.peek(1).kind == tokInt:
		msg = t.up + " is not supported yet"
	case t.is("JOIN"), t.is("INNER"), t.is("LEFT"), t.is("RIGHT"), t.is("FULL"),
		t.is("CROSS"), t.is("NATURAL"):
		msg = "JOIN is not supported yet"
	case t.isPunct(","):
		return nil
	case t.is("QUALIFY"):
		msg = "QUALIFY is not supported yet"
	case t.is("MATCH_RECOGNIZE"):
		msg = "MATCH_RECOGNIZE is not supported yet"
	case t.is("TABLESAMPLE"):
		msg = "TABLESAMPLE is not supported yet"
	case t.is("FOR") && p.peek(1).is("SYSTEM_TIME"):
		msg = "FOR SYSTEM_TIME AS OF only follows a table name (FROM t FOR SYSTEM_TIME AS OF x AS alias)"
	case t.is("MINUS"):
		msg = "MINUS is not supported: write EXCEPT, as Flink does"
	}
	if msg == "" {
		return nil
	}
	return p.errAt(t, msg)
}

// startsExpr reports whether t can begin an expression.
func (p *parser) startsExpr(t token) bool {
	switch t.kind {
	case tokWord:
		if !reserved[t.up] {
			return true
		}
		switch t.up {
		case "NOT", "CASE", "NULL", "TRUE", "FALSE", "UNKNOWN", "INTERVAL", "EXISTS":
			return true
		case "LEFT", "RIGHT":
			return p.peek(1).isPunct("(")
		}
		return false
	case tokQuoted, tokInt, tokDecimal, tokApprox, tokString, tokBytes:
		return true
	case tokPunct:
		return t.text == "(" || t.text == "-" || t.text == "+"
	}
	return false
}

// expectExpr parses an expression, or fails with "expected an expression
// after <after>" when none starts here.
func (p *parser) expectExpr(after string) (Expr, *Error) {
	if t := p.tok(); !p.startsExpr(t) {
		if err := p.unsupportedHere(); err != nil && t.kind == tokWord {
			return nil, err
		}
		if t.isPunct("*") {
			return nil, p.errAt(t, "* is only allowed as a whole select item or in COUNT(*)")
		}
		msg := "expected an expression"
		if after != "" {
			msg += " after " + after
		}
		return nil, p.errAt(t, msg+", got "+t.describe(), "expression")
	}
	return p.parseExpr()
}

// describeAfter names a token for "after X" in messages.
func describeAfter(t token) string {
	if t.kind == tokWord {
		return strings.ToUpper(t.text)
	}
	return t.describe()
}
