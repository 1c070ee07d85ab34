package sql

// extractUnits are the fields EXTRACT accepts (Calcite's TimeUnit names).
var extractUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE",
	"SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND", "DOW", "DOY", "ISODOW",
	"ISOYEAR", "EPOCH", "DECADE", "CENTURY", "MILLENNIUM"}

func (p *parser) parseExtract() (Expr, *Error) {
	kw := p.next()
	open := p.next()
	u := p.tok()
	if u.kind != tokWord {
		return nil, p.expected("a time unit (YEAR, MONTH, DAY, HOUR, ...) after EXTRACT(", "time unit")
	}
	if !contains(extractUnits, u.up) {
		return nil, p.errAt(u, "unknown time unit "+u.text+" in EXTRACT"+didYouMean(u.up, extractUnits), extractUnits...)
	}
	p.next()
	if err := p.expectWord("FROM", "after EXTRACT("+u.up); err != nil {
		return nil, err
	}
	x, err := p.expectExpr("FROM")
	if err != nil {
		return nil, err
	}
	if err := p.expectClose(")", "EXTRACT(", open.pos); err != nil {
		return nil, err
	}
	return &Extract{At: kw.pos, Unit: u.up, UnitAt: u.pos, X: x}, nil
}

// parseTrim reads TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) or TRIM(s).
func (p *parser) parseTrim() (Expr, *Error) {
	kw := p.next()
	open := p.next()
	tr := &Trim{At: kw.pos}
	mode := false
	switch t := p.tok(); {
	case t.is("BOTH"):
		mode = true
	case t.is("LEADING"):
		tr.Mode, mode = TrimLeading, true
	case t.is("TRAILING"):
		tr.Mode, mode = TrimTrailing, true
	}
	if mode {
		p.next()
	}
	if !p.tok().is("FROM") {
		x, err := p.expectExpr("TRIM(")
		if err != nil {
			return nil, err
		}
		if !p.tok().is("FROM") {
			if mode {
				return nil, p.expected("FROM in TRIM", "FROM")
			}
			if err := p.expectClose(")", "TRIM(", open.pos); err != nil {
				return nil, err
			}
			tr.X = x
			return tr, nil
		}
		tr.Chars = x
	}
	p.next() // FROM
	x, err := p.expectExpr("FROM")
	if err != nil {
		return nil, err
	}
	tr.X = x
	if err := p.expectClose(")", "TRIM(", open.pos); err != nil {
		return nil, err
	}
	return tr, nil
}

// parseFromForm reads SUBSTRING(s FROM i [FOR n]) and POSITION(a IN b),
// and their comma forms, into plain calls.
func (p *parser) parseFromForm() (Expr, *Error) {
	kw := p.tok()
	if kw.up == "SUBSTRING" {
		// SUBSTRING(s, i, n) is an ordinary call; tell the forms apart
		// after the first argument.
		p.next()
		open := p.next()
		call := &Call{At: kw.pos, Name: "SUBSTRING"}
		s, err := p.expectExpr("SUBSTRING(")
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, s)
		switch {
		case p.acceptWord("FROM"):
			i, err := p.expectExpr("FROM")
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, i)
			if p.acceptWord("FOR") {
				n, err := p.expectExpr("FOR")
				if err != nil {
					return nil, err
				}
				call.Args = append(call.Args, n)
			}
		case p.acceptPunct(","):
			rest, err := p.parseExprList(open, `","`)
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, rest...)
			return call, nil
		}
		if err := p.expectClose(")", "SUBSTRING(", open.pos); err != nil {
			return nil, err
		}
		return call, nil
	}
	p.next()
	open := p.next()
	call := &Call{At: kw.pos, Name: "POSITION"}
	// The needle is read above the IN level so that IN is not taken as
	// the IN-list operator.
	needle, err := p.operand(open, false, p.parseAdditive)
	if err != nil {
		return nil, err
	}
	if p.acceptPunct(",") { // POSITION(a, b, ...): an ordinary call
		rest, err := p.parseExprList(open, `","`)
		if err != nil {
			return nil, err
		}
		call.Args = append([]Expr{needle}, rest...)
		return call, nil
	}
	if p.tok().isPunct(")") {
		p.next()
		call.Args = []Expr{needle}
		return call, nil
	}
	if err := p.expectWord("IN", "in POSITION(needle IN haystack)"); err != nil {
		return nil, err
	}
	hay, err := p.expectExpr("IN")
	if err != nil {
		return nil, err
	}
	call.Args = []Expr{needle, hay}
	if err := p.expectClose(")", "POSITION(", open.pos); err != nil {
		return nil, err
	}
	return call, nil
}
