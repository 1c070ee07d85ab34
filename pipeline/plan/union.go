package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// cteEnv is the WITH queries a query can name, innermost first. A WITH
// query is planned again at every reference (inlined, as Flink does: a
// CTE read twice is computed twice), in the environment it was defined
// in, so it sees the WITH queries before it and never itself.
type cteEnv struct {
	name   string // lower case
	query  *sql.Query
	def    *cteEnv
	parent *cteEnv
	// node, when set, is the query already planned (the input of an
	// ORDER BY ... LIMIT, order_limit.go), read once.
	node *Node
}

func (e *cteEnv) find(name string) *cteEnv {
	key := strings.ToLower(name)
	for x := e; x != nil; x = x.parent {
		if x.name == key {
			return x
		}
	}
	return nil
}

// query plans a whole query: its WITH clause, then its SELECTs combined
// by the set operations: INTERSECT first (it binds tighter), then UNION
// ALL, UNION and EXCEPT, left to right.
func (q *queryBuilder) query(qu *sql.Query) (*Node, error) {
	if qu.Limit != nil || len(qu.OrderBy) > 0 && qu == q.top {
		return q.orderLimit(qu)
	}
	if len(qu.OrderBy) > 0 {
		// A subquery's (or WITH query's) ORDER BY without a row count
		// orders nothing anyone can see: Calcite drops it, and so does
		// etld.
		cp := *qu
		cp.OrderBy = nil
		qu = &cp
	}
	saved := q.env
	defer func() { q.env = saved }()
	for _, c := range qu.With {
		q.env = &cteEnv{name: strings.ToLower(c.Name.Name), query: c.Query, def: q.env, parent: q.env}
	}
	// terms are the operands of UNION and EXCEPT: runs of SELECTs joined
	// by INTERSECT, each planned into one node; ops[i] joins terms[i]
	// and terms[i+1].
	var terms []*Node
	var termSels []*sql.Select
	var ops []int
	for i, s := range qu.Selects {
		n, err := q.selectBlock(s)
		if err != nil {
			return nil, err
		}
		if i > 0 && qu.Op(i-1) == sql.Intersect {
			last := len(terms) - 1
			if terms[last], err = q.setOperation(terms[last], n, termSels[last], s, sql.Intersect, qu.UnionDistinct(i-1)); err != nil {
				return nil, err
			}
			continue
		}
		if i > 0 {
			ops = append(ops, i-1)
		}
		terms, termSels = append(terms, n), append(termSels, s)
	}
	acc := []*Node{terms[0]}
	sels := []*sql.Select{termSels[0]}
	for j, i := range ops {
		n, s := terms[j+1], termSels[j+1]
		if qu.Op(i) == sql.Except {
			left, err := q.unionOf(acc, sels)
			if err != nil {
				return nil, err
			}
			e, err := q.setOperation(left, n, sels[0], s, sql.Except, qu.UnionDistinct(i))
			if err != nil {
				return nil, err
			}
			acc, sels = []*Node{e}, sels[:1]
			continue
		}
		acc, sels = append(acc, n), append(sels, s)
		if qu.UnionDistinct(i) {
			u, err := q.union(acc, sels)
			if err != nil {
				return nil, err
			}
			acc = []*Node{q.distinct(u)}
			sels = sels[:1]
		}
	}
	return q.unionOf(acc, sels)
}

// unionOf is the UNION ALL of ins, or its one input.
func (q *queryBuilder) unionOf(ins []*Node, sels []*sql.Select) (*Node, error) {
	if len(ins) == 1 {
		return ins[0], nil
	}
	return q.union(ins, sels)
}

// cte plans a reference to a WITH query.
func (q *queryBuilder) cte(c *cteEnv) (*Node, error) {
	if c.node != nil {
		return c.node, nil
	}
	saved := q.env
	q.env = c.def
	defer func() { q.env = saved }()
	return q.query(c.query)
}

// union plans UNION ALL of ins (planned from sels, whose positions the
// errors name). Column names come from the
// first input; each column's type is the common type of the inputs'
// (Flink's LogicalTypeMerging: INT with BIGINT is BIGINT, DECIMALs keep
// the larger integer and fraction parts, VARCHAR the longer length, NOT
// NULL only when every input's is), and an input whose values differ in
// representation is cast in a Calc before the union. The result is
// updating when any input is, with no upsert key: a key of one input says
// nothing about the rows of another (Flink's FlinkRelMdUpsertKeys derives
// none for a union either).
func (q *queryBuilder) union(ins []*Node, sels []*sql.Select) (*Node, error) {
	width := ins[0].Schema.Len()
	for j, in := range ins[1:] {
		if in.Schema.Len() != width {
			return nil, errAt(sels[j+1].At, "UNION: its inputs must have the same number of columns: the first has %d (%s), input %d has %d (%s)",
				width, strings.Join(ins[0].Schema.Names(), ", "), j+2, in.Schema.Len(), strings.Join(in.Schema.Names(), ", "))
		}
	}
	fields := make([]row.Field, width)
	for c := range width {
		t := ins[0].Schema.Fields[c].Type
		for j, in := range ins[1:] {
			u := in.Schema.Fields[c].Type
			common, err := expr.CommonType(t, u)
			if err != nil {
				return nil, errAt(sels[j+1].At, "UNION: column %d (%s) is %s in the inputs before input %d and %s in it: they have no common type; CAST one of them",
					c+1, ins[0].Schema.Fields[c].Name, t, j+2, u)
			}
			t = common
		}
		fields[c] = row.Field{Name: ins[0].Schema.Fields[c].Name, Type: t}
	}
	schema := row.NewSchema(fields...)
	u := &Node{Kind: UnionNode, Schema: schema, TimeAttr: ins[0].TimeAttr, Bounded: true}
	modes := make([]Changelog, len(ins))
	for j, in := range ins {
		in, err := q.widen(in, schema)
		if err != nil {
			return nil, errAt(sels[j].At, "UNION: input %d: %v", j+1, err)
		}
		u.Inputs = append(u.Inputs, in)
		modes[j] = in.Mode
		u.Bounded = u.Bounded && in.Bounded
		if in.TimeAttr != u.TimeAttr {
			u.TimeAttr = -1
		}
	}
	u.Mode = unionMode(modes)
	kinds := make([]string, len(modes))
	for j, m := range modes {
		kinds[j] = m.Kinds()
	}
	u.Label = fmt.Sprintf("Union(all=[true], union=[%s], inputs=[%s])", strings.Join(schema.Names(), ", "), strings.Join(kinds, ", "))
	return u, nil
}

// sameRepresentation reports whether values of a are valid values of b
// as they are: the types differ at most in nullability and length.
func sameRepresentation(a, b row.Type) bool {
	return a.ID == b.ID && a.Precision == b.Precision && a.Scale == b.Scale
}

// widen casts the columns of in whose values differ from schema's.
func (q *queryBuilder) widen(in *Node, schema row.Schema) (*Node, error) {
	cast := false
	for c, f := range in.Schema.Fields {
		if !sameRepresentation(f.Type, schema.Fields[c].Type) {
			cast = true
		}
	}
	if !cast {
		return in, nil
	}
	project := make([]*expr.Compiled, schema.Len())
	texts := make([]string, schema.Len())
	colMap := make([]int, schema.Len())
	fields := make([]row.Field, schema.Len())
	timeAttr := -1
	for c, f := range in.Schema.Fields {
		var e sql.Expr = &sql.ColumnRef{Column: sql.Ident{Name: f.Name, Quoted: true}}
		want := schema.Fields[c].Type
		texts[c] = f.Name
		colMap[c] = c
		if !sameRepresentation(f.Type, want) {
			want.NotNull = f.Type.NotNull
			e = &sql.Cast{X: e, Type: want, TypeText: want.String()}
			texts[c] = fmt.Sprintf("CAST(%s AS %s)", f.Name, want.Nullable())
		} else if c == in.TimeAttr {
			timeAttr = c
		}
		compiled, err := compileExpr(q.zone(), e, in.Schema, "union input")
		if err != nil {
			return nil, err
		}
		project[c] = compiled
		fields[c] = row.Field{Name: f.Name, Type: compiled.Type}
	}
	n := &Node{Kind: CalcNode, Input: in, Schema: row.NewSchema(fields...), Mode: calcMode(in.Mode, colMap),
		TimeAttr: timeAttr, Bounded: in.Bounded, op: &calcOp{project: project}}
	n.Label = fmt.Sprintf("Calc(select=[%s])", strings.Join(texts, ", "))
	return n, nil
}
