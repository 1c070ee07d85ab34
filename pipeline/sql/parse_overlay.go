package sql

// parseOverlay reads OVERLAY(s PLACING r FROM n [FOR len]) into the call
// OVERLAY(s, r, n [, len]). The standard's keyword form is the only one,
// as in Flink: OVERLAY(s, r, n) is refused.
func (p *parser) parseOverlay() (Expr, *Error) {
	kw := p.next()
	open := p.next()
	call := &Call{At: kw.pos, Name: "OVERLAY"}
	s, err := p.expectExpr("OVERLAY(")
	if err != nil {
		return nil, err
	}
	if err := p.expectWord("PLACING", "in OVERLAY(s PLACING r FROM n [FOR len])"); err != nil {
		return nil, err
	}
	r, err := p.expectExpr("PLACING")
	if err != nil {
		return nil, err
	}
	if err := p.expectWord("FROM", "in OVERLAY(s PLACING r FROM n [FOR len])"); err != nil {
		return nil, err
	}
	n, err := p.expectExpr("FROM")
	if err != nil {
		return nil, err
	}
	call.Args = []Expr{s, r, n}
	if p.acceptWord("FOR") {
		l, err := p.expectExpr("FOR")
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, l)
	}
	if err := p.expectClose(")", "OVERLAY(", open.pos); err != nil {
		return nil, err
	}
	return call, nil
}
