package sql

// Expression grammar, lowest precedence first (Calcite's order, which Flink
// uses):
//
//	or         := and {OR and}
//	and        := not {AND not}
//	not        := NOT not | comparison
//	comparison := additive {cmpop additive | IS [NOT] ... | [NOT] BETWEEN
//	              additive AND additive | [NOT] IN (...) | [NOT] LIKE ...}
//	additive   := mult {(+ | -) mult}
//	mult       := unary {(* | / | % | ||) unary}
//	unary      := (- | +) unary | primary
//
// || binds like * as in Calcite: 'a' || 1 + 2 is ('a' || 1) + 2.

var comparisonOps = map[string]BinaryOp{
	"=": OpEq, "<>": OpNe, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe,
}

var additiveOps = map[string]BinaryOp{"+": OpAdd, "-": OpSub}

var multiplicativeOps = map[string]BinaryOp{"*": OpMul, "/": OpDiv, "%": OpMod, "||": OpConcat}

func (p *parser) parseExpr() (Expr, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	return p.parseOr()
}

// operand parses, with level, the right side of the operator op just
// consumed, or explains that an expression is missing after op. NOT starts
// an operand only at the NOT level and below (allowNot).
func (p *parser) operand(op token, allowNot bool, level func() (Expr, *Error)) (Expr, *Error) {
	if t := p.tok(); !p.startsExpr(t) || (!allowNot && t.is("NOT")) {
		return nil, p.errAt(t, "expected an expression after "+describeAfter(op)+", got "+t.describe(), "expression")
	}
	return level()
}

func (p *parser) parseOr() (Expr, *Error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.tok().is("OR") {
		op := p.next()
		r, err := p.operand(op, true, p.parseAnd)
		if err != nil {
			return nil, err
		}
		l = &Binary{OpAt: op.pos, Op: OpOr, L: l, R: r}
	}
	return l, nil
}

func (p *parser) parseAnd() (Expr, *Error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.tok().is("AND") {
		op := p.next()
		r, err := p.operand(op, true, p.parseNot)
		if err != nil {
			return nil, err
		}
		l = &Binary{OpAt: op.pos, Op: OpAnd, L: l, R: r}
	}
	return l, nil
}

func (p *parser) parseNot() (Expr, *Error) {
	if t := p.tok(); t.is("NOT") {
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.operand(t, true, p.parseNot)
		if err != nil {
			return nil, err
		}
		return &Unary{At: t.pos, Op: OpNot, X: x}, nil
	}
	return p.parseComparison()
}

func (p *parser) parseComparison() (Expr, *Error) {
	l, err := p.parseAdditive()
	if err != nil {
		return nil, err
	}
	for {
		t := p.tok()
		if op, ok := comparisonOps[t.text]; ok && t.kind == tokPunct {
			p.next()
			if q := p.tok(); q.is("ANY") || q.is("SOME") || q.is("ALL") {
				return nil, p.errAt(q, t.text+" "+q.up+" (quantified comparison) is not supported yet")
			}
			r, err := p.operand(t, false, p.parseAdditive)
			if err != nil {
				return nil, err
			}
			l = &Binary{OpAt: t.pos, Op: op, L: l, R: r}
			continue
		}
		switch {
		case t.is("IS"):
			l, err = p.parseIs(l)
		case t.is("OVERLAPS"):
			l, err = p.parseOverlaps(l)
		case t.is("BETWEEN"), t.is("IN"), t.is("LIKE"), t.is("SIMILAR"):
			l, err = p.parseNegatable(l, t, false)
		case t.is("NOT"):
			n := p.peek(1)
			if !n.is("BETWEEN") && !n.is("IN") && !n.is("LIKE") && !n.is("SIMILAR") {
				// Nothing else may follow an operand with NOT.
				p.next()
				return nil, p.expected("BETWEEN, IN or LIKE after NOT", "BETWEEN", "IN", "LIKE")
			}
			p.next()
			l, err = p.parseNegatable(l, t, true)
		default:
			return l, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parseIs reads IS [NOT] NULL | TRUE | FALSE | UNKNOWN | JSON [VALUE |
// SCALAR | ARRAY | OBJECT] after x.
func (p *parser) parseIs(x Expr) (Expr, *Error) {
	is := p.next()
	e := &IsExpr{OpAt: is.pos, X: x}
	e.Not = p.acceptWord("NOT")
	t := p.tok()
	switch {
	case t.is("NULL"):
		e.What = IsNull
	case t.is("TRUE"):
		e.What = IsTrue
	case t.is("FALSE"):
		e.What = IsFalse
	case t.is("UNKNOWN"):
		e.What = IsUnknown
	case t.is("DISTINCT"):
		p.next()
		from := p.tok()
		if !from.is("FROM") {
			return nil, p.expected("FROM after IS [NOT] DISTINCT", "FROM")
		}
		p.next()
		r, err := p.operand(from, false, p.parseAdditive)
		if err != nil {
			return nil, err
		}
		op := OpDistinct
		if e.Not {
			op = OpNotDistinct
		}
		return &Binary{OpAt: is.pos, Op: op, L: x, R: r}, nil
	case t.is("JSON"):
		p.next()
		e.What = IsJSONValue
		switch t := p.tok(); {
		case t.is("VALUE"):
		case t.is("SCALAR"):
			e.What = IsJSONScalar
		case t.is("ARRAY"):
			e.What = IsJSONArray
		case t.is("OBJECT"):
			e.What = IsJSONObject
		default:
			return e, nil
		}
	default:
		return nil, p.expected("NULL, TRUE, FALSE, UNKNOWN or JSON after IS", "NULL", "TRUE", "FALSE", "UNKNOWN", "JSON")
	}
	p.next()
	return e, nil
}

// parseNegatable reads BETWEEN, IN, LIKE or SIMILAR TO after x;
// start is the NOT before them when not is set, else the keyword itself.
func (p *parser) parseNegatable(x Expr, start token, not bool) (Expr, *Error) {
	kw := p.next()
	switch kw.up {
	case "BETWEEN":
		if t := p.tok(); t.is("SYMMETRIC") || t.is("ASYMMETRIC") {
			if t.is("SYMMETRIC") {
				return nil, p.errAt(t, "BETWEEN SYMMETRIC is not supported yet")
			}
			p.next()
		}
		lo, err := p.operand(kw, false, p.parseAdditive)
		if err != nil {
			return nil, err
		}
		and := p.tok()
		if !and.is("AND") {
			return nil, p.expected("AND in BETWEEN started at "+kw.pos.String(), "AND")
		}
		p.next()
		hi, err := p.operand(and, false, p.parseAdditive)
		if err != nil {
			return nil, err
		}
		return &Between{OpAt: start.pos, X: x, Not: not, Lo: lo, Hi: hi}, nil
	case "IN":
		open := p.tok()
		if !open.isPunct("(") {
			return nil, p.expected("( after IN", "(")
		}
		p.next()
		if p.startsQuery(0) {
			q, err := p.parseQuery()
			if err != nil {
				return nil, err
			}
			if err := p.expectClose(")", "(", open.pos); err != nil {
				return nil, err
			}
			return &InQuery{X: x, Not: not, At: start.pos, Query: q}, nil
		}
		list, err := p.parseExprList(open, `"("`)
		if err != nil {
			return nil, err
		}
		return &InList{OpAt: start.pos, X: x, Not: not, List: list}, nil
	case "LIKE", "SIMILAR":
		similar := kw.up == "SIMILAR"
		if similar {
			if !p.tok().is("TO") {
				return nil, p.expected("TO after SIMILAR", "TO")
			}
			p.next()
		}
		pat, err := p.operand(kw, false, p.parseAdditive)
		if err != nil {
			return nil, err
		}
		e := &Like{OpAt: start.pos, X: x, Not: not, Similar: similar, Pattern: pat}
		if t := p.tok(); t.is("ESCAPE") {
			p.next()
			if e.Escape, err = p.operand(t, false, p.parseAdditive); err != nil {
				return nil, err
			}
		}
		return e, nil
	}
	return nil, p.errAt(kw, "unexpected "+kw.up)
}

// parseExprList reads `e, e, ... )` after the opening parenthesis open,
// which has been consumed. It needs at least one expression.
func (p *parser) parseExprList(open token, after string) ([]Expr, *Error) {
	var out []Expr
	for {
		e, err := p.expectExpr(after)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if !p.acceptPunct(",") {
			break
		}
		after = `","`
	}
	if err := p.expectClose(")", "(", open.pos); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *parser) parseAdditive() (Expr, *Error) {
	return p.parseBinaryLevel(additiveOps, p.parseMultiplicative)
}

func (p *parser) parseMultiplicative() (Expr, *Error) {
	return p.parseBinaryLevel(multiplicativeOps, p.parseUnary)
}

// parseBinaryLevel reads a left-associative chain of the operators ops
// over operands read by next.
func (p *parser) parseBinaryLevel(ops map[string]BinaryOp, next func() (Expr, *Error)) (Expr, *Error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.tok()
		op, ok := ops[t.text]
		if !ok || t.kind != tokPunct {
			return l, nil
		}
		p.next()
		r, err := p.operand(t, false, next)
		if err != nil {
			return nil, err
		}
		l = &Binary{OpAt: t.pos, Op: op, L: l, R: r}
	}
}

func (p *parser) parseUnary() (Expr, *Error) {
	t := p.tok()
	if !t.isPunct("-") && !t.isPunct("+") {
		x, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		return p.parsePostfix(x)
	}
	p.next()
	if n := p.tok(); t.text == "-" && (n.kind == tokInt || n.kind == tokDecimal || n.kind == tokApprox) {
		// The sign belongs to the literal, so -2147483648 is an INT.
		p.next()
		return p.numberLiteral(n, t.pos, "-")
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.operand(t, false, p.parseUnary)
	if err != nil {
		return nil, err
	}
	op := OpNeg
	if t.text == "+" {
		op = OpPlus
	}
	return &Unary{At: t.pos, Op: op, X: x}, nil
}
