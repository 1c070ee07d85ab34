package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// scopeCol is one column of a scope of several tables (a join): the
// qualifiers that name its table, its name as written in the table, and
// its index in the joined row (whose field is named uniquely: a second
// `id` becomes `id0`, as Flink names it).
type scopeCol struct {
	quals []string
	name  string
	idx   int
	// inner marks a column of an EXISTS subquery's table: an unqualified
	// name it shares with the outer table means it, as SQL scopes names.
	inner bool
	// hidden marks the column of an IN subquery: only its qualifier
	// names it, so an unqualified name means the outer table's column.
	hidden bool
	// raw marks an input's column behind a USING or NATURAL join's
	// columns (join_using.go): only t.col and t.* name it.
	raw bool
	// common marks a USING join's merged column.
	common bool
}

// tableCols returns the columns of s as scopeCols, offset by off.
func (s *scope) tableCols(off int) []scopeCol {
	if s.cols != nil {
		out := make([]scopeCol, len(s.cols))
		for i, c := range s.cols {
			c.idx += off
			out[i] = c
		}
		return out
	}
	quals := append([]string{s.name, s.table}, s.also...)
	out := make([]scopeCol, s.node.Schema.Len())
	for i, f := range s.node.Schema.Fields {
		out[i] = scopeCol{quals: quals, name: f.Name, idx: off + i}
	}
	return out
}

// resolve finds the column c names in a join scope: its index, or -1
// with an error when the name is ambiguous or its table unknown; -1 and
// no error when c is not a column of the scope (a ROW field access).
func (s *scope) resolve(c *sql.ColumnRef) (int, error) {
	found := -1
	var tables []string
	innerOnly := false
	if c.Table.IsZero() {
		for _, col := range s.cols {
			if col.inner && strings.EqualFold(col.name, c.Column.Name) {
				innerOnly = true
			}
		}
	}
	for _, col := range s.cols {
		if !strings.EqualFold(col.name, c.Column.Name) || innerOnly && !col.inner || col.hidden && c.Table.IsZero() {
			continue
		}
		if !c.Table.IsZero() && !slices.ContainsFunc(col.quals, func(q string) bool { return strings.EqualFold(q, c.Table.Name) }) {
			continue
		}
		if found >= 0 && found != col.idx {
			tables = append(tables, col.quals[0])
			return -1, errAt(c.Column.At, "column %q is ambiguous: it is in %s; qualify it (t.%s)", c.Column.Name, strings.Join(tables, " and "), c.Column.Name)
		}
		found = col.idx
		tables = append(tables, col.quals[0])
	}
	if found < 0 && !c.Table.IsZero() && !s.knows(c.Table.Name) && s.node.Schema.Index(c.Table.Name) < 0 {
		return -1, errAt(c.Table.At, "unknown table %q: this query reads %s", c.Table.Name, s.reads())
	}
	return found, nil
}

// knowsCol reports whether qualifier names one of a join scope's tables.
func (s *scope) knowsJoined(qualifier string) bool {
	for _, c := range s.cols {
		if slices.ContainsFunc(c.quals, func(q string) bool { return strings.EqualFold(q, qualifier) }) {
			return true
		}
	}
	return false
}

// unqualifyJoined rewrites the column names of e into the joined row's
// field names.
func (s *scope) unqualifyJoined(e sql.Expr) (sql.Expr, error) {
	var bad error
	out := rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
		c, ok := x.(*sql.ColumnRef)
		if !ok {
			return nil, false
		}
		i, err := s.resolve(c)
		if err != nil {
			if bad == nil {
				bad = err
			}
			return x, true
		}
		if i < 0 {
			return x, true
		}
		return &sql.ColumnRef{Column: sql.Ident{At: c.Column.At, Name: s.node.Schema.Fields[i].Name, Quoted: true}}, true
	})
	return out, bad
}

var joinKinds = map[sql.JoinType]joinop.JoinKind{
	sql.InnerJoin: joinop.InnerJoin, sql.CommaJoin: joinop.InnerJoin,
	sql.LeftJoin: joinop.LeftJoin, sql.RightJoin: joinop.RightJoin, sql.FullJoin: joinop.FullJoin,
}

// joinScope plans `left JOIN right ON cond`.
func (q *queryBuilder) joinScope(j *sql.Join) (*scope, error) {
	if _, asOf := temporalTable(j); asOf != nil && (j.Natural || j.Using != nil) {
		return nil, errAt(j.At, "a temporal or lookup join (FOR SYSTEM_TIME AS OF) takes ON, not USING or NATURAL")
	}
	if s, ok, err := q.lookupJoin(j); ok {
		return s, err
	}
	ls, err := q.from(j.Left)
	if err != nil {
		return nil, err
	}
	rightItem, asOf := temporalTable(j)
	rs, err := q.from(rightItem)
	if err != nil {
		return nil, err
	}
	// A window TVF joined directly is read as a table, as in a subquery
	// (FROM (SELECT * FROM TABLE(TUMBLE(...))) L): its rows and window
	// columns, for a window join.
	if ls.window != nil {
		if ls, err = q.windowTable(ls); err != nil {
			return nil, err
		}
	}
	if rs.window != nil {
		if rs, err = q.windowTable(rs); err != nil {
			return nil, err
		}
	}
	kind := joinKinds[j.Type]
	left, right := ls.node, rs.node
	lw := left.Schema.Len()
	cols := append(ls.tableCols(0), rs.tableCols(lw)...)
	fields := make([]row.Field, 0, lw+right.Schema.Len())
	used := map[string]bool{}
	for i, f := range append(slices.Clone(left.Schema.Fields), right.Schema.Fields...) {
		name := f.Name
		for n := 0; used[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s%d", f.Name, n)
		}
		used[strings.ToLower(name)] = true
		if i < lw && (kind == joinop.RightJoin || kind == joinop.FullJoin) ||
			i >= lw && (kind == joinop.LeftJoin || kind == joinop.FullJoin) {
			f.Type = f.Type.Nullable()
		}
		fields = append(fields, row.Field{Name: name, Type: f.Type})
	}
	n := &Node{Kind: JoinNode, Inputs: []*Node{left, right}, Schema: row.NewSchema(fields...), TimeAttr: -1,
		Bounded: left.Bounded && right.Bounded}
	s := &scope{node: n, name: ls.name + ", " + rs.name, table: "join", cols: cols}
	var common []string
	var li, ri []int
	natural := j.Natural
	if natural || j.Using != nil {
		if common, li, ri, err = usingCommon(j, cols, lw); err != nil {
			return nil, err
		}
		var on sql.Expr
		on, s.cols = usingOn(j.At, common, li, ri, cols)
		if on == nil {
			on = &sql.Literal{At: j.At, Kind: sql.LitBool, Text: "TRUE"}
		}
		j = &sql.Join{At: j.At, Type: j.Type, Left: j.Left, Right: j.Right, On: on}
	}
	if asOf != nil {
		if err := q.temporalJoin(n, s, j, asOf); err != nil {
			return nil, err
		}
		s.node = withoutKeyCols(n, lw, right.Schema.Len())
		return s, nil
	}
	if j.On == nil {
		// A comma join inside a chain of them (FROM a, b, c WHERE ...):
		// the conjuncts of the WHERE that name only a and b join them.
		var mine []sql.Expr
		for _, c := range conjuncts(q.commaWhere) {
			if s.resolvesAll(c) {
				mine = append(mine, c)
			}
		}
		j = &sql.Join{At: j.At, Type: j.Type, Left: j.Left, Right: j.Right, On: andAll(mine)}
	}
	if inner, ok := j.Left.(*sql.Join); ok && j.Type == sql.CommaJoin && inner.Type == sql.CommaJoin && inner.On == nil && j.On != nil {
		// The conjuncts the inner comma join took are not tested again.
		var rest []sql.Expr
		for _, c := range conjuncts(j.On) {
			if !ls.resolvesAll(c) {
				rest = append(rest, c)
			}
		}
		j = &sql.Join{At: j.At, Type: j.Type, Left: j.Left, Right: j.Right, On: andAll(rest)}
	}
	if err := q.joinCondition(n, s, j.On, kind); err != nil {
		return nil, err
	}
	s.node = withoutKeyCols(n, lw, right.Schema.Len())
	if common != nil || li != nil {
		return usingScope(q.zone(), s, natural, common, li, ri, cols, lw)
	}
	return s, nil
}

// joinCondition splits cond into the join keys (equalities of an
// expression of each side) and the rest (the residual), and completes
// n. A join without a key (a cross join, an OR of conditions, only
// inequalities) keeps all rows of a side in one group, as Flink runs a
// join with empty keys on a single instance.
func (q *queryBuilder) joinCondition(n *Node, s *scope, cond sql.Expr, kind joinop.JoinKind) error {
	js, keys, residual, err := q.equiKeys(n, s, cond, kind)
	if err != nil {
		return err
	}
	// An interval or window join takes the keys of a column of each
	// side of one type; other equalities are tested on each pair.
	wjs := *js
	wtexts, rest := plainKeys(n, &wjs, keys)
	wres := append(slices.Clone(residual), rest...)
	if cond != nil {
		if ok, err := q.windowJoin(n, &wjs, wres, wtexts, windowKeyPos(cond)); ok || err != nil {
			return err
		}
		if ok, err := q.intervalJoin(n, &wjs, wres, wtexts); ok || err != nil {
			return err
		}
	}
	keyTexts, err := q.keyCols(n, js, keys)
	if err != nil {
		return err
	}
	left, right := n.Inputs[0], n.Inputs[1]
	lw := left.Schema.Len()
	where := strings.Join(keyTexts, ", ")
	var residualReads []int
	var res sql.Expr
	if len(residual) > 0 {
		res = andAll(residual)
		c, err := compileExpr(q.zone(), res, n.Schema, "join")
		if err != nil {
			return err
		}
		if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
			return errAt(res.Pos(), "a join condition must be BOOLEAN, this one is %s", c.Type)
		}
		js.Residual = c.True
		residualReads = c.Reads
		if where != "" {
			where += ", "
		}
		where += sql.Format(res)
	}
	if where == "" {
		where = "true"
	}
	if left.Mode.HasKey {
		js.LeftUnique = left.Mode.Key
	}
	if right.Mode.HasKey {
		js.RightUnique = right.Mode.Key
	}
	js.LeftAppendOnly, js.RightAppendOnly = !left.Mode.Updating, !right.Mode.Updating
	js.LeftTypes, js.RightTypes = typeIDs(left.Schema), typeIDs(right.Schema)
	// A batch join is a hash join: its union reads the right input to
	// its end before the left one (buildInput), as Flink's batch mode
	// builds from the right input by default.
	js.RightFirst = js.Batch
	names := n.Schema.Names()
	n.op = &joinOp{join: js, residualReads: residualReads, residualSrc: res}
	n.Mode = joinMode(kind, left.Mode, right.Mode, js.LeftKeys, js.RightKeys, lw, q.b.plan.Batch)
	n.Label = fmt.Sprintf("Join(joinType=[%s], where=[%s], select=[%s], leftInputSpec=[%s], rightInputSpec=[%s])",
		kind, where, strings.Join(names, ", "), inputSpec(left.Mode, js.LeftKeys), inputSpec(right.Mode, js.RightKeys))
	return nil
}

// typeIDs is the type of each of s's columns.
func typeIDs(s row.Schema) []row.TypeID {
	ids := make([]row.TypeID, s.Len())
	for i, f := range s.Fields {
		ids[i] = f.Type.ID
	}
	return ids
}

// equiKeys splits cond into the join keys and the other conjuncts (the
// residual), for every kind of join of two inputs.
func (q *queryBuilder) equiKeys(n *Node, s *scope, cond sql.Expr, kind joinop.JoinKind) (*joinop.JoinSpec, []joinKey, []sql.Expr, error) {
	left, right := n.Inputs[0], n.Inputs[1]
	lw := left.Schema.Len()
	js := &joinop.JoinSpec{Kind: kind, LeftWidth: lw, RightWidth: right.Schema.Len(), Batch: q.b.plan.Batch}
	if cond == nil {
		return js, nil, nil, nil
	}
	on, err := s.unqualifyJoined(cond)
	if err != nil {
		return nil, nil, nil, err
	}
	var residual []sql.Expr
	var keys []joinKey
	for _, c := range conjuncts(on) {
		if k, ok := splitKey(c, n.Schema, lw); ok {
			keys = append(keys, k)
			continue
		}
		residual = append(residual, c)
	}
	return js, keys, residual, nil
}

// plainKeys puts the keys that are a column of each side of one type
// into js, and returns their explain texts and the other keys as
// conditions.
func plainKeys(n *Node, js *joinop.JoinSpec, keys []joinKey) (texts []string, rest []sql.Expr) {
	lw := n.Inputs[0].Schema.Len()
	for _, k := range keys {
		l, lok := k.l.(*sql.ColumnRef)
		r, rok := k.r.(*sql.ColumnRef)
		if lok && rok && !k.nullSafe {
			li, ri := n.Schema.Index(l.Column.Name), n.Schema.Index(r.Column.Name)
			if sameRepresentation(n.Schema.Fields[li].Type, n.Schema.Fields[ri].Type) {
				js.LeftKeys = append(js.LeftKeys, li)
				js.RightKeys = append(js.RightKeys, ri-lw)
				texts = append(texts, fmt.Sprintf("=(%s, %s)", n.Schema.Fields[li].Name, n.Schema.Fields[ri].Name))
				continue
			}
		}
		rest = append(rest, k.cond)
	}
	return texts, rest
}

// inputSpec is Flink's JoinInputSideSpec as explain shows it.
func inputSpec(m Changelog, keys []int) string {
	switch {
	case uniqueOn(m, keys):
		return "JoinKeyContainsUniqueKey"
	case m.HasKey:
		return "HasUniqueKey"
	}
	return "NoUniqueKey"
}

// joinMode: an inner join of insert-only inputs is insert-only; an outer
// join, or a join of an updating input, is updating (outer joins retract
// the NULL-padded row when a match arrives; batch joins emit final rows).
// The upsert keys follow Flink's FlinkRelMdUniqueKeys.getJoinUniqueKeys,
// a set: when the right input is unique on its join keys (its key lies
// inside them), the left key is a key of the join unless the join pads
// the left side with NULLs, and the reverse; when both inputs have a key,
// the two together are one too. Key is the first, Alt the others.
func joinMode(kind joinop.JoinKind, l, r Changelog, lkeys, rkeys []int, lw int, batch bool) Changelog {
	out := Changelog{Updating: !batch && (l.Updating || r.Updating || kind != joinop.InnerJoin)}
	if kind == joinop.SemiJoin || kind == joinop.AntiJoin {
		out.Updating = !batch && (l.Updating || r.Updating || kind == joinop.AntiJoin)
		out.Key, out.HasKey = l.Key, l.HasKey
		return out
	}
	nullsLeft := kind == joinop.RightJoin || kind == joinop.FullJoin
	nullsRight := kind == joinop.LeftJoin || kind == joinop.FullJoin
	shifted := func(k []int) []int {
		out := make([]int, len(k))
		for i, x := range k {
			out[i] = x + lw
		}
		return out
	}
	// Every key of the set, the preferred first: a side's own keys when
	// the other side is unique on its join keys, then both together.
	var keys [][]int
	add := func(k []int) {
		for _, have := range keys {
			if len(have) == len(k) && containsAll(have, k) {
				return
			}
		}
		keys = append(keys, k)
	}
	if uniqueOn(r, rkeys) && !nullsLeft {
		for _, k := range l.keys() {
			add(k)
		}
	}
	if uniqueOn(l, lkeys) && !nullsRight {
		for _, k := range r.keys() {
			add(shifted(k))
		}
	}
	for _, lk := range l.keys() {
		for _, rk := range r.keys() {
			add(append(slices.Clone(lk), shifted(rk)...))
		}
	}
	if len(keys) > 0 {
		out.Key, out.HasKey, out.Alt = keys[0], true, keys[1:]
	}
	return out
}

// uniqueOn reports whether one of c's upsert keys lies inside cols: the
// input has at most one row per value of cols.
func uniqueOn(c Changelog, cols []int) bool {
	for _, k := range c.keys() {
		if containsAll(cols, k) {
			return true
		}
	}
	return false
}

// resolvesAll reports whether every column e names is a column of s.
func (s *scope) resolvesAll(e sql.Expr) bool {
	ok := true
	walk(e, func(x sql.Expr) bool {
		if c, isCol := x.(*sql.ColumnRef); isCol {
			if i, err := s.resolve(c); err != nil || i < 0 {
				ok = false
			}
		}
		return ok
	})
	return ok
}
