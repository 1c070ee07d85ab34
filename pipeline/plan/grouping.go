package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/sql"
)

// GROUPING SETS, ROLLUP and CUBE are planned as Flink plans them: an
// Expand emits each row once per grouping set, the keys the set leaves
// out NULL, with the set's id in a last column $e; one group aggregate
// is keyed by the keys and $e. GROUPING(k) and GROUPING_ID(k1, ...)
// read their bits from $e: bit n-1-i is set when the set leaves out key
// i of the n keys, so GROUPING(k) is 1 where k is aggregated away.

// groupingPlan is the grouping sets of one GROUP BY over its keys.
type groupingPlan struct {
	sets [][]bool // per set: whether it keeps each key
	ids  []int64
}

const expandIDName = "$e"

// groupingSets expands the GROUPING SETS, ROLLUP and CUBE of sel's GROUP
// BY into grouping sets over its distinct key expressions, and rewrites
// GROUPING and GROUPING_ID calls. It returns sel with the keys as its
// GROUP BY, and nil for the plan when there is one grouping set of all
// keys (a plain GROUP BY, where every GROUPING is 0).
func (q *queryBuilder) groupingSets(sel *sql.Select, s *scope) (*sql.Select, *groupingPlan, error) {
	hasSets := false
	for _, g := range sel.GroupBy {
		_, ok := g.(*sql.GroupingSets)
		hasSets = hasSets || ok
	}
	if !hasSets && !callsGrouping(sel) {
		return sel, nil, nil
	}
	keys := &groupKeys{s: s, index: map[string]int{}}
	product, windowRefs, err := keys.crossSets(sel.GroupBy)
	if err != nil {
		return nil, nil, err
	}
	gp := newGroupingPlan(product, len(keys.list))
	plain := len(gp.sets) == 1 && gp.ids[0] == 0
	out := *sel
	out.GroupBy = append(windowRefs, keys.list...)
	if err := keys.rewriteGroupingCalls(&out, plain); err != nil {
		return nil, nil, err
	}
	if plain {
		return &out, nil, nil
	}
	return &out, gp, nil
}

// groupKeys numbers the distinct GROUP BY key expressions, compared
// unqualified and case-insensitively, in the order they first appear.
type groupKeys struct {
	s     *scope
	list  []sql.Expr
	index map[string]int
}

// add returns the index of key e, numbering it if it is new. Keys are
// compared unqualified (the joined row's field names), but kept as
// written: e.deptno and d.deptno of a join are both "deptno" to the
// aggregate's name resolution, which would find the unqualified name
// ambiguous.
func (k *groupKeys) add(e sql.Expr) (int, error) {
	u, err := k.s.unqualify(e)
	if err != nil {
		return 0, err
	}
	text := strings.ToLower(sql.Format(u))
	if i, ok := k.index[text]; ok {
		return i, nil
	}
	k.index[text] = len(k.list)
	k.list = append(k.list, e)
	return len(k.list) - 1, nil
}

// crossSets numbers the keys of a GROUP BY and returns its grouping sets
// as key indices: each GROUP BY element's sets, crossed with the others'.
// Over a window table function the window's columns name the window,
// which every grouping set must keep, as Flink requires: they are
// returned apart, as plain GROUP BY entries outside the sets.
func (k *groupKeys) crossSets(groupBy []sql.Expr) (product [][]int, windowRefs []sql.Expr, err error) {
	isWindowCol := func(e sql.Expr) bool {
		ref, ok := e.(*sql.ColumnRef)
		return ok && k.s.window != nil && slices.Contains([]string{"window_start", "window_end", "window_time"}, strings.ToLower(ref.Column.Name))
	}
	product = [][]int{{}}
	for _, g := range groupBy {
		var elemSets [][]sql.Expr
		if gs, ok := g.(*sql.GroupingSets); ok {
			var win []sql.Expr
			if elemSets, win, err = splitWindowCols(gs.At, expandGrouping(gs), isWindowCol); err != nil {
				return nil, nil, err
			}
			windowRefs = append(windowRefs, win...)
		} else if isWindowCol(g) {
			windowRefs = append(windowRefs, g)
			continue
		} else {
			elemSets = [][]sql.Expr{{g}}
		}
		var next [][]int
		for _, prefix := range product {
			for _, es := range elemSets {
				set := append([]int(nil), prefix...)
				for _, e := range es {
					i, err := k.add(e)
					if err != nil {
						return nil, nil, err
					}
					set = append(set, i)
				}
				next = append(next, set)
			}
		}
		product = next
	}
	return product, windowRefs, nil
}

// newGroupingPlan turns grouping sets of key indices over n keys into
// which keys each set keeps and the set's id, whose bit n-1-i is set
// when the set leaves out key i, and whose bits from n up count the
// earlier sets equal to it.
func newGroupingPlan(sets [][]int, n int) *groupingPlan {
	gp := &groupingPlan{}
	seen := map[int64]int64{}
	for _, set := range sets {
		keep := make([]bool, n)
		for _, i := range set {
			keep[i] = true
		}
		var id int64
		for i, k := range keep {
			if !k {
				id |= 1 << (n - 1 - i)
			}
		}
		// A set written again (GROUPING SETS ((a), (a))) is a group of
		// its own, as in Flink, whose GROUP_ID() counts the repeats: its
		// id gets the repeat number above the n GROUPING bits, else its
		// rows would fall into the first one's groups and count twice.
		repeat := seen[id]
		seen[id]++
		id |= repeat << n
		gp.sets, gp.ids = append(gp.sets, keep), append(gp.ids, id)
	}
	return gp
}

// rewriteGroupingCalls replaces the GROUPING and GROUPING_ID calls in
// out's select items and HAVING by their bits read from $e, or by 0 when
// plain (one grouping set of all keys). A select item so rewritten keeps
// the name Flink gives the call, EXPR$i.
func (k *groupKeys) rewriteGroupingCalls(out *sql.Select, plain bool) error {
	n := len(k.list)
	var bad error
	rewriteGrouping := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			c, ok := x.(*sql.Call)
			if ok && c.Name == "GROUP_ID" {
				if len(c.Args) > 0 {
					bad = errAt(c.At, "GROUP_ID takes no arguments")
					return x, true
				}
				if plain {
					return bigintLit(0), true
				}
				// The repeat number of the row's grouping set, above its
				// n GROUPING bits (newGroupingPlan).
				return &sql.Binary{Op: sql.OpDiv, L: expandIDRef(c.At), R: bigintLit(1 << n)}, true
			}
			if !ok || c.Name != "GROUPING" && c.Name != "GROUPING_ID" {
				return nil, false
			}
			if len(c.Args) == 0 {
				bad = errAt(c.At, "%s takes the GROUP BY expressions it tests", c.Name)
				return x, true
			}
			var sum sql.Expr
			for j, a := range c.Args {
				u, err := k.s.unqualify(a)
				i, found := k.index[strings.ToLower(sql.Format(u))]
				if err != nil || !found {
					if bad == nil {
						bad = errAt(a.Pos(), "the arguments of %s must be GROUP BY expressions; %s is not one", c.Name, sql.Format(a))
					}
					return x, true
				}
				if plain {
					continue
				}
				sum = addTerm(sum, groupingBit(c.At, n-1-i), len(c.Args)-1-j)
			}
			if sum == nil {
				return bigintLit(0), true
			}
			return sum, true
		})
	}
	items := out.Items
	out.Items = make([]*sql.SelectItem, len(items))
	for i, it := range items {
		out.Items[i] = &sql.SelectItem{Expr: rewriteGrouping(it.Expr), Alias: it.Alias}
		if it.Alias.IsZero() && out.Items[i].Expr != it.Expr {
			if _, ok := it.Expr.(*sql.Call); ok {
				out.Items[i].Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
			}
		}
	}
	out.Having = rewriteGrouping(out.Having)
	return bad
}

// splitWindowCols takes the window columns out of grouping sets: each
// set must hold the same ones (every grouping set keeps the window).
func splitWindowCols(at sql.Pos, sets [][]sql.Expr, isWindowCol func(sql.Expr) bool) (rest [][]sql.Expr, win []sql.Expr, err error) {
	var want string
	for i, set := range sets {
		var keys, w []sql.Expr
		var texts []string
		for _, e := range set {
			if isWindowCol(e) {
				w = append(w, e)
				texts = append(texts, strings.ToLower(sql.Format(e)))
			} else {
				keys = append(keys, e)
			}
		}
		slices.Sort(texts)
		if i == 0 {
			want, win = strings.Join(texts, ","), w
		} else if strings.Join(texts, ",") != want {
			return nil, nil, errAt(at, "every grouping set keeps the window: name window_start and window_end in each set, or beside the grouping sets (GROUP BY window_start, window_end, ROLLUP(...))")
		}
		rest = append(rest, keys)
	}
	return rest, win, nil
}

// expandGrouping lists the grouping sets of one GROUPING SETS, ROLLUP or
// CUBE element, as Calcite orders them: ROLLUP(a, b) is (a, b), (a), ();
// CUBE(a, b) is (a, b), (a), (b), ().
func expandGrouping(g *sql.GroupingSets) [][]sql.Expr {
	switch g.Kind {
	case sql.Rollup:
		var out [][]sql.Expr
		for k := len(g.Sets); k >= 0; k-- {
			var set []sql.Expr
			for _, s := range g.Sets[:k] {
				set = append(set, s...)
			}
			out = append(out, set)
		}
		return out
	case sql.Cube:
		n := len(g.Sets)
		var out [][]sql.Expr
		for mask := 1<<n - 1; mask >= 0; mask-- {
			var set []sql.Expr
			for i, s := range g.Sets {
				if mask&(1<<(n-1-i)) != 0 {
					set = append(set, s...)
				}
			}
			out = append(out, set)
		}
		return out
	}
	return g.Sets
}

func callsGrouping(sel *sql.Select) bool {
	found := false
	check := func(e sql.Expr) {
		walk(e, func(x sql.Expr) bool {
			if c, ok := x.(*sql.Call); ok && (c.Name == "GROUPING" || c.Name == "GROUPING_ID" || c.Name == "GROUP_ID") {
				found = true
			}
			return !found
		})
	}
	for _, it := range sel.Items {
		check(it.Expr)
	}
	check(sel.Having)
	return found
}

// groupingBit is bit b of $e: ($e / 2^b) % 2.
func groupingBit(at sql.Pos, b int) sql.Expr {
	var id sql.Expr = expandIDRef(at)
	if b > 0 {
		id = &sql.Binary{Op: sql.OpDiv, L: id, R: bigintLit(1 << b)}
	}
	return &sql.Binary{Op: sql.OpMod, L: id, R: bigintLit(2)}
}

// addTerm returns sum + bit * 2^shift (bit * 2^shift when sum is nil).
func addTerm(sum, bit sql.Expr, shift int) sql.Expr {
	if shift > 0 {
		bit = &sql.Binary{Op: sql.OpMul, L: bit, R: bigintLit(1 << shift)}
	}
	if sum == nil {
		return bit
	}
	return &sql.Binary{Op: sql.OpAdd, L: sum, R: bit}
}

func bigintLit(v int64) *sql.Literal {
	return &sql.Literal{Kind: sql.LitInt, Text: fmt.Sprint(v), Value: row.BigIntValue(v), Type: row.Type{ID: row.BigInt, NotNull: true}}
}

func expandIDRef(at sql.Pos) *sql.ColumnRef {
	return &sql.ColumnRef{Column: sql.Ident{At: at, Name: expandIDName, Quoted: true}}
}

// expand puts an Expand of a's grouping sets over pre (the first Calc)
// and makes $e the last group key.
func (a *aggPlan) expand(pre *Node, gp *groupingPlan) *Node {
	width := pre.Schema.Len()
	fields := append([]row.Field(nil), pre.Schema.Fields...)
	for i, k := range a.keys {
		for _, keep := range gp.sets {
			if !keep[i] {
				fields[k].Type = fields[k].Type.Nullable()
			}
		}
	}
	eField := row.Field{Name: expandIDName, Type: row.Type{ID: row.BigInt, NotNull: true}}
	fields = append(fields, eField)
	a.state = a.state.expanded(a.keys, gp.sets, width, eField)
	n := &Node{Kind: ExpandNode, Input: pre, Schema: row.NewSchema(fields...), TimeAttr: -1, Bounded: pre.Bounded,
		Mode: Changelog{Updating: pre.Mode.Updating}, op: &expandOp{keys: a.keys, sets: gp.sets, ids: gp.ids}}
	projects := make([]string, len(gp.sets))
	for s, keep := range gp.sets {
		cols := make([]string, 0, width+1)
		for c, f := range pre.Schema.Fields {
			cols = append(cols, f.Name)
			for i, k := range a.keys {
				if k == c && !keep[i] {
					cols[len(cols)-1] = "null AS " + f.Name
				}
			}
		}
		projects[s] = "{" + strings.Join(append(cols, fmt.Sprintf("%d AS $e", gp.ids[s])), ", ") + "}"
	}
	n.Label = fmt.Sprintf("Expand(projects=[%s])", strings.Join(projects, ", "))
	a.keys = append(a.keys, width)
	a.keyNames = append(a.keyNames, expandIDName)
	a.keyExprs = append(a.keyExprs, expandIDRef(sql.Pos{}))
	a.preFields = fields
	return n
}

// expandOp is an ExpandNode's grouping sets.
type expandOp struct {
	keys []int
	sets [][]bool
	ids  []int64
}

func (e *expandOp) operator(opBuild) (operator.Lifecycle, error) {
	return aggop.NewExpand(e.keys, e.sets, e.ids)
}
