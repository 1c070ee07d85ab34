package sql

// Every expression node exposes its children, so that a walk or a rewrite
// over expressions is one generic function, not a type switch that has to
// learn every new node:
//
//	Children()      the node's operands, in a fixed order, absent ones left out
//	MapChildren(f)  a copy of the node with each child c replaced by f(c),
//	                visited in the order of Children
//
// A child is an expression evaluated in the node's own scope. What is not
// a child, and why:
//   - the query of EXISTS and IN (query): a subquery is its own scope, which
//     the planner plans as a join;
//   - the call under OVER: an aggregate call with a window is no group
//     aggregate, so a walk looking for calls must not meet it as one; its
//     arguments and FILTER are children of the Over;
//   - a window frame's PRECEDING bound: a constant of the window's shape (a
//     row count or an interval) that the planner reads as written.
//
// MapChildren copies every part that holds a child (the Over's call and
// window, the CASE arms, the argument lists), so that the result never
// shares a child slot with the node it came from; it returns a leaf itself.

// present returns the non-nil expressions of xs, in order.
func present(xs ...Expr) []Expr {
	out := make([]Expr, 0, len(xs))
	for _, x := range xs {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// mapOpt is f(x), or nil for an absent x.
func mapOpt(f func(Expr) Expr, x Expr) Expr {
	if x == nil {
		return nil
	}
	return f(x)
}

// mapList is f of each of xs, in order; nil stays nil.
func mapList(f func(Expr) Expr, xs []Expr) []Expr {
	if xs == nil {
		return nil
	}
	out := make([]Expr, len(xs))
	for i, x := range xs {
		out[i] = mapOpt(f, x)
	}
	return out
}

// The leaves.

func (e *Literal) Children() []Expr                     { return nil }
func (e *Literal) MapChildren(func(Expr) Expr) Expr     { return e }
func (e *IntervalLit) Children() []Expr                 { return nil }
func (e *IntervalLit) MapChildren(func(Expr) Expr) Expr { return e }
func (e *ColumnRef) Children() []Expr                   { return nil }
func (e *ColumnRef) MapChildren(func(Expr) Expr) Expr   { return e }
func (e *Star) Children() []Expr                        { return nil }
func (e *Star) MapChildren(func(Expr) Expr) Expr        { return e }
func (e *Exists) Children() []Expr                      { return nil }
func (e *Exists) MapChildren(func(Expr) Expr) Expr      { return e }

// The nodes with a fixed set of children.

func (e *Unary) Children() []Expr { return present(e.X) }
func (e *Unary) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X = mapOpt(f, e.X)
	return &c
}

func (e *Binary) Children() []Expr { return present(e.L, e.R) }
func (e *Binary) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.L, c.R = mapOpt(f, e.L), mapOpt(f, e.R)
	return &c
}

func (e *IsExpr) Children() []Expr { return present(e.X) }
func (e *IsExpr) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X = mapOpt(f, e.X)
	return &c
}

func (e *Between) Children() []Expr { return present(e.X, e.Lo, e.Hi) }
func (e *Between) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X, c.Lo, c.Hi = mapOpt(f, e.X), mapOpt(f, e.Lo), mapOpt(f, e.Hi)
	return &c
}

func (e *Like) Children() []Expr { return present(e.X, e.Pattern, e.Escape) }
func (e *Like) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X, c.Pattern, c.Escape = mapOpt(f, e.X), mapOpt(f, e.Pattern), mapOpt(f, e.Escape)
	return &c
}

func (e *Cast) Children() []Expr { return present(e.X) }
func (e *Cast) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X = mapOpt(f, e.X)
	return &c
}

func (e *Trim) Children() []Expr { return present(e.Chars, e.X) }
func (e *Trim) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.Chars, c.X = mapOpt(f, e.Chars), mapOpt(f, e.X)
	return &c
}

func (e *Extract) Children() []Expr { return present(e.X) }
func (e *Extract) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X = mapOpt(f, e.X)
	return &c
}

func (e *InQuery) Children() []Expr { return present(e.X) }
func (e *InQuery) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X = mapOpt(f, e.X)
	return &c
}

func (e *Index) Children() []Expr { return present(e.X, e.Index) }
func (e *Index) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X, c.Index = mapOpt(f, e.X), mapOpt(f, e.Index)
	return &c
}

func (e *FieldAccess) Children() []Expr { return present(e.X) }
func (e *FieldAccess) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X = mapOpt(f, e.X)
	return &c
}

// The nodes with lists of children.

func (e *InList) Children() []Expr { return append(present(e.X), present(e.List...)...) }
func (e *InList) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.X, c.List = mapOpt(f, e.X), mapList(f, e.List)
	return &c
}

// Children returns the arguments, then FILTER's condition.
func (e *Call) Children() []Expr { return append(present(e.Args...), present(e.Filter)...) }
func (e *Call) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.Args, c.Filter = mapList(f, e.Args), mapOpt(f, e.Filter)
	return &c
}

// Children returns the operand, ELSE, then each arm's condition and
// result. ELSE comes before the arms because the planner numbers the
// aggregate calls of a query in walk order and an aggregate's state is
// laid out by that number: another order would change the state of a
// running query, so a checkpoint taken before could not be restored.
func (e *Case) Children() []Expr {
	out := present(e.Operand, e.Else)
	for _, w := range e.Whens {
		out = append(out, present(w.Cond, w.Result)...)
	}
	return out
}

func (e *Case) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	c.Operand, c.Else = mapOpt(f, e.Operand), mapOpt(f, e.Else)
	if e.Whens != nil {
		c.Whens = make([]*When, len(e.Whens))
		for i, w := range e.Whens {
			cw := *w
			cw.Cond, cw.Result = mapOpt(f, w.Cond), mapOpt(f, w.Result)
			c.Whens[i] = &cw
		}
	}
	return &c
}

// Children returns the call's arguments and FILTER, then PARTITION BY,
// then each ORDER BY expression (the call itself and the frame's bound
// are not children: see the top of this file).
func (e *Over) Children() []Expr {
	var out []Expr
	if e.Call != nil {
		out = e.Call.Children()
	}
	if w := e.Window; w != nil {
		out = append(out, present(w.PartitionBy...)...)
		for _, it := range w.OrderBy {
			out = append(out, present(it.X)...)
		}
	}
	return out
}

func (e *Over) MapChildren(f func(Expr) Expr) Expr {
	c := *e
	if e.Call != nil {
		c.Call = e.Call.MapChildren(f).(*Call)
	}
	if e.Window != nil {
		w := *e.Window
		w.PartitionBy = mapList(f, e.Window.PartitionBy)
		if e.Window.OrderBy != nil {
			w.OrderBy = make([]*OrderItem, len(e.Window.OrderBy))
			for i, it := range e.Window.OrderBy {
				o := *it
				o.X = mapOpt(f, it.X)
				w.OrderBy[i] = &o
			}
		}
		c.Window = &w
	}
	return &c
}
