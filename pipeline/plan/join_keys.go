package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// joinKey is an equality of a join's ON condition between an expression
// of the left input's columns and one of the right input's, in the
// joined row's names: `l = r`, or with nullSafe `l IS NOT DISTINCT FROM
// r` (also written `(l IS NULL AND r IS NULL) OR l = r`), where NULL
// matches NULL, as Flink's join keys with filterNulls false.
type joinKey struct {
	l, r     sql.Expr
	nullSafe bool
	at       sql.Pos
	// cond is the conjunct as written, for a join that takes it as a
	// residual instead (an interval or window join).
	cond sql.Expr
}

// splitKey reports whether conjunct c of a join's condition (in the
// joined row's names) is a join key.
func splitKey(c sql.Expr, joined row.Schema, lw int) (joinKey, bool) {
	b, ok := c.(*sql.Binary)
	if !ok {
		return joinKey{}, false
	}
	k := joinKey{at: b.OpAt, cond: c}
	switch b.Op {
	case sql.OpEq:
		k.l, k.r = b.L, b.R
	case sql.OpNotDistinct:
		k.l, k.r, k.nullSafe = b.L, b.R, true
	case sql.OpOr:
		l, r, ok := nullSafeOr(b)
		if !ok {
			return joinKey{}, false
		}
		k.l, k.r, k.nullSafe = l, r, true
	default:
		return joinKey{}, false
	}
	ls, rs := sideOf(k.l, joined, lw), sideOf(k.r, joined, lw)
	switch {
	case ls == 0 && rs == 1:
	case ls == 1 && rs == 0:
		k.l, k.r = k.r, k.l
	default:
		return joinKey{}, false
	}
	return k, true
}

// nullSafeOr matches Calcite's spelling of IS NOT DISTINCT FROM,
// `(a IS NULL AND b IS NULL) OR a = b`, either way round.
func nullSafeOr(b *sql.Binary) (l, r sql.Expr, ok bool) {
	for _, pair := range [][2]sql.Expr{{b.L, b.R}, {b.R, b.L}} {
		both, okAnd := pair[0].(*sql.Binary)
		eq, okEq := pair[1].(*sql.Binary)
		if !okAnd || !okEq || both.Op != sql.OpAnd || eq.Op != sql.OpEq {
			continue
		}
		n1, ok1 := both.L.(*sql.IsExpr)
		n2, ok2 := both.R.(*sql.IsExpr)
		if !ok1 || !ok2 || n1.Not || n2.Not || n1.What != sql.IsNull || n2.What != sql.IsNull {
			continue
		}
		x, y := sql.Format(eq.L), sql.Format(eq.R)
		a, c := sql.Format(n1.X), sql.Format(n2.X)
		if a == x && c == y || a == y && c == x {
			return eq.L, eq.R, true
		}
	}
	return nil, nil, false
}

// sideOf is 0 when every column e reads is the left input's, 1 when
// every one is the right's, -1 when it reads both, none, or a name it
// cannot resolve.
func sideOf(e sql.Expr, joined row.Schema, lw int) int {
	side := -1
	walk(e, func(x sql.Expr) bool {
		c, ok := x.(*sql.ColumnRef)
		if !ok {
			return side != -2
		}
		i := joined.Index(c.Column.Name)
		s := 0
		if i >= lw {
			s = 1
		}
		switch {
		case i < 0 || !c.Table.IsZero() || side >= 0 && side != s:
			side = -2
		default:
			side = s
		}
		return side != -2
	})
	return max(side, -1)
}

// keyCols turns the join keys into key columns of both inputs: a key
// that is a column of each side of the same type is that column; any
// other, an expression or columns of different types (BIGINT = INT), is
// computed into a column appended to its input by a Calc below the join,
// cast to the two sides' common type, as Flink's join pushes non-column
// keys into a projection of its inputs. It fills js's keys, and when it
// appended columns it replaces n's inputs and widens n's schema (the
// added columns are named $fN, Flink's names, at the end of each
// side's columns); texts are the keys as explain shows them.
func (q *queryBuilder) keyCols(n *Node, js *joinop.JoinSpec, keys []joinKey) (texts []string, err error) {
	left, right := n.Inputs[0], n.Inputs[1]
	lw := left.Schema.Len()
	side := [2]*keySide{{in: left, zone: q.zone()}, {in: right, zone: q.zone()}}
	var nullSafe []bool
	for _, k := range keys {
		lc, err := compileExpr(q.zone(), k.l, left.Schema, "join")
		if err != nil {
			return nil, err
		}
		re := rightNames(k.r, n.Schema, right.Schema, lw)
		rc, err := compileExpr(q.zone(), re, right.Schema, "join")
		if err != nil {
			return nil, err
		}
		t, err := expr.CommonType(lc.Type, rc.Type)
		if err != nil {
			return nil, errAt(k.at, "the join key %s = %s compares %s with %s, which have no common type: CAST one side to the other's type", sql.Format(k.l), sql.Format(k.r), lc.Type, rc.Type)
		}
		li, err := side[0].column(k.l, lc, t)
		if err != nil {
			return nil, err
		}
		ri, err := side[1].column(re, rc, t)
		if err != nil {
			return nil, err
		}
		js.LeftKeys = append(js.LeftKeys, li)
		js.RightKeys = append(js.RightKeys, ri)
		nullSafe = append(nullSafe, k.nullSafe)
	}
	for _, ns := range nullSafe {
		if ns {
			js.NullSafe = nullSafe
		}
	}
	if len(side[0].extra)+len(side[1].extra) > 0 {
		n.Inputs = []*Node{side[0].node(), side[1].node()}
		n.Schema = widenedJoinSchema(n, lw, side[0].extra, side[1].extra, js.Kind)
		js.LeftWidth, js.RightWidth = n.Inputs[0].Schema.Len(), n.Inputs[1].Schema.Len()
	}
	lw = n.Inputs[0].Schema.Len()
	names := n.Schema.Names()
	for i := range js.LeftKeys {
		op := "="
		if nullSafe[i] {
			op = "IS NOT DISTINCT FROM"
		}
		texts = append(texts, fmt.Sprintf("%s(%s, %s)", op, names[js.LeftKeys[i]], names[lw+js.RightKeys[i]]))
	}
	return texts, nil
}

// rightNames rewrites the joined row's names of the right input's
// columns in e to the right input's own names.
func rightNames(e sql.Expr, joined, right row.Schema, lw int) sql.Expr {
	return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
		c, ok := x.(*sql.ColumnRef)
		if !ok {
			return nil, false
		}
		i := joined.Index(c.Column.Name)
		if i < lw {
			return x, true
		}
		return &sql.ColumnRef{Column: sql.Ident{At: c.Column.At, Name: right.Fields[i-lw].Name, Quoted: true}}, true
	})
}

// keySide gathers the key columns one input gains.
type keySide struct {
	in *Node
	// zone is the session zone the key expressions compile in.
	zone  *time.Location
	extra []keyExtra
}

type keyExtra struct {
	c    *expr.Compiled
	text string
}

// column returns the input column of a key of type t, appending a
// computed one unless the key is a column of that type already.
func (s *keySide) column(e sql.Expr, c *expr.Compiled, t row.Type) (int, error) {
	if c.IsColumn && sameRepresentation(c.Type, t) {
		return c.Column, nil
	}
	text := sql.Format(e)
	if !sameRepresentation(c.Type, t) {
		cast := t
		cast.NotNull = c.Type.NotNull
		e = &sql.Cast{At: e.Pos(), X: e, Type: cast, TypeText: cast.String()}
		text = fmt.Sprintf("CAST(%s AS %s)", text, cast.Nullable())
		var err error
		if c, err = compileExpr(s.zone, e, s.in.Schema, "join"); err != nil {
			return 0, err
		}
	}
	s.extra = append(s.extra, keyExtra{c: c, text: text})
	return s.in.Schema.Len() + len(s.extra) - 1, nil
}

// node is the input with its key columns appended: a Calc, or the input
// itself when it gains none.
func (s *keySide) node() *Node {
	in := s.in
	if len(s.extra) == 0 {
		return in
	}
	w := in.Schema.Len()
	fields := make([]row.Field, 0, w+len(s.extra))
	project := make([]*expr.Compiled, 0, w+len(s.extra))
	texts := make([]string, 0, w+len(s.extra))
	colMap := make([]int, w)
	taken := map[string]bool{}
	for i, f := range in.Schema.Fields {
		c, _ := compileExpr(s.zone, &sql.ColumnRef{Column: sql.Ident{Name: f.Name, Quoted: true}}, in.Schema, "join")
		fields = append(fields, f)
		project = append(project, c)
		texts = append(texts, f.Name)
		colMap[i] = i
		taken[strings.ToLower(f.Name)] = true
	}
	for _, x := range s.extra {
		name := freshName(fmt.Sprintf("$f%d", len(fields)), taken)
		fields = append(fields, row.Field{Name: name, Type: x.c.Type})
		project = append(project, x.c)
		texts = append(texts, x.text+" AS "+name)
	}
	n := &Node{Kind: CalcNode, Input: in, Schema: row.NewSchema(fields...), Mode: calcMode(in.Mode, colMap),
		TimeAttr: in.TimeAttr, Bounded: in.Bounded, op: &calcOp{project: project}}
	n.Label = fmt.Sprintf("Calc(select=[%s])", strings.Join(texts, ", "))
	return n
}

// freshName is name, or name with a number, not in taken; it takes it.
func freshName(name string, taken map[string]bool) string {
	out := name
	for i := 0; taken[strings.ToLower(out)]; i++ {
		out = fmt.Sprintf("%s%d", name, i)
	}
	taken[strings.ToLower(out)] = true
	return out
}

// widenedJoinSchema is n's joined schema with the key columns each side
// gained after its columns, named uniquely, nullable on a side the join
// pads with NULLs.
func widenedJoinSchema(n *Node, lw int, lx, rx []keyExtra, kind joinop.JoinKind) row.Schema {
	old := n.Schema.Fields
	taken := map[string]bool{}
	for _, f := range old {
		taken[strings.ToLower(f.Name)] = true
	}
	fields := append([]row.Field{}, old[:lw]...)
	add := func(in *Node, from, count int, nullable bool) {
		for i := range count {
			f := in.Schema.Fields[from+i]
			if nullable {
				f.Type = f.Type.Nullable()
			}
			f.Name = freshName(f.Name, taken)
			fields = append(fields, f)
		}
	}
	add(n.Inputs[0], lw, len(lx), kind == joinop.RightJoin || kind == joinop.FullJoin)
	fields = append(fields, old[lw:]...)
	add(n.Inputs[1], len(old)-lw, len(rx), kind == joinop.LeftJoin || kind == joinop.FullJoin)
	return row.NewSchema(fields...)
}

// withoutKeyCols returns the node that gives on a join's rows without the
// key columns its inputs gained (n itself when they gained none): the
// left input's first lw and the right input's first rw columns.
func withoutKeyCols(n *Node, lw, rw int) *Node {
	lw2 := n.Inputs[0].Schema.Len()
	if n.Schema.Len() == lw+rw {
		return n
	}
	cols := make([]int, 0, lw+rw)
	for i := range lw {
		cols = append(cols, i)
	}
	for i := range rw {
		cols = append(cols, lw2+i)
	}
	return pickNode(n, cols)
}
