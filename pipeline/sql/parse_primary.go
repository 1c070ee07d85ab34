package sql

import (
	"strings"

	"github.com/etld/etld/pipeline/row"
)

func (p *parser) parsePrimary() (Expr, *Error) {
	t := p.tok()
	switch t.kind {
	case tokInt, tokDecimal, tokApprox:
		p.next()
		return p.numberLiteral(t, t.pos, "")
	case tokString:
		p.next()
		return &Literal{At: t.pos, Kind: LitString, Text: t.text,
			Value: row.StringValue(t.text), Type: notNull(row.String)}, nil
	case tokBytes:
		p.next()
		return bytesLiteral(t), nil
	case tokQuoted:
		return p.parseNamed()
	case tokPunct:
		if t.text == "(" {
			return p.parseParen()
		}
		if t.text == "*" {
			return nil, p.errAt(t, "* is only allowed as a whole select item or in COUNT(*)")
		}
	case tokWord:
		return p.parseWord()
	}
	return nil, p.expected("an expression", "expression")
}

func (p *parser) parseParen() (Expr, *Error) {
	open := p.next()
	if p.startsQuery(0) {
		q, err := p.parseQuery()
		if err != nil {
			return nil, err
		}
		if err := p.expectClose(")", "(", open.pos); err != nil {
			return nil, err
		}
		return &ScalarQuery{At: open.pos, Query: q}, nil
	}
	e, err := p.expectExpr(`"("`)
	if err != nil {
		return nil, err
	}
	if !p.tok().isPunct(",") {
		if err := p.expectClose(")", "(", open.pos); err != nil {
			return nil, err
		}
		return e, nil
	}
	// (a, b, ...): the row constructor ROW(a, b, ...) without its keyword.
	call := &Call{At: open.pos, Name: "ROW", Args: []Expr{e}}
	for p.acceptPunct(",") {
		x, err := p.expectExpr(`","`)
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, x)
	}
	if err := p.expectClose(")", "(", open.pos); err != nil {
		return nil, err
	}
	return call, nil
}

// parseWord reads a primary that starts with a word: a keyword literal or
// special form, a function call or a column reference.
func (p *parser) parseWord() (Expr, *Error) {
	t := p.tok()
	paren := p.peek(1).isPunct("(")
	switch t.up {
	case "NULL":
		p.next()
		return &Literal{At: t.pos, Kind: LitNull, Text: "NULL", Type: row.Type{ID: row.Null}}, nil
	case "TRUE", "FALSE":
		p.next()
		return &Literal{At: t.pos, Kind: LitBool, Text: t.up,
			Value: row.BoolValue(t.up == "TRUE"), Type: notNull(row.Boolean)}, nil
	case "UNKNOWN":
		p.next()
		return &Literal{At: t.pos, Kind: LitUnknown, Text: "UNKNOWN", Type: row.Of(row.Boolean)}, nil
	case "CASE":
		return p.parseCase()
	case "INTERVAL":
		return p.parseInterval()
	case "EXISTS":
		open := p.peek(1)
		if !open.isPunct("(") || !p.startsQuery(2) {
			p.next()
			return nil, p.expected("(SELECT ...) after EXISTS", "(")
		}
		p.next()
		p.next()
		q, err := p.parseQuery()
		if err != nil {
			return nil, err
		}
		if err := p.expectClose(")", "(", open.pos); err != nil {
			return nil, err
		}
		return &Exists{At: t.pos, Query: q}, nil
	case "DATE", "TIMESTAMP", "TIME":
		if p.peek(1).kind == tokString {
			return p.parseTypedLiteral()
		}
	case "CAST", "TRY_CAST":
		if paren {
			return p.parseCast()
		}
	case "EXTRACT":
		if paren {
			return p.parseExtract()
		}
	case "TRIM":
		if paren {
			return p.parseTrim()
		}
	case "SUBSTRING", "POSITION":
		if paren {
			return p.parseFromForm()
		}
	case "OVERLAY":
		if paren {
			return p.parseOverlay()
		}
	case "LEFT", "RIGHT":
		if paren {
			return p.parseCall()
		}
	case "ARRAY", "MAP":
		if p.peek(1).isPunct("[") {
			return p.parseConstructor()
		}
	case "ROW":
		if paren {
			return p.parseConstructor()
		}
	}
	if niladic[t.up] {
		p.next()
		if paren && p.peek(1).isPunct(")") {
			p.next()
			p.next()
		}
		return &Call{At: t.pos, Name: t.up}, nil
	}
	if reserved[t.up] {
		return nil, p.expected("an expression", "expression")
	}
	return p.parseNamed()
}

// parseNamed reads a column reference (col, t.col) or a call f(...).
func (p *parser) parseNamed() (Expr, *Error) {
	t := p.next()
	if p.tok().isPunct("(") {
		p.i--
		return p.parseCall()
	}
	if !p.tok().isPunct(".") {
		return &ColumnRef{Column: ident(t)}, nil
	}
	dot := p.next()
	c := p.tok()
	if c.isPunct("*") {
		return nil, p.errAt(t, t.text+".* is only allowed as a whole select item")
	}
	if !isName(c) {
		if c.kind == tokWord {
			return nil, p.errAt(c, "expected a column name after "+t.text+"., got the keyword "+c.up+
				"; quote it as `"+c.text+"` to use it as a name", "column name")
		}
		return nil, p.errAt(c, "expected a column name after "+t.text+"., got "+c.describe(), "column name")
	}
	p.next()
	if p.tok().isPunct("(") {
		return nil, p.errAt(dot, "qualified function names are not supported")
	}
	return &ColumnRef{Table: ident(t), Column: ident(c)}, nil
}

// parseCall reads name(args) with the current token the name.
func (p *parser) parseCall() (Expr, *Error) {
	name := p.next()
	open := p.next()
	call := &Call{At: name.pos, Name: strings.ToUpper(name.text)}
	switch t := p.tok(); {
	case t.isPunct(")"):
		p.next()
		return p.afterCall(call)
	case t.isPunct("*"):
		if call.Name != "COUNT" {
			return nil, p.errAt(t, "only COUNT accepts *; "+call.Name+" needs arguments")
		}
		p.next()
		call.Star = true
		if err := p.expectClose(")", "(", open.pos); err != nil {
			return nil, err
		}
		return p.afterCall(call)
	case t.is("DISTINCT"):
		p.next()
		call.Distinct = true
	case t.is("ALL"):
		p.next()
	}
	after := `"("`
	if call.Distinct {
		after = "DISTINCT"
	}
	if t := p.tok(); (call.Name == "TIMESTAMPADD" || call.Name == "TIMESTAMPDIFF") && t.kind == tokWord && p.peek(1).isPunct(",") {
		call.Unit, call.UnitAt = t.up, t.pos
		p.next()
		p.next()
	}
	if jsonFuncs[call.Name] {
		if err := p.parseJSONCall(call, open.pos); err != nil {
			return nil, err
		}
		return p.afterCall(call)
	}
	for {
		e, err := p.expectExpr(after)
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, e)
		if !p.acceptPunct(",") {
			break
		}
		after = `","`
	}
	if err := p.nullsClause(call); err != nil {
		return nil, err
	}
	if t := p.tok(); t.kind == tokWord {
		switch {
		case t.is("RETURNING"):
			return nil, p.errAt(t, call.Name+"(... RETURNING type) is not supported yet; wrap the call in CAST(... AS type)")
		case t.is("TO") && len(call.Args) == 1 && isFloorCeil(call.Name):
			p.next()
			u := p.tok()
			if u.kind != tokWord {
				return nil, p.errAt(u, "expected a time unit after "+call.Name+"(x TO")
			}
			p.next()
			call.Unit, call.UnitAt = u.up, u.pos
		case t.is("ON") || t.is("NULL") || t.is("ERROR") || t.is("DEFAULT"):
			return nil, p.errAt(t, call.Name+" ON EMPTY / ON ERROR clauses are not supported yet")
		case t.is("SEPARATOR") || t.is("ORDER"):
			return nil, p.errAt(t, t.up+" inside "+call.Name+"(...) is not supported yet")
		}
	}
	if err := p.expectClose(")", name.text+"(", open.pos); err != nil {
		return nil, err
	}
	return p.afterCall(call)
}

// nullsClause reads ARRAY_AGG's IGNORE NULLS or RESPECT NULLS, which
// Flink takes inside the parentheses and after them.
func (p *parser) nullsClause(c *Call) *Error {
	t := p.tok()
	if !(t.is("IGNORE") || t.is("RESPECT")) || !p.peek(1).is("NULLS") {
		return nil
	}
	if c.Name != "ARRAY_AGG" || c.Nulls != "" {
		return p.errAt(t, t.up+" NULLS belongs to ARRAY_AGG, once")
	}
	c.Nulls = t.up
	p.next()
	p.next()
	return nil
}

// afterCall refuses the clauses that may follow an aggregate call.
func (p *parser) afterCall(c *Call) (Expr, *Error) {
	if err := p.nullsClause(c); err != nil {
		return nil, err
	}
	switch t := p.tok(); {
	case t.is("OVER"):
		return p.parseOver(c)
	case t.is("FILTER") && p.peek(1).isPunct("("):
		return p.parseFilter(c)
	case t.is("WITHIN") && p.peek(1).is("GROUP"):
		return nil, p.errAt(t, "WITHIN GROUP is not supported yet")
	}
	return c, nil
}

// parseFilter reads FILTER (WHERE cond) after an aggregate call; the
// planner refuses it after any other function.
func (p *parser) parseFilter(c *Call) (Expr, *Error) {
	kw := p.next()
	open := p.next()
	if err := p.expectWord("WHERE", "after FILTER ("); err != nil {
		return nil, err
	}
	cond, err := p.expectExpr("WHERE")
	if err != nil {
		return nil, err
	}
	if err := p.expectClose(")", "FILTER (", open.pos); err != nil {
		return nil, err
	}
	c.Filter, c.FilterAt = cond, kw.pos
	if t := p.tok(); t.is("OVER") {
		return p.parseOver(c)
	}
	return c, nil
}

// parseCast reads CAST(x AS type) or TRY_CAST(x AS type).
func (p *parser) parseCast() (Expr, *Error) {
	kw := p.next()
	open := p.next()
	c := &Cast{At: kw.pos, Try: kw.up == "TRY_CAST"}
	x, err := p.expectExpr(kw.up + "(")
	if err != nil {
		return nil, err
	}
	c.X = x
	if err := p.expectWord("AS", "and a type in "+kw.up); err != nil {
		return nil, err
	}
	c.TypeAt = p.tok().pos
	text, err := p.typeText()
	if err != nil {
		return nil, err
	}
	if err := p.expectClose(")", kw.up+"(", open.pos); err != nil {
		return nil, err
	}
	text = castTypeDefaults(text)
	typ, terr := row.ParseType(text)
	if terr != nil {
		return nil, &Error{Pos: c.TypeAt, Msg: terr.Error(), Expected: []string{"type"}}
	}
	c.Type, c.TypeText = typ, text
	return c, nil
}

// typeText gathers the tokens of a type name (words, numbers, parentheses
// and commas) into the text row.ParseType reads, stopping before the ) that
// closes the enclosing call.
func (p *parser) typeText() (string, *Error) {
	var b strings.Builder
	depth, angles := 0, 0
	for {
		t := p.tok()
		switch {
		case t.kind == tokWord || t.kind == tokQuoted || t.kind == tokString:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "(") && !strings.HasSuffix(b.String(), "<") && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
			switch t.kind {
			case tokQuoted: // a ROW field name
				b.WriteString("`" + strings.ReplaceAll(t.text, "`", "``") + "`")
			case tokString: // a ROW field's COMMENT
				b.WriteString("'" + strings.ReplaceAll(t.text, "'", "''") + "'")
			default:
				b.WriteString(t.text)
			}
		case t.kind == tokInt:
			b.WriteString(t.text)
		case t.isPunct("("):
			depth++
			b.WriteByte('(')
		case t.isPunct(")") && depth > 0:
			depth--
			b.WriteByte(')')
		case t.isPunct(","):
			b.WriteString(", ")
		case t.isPunct("<"):
			angles++
			b.WriteByte('<')
		case t.isPunct(">") && angles > 0:
			angles--
			b.WriteByte('>')
		default:
			if b.Len() == 0 {
				return "", p.expected("a type name", "type")
			}
			return b.String(), nil
		}
		p.next()
	}
}

// parseCase reads CASE [operand] WHEN ... THEN ... [ELSE ...] END.
func (p *parser) parseCase() (Expr, *Error) {
	kw := p.next()
	c := &Case{At: kw.pos}
	started := " in CASE started at " + kw.pos.String()
	if !p.tok().is("WHEN") {
		x, err := p.expectExpr("CASE")
		if err != nil {
			return nil, err
		}
		c.Operand = x
	}
	for p.tok().is("WHEN") {
		w := p.next()
		cond, err := p.expectExpr("WHEN")
		if err != nil {
			return nil, err
		}
		then := p.tok()
		if !then.is("THEN") {
			if then.kind == tokEOF {
				return nil, p.errAt(then, "unexpected end of query: missing THEN"+started, "THEN")
			}
			return nil, p.expected("THEN after WHEN"+started, "THEN")
		}
		p.next()
		res, err := p.expectExpr("THEN")
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, &When{At: w.pos, Cond: cond, Result: res})
	}
	if len(c.Whens) == 0 {
		return nil, p.expected("WHEN"+started, "WHEN")
	}
	if p.acceptWord("ELSE") {
		e, err := p.expectExpr("ELSE")
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	end := p.tok()
	switch {
	case end.is("END"):
		p.next()
		return c, nil
	case end.kind == tokEOF:
		return nil, p.errAt(end, "unexpected end of query: missing END for CASE started at "+kw.pos.String(), "END")
	}
	return nil, p.expected("WHEN, ELSE or END"+started, "WHEN", "ELSE", "END")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
