package expr

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// distinctFrom compiles a IS [NOT] DISTINCT FROM b: = on two non-NULL
// values, and NULL is not distinct from NULL; never NULL itself.
func (c *compiler) distinctFrom(e *sql.Binary, l, r *node) (*node, error) {
	eq, err := c.comparison(sql.OpEq, l, r)
	if err != nil {
		return nil, errAt(e.OpAt, "%v", err)
	}
	distinct := e.Op == sql.OpDistinct
	f := func(rw row.Row) (row.Value, error) {
		a, err := l.eval(rw)
		if err != nil {
			return row.NullValue, err
		}
		b, err := r.eval(rw)
		if err != nil {
			return row.NullValue, err
		}
		if a.IsNull() || b.IsNull() {
			return row.BoolValue((a.IsNull() && b.IsNull()) != distinct), nil
		}
		v, err := eq(rw)
		if err != nil {
			return row.NullValue, err
		}
		return row.BoolValue(v.Bool() != distinct), nil
	}
	return c.finish(e, row.Type{ID: row.Boolean, NotNull: true}, f, l, r)
}
