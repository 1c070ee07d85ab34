package expr

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

var (
	vTrue  = row.BoolValue(true)
	vFalse = row.BoolValue(false)
)

func boolOf(b bool) row.Value {
	if b {
		return vTrue
	}
	return vFalse
}

func not(x evalFn) evalFn {
	return func(r row.Row) (row.Value, error) {
		v, err := x(r)
		if err != nil || v.IsNull() {
			return v, err
		}
		return boolOf(!v.Bool()), nil
	}
}

// logic compiles AND and OR with SQL's three-valued logic: FALSE AND
// UNKNOWN is FALSE, TRUE OR UNKNOWN is TRUE, otherwise UNKNOWN wins. The
// right side is evaluated only when the left does not decide.
func (c *compiler) logic(e *sql.Binary, l, r *node) (*node, error) {
	for _, n := range []*node{l, r} {
		if n.t.ID != row.Boolean && n.t.ID != row.Null {
			return nil, errAt(n.e.Pos(), "%s needs BOOLEAN operands, not %s", e.Op, typeName(n.t))
		}
	}
	t := row.Type{ID: row.Boolean, NotNull: l.t.NotNull && r.t.NotNull}
	// A constant left side decides at compile time or drops out.
	stop := e.Op == sql.OpOr // OR stops at TRUE, AND at FALSE
	if l.konst && !l.val.IsNull() {
		if l.val.Bool() == stop {
			return constNode(e, row.Type{ID: row.Boolean, NotNull: true}, l.val), nil
		}
		return r, nil
	}
	le, re := l.eval, r.eval
	var f evalFn
	if e.Op == sql.OpAnd {
		f = func(rw row.Row) (row.Value, error) {
			a, err := le(rw)
			if err != nil {
				return a, err
			}
			if !a.IsNull() && !a.Bool() {
				return vFalse, nil
			}
			b, err := re(rw)
			if err != nil {
				return b, err
			}
			switch {
			case !b.IsNull() && !b.Bool():
				return vFalse, nil
			case a.IsNull() || b.IsNull():
				return row.NullValue, nil
			}
			return vTrue, nil
		}
	} else {
		f = func(rw row.Row) (row.Value, error) {
			a, err := le(rw)
			if err != nil {
				return a, err
			}
			if !a.IsNull() && a.Bool() {
				return vTrue, nil
			}
			b, err := re(rw)
			if err != nil {
				return b, err
			}
			switch {
			case !b.IsNull() && b.Bool():
				return vTrue, nil
			case a.IsNull() || b.IsNull():
				return row.NullValue, nil
			}
			return vFalse, nil
		}
	}
	return c.finish(e, t, f, l, r)
}

func (c *compiler) isExpr(e *sql.IsExpr) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if e.What.JSON() {
		return c.isJSON(e, x)
	}
	if e.What != sql.IsNull && x.t.ID != row.Boolean && x.t.ID != row.Null {
		return nil, errAt(e.OpAt, "IS %s needs a BOOLEAN, not %s", e.What, typeName(x.t))
	}
	ev, neg := x.eval, e.Not
	var test func(v row.Value) bool
	switch e.What {
	case sql.IsNull, sql.IsUnknown:
		test = func(v row.Value) bool { return v.IsNull() }
	case sql.IsTrue:
		test = func(v row.Value) bool { return !v.IsNull() && v.Bool() }
	case sql.IsFalse:
		test = func(v row.Value) bool { return !v.IsNull() && !v.Bool() }
	default:
		return nil, errAt(e.OpAt, "unknown IS test")
	}
	f := func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil {
			return row.NullValue, err
		}
		return boolOf(test(v) != neg), nil
	}
	return c.finish(e, row.Type{ID: row.Boolean, NotNull: true}, f, x)
}

// caseExpr compiles both forms of CASE. The branches are converted to
// their common type; a missing ELSE is NULL.
func (c *compiler) caseExpr(e *sql.Case) (*node, error) {
	if len(e.Whens) == 0 {
		return nil, errAt(e.At, "CASE needs at least one WHEN")
	}
	var operand *node
	var err error
	if e.Operand != nil {
		if operand, err = c.compile(e.Operand); err != nil {
			return nil, err
		}
	}
	conds := make([]*node, len(e.Whens))
	results := make([]*node, 0, len(e.Whens)+1)
	for i, w := range e.Whens {
		var cond *node
		if i == 0 {
			cond, err = c.compile(w.Cond)
		} else {
			cond, err = c.compileLazy(w.Cond)
		}
		if err != nil {
			return nil, err
		}
		if operand != nil {
			f, err := c.comparison(sql.OpEq, operand, cond)
			if err != nil {
				return nil, errAt(w.Cond.Pos(), "CASE: %v", err)
			}
			cond = &node{t: row.Type{ID: row.Boolean}, eval: f, col: -1, e: w.Cond}
		} else if cond.t.ID != row.Boolean && cond.t.ID != row.Null {
			return nil, errAt(w.Cond.Pos(), "a WHEN condition must be BOOLEAN, not %s", typeName(cond.t))
		}
		conds[i] = cond
		res, err := c.compileLazy(w.Result)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	if e.Else != nil {
		res, err := c.compileLazy(e.Else)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	} else {
		results = append(results, constNode(e, row.Type{ID: row.Null}, row.NullValue))
	}
	t, err := c.unify("CASE", results)
	if err != nil {
		return nil, err
	}
	// Branches that can never be taken fold away.
	var cs []evalFn
	var rs []evalFn
	for i, cond := range conds {
		if cond.konst {
			if cond.val.IsNull() || !cond.val.Bool() {
				continue
			}
			if len(cs) == 0 {
				return results[i], nil
			}
			results[len(results)-1] = results[i]
			break
		}
		cs = append(cs, cond.eval)
		rs = append(rs, results[i].eval)
	}
	els := results[len(results)-1]
	if len(cs) == 0 {
		return els, nil
	}
	elseEval := els.eval
	f := func(r row.Row) (row.Value, error) {
		for i, cond := range cs {
			v, err := cond(r)
			if err != nil {
				return row.NullValue, err
			}
			if !v.IsNull() && v.Bool() {
				return rs[i](r)
			}
		}
		return elseEval(r)
	}
	return &node{t: t, eval: f, col: -1, e: e}, nil
}

// coalesce returns its first non-NULL argument.
func (c *compiler) coalesce(e *sql.Call, args []*node) (*node, error) {
	t, err := c.unify(e.Name, args)
	if err != nil {
		return nil, err
	}
	t.NotNull = false
	var evs []evalFn
	for _, a := range args {
		if a.konst && a.val.IsNull() {
			continue
		}
		evs = append(evs, a.eval)
		if a.t.NotNull {
			t.NotNull = true
			break
		}
	}
	if len(evs) == 0 {
		return constNode(e, t, row.NullValue), nil
	}
	if len(evs) == 1 {
		n := *args[0]
		for _, a := range args {
			if !(a.konst && a.val.IsNull()) {
				n = *a
				break
			}
		}
		n.t, n.e = t, e
		return &n, nil
	}
	f := func(r row.Row) (row.Value, error) {
		for _, ev := range evs {
			v, err := ev(r)
			if err != nil || !v.IsNull() {
				return v, err
			}
		}
		return row.NullValue, nil
	}
	return c.finish(e, t, f, args...)
}

// ifFunc is Flink's IF(cond, a, b): a when cond is TRUE, else b.
func (c *compiler) ifFunc(e *sql.Call, args []*node) (*node, error) {
	cond := args[0]
	if cond.t.ID != row.Boolean && cond.t.ID != row.Null {
		return nil, errAt(cond.e.Pos(), "IF needs a BOOLEAN condition, not %s", typeName(cond.t))
	}
	branches := args[1:]
	t, err := c.unify("IF", branches)
	if err != nil {
		return nil, err
	}
	ce, ae, be := cond.eval, branches[0].eval, branches[1].eval
	f := func(r row.Row) (row.Value, error) {
		v, err := ce(r)
		if err != nil {
			return row.NullValue, err
		}
		if !v.IsNull() && v.Bool() {
			return ae(r)
		}
		return be(r)
	}
	return c.finish(e, t, f, args...)
}

// nullif is NULL when a = b, else a.
func (c *compiler) nullif(e *sql.Call, args []*node) (*node, error) {
	eq, err := c.comparison(sql.OpEq, args[0], args[1])
	if err != nil {
		return nil, errAt(e.At, "NULLIF: %v", err)
	}
	ae := args[0].eval
	f := func(r row.Row) (row.Value, error) {
		v, err := eq(r)
		if err != nil {
			return row.NullValue, err
		}
		if !v.IsNull() && v.Bool() {
			return row.NullValue, nil
		}
		return ae(r)
	}
	return c.finish(e, args[0].t.Nullable(), f, args...)
}
