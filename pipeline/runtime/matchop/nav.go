package matchop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
)

// event is an input row in the NFA: seq orders the partition's rows as
// they entered it (event time, then ORDER BY, then arrival), as Flink's
// event ids do.
type event struct {
	seq uint64
	ts  int64
	r   row.Row
}

// step is one row of a partial match under its variable; the steps form
// a list from the newest back, shared by the branches that grew from it.
type step struct {
	ev   *event
	v    int
	prev *step
}

// mrow is a row of a match, oldest first.
type mrow struct {
	ev *event
	v  int
}

// rowsOf lists a match's rows, oldest first, into dst.
func rowsOf(dst []mrow, last *step) []mrow {
	dst = dst[:0]
	for s := last; s != nil; s = s.prev {
		dst = append(dst, mrow{ev: s.ev, v: s.v})
	}
	for i, j := 0, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst
}

// cexpr is an Expr with an aggregate store for each of its aggregate
// Navs.
type cexpr struct {
	*Expr
	stores []*aggop.Store
	ext    row.Row // the input row and the Navs' values
	sel    []row.Row
}

func newCExpr(e *Expr) (*cexpr, error) {
	c := &cexpr{Expr: e, stores: make([]*aggop.Store, len(e.Navs))}
	for i, nv := range e.Navs {
		if nv.Func != NavAgg {
			continue
		}
		if err := nv.Agg.Validate(); err != nil {
			return nil, fmt.Errorf("match: %s: %w", e.Text, err)
		}
		c.stores[i] = aggop.NewStore([]aggop.AggCall{nv.Agg}, true, false)
	}
	return c, nil
}

// eval computes the expression over base (the current row) with the
// match rows; cur, when not nil, is the row being decided on under
// variable curVar, which the Navs of its variable also see.
func (c *cexpr) eval(base row.Row, rows []mrow, cur row.Row, curVar int) (row.Value, error) {
	if c.Base > 0 {
		base = base[:c.Base]
	}
	c.ext = append(c.ext[:0], base...)
	for i := range c.Navs {
		nv := &c.Navs[i]
		c.sel = c.sel[:0]
		for _, m := range rows {
			if nv.Var == AnyVar || m.v == nv.Var {
				c.sel = append(c.sel, m.ev.r)
			}
		}
		if cur != nil && (nv.Var == AnyVar || nv.Var == curVar) {
			c.sel = append(c.sel, cur)
		}
		v := row.NullValue
		switch nv.Func {
		case NavLast:
			if k := len(c.sel) - 1 - nv.Offset; k >= 0 && k < len(c.sel) {
				v = c.sel[k][nv.Col]
			}
		case NavFirst:
			if nv.Offset >= 0 && nv.Offset < len(c.sel) {
				v = c.sel[nv.Offset][nv.Col]
			}
		case NavAgg:
			st := c.stores[i]
			id := st.Alloc("")
			for _, r := range c.sel {
				if err := st.Check(r); err != nil {
					st.Release(id)
					return row.NullValue, fmt.Errorf("%s: %w", c.Text, err)
				}
				st.Update(id, r, true)
			}
			var out [1]row.Value
			st.Results(id, out[:])
			st.Release(id)
			v = out[0]
		}
		c.ext = append(c.ext, v)
	}
	clear(c.sel)
	return c.Eval(c.ext)
}
