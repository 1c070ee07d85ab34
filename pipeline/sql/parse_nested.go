package sql

// parseConstructor reads ARRAY[x, ...], MAP[k, v, ...] or ROW(x, ...)
// into a call named ARRAY, MAP or ROW.
func (p *parser) parseConstructor() (Expr, *Error) {
	kw := p.next()
	open := p.next()
	closer := "]"
	if open.text == "(" {
		closer = ")"
	}
	call := &Call{At: kw.pos, Name: kw.up}
	if p.tok().isPunct(closer) {
		if kw.up != "ROW" {
			return nil, p.errAt(p.tok(), kw.up+"[] needs at least one element")
		}
		return nil, p.errAt(p.tok(), "ROW() needs at least one field")
	}
	after := `"` + open.text + `"`
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
	if err := p.expectClose(closer, kw.up+open.text, open.pos); err != nil {
		return nil, err
	}
	if kw.up == "MAP" && len(call.Args)%2 != 0 {
		return nil, &Error{Pos: kw.pos, Msg: "MAP[...] needs an even number of arguments (key, value, key, value, ...)"}
	}
	return call, nil
}

// parsePostfix reads the element and field accesses after a primary:
// x[i], x['k'], x.f, repeated.
func (p *parser) parsePostfix(x Expr) (Expr, *Error) {
	for {
		t := p.tok()
		switch {
		case t.isPunct("["):
			p.next()
			i, err := p.expectExpr(`"["`)
			if err != nil {
				return nil, err
			}
			if err := p.expectClose("]", "[", t.pos); err != nil {
				return nil, err
			}
			x = &Index{X: x, Open: t.pos, Index: i}
		case t.isPunct("."):
			c := p.peek(1)
			if c.isPunct("*") {
				return nil, p.errAt(c, "x.* is only allowed as a whole select item")
			}
			if !isName(c) {
				p.next()
				if c.kind == tokWord {
					return nil, p.errAt(c, "expected a field name after ., got the keyword "+c.up+
						"; quote it as `"+c.text+"` to use it as a name", "field name")
				}
				return nil, p.errAt(c, "expected a field name after ., got "+c.describe(), "field name")
			}
			p.next()
			p.next()
			if p.tok().isPunct("(") {
				return nil, p.errAt(t, "qualified function names are not supported")
			}
			x = &FieldAccess{X: x, Dot: t.pos, Field: ident(c)}
		default:
			return x, nil
		}
	}
}

// parseUnnest reads UNNEST(x) [WITH ORDINALITY] [AS] alias [(cols)] after
// input CROSS JOIN or input ",".
func (p *parser) parseUnnest(input FromItem) (FromItem, *Error) {
	kw := p.next()
	open := p.next()
	x, err := p.expectExpr("UNNEST(")
	if err != nil {
		return nil, err
	}
	if t := p.tok(); t.isPunct(",") {
		return nil, p.errAt(t, "UNNEST of several arrays at once is not supported; write one CROSS JOIN UNNEST per array")
	}
	if err := p.expectClose(")", "UNNEST(", open.pos); err != nil {
		return nil, err
	}
	u := &Unnest{At: kw.pos, Input: input, X: x}
	if p.tok().is("WITH") && p.peek(1).is("ORDINALITY") {
		p.next()
		p.next()
		u.Ordinality = true
	}
	alias, err := p.optionalAlias()
	if err != nil {
		return nil, err
	}
	u.Alias = alias
	if !alias.IsZero() && p.tok().isPunct("(") {
		if u.Columns, err = p.aliasColumns("UNNEST"); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// unnestOnTrue reads the ON TRUE that closes `input LEFT JOIN UNNEST(x)
// ...`: Flink's correlate keeps the rows without elements only under that
// condition, and refuses any other.
func (p *parser) unnestOnTrue(u *Unnest) *Error {
	u.Left = true
	if !p.acceptWord("ON") {
		return p.expected("ON TRUE after LEFT JOIN UNNEST(...)", "ON")
	}
	on, err := p.expectExpr("ON")
	if err != nil {
		return err
	}
	if lit, ok := on.(*Literal); !ok || lit.Kind != LitBool || !lit.Value.Bool() {
		return &Error{Pos: on.Pos(), Msg: "LEFT JOIN UNNEST(...) takes ON TRUE, as in Flink; filter the elements in WHERE or in a subquery"}
	}
	return nil
}
