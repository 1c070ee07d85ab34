package expr

import (
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// ARRAY_UNION, ARRAY_INTERSECT, ARRAY_EXCEPT, ARRAY_SLICE and ARRAY_SORT
// of Flink 2.3: NULL when any argument is.

func init() {
	register(map[string]*funcDef{
		"ARRAY_UNION":     {min: 2, max: 2, build: buildArraySet},
		"ARRAY_INTERSECT": {min: 2, max: 2, build: buildArraySet},
		"ARRAY_EXCEPT":    {min: 2, max: 2, build: buildArraySet},
		"ARRAY_SLICE":     {min: 2, max: 3, build: buildArraySlice},
		"ARRAY_SORT":      {min: 1, max: 3, build: buildArraySort},
	})
}

// buildArraySet is the set operations of two arrays of one element type:
// each keeps the first of equal elements, in order (the first array's,
// then for ARRAY_UNION the second's).
func buildArraySet(c *compiler, e *sql.Call, args []*node) (*node, error) {
	for i, a := range args {
		if !isArray(a.t) {
			return nil, argError(e, i, args, "an ARRAY")
		}
	}
	t, ok := commonType(args[0].t, args[1].t)
	if !ok || !sameShape(args[0].t.Elem().Nullable(), args[1].t.Elem().Nullable()) {
		return nil, argError(e, 1, args, "an array of the first's element type "+typeName(args[0].t.Elem()))
	}
	name := strings.ToUpper(e.Name)
	return c.fn2(e, t, args[0], args[1], func(a, b row.Value) (row.Value, error) {
		x, y := a.ItemSlice(), b.ItemSlice()
		in := func(v row.Value, set []row.Value) bool {
			return slices.ContainsFunc(set, func(w row.Value) bool { return sameItem(v, w) })
		}
		src := x
		if name == "ARRAY_UNION" {
			src = append(x, y...)
		}
		var out []row.Value
		for _, v := range src {
			switch {
			case in(v, out):
			case name == "ARRAY_INTERSECT" && !in(v, y):
			case name == "ARRAY_EXCEPT" && in(v, y):
			default:
				out = append(out, v)
			}
		}
		return row.ArrayValue(out), nil
	})
}

// sliceBounds is Flink's ARRAY_SLICE range over n elements, 0-based and
// end exclusive: offsets from 1, negative ones from the end, 0 the start.
func sliceBounds(n int, start, end int64) (int, int) {
	if start < 0 {
		start += int64(n) + 1
	}
	if end < 0 {
		end += int64(n) + 1
	}
	start = max(start, 1)
	if end == 0 {
		end = 1
	}
	end = min(end, int64(n))
	if end < start {
		return 0, 0
	}
	return int(start - 1), int(end)
}

// buildArraySlice is ARRAY_SLICE(arr, start [, end]): the elements from
// start to end inclusive; empty when start is after end.
func buildArraySlice(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if !isArray(args[0].t) {
		return nil, argError(e, 0, args, "an ARRAY")
	}
	if err := check(e, args, "an integer", isInteger, slices.Collect(func(yield func(int) bool) {
		for i := 1; i < len(args) && yield(i); i++ {
		}
	})...); err != nil {
		return nil, err
	}
	t := args[0].t
	t.NotNull = allNotNull(args...)
	slice := func(a row.Value, start, end int64) row.Value {
		items := a.ItemSlice()
		if len(items) == 0 {
			return a
		}
		i, j := sliceBounds(len(items), start, end)
		return row.ArrayValue(items[i:j])
	}
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(a, s row.Value) (row.Value, error) {
			return slice(a, s.Int64(), int64(a.Len())), nil
		})
	}
	return c.fn3(e, t, args[0], args[1], args[2], func(a, s, en row.Value) (row.Value, error) {
		return slice(a, s.Int64(), en.Int64()), nil
	})
}

// buildArraySort is ARRAY_SORT(arr [, ascending [, nullsFirst]]): NULLs
// first when ascending and last when descending unless nullsFirst says.
func buildArraySort(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if !isArray(args[0].t) || args[0].t.Elem().ID.Nested() {
		return nil, argError(e, 0, args, "an ARRAY of comparable elements")
	}
	for i := 1; i < len(args); i++ {
		if args[i].t.ID != row.Boolean && args[i].t.ID != row.Null {
			return nil, argError(e, i, args, "a BOOLEAN")
		}
	}
	t := args[0].t
	t.NotNull = allNotNull(args...)
	evs := make([]evalFn, len(args))
	for i, a := range args {
		evs[i] = a.eval
	}
	return c.finish(e, t, func(r row.Row) (row.Value, error) {
		vs := make([]row.Value, len(evs))
		for i, ev := range evs {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			vs[i] = v
		}
		asc := len(vs) < 2 || vs[1].Bool()
		nullsFirst := asc
		if len(vs) == 3 {
			nullsFirst = vs[2].Bool()
		}
		items := vs[0].ItemSlice()
		slices.SortStableFunc(items, func(a, b row.Value) int {
			switch {
			case a.IsNull() || b.IsNull():
				n := row.Compare(a, b)
				if !nullsFirst {
					n = -n
				}
				return n
			case asc:
				return row.Compare(a, b)
			}
			return row.Compare(b, a)
		})
		return row.ArrayValue(items), nil
	}, args...)
}
