package sql

// GroupingKind says how a GroupingSets element lists its groupings.
type GroupingKind uint8

// The grouping element kinds. The zero GroupingKind is invalid.
const (
	GroupingSetsList GroupingKind = iota + 1 // GROUPING SETS (s1, s2, ...)
	Rollup                                   // ROLLUP(e1, e2, ...)
	Cube                                     // CUBE(e1, e2, ...)
)

func (k GroupingKind) String() string {
	return [...]string{"?", "GROUPING SETS", "ROLLUP", "CUBE"}[min(int(k), 3)]
}

// GroupingSets is a GROUP BY element that groups several ways at once:
// GROUPING SETS ((a, b), a, ()), ROLLUP(a, b) or CUBE(a, b). Sets holds
// the written elements, each a list of expressions: `(a, b)` is two,
// `a` one, `()` none. Only GROUP BY holds it; the planner expands ROLLUP
// and CUBE into their grouping sets.
type GroupingSets struct {
	At   Pos // the GROUPING, ROLLUP or CUBE keyword
	Kind GroupingKind
	Sets [][]Expr
}

func (e *GroupingSets) Pos() Pos { return e.At }
func (*GroupingSets) exprNode()  {}

// Children returns the elements' expressions in order.
func (e *GroupingSets) Children() []Expr {
	var out []Expr
	for _, s := range e.Sets {
		out = append(out, present(s...)...)
	}
	return out
}

func (e *GroupingSets) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.Sets = make([][]Expr, len(e.Sets))
	for i, s := range e.Sets {
		c.Sets[i] = mapList(f, s)
	}
	return &c
}

func (f *formatter) groupingSets(e *GroupingSets) {
	f.w(e.Kind.String())
	if e.Kind == GroupingSetsList {
		f.w(" ")
	}
	f.w("(")
	for i, s := range e.Sets {
		if i > 0 {
			f.w(", ")
		}
		if len(s) == 1 {
			f.expr(s[0], precLowest)
			continue
		}
		f.w("(")
		f.exprList(s)
		f.w(")")
	}
	f.w(")")
}

// parseGroupingSets reads GROUPING SETS (...), ROLLUP(...) or CUBE(...),
// at its first keyword. An element is an expression, a parenthesised
// list of them, or () (ROLLUP and CUBE take no ()).
func (p *parser) parseGroupingSets() (*GroupingSets, *Error) {
	t := p.next()
	g := &GroupingSets{At: t.pos, Kind: Rollup}
	switch {
	case t.is("CUBE"):
		g.Kind = Cube
	case t.is("GROUPING"):
		g.Kind = GroupingSetsList
		p.next() // SETS
	}
	open := p.tok()
	if !open.isPunct("(") {
		return nil, p.expected("( after "+g.Kind.String(), "(")
	}
	p.next()
	for {
		at := p.tok()
		switch {
		case at.isPunct("(") && p.peek(1).isPunct(")"):
			if g.Kind != GroupingSetsList {
				return nil, p.errAt(at, "() is a grouping set of GROUPING SETS, not an element of "+g.Kind.String())
			}
			p.next()
			p.next()
			g.Sets = append(g.Sets, nil)
		case at.is("ROLLUP") || at.is("CUBE") || at.is("GROUPING") && p.peek(1).is("SETS"):
			return nil, p.errAt(at, at.up+" inside "+g.Kind.String()+" is not supported; list its grouping sets")
		case at.isPunct("("):
			p.next()
			var set []Expr
			for {
				e, err := p.expectExpr("(")
				if err != nil {
					return nil, err
				}
				set = append(set, e)
				if !p.acceptPunct(",") {
					break
				}
			}
			if err := p.expectClose(")", "(", at.pos); err != nil {
				return nil, err
			}
			g.Sets = append(g.Sets, set)
		default:
			e, err := p.expectExpr(g.Kind.String())
			if err != nil {
				return nil, err
			}
			g.Sets = append(g.Sets, []Expr{e})
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectClose(")", "(", open.pos); err != nil {
		return nil, err
	}
	return g, nil
}

var _ Expr = (*GroupingSets)(nil)
