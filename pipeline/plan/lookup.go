package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// lookupPlan is a lookup join's plan (LookupJoinNode): the table looked
// up, its key columns and the operator's spec without its client. The
// operator asks the table's connector for the client, so that a
// connector put in place of the planned one (etld test's in-memory
// tables) is the one looked up, as a scan reads the Source's Conn of the
// moment.
type lookupPlan struct {
	table *Source
	keys  []int
	spec  joinop.LookupJoinSpec
}

// lookupJoin plans `left [LEFT] JOIN t FOR SYSTEM_TIME AS OF x AS c ON
// ...` as a lookup join (Flink's LookupJoin) when x is a processing-time
// attribute of left (procTimeCol: a PROCTIME() column passed on unchanged); ok is
// false when it is not, and the join is another engineer's kind (an
// event-time temporal join) or an error of joinScope's.
func (q *queryBuilder) lookupJoin(j *sql.Join) (s *scope, ok bool, err error) {
	ref, isRef := j.Right.(*sql.TableRef)
	if !isRef || ref.AsOf == nil || q.env.find(ref.Name.Name) != nil {
		return nil, false, nil
	}
	at, isCol := ref.AsOf.(*sql.ColumnRef)
	if !isCol {
		return nil, false, nil
	}
	ls, err := q.from(j.Left)
	if err != nil {
		return nil, true, err
	}
	if ls.window != nil {
		return nil, false, nil
	}
	probe := -1
	for _, c := range ls.tableCols(0) {
		if strings.EqualFold(c.name, at.Column.Name) && (at.Table.IsZero() || slices.ContainsFunc(c.quals, func(q string) bool { return strings.EqualFold(q, at.Table.Name) })) {
			probe = c.idx
		}
	}
	if probe < 0 || !lookupTimeCol(ls.node, probe) {
		return nil, false, nil
	}
	tab, src, lsrc, kind, err := q.lookupTable(j, ref, at)
	if err != nil {
		return nil, true, err
	}
	root := tab.Root
	name := tab.Name
	if !ref.Alias.IsZero() {
		name = ref.Alias.Name
	}
	rs := &scope{node: root, name: name, table: tab.Name}
	left := ls.node
	lw := left.Schema.Len()
	cols := append(ls.tableCols(0), rs.tableCols(lw)...)
	fields := make([]row.Field, 0, lw+root.Schema.Len())
	used := map[string]bool{}
	for i, f := range append(slices.Clone(left.Schema.Fields), root.Schema.Fields...) {
		n := f.Name
		for k := 0; used[strings.ToLower(n)]; k++ {
			n = fmt.Sprintf("%s%d", f.Name, k)
		}
		used[strings.ToLower(n)] = true
		if i >= lw && kind == joinop.LeftJoin {
			f.Type = f.Type.Nullable()
		}
		fields = append(fields, row.Field{Name: n, Type: f.Type})
	}
	node := &Node{Kind: LookupJoinNode, Input: left, Schema: row.NewSchema(fields...), TimeAttr: left.TimeAttr, Bounded: left.Bounded,
		Mode: Changelog{Updating: left.Mode.Updating, Key: left.Mode.Key, HasKey: left.Mode.HasKey}}
	s = &scope{node: node, name: ls.name + ", " + rs.name, table: "join", cols: cols}
	if j.On == nil {
		return nil, true, errAt(j.At, "a lookup join needs ON with an equality of a column of each side")
	}
	on, err := s.unqualifyJoined(j.On)
	if err != nil {
		return nil, true, err
	}
	spec := joinop.LookupJoinSpec{Kind: kind, RightWidth: root.Schema.Len()}
	rightKeys, keyTexts, residual, computed, err := lookupKeys(on, node, root, &spec)
	if err != nil {
		return nil, true, err
	}
	if len(computed) > 0 {
		rightKeys, keyTexts, err = probeKeyCols(q.zone(), node, root, &spec, computed, rightKeys, keyTexts)
		if err != nil {
			return nil, true, err
		}
		s.node = pickNode(node, append(seq(0, lw), seq(node.Input.Schema.Len(), node.Input.Schema.Len()+root.Schema.Len())...))
	}
	if len(rightKeys) == 0 {
		return nil, true, errAt(j.On.Pos(), "a lookup join needs an equality of a column of %s and a column or expression of the probe side (ON o.k = %s.id): Flink refuses a lookup without a key too", name, name)
	}
	label := fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s]", tab.Name, kind, strings.Join(keyTexts, ", "))
	if len(residual) > 0 {
		res := andAll(residual)
		c, err := compileExpr(q.zone(), res, node.Schema, "join")
		if err != nil {
			return nil, true, err
		}
		if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
			return nil, true, errAt(res.Pos(), "a join condition must be BOOLEAN, this one is %s", c.Type)
		}
		spec.Residual = c.True
		label += fmt.Sprintf(", where=[%s]", sql.Format(res))
	}
	// Asked here for its errors (a table given as a query); the
	// operator asks again.
	if _, err := lsrc.Lookuper(rightKeys); err != nil {
		return nil, true, errAt(ref.Name.At, "the lookup table %q: %v", ref.Name.Name, err)
	}
	spec.Options = lsrc.LookupOptions()
	label += fmt.Sprintf(", select=[%s], cache=[%s], batch=[%d])", strings.Join(node.Schema.Names(), ", "), cacheText(spec.Options), spec.Options.MaxBatch)
	node.Label = label
	node.op = &lookupOp{&lookupPlan{table: src, keys: rightKeys, spec: spec}}
	src.lookedUp = true
	return s, true, nil
}

// lookupTable finds the table a lookup join looks rows up in, and
// refuses one that cannot be looked up, and a join other than INNER and
// LEFT.
func (q *queryBuilder) lookupTable(j *sql.Join, ref *sql.TableRef, at *sql.ColumnRef) (*Table, *Source, connector.LookupSource, joinop.JoinKind, error) {
	tab, err := q.b.table(ref.Name.Name, ref.Name.At)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	root := tab.Root
	if root.Kind != ScanNode || root.scanned() == nil || root.scanned().Conn == nil {
		return nil, nil, nil, 0, errAt(ref.Name.At, "%s FOR SYSTEM_TIME AS OF %s (processing time) is a lookup join, which looks rows up in a source table by key; %q is a transform: look up a mysql (or jdbc) source", ref.Name.Name, at.Column.Name, ref.Name.Name)
	}
	src := root.scanned()
	lsrc, isLookup := src.Conn.(connector.LookupSource)
	if !isLookup {
		return nil, nil, nil, 0, errAt(ref.Name.At, "%s FOR SYSTEM_TIME AS OF %s (processing time) is a lookup join, and a %s source cannot be looked up by key: look up a mysql (or jdbc) source, or a bounded file", ref.Name.Name, at.Column.Name, src.Spec.Type)
	}
	if src.computed != nil || src.watermark != nil {
		return nil, nil, nil, 0, errAt(ref.Name.At, "the lookup table %q declares computed columns or a watermark, which a lookup does not evaluate: compute them after the join", ref.Name.Name)
	}
	var kind joinop.JoinKind
	switch j.Type {
	case sql.InnerJoin:
		kind = joinop.InnerJoin
	case sql.LeftJoin:
		kind = joinop.LeftJoin
	default:
		return nil, nil, nil, 0, errAt(j.At, "a lookup join is INNER or LEFT, as in Flink; %s is not supported", j.Type)
	}
	return tab, src, lsrc, kind, nil
}

// lookupKeys splits a lookup join's ON into the equalities of a probe
// column and a looked-up column (the lookup keys, set in spec), those of
// an expression of the probe side and a looked-up column (computed), and
// the rest (the residual condition).
func lookupKeys(on sql.Expr, node, root *Node, spec *joinop.LookupJoinSpec) (rightKeys []int, keyTexts []string, residual []sql.Expr, computed []joinKey, err error) {
	lw := node.Schema.Len() - root.Schema.Len()
	for _, c := range conjuncts(on) {
		if k, ok := splitKey(c, node.Schema, lw); ok && !k.nullSafe {
			_, lcol := k.l.(*sql.ColumnRef)
			r, rcol := k.r.(*sql.ColumnRef)
			if !lcol && rcol && !slices.Contains(rightKeys, node.Schema.Index(r.Column.Name)-lw) {
				computed = append(computed, k)
				continue
			}
		}
		if b, isBin := c.(*sql.Binary); isBin && b.Op == sql.OpEq {
			l, lok := b.L.(*sql.ColumnRef)
			r, rok := b.R.(*sql.ColumnRef)
			if lok && rok {
				li, ri := node.Schema.Index(l.Column.Name), node.Schema.Index(r.Column.Name)
				if li >= lw {
					li, ri = ri, li
				}
				if li >= 0 && li < lw && ri >= lw && !slices.Contains(rightKeys, ri-lw) {
					lt, rt := node.Schema.Fields[li].Type, node.Schema.Fields[ri].Type
					if !sameRepresentation(lt, rt) {
						if k, ok := splitKey(c, node.Schema, lw); ok && intWidens(lt, rt) {
							// A narrower integer probe column is cast to
							// the looked-up column's type, as Flink's
							// coercion casts it below the lookup join.
							computed = append(computed, k)
							continue
						}
						return nil, nil, nil, nil, errAt(b.OpAt, "the lookup key %s = %s compares %s with %s: CAST the probe side's column to %s", node.Schema.Fields[li].Name, node.Schema.Fields[ri].Name, lt, rt, rt)
					}
					spec.LeftKeys = append(spec.LeftKeys, li)
					rightKeys = append(rightKeys, ri-lw)
					keyTexts = append(keyTexts, fmt.Sprintf("%s=%s", root.Schema.Fields[ri-lw].Name, node.Schema.Fields[li].Name))
					continue
				}
			}
		}
		residual = append(residual, c)
	}
	return rightKeys, keyTexts, residual, computed, nil
}

// probeKeyCols computes the probe side's expressions of lookup keys
// (`ON CAST(o.cust AS STRING) = r.country`) into columns a Calc appends
// to the probe input, as Flink's lookup join computes them below it; the
// expression must have the looked-up column's type. It widens node's
// schema by those columns, after the probe's, and adds the keys to spec.
func probeKeyCols(zone *time.Location, node, root *Node, spec *joinop.LookupJoinSpec, keys []joinKey, rightKeys []int, keyTexts []string) ([]int, []string, error) {
	left := node.Input
	lw := left.Schema.Len()
	side := &keySide{in: left, zone: zone}
	for _, k := range keys {
		c, err := compileExpr(zone, k.l, left.Schema, "join")
		if err != nil {
			return nil, nil, err
		}
		ri := node.Schema.Index(k.r.(*sql.ColumnRef).Column.Name) - lw
		rt := root.Schema.Fields[ri].Type
		if !sameRepresentation(c.Type, rt) && !intWidens(c.Type, rt) {
			return nil, nil, errAt(k.at, "the lookup key %s = %s compares %s with %s: CAST the probe side's expression to %s", sql.Format(k.l), root.Schema.Fields[ri].Name, c.Type, rt, rt)
		}
		li, err := side.column(k.l, c, rt)
		if err != nil {
			return nil, nil, err
		}
		spec.LeftKeys = append(spec.LeftKeys, li)
		rightKeys = append(rightKeys, ri)
	}
	node.Input = side.node()
	fields := append([]row.Field{}, node.Schema.Fields[:lw]...)
	taken := map[string]bool{}
	for _, f := range node.Schema.Fields {
		taken[strings.ToLower(f.Name)] = true
	}
	for _, f := range node.Input.Schema.Fields[lw:] {
		f.Name = freshName(f.Name, taken)
		fields = append(fields, f)
	}
	fields = append(fields, node.Schema.Fields[lw:]...)
	node.Schema = row.NewSchema(fields...)
	for i := len(keyTexts); i < len(rightKeys); i++ {
		keyTexts = append(keyTexts, fmt.Sprintf("%s=%s", root.Schema.Fields[rightKeys[i]].Name, fields[spec.LeftKeys[i]].Name))
	}
	return rightKeys, keyTexts, nil
}

// seq is from, from+1, ..., to-1.
func seq(from, to int) []int {
	out := make([]int, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// cacheText is the cache as explain shows it, in Flink's option words.
func cacheText(o connector.LookupOptions) string {
	if !o.Cache {
		return "NONE"
	}
	parts := []string{"PARTIAL", fmt.Sprintf("max-rows=%d", o.MaxRows)}
	if o.ExpireAfterWrite > 0 {
		parts = append(parts, "expire-after-write="+connector.FlinkDuration(o.ExpireAfterWrite))
	}
	if o.ExpireAfterAccess > 0 {
		parts = append(parts, "expire-after-access="+connector.FlinkDuration(o.ExpireAfterAccess))
	}
	parts = append(parts, fmt.Sprintf("cache-missing-key=%t", o.CacheMissingKey))
	return strings.Join(parts, ", ")
}

// lookupTimeCol reports whether column c of n is a processing-time
// attribute: procTimeCol's rule, seen through the lookup joins before n
// (whose left columns come first, under their names).
func lookupTimeCol(n *Node, c int) bool {
	for {
		switch {
		case n.Kind == LookupJoinNode && c < n.Input.Schema.Len():
			n = n.Input
		case n.Kind == CalcNode && n.Input != nil && n.Input.Kind == LookupJoinNode:
			// The Calc that drops a lookup's computed key columns keeps
			// the names of the columns it keeps.
			c = n.Input.Schema.Index(n.Schema.Fields[c].Name)
			n = n.Input
			if c < 0 {
				return false
			}
		default:
			return procTimeCol(n, c)
		}
	}
}

// scannedSources returns the sources some sink reads by a scan: a source
// that only lookup joins read is looked up, never scanned.
func (p *Plan) scannedSources() map[*Source]bool {
	out := map[*Source]bool{}
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		if n.Kind == ScanNode {
			out[n.scanned()] = true
		}
		for _, in := range n.inputs() {
			walk(in)
		}
	}
	for _, s := range p.Sinks {
		walk(s.Input.Root)
	}
	return out
}

// intWidens reports whether integer type a converts to the wider
// integer type b without loss (TINYINT to SMALLINT, INT to BIGINT).
func intWidens(a, b row.Type) bool {
	return a.IntBits() > 0 && a.IntBits() < b.IntBits()
}
