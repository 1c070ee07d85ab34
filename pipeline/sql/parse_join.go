package sql

// parseJoin reads one `[INNER|LEFT|RIGHT|FULL [OUTER]] JOIN item ON cond`
// or `, item` after left; ok is false when none follows.
func (p *parser) parseJoin(left FromItem) (FromItem, bool, *Error) {
	t := p.tok()
	natural := false
	if t.is("NATURAL") {
		natural = true
		p.next()
		t = p.tok()
		if !t.is("JOIN") && !t.is("INNER") && !t.is("LEFT") && !t.is("RIGHT") && !t.is("FULL") {
			return nil, false, p.expected("JOIN after NATURAL", "JOIN")
		}
	}
	typ, k := InnerJoin, 0
	switch {
	case t.isPunct(","):
		typ, k = CommaJoin, 1
	case t.is("CROSS") && p.peek(1).is("JOIN"):
		typ, k = CommaJoin, 2
	case t.is("JOIN"):
		k = 1
	case t.is("INNER") && p.peek(1).is("JOIN"):
		k = 2
	case t.is("LEFT"), t.is("RIGHT"), t.is("FULL"):
		typ = map[string]JoinType{"LEFT": LeftJoin, "RIGHT": RightJoin, "FULL": FullJoin}[t.up]
		k = 1
		if p.peek(k).is("OUTER") {
			k++
		}
		if !p.peek(k).is("JOIN") {
			return nil, false, p.errAt(p.peek(k), "expected JOIN after "+t.up)
		}
		k++
	default:
		return nil, false, nil
	}
	at := t.pos
	for range k {
		p.next()
	}
	right, err := p.parseTableFactor()
	if err != nil {
		return nil, false, err
	}
	j := &Join{At: at, Type: typ, Left: left, Right: right, Natural: natural}
	if natural {
		if t := p.tok(); t.is("ON") || t.is("USING") {
			return nil, false, p.errAt(t, "a NATURAL join takes no "+t.up)
		}
		return j, true, nil
	}
	if typ == CommaJoin {
		if p.tok().is("ON") {
			return nil, false, p.errAt(p.tok(), "a cross join takes no ON; write JOIN ... ON")
		}
		return j, true, nil
	}
	if t := p.tok(); t.is("FOR") && p.peek(1).is("SYSTEM_TIME") {
		return nil, false, p.unsupportedHere()
	}
	if p.tok().is("USING") {
		p.next()
		if !p.tok().isPunct("(") {
			return nil, false, p.expected("( after USING", "(")
		}
		if j.Using, err = p.aliasColumns("USING"); err != nil {
			return nil, false, err
		}
		return j, true, nil
	}
	if !p.acceptWord("ON") {
		return nil, false, p.expected("ON after the joined table", "ON")
	}
	if j.On, err = p.expectExpr("ON"); err != nil {
		return nil, false, err
	}
	return j, true, nil
}
