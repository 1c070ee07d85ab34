package sql

// lateralTableAt reports whether LATERAL TABLE( starts at token k.
func (p *parser) lateralTableAt(k int) bool {
	return p.peek(k).is("LATERAL") && p.peek(k+1).is("TABLE") && p.peek(k+2).isPunct("(")
}

// parseLateralTable reads LATERAL TABLE(f(args)) [AS] alias [(cols)]
// after input CROSS JOIN, ",", JOIN or LEFT JOIN, and the ON TRUE of a
// JOIN (on, set for the JOINs).
func (p *parser) parseLateralTable(input FromItem, left, on bool) (FromItem, *Error) {
	kw := p.next() // LATERAL
	p.next()       // TABLE
	open := p.next()
	x, err := p.expectExpr("LATERAL TABLE(")
	if err != nil {
		return nil, err
	}
	call, ok := x.(*Call)
	if !ok {
		return nil, &Error{Pos: x.Pos(), Msg: "LATERAL TABLE(...) takes a call of a table function, as in LATERAL TABLE(split(s))"}
	}
	if err := p.expectClose(")", "LATERAL TABLE(", open.pos); err != nil {
		return nil, err
	}
	l := &LateralTable{At: kw.pos, Input: input, Call: call, Left: left}
	if l.Alias, err = p.optionalAlias(); err != nil {
		return nil, err
	}
	if !l.Alias.IsZero() && p.tok().isPunct("(") {
		if l.Columns, err = p.aliasColumns("LATERAL TABLE"); err != nil {
			return nil, err
		}
	}
	if !on {
		return l, nil
	}
	if !p.acceptWord("ON") {
		return nil, p.expected("ON TRUE after JOIN LATERAL TABLE(...)", "ON")
	}
	cond, err := p.expectExpr("ON")
	if err != nil {
		return nil, err
	}
	if lit, ok := cond.(*Literal); !ok || lit.Kind != LitBool || !lit.Value.Bool() {
		return nil, &Error{Pos: cond.Pos(), Msg: "JOIN LATERAL TABLE(...) takes ON TRUE, as in Flink; filter its rows in WHERE"}
	}
	return l, nil
}
