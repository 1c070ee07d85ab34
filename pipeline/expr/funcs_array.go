package expr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// The collection functions of Flink 2.3 over ARRAY and MAP values, with
// the NULL rules of Flink's implementations: a NULL array (map) gives
// NULL; a NULL element is a value like any other (ARRAY_CONTAINS finds
// it, ARRAY_REMOVE removes it), as Java's Objects.equals compares them.

func init() {
	register(map[string]*funcDef{
		"ARRAY_CONTAINS": {min: 2, max: 2, build: buildArraySearch("ARRAY_CONTAINS")},
		"ARRAY_POSITION": {min: 2, max: 2, build: buildArraySearch("ARRAY_POSITION")},
		"ARRAY_REMOVE":   {min: 2, max: 2, build: buildArraySearch("ARRAY_REMOVE")},
		"ARRAY_APPEND":   {min: 2, max: 2, build: buildArraySearch("ARRAY_APPEND")},
		"ARRAY_PREPEND":  {min: 2, max: 2, build: buildArraySearch("ARRAY_PREPEND")},
		"ARRAY_DISTINCT": {min: 1, max: 1, build: buildArrayUnary},
		"ARRAY_REVERSE":  {min: 1, max: 1, build: buildArrayUnary},
		"ARRAY_MAX":      {min: 1, max: 1, build: buildArrayUnary},
		"ARRAY_MIN":      {min: 1, max: 1, build: buildArrayUnary},
		"ARRAY_CONCAT":   {min: 1, max: -1, build: buildArrayConcat},
		"ARRAY_JOIN":     {min: 2, max: 3, build: buildArrayJoin},
		"MAP_KEYS":       {min: 1, max: 1, build: buildMapPart},
		"MAP_VALUES":     {min: 1, max: 1, build: buildMapPart},
		"SPLIT":          {min: 2, max: 2, build: buildSplit},
	})
}

// sameItem is Java's Objects.equals over two items: NULL equals NULL,
// numbers of different types compare by value.
func sameItem(a, b row.Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	return row.Compare(a, b) == 0
}

func isArray(t row.Type) bool { return t.ID == row.Array }

// buildArraySearch is the functions of an array and one value: the value
// must share a type with the elements (Flink casts both to it).
func buildArraySearch(name string) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if !isArray(args[0].t) {
			return nil, argError(e, 0, args, "an ARRAY")
		}
		elem := args[0].t.Elem()
		common, ok := commonType(elem, args[1].t)
		if !ok {
			return nil, argError(e, 1, args, "of the array's element type "+typeName(elem))
		}
		ae, ve := args[0].eval, args[1].eval
		at := args[0].t
		var t row.Type
		var f func(arr, v row.Value) row.Value
		switch name {
		case "ARRAY_CONTAINS":
			t = row.Type{ID: row.Boolean, NotNull: at.NotNull}
			f = func(arr, v row.Value) row.Value {
				return row.BoolValue(slices.ContainsFunc(arr.ItemSlice(), func(x row.Value) bool { return sameItem(x, v) }))
			}
		case "ARRAY_POSITION":
			// Unlike ARRAY_CONTAINS, a NULL value has no position: NULL.
			t = row.Type{ID: row.Int, NotNull: at.NotNull && args[1].t.NotNull}
			f = func(arr, v row.Value) row.Value {
				if v.IsNull() {
					return row.NullValue
				}
				return row.IntValue(int32(slices.IndexFunc(arr.ItemSlice(), func(x row.Value) bool { return sameItem(x, v) }) + 1))
			}
		case "ARRAY_REMOVE":
			t = at
			f = func(arr, v row.Value) row.Value {
				return row.ArrayValue(slices.DeleteFunc(slices.Clone(arr.ItemSlice()), func(x row.Value) bool { return sameItem(x, v) }))
			}
		default: // ARRAY_APPEND, ARRAY_PREPEND
			// The value takes the array's element type when it casts to
			// it implicitly in Flink (an INT to DECIMAL(10, 2)); Flink
			// refuses one that does not (a BIGINT to INT).
			if !sameShape(common.Nullable(), elem.Nullable()) && !implicitNumber(args[1].t, elem) {
				return nil, argError(e, 1, args, "of the array's element type "+typeName(elem)+" or narrower (CAST it)")
			}
			var err error
			if args[1], err = c.coerce(args[1], elem.Nullable()); err != nil {
				return nil, argError(e, 1, args, "of the array's element type "+typeName(elem))
			}
			ve = args[1].eval
			t = row.ArrayOf(elem.Nullable())
			t.NotNull = at.NotNull
			front := name == "ARRAY_PREPEND"
			f = func(arr, v row.Value) row.Value {
				items := arr.ItemSlice()
				if front {
					return row.ArrayValue(append([]row.Value{v}, items...))
				}
				return row.ArrayValue(append(slices.Clone(items), v))
			}
		}
		return c.finish(e, t, func(r row.Row) (row.Value, error) {
			arr, err := ae(r)
			if err != nil || arr.IsNull() {
				return row.NullValue, err
			}
			v, err := ve(r)
			if err != nil {
				return row.NullValue, err
			}
			return f(arr, v), nil
		}, args...)
	}
}

// buildArrayUnary is ARRAY_DISTINCT (first places kept), ARRAY_REVERSE,
// ARRAY_MAX and ARRAY_MIN (NULL elements skipped; NULL when none is left).
func buildArrayUnary(c *compiler, e *sql.Call, args []*node) (*node, error) {
	at := args[0].t
	if !isArray(at) {
		return nil, argError(e, 0, args, "an ARRAY")
	}
	name := strings.ToUpper(e.Name)
	t := at
	var f func(items []row.Value) row.Value
	switch name {
	case "ARRAY_DISTINCT":
		f = func(items []row.Value) row.Value {
			var out []row.Value
			for _, x := range items {
				if !slices.ContainsFunc(out, func(y row.Value) bool { return sameItem(x, y) }) {
					out = append(out, x)
				}
			}
			return row.ArrayValue(out)
		}
	case "ARRAY_REVERSE":
		f = func(items []row.Value) row.Value {
			out := slices.Clone(items)
			slices.Reverse(out)
			return row.ArrayValue(out)
		}
	default:
		elem := at.Elem()
		if elem.ID.Nested() {
			return nil, argError(e, 0, args, "an ARRAY of comparable elements")
		}
		t = elem.Nullable()
		sign := 1
		if name == "ARRAY_MIN" {
			sign = -1
		}
		f = func(items []row.Value) row.Value {
			best := row.NullValue
			for _, x := range items {
				if !x.IsNull() && (best.IsNull() || sign*row.Compare(x, best) > 0) {
					best = x
				}
			}
			return best
		}
	}
	ae := args[0].eval
	return c.finish(e, t, func(r row.Row) (row.Value, error) {
		arr, err := ae(r)
		if err != nil || arr.IsNull() {
			return row.NullValue, err
		}
		return f(arr.ItemSlice()), nil
	}, args...)
}

// buildArrayConcat is ARRAY_CONCAT(a, ...): NULL when any array is.
func buildArrayConcat(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.Null, NotNull: true}
	for i, a := range args {
		if !isArray(a.t) && a.t.ID != row.Null {
			return nil, argError(e, i, args, "an ARRAY")
		}
		ct, ok := commonType(t, a.t)
		if !ok {
			return nil, argError(e, i, args, "an array of the others' element type")
		}
		t = ct
	}
	if t.ID == row.Null {
		return nullNode(e, t, args...), nil
	}
	for i, a := range args {
		if a.t.ID == row.Array && !sameShape(a.t.Elem().Nullable(), t.Elem().Nullable()) && !sameShape(a.t.Elem(), t.Elem()) {
			return nil, argError(e, i, args, fmt.Sprintf("an array of the others' element type %s (CAST it)", typeName(t.Elem())))
		}
	}
	evs := make([]evalFn, len(args))
	for i, a := range args {
		evs[i] = a.eval
	}
	return c.finish(e, t, func(r row.Row) (row.Value, error) {
		var out []row.Value
		for _, ev := range evs {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			out = append(out, v.ItemSlice()...)
		}
		return row.ArrayValue(out), nil
	}, args...)
}

// buildArrayJoin is ARRAY_JOIN(array, delimiter [, nullReplacement]) of
// an array of strings: NULL elements are left out unless replaced; NULL
// when any argument is.
func buildArrayJoin(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if !isArray(args[0].t) || args[0].t.Elem().ID != row.String {
		return nil, argError(e, 0, args, "an ARRAY<STRING>")
	}
	if err := check(e, args, "a STRING", isStringy, slices.Collect(func(yield func(int) bool) {
		for i := 1; i < len(args); i++ {
			if !yield(i) {
				return
			}
		}
	})...); err != nil {
		return nil, err
	}
	evs := make([]evalFn, len(args))
	for i, a := range args {
		evs[i] = a.eval
	}
	return c.finish(e, strType(args...), func(r row.Row) (row.Value, error) {
		vs := make([]row.Value, len(evs))
		for i, ev := range evs {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			vs[i] = v
		}
		var parts []string
		for _, x := range vs[0].ItemSlice() {
			switch {
			case !x.IsNull():
				parts = append(parts, x.Str())
			case len(vs) == 3:
				parts = append(parts, vs[2].Str())
			}
		}
		return row.StringValue(strings.Join(parts, vs[1].Str())), nil
	}, args...)
}

// buildMapPart is MAP_KEYS and MAP_VALUES: an array in the map's order.
func buildMapPart(c *compiler, e *sql.Call, args []*node) (*node, error) {
	mt := args[0].t
	if mt.ID != row.Map || mt.Multiset() {
		return nil, argError(e, 0, args, "a MAP")
	}
	keys := strings.EqualFold(e.Name, "MAP_KEYS")
	et := mt.Elem()
	if keys {
		et = mt.Key()
	}
	t := row.ArrayOf(et)
	t.NotNull = mt.NotNull
	me := args[0].eval
	return c.finish(e, t, func(r row.Row) (row.Value, error) {
		m, err := me(r)
		if err != nil || m.IsNull() {
			return row.NullValue, err
		}
		items := m.ItemSlice()
		out := make([]row.Value, 0, len(items)/2)
		for i := 0; i+1 < len(items); i += 2 {
			if keys {
				out = append(out, items[i])
			} else {
				out = append(out, items[i+1])
			}
		}
		return row.ArrayValue(out), nil
	}, args...)
}

// splitString is Flink's SPLIT: an empty string gives an empty array
// whatever the delimiter; an empty delimiter splits every character;
// otherwise the parts between delimiters, empty ones included.
func splitString(s, delim string) []row.Value {
	var parts []string
	switch {
	case s == "":
	case delim == "":
		for _, r := range s {
			parts = append(parts, string(r))
		}
	default:
		parts = strings.Split(s, delim)
	}
	out := make([]row.Value, len(parts))
	for i, p := range parts {
		out[i] = row.StringValue(p)
	}
	return out
}

// buildSplit is SPLIT(s, delimiter): ARRAY<STRING>, NULL when either is.
func buildSplit(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t := row.ArrayOf(row.Type{ID: row.String})
	t.NotNull = allNotNull(args...)
	se, de := args[0].eval, args[1].eval
	return c.finish(e, t, func(r row.Row) (row.Value, error) {
		s, err := se(r)
		if err != nil || s.IsNull() {
			return row.NullValue, err
		}
		d, err := de(r)
		if err != nil || d.IsNull() {
			return row.NullValue, err
		}
		return row.ArrayValue(splitString(s.Str(), d.Str())), nil
	}, args...)
}

// numberRank orders the numeric types as Flink casts them implicitly:
// TINYINT, SMALLINT, INT, BIGINT, DECIMAL, FLOAT, DOUBLE; 0 for others.
func numberRank(t row.Type) int {
	switch {
	case t.ID.Integral():
		return t.IntBits() / 8 // 1, 2, 4, 8
	case t.ID == row.Decimal:
		return 9
	case t.ID == row.Float:
		return 10
	case t.ID == row.Double:
		return 11
	}
	return 0
}

// implicitNumber reports whether a number of type v casts implicitly to
// type to in Flink: to is no lower in numberRank.
func implicitNumber(v, to row.Type) bool {
	return numberRank(v) > 0 && numberRank(v) <= numberRank(to)
}
