package expr

import (
	"fmt"
	"strconv"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// The composite types: the constructors ARRAY[...], MAP[...] and
// ROW(...), CARDINALITY, ELEMENT, element access x[i] / m[k], field access
// r.f, equality and CAST between composite types, all as Flink has them.

func init() {
	register(map[string]*funcDef{
		"ARRAY":       {min: 1, max: -1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.arrayCtor(e, a) }},
		"MAP":         {min: 2, max: -1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.mapCtor(e, a) }},
		"ROW":         {min: 1, max: -1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.rowCtor(e, a) }},
		"CARDINALITY": {min: 1, max: 1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.cardinality(e, a) }},
		"ELEMENT":     {min: 1, max: 1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.element(e, a) }},
	})
}

// evalAll evaluates ns into a new slice.
func evalAll(ns []*node, r row.Row) ([]row.Value, error) {
	out := make([]row.Value, len(ns))
	for i, n := range ns {
		v, err := n.eval(r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// itemType is the common type of constructor arguments, which must be
// known: ARRAY[NULL] has no element type in Flink either.
func (c *compiler) itemType(e *sql.Call, what string, ns []*node) (row.Type, error) {
	t, err := c.unify(e.Name+"[...] "+what, ns)
	if err != nil {
		return row.Type{}, err
	}
	if t.ID == row.Null {
		return row.Type{}, errAt(e.At, "%s[...]: the %s are all NULL, so their type is unknown; CAST one of them (CAST(NULL AS INT))", e.Name, what)
	}
	return t, nil
}

func (c *compiler) arrayCtor(e *sql.Call, args []*node) (*node, error) {
	t, err := c.itemType(e, "elements", args)
	if err != nil {
		return nil, err
	}
	at := row.ArrayOf(t)
	at.NotNull = true
	return c.finish(e, at, func(r row.Row) (row.Value, error) {
		vs, err := evalAll(args, r)
		if err != nil {
			return row.NullValue, err
		}
		return row.ArrayValue(vs), nil
	}, args...)
}

func (c *compiler) mapCtor(e *sql.Call, args []*node) (*node, error) {
	if len(args)%2 != 0 {
		return nil, errAt(e.At, "MAP[...] needs an even number of arguments (key, value, key, value, ...), got %d", len(args))
	}
	keys := make([]*node, 0, len(args)/2)
	vals := make([]*node, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		keys, vals = append(keys, args[i]), append(vals, args[i+1])
	}
	kt, err := c.itemType(e, "keys", keys)
	if err != nil {
		return nil, err
	}
	vt, err := c.itemType(e, "values", vals)
	if err != nil {
		return nil, err
	}
	mt := row.MapOf(kt, vt)
	mt.NotNull = true
	all := append(append([]*node(nil), keys...), vals...)
	return c.finish(e, mt, func(r row.Row) (row.Value, error) {
		ks, err := evalAll(keys, r)
		if err != nil {
			return row.NullValue, err
		}
		vs, err := evalAll(vals, r)
		if err != nil {
			return row.NullValue, err
		}
		return row.MapValue(ks, vs), nil
	}, all...)
}

// rowCtor builds ROW(a, b, ...); its fields are named EXPR$0, EXPR$1, ...
// as Flink names them.
func (c *compiler) rowCtor(e *sql.Call, args []*node) (*node, error) {
	fields := make([]row.Field, len(args))
	for i, a := range args {
		t := a.t
		if t.ID == row.Null {
			return nil, errAt(a.e.Pos(), "ROW(...) field %d is NULL, so its type is unknown; CAST it (CAST(NULL AS INT))", i+1)
		}
		fields[i] = row.Field{Name: "EXPR$" + strconv.Itoa(i), Type: t}
	}
	rt := row.RowOf(fields...)
	rt.NotNull = true
	return c.finish(e, rt, func(r row.Row) (row.Value, error) {
		vs, err := evalAll(args, r)
		if err != nil {
			return row.NullValue, err
		}
		return row.StructValue(vs), nil
	}, args...)
}

func (c *compiler) cardinality(e *sql.Call, args []*node) (*node, error) {
	x := args[0]
	if x.t.ID != row.Array && x.t.ID != row.Map && x.t.ID != row.Null {
		return nil, argError(e, 0, args, "an ARRAY or a MAP")
	}
	ev := x.eval
	return c.finish(e, row.Type{ID: row.Int, NotNull: x.t.NotNull}, func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		return row.IntValue(int32(v.Len())), nil
	}, x)
}

// element is ELEMENT(array): NULL for an empty array, its element for one
// of one, an error for more (Flink: "Array has more than one element").
func (c *compiler) element(e *sql.Call, args []*node) (*node, error) {
	x := args[0]
	if x.t.ID != row.Array {
		return nil, argError(e, 0, args, "an ARRAY")
	}
	ev, text := x.eval, exprString(e)
	return c.finish(e, x.t.Elem().Nullable(), func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		switch v.Len() {
		case 0:
			return row.NullValue, nil
		case 1:
			el, _ := v.Item(0)
			return el, nil
		}
		return row.NullValue, evalErr(text, fmt.Errorf("ELEMENT of an array with %d elements: it must have at most one", v.Len()))
	}, x)
}

// index compiles x[i]: an ARRAY's i-th element, counting from 1, NULL
// when i is out of range (Flink's ITEM); a MAP's value for key i, NULL
// when absent.
func (c *compiler) index(e *sql.Index) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	i, err := c.compile(e.Index)
	if err != nil {
		return nil, err
	}
	ev := x.eval
	switch x.t.ID {
	case row.Array:
		if !i.t.ID.Integral() && i.t.ID != row.Null {
			return nil, errAt(e.Index.Pos(), "an ARRAY index must be an INT, not %s", typeName(i.t))
		}
		if i.konst && !i.val.IsNull() && i.val.Int64() < 1 {
			return nil, errAt(e.Index.Pos(), "an ARRAY index starts at 1, not %d (Flink refuses it too)", i.val.Int64())
		}
		ie := i.eval
		return c.finish(e, x.t.Elem().Nullable(), func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			k, err := ie(r)
			if err != nil || k.IsNull() {
				return row.NullValue, err
			}
			el, _ := v.Item(int(k.Int64() - 1))
			return el, nil
		}, x, i)
	case row.Map:
		kt := x.t.Key()
		if _, ok := commonType(kt, i.t); !ok {
			return nil, errAt(e.Index.Pos(), "a key of %s must be a %s, not %s", typeName(x.t), typeName(kt), typeName(i.t))
		}
		if i, err = c.coerce(i, kt.Nullable()); err != nil {
			return nil, errAt(e.Index.Pos(), "%v", err)
		}
		ie := i.eval
		return c.finish(e, x.t.Elem().Nullable(), func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			k, err := ie(r)
			if err != nil {
				return row.NullValue, err
			}
			el, _ := v.Lookup(k)
			return el, nil
		}, x, i)
	case row.Struct:
		// r['field'] is r.field, and r[n] the n-th field (from 1), as
		// Calcite's ITEM reads a ROW.
		switch {
		case i.konst && i.t.ID == row.String && !i.val.IsNull():
			return c.fieldAccess(e, x, sql.Ident{Name: i.val.Str(), At: e.Index.Pos()})
		case i.konst && i.t.ID.Integral() && !i.val.IsNull():
			n := i.val.Int64()
			if n < 1 || n > int64(len(x.t.Fields())) {
				return nil, errAt(e.Index.Pos(), "%s has no field %d", typeName(x.t), n)
			}
			return c.fieldAccess(e, x, sql.Ident{Name: x.t.Fields()[n-1].Name, At: e.Index.Pos()})
		}
		return nil, errAt(e.Index.Pos(), "a ROW's field is named by a constant: r['name'] or r[1]")
	case row.Null:
		return nullNode(e, row.Type{ID: row.Null}, x, i), nil
	}
	return nil, errAt(e.Open, "[] applies to an ARRAY, a MAP or a ROW, not to %s", typeName(x.t))
}

// fieldAccess compiles r.f, a ROW's field; NULL when the row is.
func (c *compiler) fieldAccess(e sql.Expr, x *node, field sql.Ident) (*node, error) {
	if x.t.ID != row.Struct {
		return nil, errAt(field.At, "%s is not a ROW: only a ROW has fields such as .%s", typeName(x.t), field.Name)
	}
	i := x.t.FieldIndex(field.Name)
	if i < 0 {
		names := make([]string, 0, len(x.t.Fields()))
		for _, f := range x.t.Fields() {
			names = append(names, f.Name)
		}
		msg := fmt.Sprintf("%s has no field %q", typeName(x.t), field.Name)
		if s := suggest(field.Name, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, errAt(field.At, "%s", msg)
	}
	ft := x.t.Fields()[i].Type
	if !x.t.NotNull {
		ft = ft.Nullable()
	}
	ev := x.eval
	if x.path == nil {
		return c.finish(e, ft, func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			f, _ := v.Item(i)
			return f, nil
		}, x)
	}
	// A field of a column, or of a field of one: the planner may have the
	// source decode it into a column of its own (FieldPath.ReadAt), which
	// is then read instead of the ROW.
	p := c.extend(x.path, i, ft)
	n, err := c.finish(e, ft, func(r row.Row) (row.Value, error) {
		if at := p.at; at >= 0 {
			return r[at], nil
		}
		v, err := ev(r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		f, _ := v.Item(i)
		return f, nil
	}, x)
	if err == nil && !n.konst {
		n.path = p
	}
	return n, err
}

// qualifiedRef compiles a.b: column b of table a or, when a is no table
// here but a ROW column, field b of column a.
func (c *compiler) qualifiedRef(e *sql.ColumnRef) (*node, error) {
	i, t, err := c.scope.Resolve(e.Table.Name, e.Column.Name)
	if err == nil {
		c.read(i)
		return rootNode(e, i, t), nil
	}
	j, rt, rerr := c.scope.Resolve("", e.Table.Name)
	if rerr != nil || rt.ID != row.Struct {
		return nil, errAt(e.Pos(), "%v", err)
	}
	c.read(j)
	return c.fieldAccess(e, rootNode(&sql.ColumnRef{Column: e.Table}, j, rt), e.Column)
}

// sameShape reports whether a and b are one type but for nullability, at
// every level.
func sameShape(a, b row.Type) bool {
	if a.ID != b.ID {
		return false
	}
	switch a.ID {
	case row.Array:
		return sameShape(a.Elem(), b.Elem())
	case row.Map:
		return sameShape(a.Key(), b.Key()) && sameShape(a.Elem(), b.Elem())
	case row.Struct:
		fa, fb := a.Fields(), b.Fields()
		if len(fa) != len(fb) {
			return false
		}
		for i := range fa {
			if !sameShape(fa[i].Type, fb[i].Type) {
				return false
			}
		}
		return true
	}
	return a.Nullable() == b.Nullable()
}

// nestedComparison is = and <> of two composite values: equal when every
// item is (NULL items equal each other here, as Flink's ArrayData and
// MapData equality has it). Flink orders no composite type.
func nestedComparison(op sql.BinaryOp, l, r *node) (evalFn, error) {
	if op != sql.OpEq && op != sql.OpNe {
		return nil, fmt.Errorf("%s and %s cannot be ordered: only = and <> compare composite values", typeName(l.t), typeName(r.t))
	}
	if l.t.ID != row.Null && r.t.ID != row.Null && !sameShape(l.t, r.t) {
		return nil, fmt.Errorf("cannot compare %s with %s; CAST one of them", typeName(l.t), typeName(r.t))
	}
	eq := op == sql.OpEq
	le, re := l.eval, r.eval
	return func(rw row.Row) (row.Value, error) {
		a, err := le(rw)
		if err != nil || a.IsNull() {
			return row.NullValue, err
		}
		b, err := re(rw)
		if err != nil || b.IsNull() {
			return row.NullValue, err
		}
		return boolOf(row.Equal(a, b) == eq), nil
	}, nil
}

// castNested converts a composite value item by item: ARRAY to ARRAY, MAP
// to MAP, ROW to ROW of as many fields (Flink matches them by position).
func castNested(from, to row.Type, zone *time.Location) (castFunc, error) {
	var kernels []castFunc
	add := func(a, b row.Type) error {
		k, err := castKernel(a, b, zone)
		if err != nil {
			return err
		}
		kernels = append(kernels, k)
		return nil
	}
	switch {
	case from.ID != to.ID:
		return nil, fmt.Errorf("cannot CAST %s to %s", typeName(from), typeName(to))
	case to.ID == row.Array:
		if err := add(from.Elem(), to.Elem()); err != nil {
			return nil, fmt.Errorf("cannot CAST %s to %s: %v", typeName(from), typeName(to), err)
		}
	case to.ID == row.Map:
		if err := add(from.Key(), to.Key()); err != nil {
			return nil, fmt.Errorf("cannot CAST %s to %s: %v", typeName(from), typeName(to), err)
		}
		if err := add(from.Elem(), to.Elem()); err != nil {
			return nil, fmt.Errorf("cannot CAST %s to %s: %v", typeName(from), typeName(to), err)
		}
	default:
		ff, tf := from.Fields(), to.Fields()
		if len(ff) != len(tf) {
			return nil, fmt.Errorf("cannot CAST %s to %s: %d fields to %d", typeName(from), typeName(to), len(ff), len(tf))
		}
		for i := range ff {
			if err := add(ff[i].Type, tf[i].Type); err != nil {
				return nil, fmt.Errorf("cannot CAST %s to %s: field %s: %v", typeName(from), typeName(to), ff[i].Name, err)
			}
		}
	}
	return func(v row.Value) (row.Value, error) {
		items := v.ItemSlice()
		for i, x := range items {
			if x.IsNull() {
				continue
			}
			k := kernels[0]
			switch to.ID {
			case row.Map:
				k = kernels[i%2]
			case row.Struct:
				k = kernels[i]
			}
			y, err := k(x)
			if err != nil {
				return row.NullValue, err
			}
			items[i] = y
		}
		switch to.ID {
		case row.Array:
			return row.ArrayValue(items), nil
		case row.Map:
			ks := make([]row.Value, 0, len(items)/2)
			vs := make([]row.Value, 0, len(items)/2)
			for i := 0; i+1 < len(items); i += 2 {
				ks, vs = append(ks, items[i]), append(vs, items[i+1])
			}
			return row.MapValue(ks, vs), nil
		}
		return row.StructValue(items), nil
	}, nil
}

// commonNested is the common type of two composite types of one kind:
// the common type of their items, level by level.
func commonNested(a, b row.Type) (row.Type, bool) {
	switch a.ID {
	case row.Array:
		e, ok := commonType(a.Elem(), b.Elem())
		return row.ArrayOf(e), ok
	case row.Map:
		k, ok1 := commonType(a.Key(), b.Key())
		v, ok2 := commonType(a.Elem(), b.Elem())
		return row.MapOf(k, v), ok1 && ok2
	}
	fa, fb := a.Fields(), b.Fields()
	if len(fa) != len(fb) {
		return row.Type{}, false
	}
	fields := make([]row.Field, len(fa))
	for i := range fa {
		t, ok := commonType(fa[i].Type, fb[i].Type)
		if !ok {
			return row.Type{}, false
		}
		fields[i] = row.Field{Name: fa[i].Name, Type: t}
	}
	return row.RowOf(fields...), true
}
