package expr

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// MAP_ENTRIES of Flink 2.3: NULL when the map is. Flink's
// MAP_FROM_ARRAYS and MAP_UNION are left out: they build a Java HashMap,
// whose order (by the keys' hash codes) etld's maps do not follow.

func init() {
	register(map[string]*funcDef{
		"MAP_ENTRIES": {min: 1, max: 1, build: buildMapEntries},
	})
}

// buildMapEntries is MAP_ENTRIES(m): ARRAY<ROW<key, value>> in the map's
// order.
func buildMapEntries(c *compiler, e *sql.Call, args []*node) (*node, error) {
	mt := args[0].t
	if mt.ID != row.Map || mt.Multiset() {
		return nil, argError(e, 0, args, "a MAP")
	}
	rt := row.RowOf(row.Field{Name: "key", Type: mt.Key()}, row.Field{Name: "value", Type: mt.Elem()})
	rt.NotNull = true
	t := row.ArrayOf(rt)
	t.NotNull = mt.NotNull
	return c.fn1(e, t, args[0], func(m row.Value) (row.Value, error) {
		items := m.ItemSlice()
		out := make([]row.Value, 0, len(items)/2)
		for i := 0; i+1 < len(items); i += 2 {
			out = append(out, row.StructValue([]row.Value{items[i], items[i+1]}))
		}
		return row.ArrayValue(out), nil
	})
}
