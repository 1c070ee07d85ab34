package plan

import (
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/runtime/joinop"
)

// Projection pushdown below a regular or interval join, as Flink's
// ProjectJoinTransposeRule: a join reads of each input only the columns
// of its keys, its residual condition, the input's unique key and the
// columns its own readers read of its output. The others are not read:
// pruneCalcs has a Calc under the join compute NULL in their place, and
// a scan under it leaves them undecoded (NULL). The join's rows keep
// their width, so that no column index above or in the join moves; a
// NULL costs its state one byte. The label's select list names the
// columns that reach the join.

// joinReaders is what pruneCalcs knows of who reads each node.
type joinReaders map[*Node][]*Node

// usedOf returns the columns of m that its readers read, nil for all
// (a sink, or a reader that is not a projecting Calc or a regular join
// whose reads are known).
func (rs joinReaders) usedOf(m *Node) []bool {
	if len(rs[m]) == 0 {
		return nil
	}
	used := make([]bool, m.Schema.Len())
	mark := func(cols []int) {
		for _, i := range cols {
			if i >= 0 && i < len(used) {
				used[i] = true
			}
		}
	}
	for _, r := range rs[m] {
		if r == nil {
			return nil
		}
		if j := r.joined(); j != nil {
			reads := j.readsOf(r, m)
			if reads == nil {
				return nil
			}
			for i, ok := range reads {
				if ok {
					used[i] = true
				}
			}
			continue
		}
		if o := r.overed(); o != nil {
			if o.reads == nil {
				return nil
			}
			for i, ok := range o.reads {
				if ok {
					used[i] = true
				}
			}
			continue
		}
		c := r.calc()
		if c != nil && c.project == nil && c.passReads != nil {
			// A filter alone: what pruneCalcs found it and its
			// readers read.
			for i, ok := range c.passReads {
				if ok {
					used[i] = true
				}
			}
			continue
		}
		if c == nil || c.project == nil {
			return nil
		}
		if c.filter != nil {
			mark(c.filter.Reads)
		}
		if cols := columnsOf(c.project); cols != nil {
			// A Calc that only picks columns reads those its own
			// readers read.
			above := rs.usedOf(r)
			for k, col := range cols {
				if above == nil || above[k] {
					mark([]int{col})
				}
			}
			continue
		}
		for _, e := range c.project {
			mark(e.Reads)
		}
	}
	if m.TimeAttr >= 0 && m.TimeAttr < len(used) {
		used[m.TimeAttr] = true
	}
	return used
}

// readsOf returns the columns of input in the join n reads (both sides'
// when n joins in with itself), nil for all or not known.
func (j *joinOp) readsOf(n, in *Node) []bool {
	var out []bool
	for side, x := range n.Inputs {
		if x != in {
			continue
		}
		if j.reads[side] == nil {
			return nil
		}
		if out == nil {
			out = slices.Clone(j.reads[side])
			continue
		}
		for i, ok := range j.reads[side] {
			out[i] = out[i] || ok
		}
	}
	return out
}

// pruneJoin works out which columns of each input the regular or
// interval join n reads (joinOp.reads) and names them in its label: an
// interval join reads its time attributes beside its keys and
// residual, and caches only those columns' values (the rest NULL, a
// byte each).
func (rs joinReaders) pruneJoin(n *Node) {
	j := n.joined()
	if j == nil || j.join == nil || j.temporal != nil || j.window != nil || len(n.Inputs) != 2 {
		return
	}
	used := rs.usedOf(n)
	if used == nil {
		return
	}
	js := j.join
	lw := n.Inputs[0].Schema.Len()
	reads := [2][]bool{make([]bool, lw), make([]bool, n.Inputs[1].Schema.Len())}
	at := func(i int) {
		if i < 0 {
			return
		}
		if i < lw {
			reads[0][i] = true
		} else if i-lw < len(reads[1]) {
			reads[1][i-lw] = true
		}
	}
	for i, ok := range used {
		if ok {
			at(i)
		}
	}
	for _, k := range n.Mode.Key {
		at(k)
	}
	for _, i := range j.residualReads {
		at(i)
	}
	for side, cols := range [2][]int{js.LeftKeys, js.RightKeys} {
		for _, i := range cols {
			reads[side][i] = true
		}
	}
	for side, cols := range [2][]int{js.LeftUnique, js.RightUnique} {
		for _, i := range cols {
			reads[side][i] = true
		}
	}
	for side, in := range n.Inputs {
		if in.TimeAttr >= 0 {
			reads[side][in.TimeAttr] = true
		}
	}
	j.reads = reads
	// The label lists the output columns that reach the join, as
	// Flink's select after a projection pushed below it (a semi or
	// anti join's output is its left rows).
	names := n.Schema.Names()
	var kept []string
	for i, name := range names {
		side, col := 0, i
		if i >= lw {
			side, col = 1, i-lw
		}
		if col < len(reads[side]) && reads[side][col] {
			kept = append(kept, name)
		}
	}
	if len(kept) < len(names) {
		n.Label = strings.Replace(n.Label, ", select=["+strings.Join(names, ", ")+"]", ", select=["+strings.Join(kept, ", ")+"]", 1)
	}
}

// projectJoins has a regular or interval join, batch or streaming, emit
// only the columns a Calc over it picks (for a regular join, or the last
// of a chain of such Calcs, each the one reader of the one before),
// when that Calc is its one reader, only
// picks columns and filters nothing (an INNER, LEFT, RIGHT or FULL
// join: a semi or anti join emits its left rows, a NOT IN its own
// way). The Calc then passes the join's rows on as they are: a joined
// row is built once, of the columns read, instead of built whole and
// then projected. A streaming join's retractions are projected as its
// inserts are, so a -U/-D carries the columns of the +I/+U it takes
// back. Its state is its inputs' rows, as before: the join's and the
// Calc's labels, state IDs and fingerprints are unchanged (the Calc is
// stateless), and a checkpoint written without the projection
// restores. Labels are unchanged: the Calc is still the projection,
// run by the join. It runs after the projections were pushed down
// (pushProjections), which read the Calc's columns.
func (p *Plan) projectJoins(nodes []*Node) {
	readers := p.readerCounts(nodes)
	readerOf := map[*Node]*Node{}
	for _, n := range nodes {
		for _, in := range n.inputs() {
			readerOf[in] = n
		}
	}
	for _, m := range nodes {
		c := m.calc()
		if c == nil || c.filter != nil || m.Input == nil || readers[m.Input] != 1 {
			continue
		}
		cols := columnsOf(c.project)
		j := m.Input.joined()
		if cols != nil && j != nil && j.interval != nil && len(m.Input.Inputs) == 2 {
			// An interval join (INNER, LEFT, RIGHT or FULL: insert-only)
			// likewise, streaming, sorted or as a batch hash join.
			j.interval.Output = cols
			c.project = nil
			continue
		}
		if cols == nil || j == nil || j.join == nil || !j.regular() || len(m.Input.Inputs) != 2 {
			continue
		}
		js := j.join
		if js.NullAware || js.Kind == joinop.SemiJoin || js.Kind == joinop.AntiJoin {
			continue
		}
		js.Output = cols
		c.project = nil
		// A chain of such Calcs (a computed key's, which drops the
		// key's columns, under the query's SELECT) is one projection:
		// the join emits the last one's columns.
		for readers[m] == 1 && readerOf[m] != nil {
			up := readerOf[m].calc()
			if up == nil || up.filter != nil {
				break
			}
			upCols := columnsOf(up.project)
			if upCols == nil {
				break
			}
			out := make([]int, len(upCols))
			for k, col := range upCols {
				out[k] = js.Output[col]
			}
			js.Output, up.project, m = out, nil, readerOf[m]
		}
	}
}

// readerCounts counts the readers of each of nodes' outputs: the nodes
// that read it and the sinks.
func (p *Plan) readerCounts(nodes []*Node) map[*Node]int {
	readers := map[*Node]int{}
	for _, n := range nodes {
		for _, in := range n.inputs() {
			readers[in]++
		}
	}
	for _, s := range p.Sinks {
		if s.Input != nil {
			readers[s.Input.Root]++
		}
	}
	return readers
}
