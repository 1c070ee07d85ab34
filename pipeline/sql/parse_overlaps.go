package sql

// (s0, e0) OVERLAPS (s1, e1): whether two periods of time share a point.
// It is read as what Calcite expands it to, so the compiler needs no
// operator of its own: a period's second element is its end, or, when it
// is an INTERVAL, its length (the end is start + length); each period's
// ends are put in order (CASE WHEN s <= e THEN s ELSE e END, and so on);
// the periods overlap when e0 >= s1 AND e1 >= s0, so periods that only
// touch overlap, and a NULL end point makes the result NULL or FALSE as
// AND's three-valued logic says.

// parseOverlaps reads OVERLAPS (s1, e1) after the period l.
func (p *parser) parseOverlaps(l Expr) (Expr, *Error) {
	kw := p.next()
	left, ok := overlapsPeriod(l)
	if !ok {
		return nil, p.errAt(kw, "OVERLAPS needs a period (start, end) or (start, interval) on its left")
	}
	r, err := p.operand(kw, false, p.parseAdditive)
	if err != nil {
		return nil, err
	}
	right, ok := overlapsPeriod(r)
	if !ok {
		return nil, p.errAt(kw, "OVERLAPS needs a period (start, end) or (start, interval) on its right")
	}
	s0, e0 := orderedPeriod(kw.pos, left)
	s1, e1 := orderedPeriod(kw.pos, right)
	return &Binary{OpAt: kw.pos, Op: OpAnd,
		L: &Binary{OpAt: kw.pos, Op: OpGe, L: e0, R: s1},
		R: &Binary{OpAt: kw.pos, Op: OpGe, L: e1, R: s0}}, nil
}

// overlapsPeriod is the start and end of a period written (start, end)
// or (start, interval).
func overlapsPeriod(e Expr) ([2]Expr, bool) {
	row, ok := e.(*Call)
	if !ok || row.Name != "ROW" || len(row.Args) != 2 {
		return [2]Expr{}, false
	}
	start, end := row.Args[0], row.Args[1]
	if isIntervalExpr(end) {
		end = &Binary{OpAt: end.Pos(), Op: OpAdd, L: start, R: end}
	}
	return [2]Expr{start, end}, true
}

// isIntervalExpr says whether e is an INTERVAL as the parser can tell: an
// interval literal, its negation, or one multiplied or divided by a number.
func isIntervalExpr(e Expr) bool {
	switch x := e.(type) {
	case *IntervalLit:
		return true
	case *Unary:
		return x.Op != OpNot && isIntervalExpr(x.X)
	case *Binary:
		switch x.Op {
		case OpMul:
			return isIntervalExpr(x.L) || isIntervalExpr(x.R)
		case OpDiv:
			return isIntervalExpr(x.L)
		case OpAdd, OpSub:
			return isIntervalExpr(x.L) && isIntervalExpr(x.R)
		}
	}
	return false
}

// orderedPeriod is the period's earlier and later end.
func orderedPeriod(at Pos, p [2]Expr) (Expr, Expr) {
	le := &Binary{OpAt: at, Op: OpLe, L: p[0], R: p[1]}
	lo := &Case{At: at, Whens: []*When{{At: at, Cond: le, Result: p[0]}}, Else: p[1]}
	hi := &Case{At: at, Whens: []*When{{At: at, Cond: le, Result: p[1]}}, Else: p[0]}
	return lo, hi
}
