package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// JOIN ... USING (a, b) and NATURAL JOIN, as Calcite derives them
// (SqlValidatorImpl's Permute and expandCommonColumn): the join is the
// one ON left.a = right.a AND left.b = right.b, and above it a Calc
// gives the columns in Calcite's order: each common column once, first
// (COALESCE(left.a, right.a), whatever the join kind: the value of the
// side that has a row), then the left input's other columns, then the
// right's. An unqualified name means those columns. The inputs' columns
// as they came out of the join stay behind them, reachable only by a
// qualifier (t1.a, t1.*), as Calcite keeps qualified names of a common
// column meaning that table's own.

// Qualifiers the ON of a USING join names its two sides' common columns
// by; they are never a table's name ($ cannot start an unquoted one).
const (
	usingLeft  = "$usingL"
	usingRight = "$usingR"
)

// usingCommon returns the common columns of a USING or NATURAL join:
// for each, its name and its index among cols (the left input's,
// then the right input's, lw of them left).
func usingCommon(j *sql.Join, cols []scopeCol, lw int) (names []string, li, ri []int, err error) {
	find := func(name string, from, to int) (int, int) {
		at, n := -1, 0
		for i := from; i < to; i++ {
			if !cols[i].hidden && strings.EqualFold(cols[i].name, name) {
				if at < 0 {
					at = i
				}
				n++
			}
		}
		return at, n
	}
	if j.Natural {
		for i := range lw {
			if cols[i].hidden || slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, cols[i].name) }) {
				continue
			}
			if r, _ := find(cols[i].name, lw, len(cols)); r >= 0 {
				names = append(names, cols[i].name)
			}
		}
		for _, name := range names {
			l, nl := find(name, 0, lw)
			r, nr := find(name, lw, len(cols))
			if nl > 1 || nr > 1 {
				return nil, nil, nil, errAt(j.At, "column %q of the NATURAL join is in one of its inputs more than once", name)
			}
			li, ri = append(li, l), append(ri, r)
		}
		return names, li, ri, nil
	}
	for _, id := range j.Using {
		l, nl := find(id.Name, 0, lw)
		r, nr := find(id.Name, lw, len(cols))
		switch {
		case nl == 0 || nr == 0:
			side := "left"
			if nl > 0 {
				side = "right"
			}
			return nil, nil, nil, errAt(id.At, "column %q of USING is not a column of the join's %s input", id.Name, side)
		case nl > 1 || nr > 1:
			return nil, nil, nil, errAt(id.At, "column %q of USING is ambiguous: an input has it more than once", id.Name)
		}
		names, li, ri = append(names, cols[l].name), append(li, l), append(ri, r)
	}
	return names, li, ri, nil
}

// usingOn is the ON of a USING or NATURAL join, and cols with the
// qualifiers it names the common columns by added (a copy).
func usingOn(at sql.Pos, names []string, li, ri []int, cols []scopeCol) (sql.Expr, []scopeCol) {
	out := slices.Clone(cols)
	var eqs []sql.Expr
	for k, name := range names {
		out[li[k]].quals = append(slices.Clone(out[li[k]].quals), usingLeft)
		out[ri[k]].quals = append(slices.Clone(out[ri[k]].quals), usingRight)
		col := func(q string) sql.Expr {
			return &sql.ColumnRef{Table: sql.Ident{At: at, Name: q, Quoted: true}, Column: sql.Ident{At: at, Name: name, Quoted: true}}
		}
		eqs = append(eqs, &sql.Binary{Op: sql.OpEq, OpAt: at, L: col(usingLeft), R: col(usingRight)})
	}
	return andAll(eqs), out
}

// usingScope puts the Calc of Calcite's columns over the join n (whose
// columns are cols, lw of them the left input's) and returns its scope.
func usingScope(zone *time.Location, s *scope, natural bool, names []string, li, ri []int, cols []scopeCol, lw int) (*scope, error) {
	n := s.node
	common := map[int]bool{}
	for k := range names {
		common[li[k]], common[ri[k]] = true, true
	}
	var (
		fields  []row.Field
		project []*expr.Compiled
		texts   []string
		src     []int
		out     []scopeCol
	)
	used := map[string]bool{}
	unique := func(name string) string {
		u := name
		for k := 0; used[strings.ToLower(u)]; k++ {
			u = fmt.Sprintf("%s%d", name, k)
		}
		used[strings.ToLower(u)] = true
		return u
	}
	add := func(name string, c *expr.Compiled, text string, from int, col scopeCol) {
		col.idx = len(fields)
		fields = append(fields, row.Field{Name: name, Type: c.Type})
		project, texts, src = append(project, c), append(texts, text), append(src, from)
		out = append(out, col)
	}
	for k, name := range names {
		lf, rf := n.Schema.Fields[cols[li[k]].idx].Name, n.Schema.Fields[cols[ri[k]].idx].Name
		ref := func(f string) sql.Expr { return &sql.ColumnRef{Column: sql.Ident{Name: f, Quoted: true}} }
		c, err := compileExpr(zone, &sql.Call{Name: "COALESCE", Args: []sql.Expr{ref(lf), ref(rf)}}, n.Schema, s.table)
		if err != nil {
			return nil, err
		}
		// A NATURAL join's common column is named by * alone: Calcite
		// finds an unqualified name of it in both tables, ambiguous.
		add(unique(name), c, fmt.Sprintf("COALESCE(%s, %s) AS %s", lf, rf, name), -1, scopeCol{quals: []string{""}, name: name, hidden: natural, common: true})
	}
	// The inputs' other columns, unqualified: a qualified name means the
	// input's own column below.
	for i, c := range cols {
		if common[i] || c.hidden {
			continue
		}
		f := n.Schema.Fields[c.idx]
		add(unique(c.name), pickedColumn(c.idx, f.Type), f.Name, c.idx, scopeCol{quals: []string{""}, name: c.name})
	}
	for i, c := range cols {
		f := n.Schema.Fields[c.idx]
		c.hidden, c.raw = !natural || !common[i], true
		if i < lw && !slices.ContainsFunc(c.quals, func(q string) bool { return q != "" }) {
			// A column of a USING join's output on the left: it has no
			// table to qualify it by (Calcite's are those of the join's
			// tables, kept below).
			c.quals = []string{""}
		}
		add(unique("$"+f.Name), pickedColumn(c.idx, f.Type), f.Name, c.idx, c)
	}
	colMap := make([]int, n.Schema.Len())
	for i := range colMap {
		colMap[i] = -1
	}
	timeAttr := -1
	for k, from := range src {
		if from >= 0 && colMap[from] < 0 {
			colMap[from] = k
			if from == n.TimeAttr {
				timeAttr = k
			}
		}
	}
	calc := &Node{Kind: CalcNode, Input: n, Schema: row.NewSchema(fields...), Mode: calcMode(n.Mode, colMap),
		TimeAttr: timeAttr, Bounded: n.Bounded, op: &calcOp{project: project, colSrc: src}}
	calc.Label = fmt.Sprintf("Calc(select=[%s])", strings.Join(texts, ", "))
	return &scope{node: calc, name: s.name, table: s.table, cols: out}, nil
}

// usingWhere refuses an unqualified name of a USING join's common column
// in the WHERE, as Calcite does: it merges the two columns in the select
// list and GROUP BY only, and finds the name in both tables there
// ("Column 'a' is ambiguous").
func (s *scope) usingWhere(where sql.Expr) error {
	var bad error
	walk(where, func(x sql.Expr) bool {
		c, ok := x.(*sql.ColumnRef)
		if !ok || !c.Table.IsZero() || bad != nil {
			return bad == nil
		}
		for _, col := range s.cols {
			if col.common && strings.EqualFold(col.name, c.Column.Name) {
				bad = errAt(c.Column.At, "column %q is ambiguous in WHERE: both inputs of the USING join have it (Calcite merges the two in the select list and GROUP BY only); qualify it (t.%s)", c.Column.Name, c.Column.Name)
			}
		}
		return true
	})
	return bad
}
