package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/sql"
)

// unnestScope plans `input CROSS JOIN UNNEST(x) [WITH ORDINALITY] AS u
// (cols)` and `input LEFT JOIN UNNEST(x) ... ON TRUE`: the input's
// columns, then the element's (an ARRAY's element, or each field of a ROW
// element; a MAP's key and value), then the position when WITH
// ORDINALITY (nullable after a LEFT JOIN). Stateless, it keeps the input's changelog kinds;
// the input's key does not survive (one row becomes several).
func (q *queryBuilder) unnestScope(f *sql.Unnest) (*scope, error) {
	in, err := q.from(f.Input)
	if err != nil {
		return nil, err
	}
	if in.window != nil {
		return nil, errAt(f.At, "UNNEST cannot follow a window table function: unnest in a subquery first, then apply the window to its result")
	}
	of, err := q.compile(f.X, in, in.node.Schema)
	if err != nil {
		return nil, err
	}
	if of.ReadsWatermark {
		return nil, watermarkOutsideCalc(f.X)
	}
	t := of.Type
	var cols []row.Field
	u := &runtime.Unnest{Of: of.Eval, Ordinality: f.Ordinality, Left: f.Left}
	switch t.ID {
	case row.Array:
		el := t.Elem().Nullable()
		if el.ID == row.Struct {
			u.Fields = len(el.Fields())
			for _, fl := range el.Fields() {
				cols = append(cols, row.Field{Name: fl.Name, Type: fl.Type.Nullable()})
			}
		} else {
			cols = append(cols, row.Field{Type: el})
		}
	case row.Map:
		u.Map = true
		cols = append(cols, row.Field{Name: "KEY", Type: t.Key().Nullable()}, row.Field{Name: "VALUE", Type: t.Elem().Nullable()})
	default:
		return nil, errAt(f.X.Pos(), "UNNEST needs an ARRAY or a MAP, not %s", t)
	}
	if f.Ordinality {
		cols = append(cols, row.Field{Name: "ORDINALITY", Type: row.Type{ID: row.Int, NotNull: !f.Left}})
	}
	if len(f.Columns) > 0 {
		if len(f.Columns) != len(cols) {
			return nil, errAt(f.Columns[0].At, "UNNEST of %s gives %d column(s)%s, but %d name(s) are listed", t, len(cols), ordinalityNote(f), len(f.Columns))
		}
		for i, c := range f.Columns {
			cols[i].Name = c.Name
		}
	}
	for i, c := range cols {
		if c.Name == "" {
			return nil, errAt(f.At, "name the element column of UNNEST(%s): write UNNEST(...) AS u (name)", sql.Format(f.X))
		}
		at := f.At
		if len(f.Columns) > 0 {
			at = f.Columns[i].At
		}
		if in.node.Schema.Index(c.Name) >= 0 {
			return nil, errAt(at, "UNNEST column %q has the name of a column of %s; name it otherwise in the alias list, AS u (other_name)", c.Name, in.name)
		}
	}
	fields := append(append([]row.Field(nil), in.node.Schema.Fields...), cols...)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	n := &Node{
		Kind: UnnestNode, Input: in.node, Schema: row.NewSchema(fields...),
		Mode: Changelog{Updating: in.node.Mode.Updating}, TimeAttr: in.node.TimeAttr, Bounded: in.node.Bounded,
		op: &unnestOp{unnest: u, of: of},
	}
	ord := ""
	if f.Ordinality {
		ord = " WITH ORDINALITY"
	}
	if f.Left {
		ord += ", joinType=[LEFT]"
	}
	n.Label = fmt.Sprintf("Correlate(UNNEST(%s)%s, columns=[%s])", sql.Format(f.X), ord, strings.Join(names, ", "))
	u.Name = n.Label
	also := append([]string{in.name, in.table}, in.also...)
	return &scope{node: n, name: f.Alias.Name, table: in.table, also: also}, nil
}

func ordinalityNote(f *sql.Unnest) string {
	if f.Ordinality {
		return " with its ORDINALITY"
	}
	return ""
}
