package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/udfop"
	"github.com/etld/etld/pipeline/sql"
	"github.com/etld/etld/pipeline/udf"
)

// lateralScope plans `input CROSS JOIN LATERAL TABLE(f(args)) AS t (cols)`
// and its LEFT JOIN ... ON TRUE: the input's columns, then the table
// function's (named by the alias list, else as declared). Stateless like
// UNNEST, it keeps the input's changelog kinds; the input's key does not
// survive (one row becomes several).
func (q *queryBuilder) lateralScope(f *sql.LateralTable) (*scope, error) {
	in, err := q.from(f.Input)
	if err != nil {
		return nil, err
	}
	if in.window != nil {
		return nil, errAt(f.At, "LATERAL TABLE cannot follow a window table function: call the function in a subquery first, then apply the window to its result")
	}
	fs := q.b.plan.funcs.Lookup(f.Call.Name)
	switch {
	case len(fs) == 0:
		return nil, errAt(f.Call.At, "%s is not a table function of this file: declare it under functions: with kind: table%s", f.Call.Name, suggest(f.Call.Name, q.tableFunctionNames()))
	case fs[0].Kind != udf.Table:
		return nil, errAt(f.Call.At, "%s is a %s function, not a table function: LATERAL TABLE calls a function declared with kind: table", fs[0].Name, fs[0].Kind)
	}
	// The arguments read the input's columns; a call of a scalar
	// function among them is computed first, as everywhere.
	call := f.Call
	var calls []*sql.Call
	if err := q.userCalls(&sql.Call{At: call.At, Name: "$args", Args: call.Args}, map[string]bool{}, &calls); err != nil {
		return nil, err
	}
	if len(calls) > 0 {
		refs, err := q.functionNode(in, calls)
		if err != nil {
			return nil, err
		}
		call = &sql.Call{At: call.At, Name: call.Name, Args: make([]sql.Expr, len(f.Call.Args))}
		for i, a := range f.Call.Args {
			call.Args[i] = rewrite(a, func(x sql.Expr) (sql.Expr, bool) {
				if c, ok := q.userScalar(x); ok {
					if ref := refs[strings.ToLower(sql.Format(c))]; ref != nil {
						return ref, true
					}
				}
				return nil, false
			})
		}
	}
	fn, args, err := q.resolveCall(call, in, func(e sql.Expr) sql.Expr { return e })
	if err != nil {
		return nil, err
	}
	cols := append([]row.Field(nil), fn.Columns...)
	if len(f.Columns) > 0 {
		if len(f.Columns) != len(cols) {
			return nil, errAt(f.Columns[0].At, "%s gives %d column(s), but %d name(s) are listed", fn.Name, len(cols), len(f.Columns))
		}
		for i, c := range f.Columns {
			cols[i].Name = c.Name
		}
	}
	for i, c := range cols {
		at := f.At
		if len(f.Columns) > 0 {
			at = f.Columns[i].At
		}
		if in.node.Schema.Index(c.Name) >= 0 {
			return nil, errAt(at, "%s's column %q has the name of a column of %s; name it otherwise in the alias list, AS t (other_name)", fn.Name, c.Name, in.name)
		}
	}
	fields := append(append([]row.Field(nil), in.node.Schema.Fields...), cols...)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	op := &lateralOp{call: userCall{fn: fn, args: args, text: callText(fn, f.Call)}, left: f.Left, width: len(cols)}
	n := &Node{
		Kind: LateralNode, Input: in.node, Schema: row.NewSchema(fields...),
		Mode: Changelog{Updating: in.node.Mode.Updating}, TimeAttr: in.node.TimeAttr, Bounded: in.node.Bounded, op: op,
	}
	join := ""
	if f.Left {
		join = ", joinType=[LEFT]"
	}
	n.Label = fmt.Sprintf("Correlate(invocation=[%s]%s, columns=[%s])", op.call.text, join, strings.Join(names, ", "))
	also := append([]string{in.name, in.table}, in.also...)
	s := &scope{node: n, name: f.Alias.Name, table: in.table, also: also}
	if in.cols != nil {
		// A join or the columns of computed calls: keep their names and
		// qualifiers, and give the function's columns the alias.
		s.cols = append(in.tableCols(0), make([]scopeCol, len(cols))...)
		w := in.node.Schema.Len()
		for i, c := range cols {
			s.cols[w+i] = scopeCol{quals: []string{f.Alias.Name}, name: c.Name, idx: w + i}
		}
	}
	return s, nil
}

// tableFunctionNames lists the file's table functions, for suggestions.
func (q *queryBuilder) tableFunctionNames() []string {
	var names []string
	for _, f := range q.b.plan.funcs.Functions() {
		if f.Kind == udf.Table {
			names = append(names, f.Name)
		}
	}
	return names
}

// callText is a call as explain shows it: the function's name as
// declared, the arguments as SQL.
func callText(fn *udf.Function, c *sql.Call) string {
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = sql.Format(a)
	}
	return fn.Name + "(" + strings.Join(args, ", ") + ")"
}

// lateralOp is a LateralNode's table function.
type lateralOp struct {
	call  userCall
	left  bool
	width int
}

func (l *lateralOp) operator(b opBuild) (operator.Lifecycle, error) {
	fn := l.call.fn
	return &udfop.Lateral{
		Name: fn.Name, Args: evals(l.call.args), Width: l.width, NullTolerant: fn.NullTolerant, Left: l.left,
		Start:  func(ctx context.Context) (udfop.TableFunc, error) { return fn.NewInstance(ctx) },
		Reject: b.reject(), Input: b.n.Input.Schema, Op: b.n.Label, Transform: b.transform,
	}, nil
}
