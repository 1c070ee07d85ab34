package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
)

// narrowJoins narrows the rows a batch regular join reads, as Flink's
// ProjectJoinTransposeRule puts a Calc under each input of a join: an
// input of which the join and its readers leave columns unread
// (joinOp.reads, pruneJoin) is read through a Calc that picks the
// columns read, and the join's keys, unique keys, residual and output
// are renumbered onto the narrowed rows. pruneJoin alone leaves those
// columns undecoded but keeps them in the rows, as NULLs: every row
// still costs the input's whole width in each batch. A Calc that only
// picks the columns of a scan has the source decode those alone
// (runtime fusion), so the rows are built narrow from the start.
//
// The join's output keeps its width and columns: a column no reader
// reads is NULL (JoinSpec.Output names it -1), so nothing above the
// join moves. A semi or anti join emits its left rows as they are: its
// left input keeps its width.
//
// Only in batch execution, for now: a streaming join's state is kept
// across runs and edits, and its stored rows would change layout. A
// batch join's checkpoint written before the narrowing still restores:
// its fingerprint names its whole inputs, as before, and the join cuts
// the saved rows of whole inputs to the columns it keeps
// (JoinSpec.Narrowed).
func (p *Plan) narrowJoins(nodes []*Node) {
	if !p.Batch {
		return
	}
	// A Calc under the join that no one else reads, and that is no
	// transform's table, picks the join's columns itself.
	readers := p.readerCounts(nodes)
	for _, t := range p.Transforms {
		readers[t.Root] += 2
	}
	for _, n := range nodes {
		j := n.joined()
		if j == nil || j.join == nil || !j.regular() || len(n.Inputs) != 2 || j.reads[0] == nil || j.reads[1] == nil {
			continue
		}
		js := j.join
		if js.Residual != nil && j.residualSrc == nil {
			continue // compiled elsewhere: it cannot be compiled again here
		}
		keepsLeft := js.Kind == joinop.SemiJoin || js.Kind == joinop.AntiJoin || js.NullAware
		var keep [2][]int
		var at [2][]int // input column -> narrowed column, -1 when dropped
		narrowed := false
		for side, reads := range j.reads {
			at[side] = make([]int, len(reads))
			for i, ok := range reads {
				at[side][i] = -1
				if ok || side == 0 && keepsLeft {
					at[side][i] = len(keep[side])
					keep[side] = append(keep[side], i)
				}
			}
			narrowed = narrowed || len(keep[side]) < len(reads)
		}
		if !narrowed || len(keep[0]) == 0 || len(keep[1]) == 0 {
			continue
		}
		if err := narrowJoin(p.Spec.Zone, n, j, keep, at, readers); err != nil {
			continue // the join is left as it was: correct, only wider
		}
	}
}

// narrowJoin puts a picking Calc under each input of n that keep
// narrows and renumbers the join onto the narrowed rows; on an error
// (the residual does not compile again) n is left unchanged.
func narrowJoin(zone *time.Location, n *Node, j *joinOp, keep, at [2][]int, readers map[*Node]int) error {
	js := *j.join
	lw, rw := js.LeftWidth, js.RightWidth
	nlw := len(keep[0])
	joinedAt := func(i int) int {
		if i < lw {
			return at[0][i]
		}
		if c := at[1][i-lw]; c >= 0 {
			return nlw + c
		}
		return -1
	}
	var residualReads []int
	if j.residualSrc != nil {
		// The residual names the joined row's fields.
		if n.Schema.Len() != lw+rw {
			return fmt.Errorf("plan: the join's row is not its inputs' rows side by side")
		}
		var fields []row.Field
		for side, cols := range keep {
			for _, c := range cols {
				fields = append(fields, n.Schema.Fields[side*lw+c])
			}
		}
		c, err := compileExpr(zone, j.residualSrc, row.NewSchema(fields...), "join")
		if err != nil {
			return err
		}
		js.Residual, residualReads = c.True, c.Reads
	}
	remap := func(cols []int, side int) []int {
		if cols == nil {
			return nil
		}
		out := make([]int, len(cols))
		for k, c := range cols {
			out[k] = at[side][c]
		}
		return out
	}
	js.LeftKeys, js.RightKeys = remap(js.LeftKeys, 0), remap(js.RightKeys, 1)
	js.LeftUnique, js.RightUnique = remap(js.LeftUnique, 0), remap(js.RightUnique, 1)
	js.LeftTypes, js.RightTypes = pickTypes(js.LeftTypes, keep[0]), pickTypes(js.RightTypes, keep[1])
	js.LeftWidth, js.RightWidth = nlw, len(keep[1])
	js.Narrowed, js.WholeWidth = keep, [2]int{lw, rw}
	if js.Kind != joinop.SemiJoin && js.Kind != joinop.AntiJoin {
		// The output keeps the joined row's columns: each read one from
		// the narrowed row, the others NULL.
		out := js.Output
		if out == nil {
			out = make([]int, lw+rw)
			for i := range out {
				out[i] = i
			}
		}
		mapped := make([]int, len(out))
		for k, c := range out {
			mapped[k] = joinedAt(c)
		}
		js.Output = mapped
	}
	// The fingerprint names the whole inputs, as before the narrowing:
	// a checkpoint written before restores, its rows cut
	// (JoinSpec.Narrowed).
	j.wholeInputs = [2]row.Schema{n.Inputs[0].Schema, n.Inputs[1].Schema}
	for side, in := range n.Inputs {
		if len(keep[side]) >= in.Schema.Len() {
			continue
		}
		if readers[in] == 1 && narrowCalc(in, keep[side]) {
			continue
		}
		n.Inputs[side] = pickNode(in, keep[side])
	}
	j.join, j.residualReads = &js, residualReads
	for side := range j.reads {
		j.reads[side] = make([]bool, len(keep[side]))
		for i := range j.reads[side] {
			j.reads[side][i] = true
		}
	}
	return nil
}

// pickTypes is types at cols, nil when types is.
func pickTypes(types []row.TypeID, cols []int) []row.TypeID {
	if types == nil {
		return nil
	}
	out := make([]row.TypeID, len(cols))
	for k, c := range cols {
		out[k] = types[c]
	}
	return out
}

// pickNode is a Calc over in that picks its columns cols, in order: a
// join's input narrowed to what it reads, or what a join whose inputs
// gained key columns gives on without them.
func pickNode(in *Node, cols []int) *Node {
	fields := make([]row.Field, len(cols))
	project := make([]*expr.Compiled, len(cols))
	texts := make([]string, len(cols))
	colMap := make([]int, in.Schema.Len())
	for i := range colMap {
		colMap[i] = -1
	}
	timeAttr := -1
	for k, c := range cols {
		f := in.Schema.Fields[c]
		fields[k], texts[k], colMap[c] = f, f.Name, k
		project[k] = pickedColumn(c, f.Type)
		if c == in.TimeAttr {
			timeAttr = k
		}
	}
	n := &Node{Kind: CalcNode, Input: in, Schema: row.NewSchema(fields...), Mode: calcMode(in.Mode, colMap),
		TimeAttr: timeAttr, Bounded: in.Bounded, op: &calcOp{project: project, colSrc: cols}}
	n.Label = fmt.Sprintf("Calc(select=[%s])", strings.Join(texts, ", "))
	return n
}

// narrowCalc has the Calc n compute its columns cols alone, in order,
// when its label lists its select list as the plan built it; false
// when n is no such Calc (n is then unchanged).
func narrowCalc(n *Node, cols []int) bool {
	c := n.calc()
	if c == nil || c.project == nil && (c.filter == nil || n.Input == nil || n.Input.Schema.Len() != n.Schema.Len()) {
		return false
	}
	project := c.project
	if project == nil {
		// A Calc that only filters (a WHERE's conjunct moved below the
		// join) passes its input's columns: now it picks some.
		project = make([]*expr.Compiled, n.Schema.Len())
		for i, f := range n.Schema.Fields {
			project[i] = pickedColumn(i, f.Type)
		}
	}
	if len(project) != n.Schema.Len() {
		return false
	}
	const prefix = "Calc(select=["
	rest, ok := strings.CutPrefix(n.Label, prefix)
	if !ok {
		return false
	}
	texts := splitTop(rest)
	list := strings.Join(texts, ", ")
	if len(texts) != len(project) || !strings.HasPrefix(rest[len(list):], "]") {
		return false
	}
	at := make([]int, len(project))
	for i := range at {
		at[i] = -1
	}
	fields := make([]row.Field, len(cols))
	picked := make([]*expr.Compiled, len(cols))
	kept := make([]string, len(cols))
	var colSrc []int
	var proc []bool
	for k, i := range cols {
		fields[k], picked[k], kept[k], at[i] = n.Schema.Fields[i], project[i], texts[i], k
		if c.colSrc != nil {
			colSrc = append(colSrc, c.colSrc[i])
		}
		if c.proc != nil {
			proc = append(proc, c.proc[i])
		}
	}
	var keys [][]int
	for _, k := range n.Mode.keys() {
		if m, ok := mapKey(k, at); ok {
			keys = append(keys, m)
		}
	}
	mode := Changelog{Updating: n.Mode.Updating}
	if len(keys) > 0 {
		mode.Key, mode.HasKey = keys[0], true
		if len(keys) > 1 {
			mode.Alt = keys[1:]
		}
	}
	timeAttr := -1
	if n.TimeAttr >= 0 {
		timeAttr = at[n.TimeAttr]
	}
	c.project, c.colSrc, c.proc = picked, colSrc, proc
	n.Schema, n.Mode, n.TimeAttr = row.NewSchema(fields...), mode, timeAttr
	n.Label = prefix + strings.Join(kept, ", ") + rest[len(list):]
	return true
}

// pickedColumn is a picking Calc's expression of its input's column c.
func pickedColumn(c int, t row.Type) *expr.Compiled {
	return &expr.Compiled{Type: t, IsColumn: true, Column: c, Reads: []int{c}, Whole: []int{c}, Eval: colEval(c)}
}
