package plan

import (
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
)

// pushProjections tells each source that can leave columns undecoded
// (connector.ProjectingSource) which of its physical columns the plan
// reads: Flink's projection pushdown. A column is read when a projecting
// Calc over the scan reads it (its condition or its SELECT list), when a
// read computed column, the watermark or the key needs it, or when a
// regular join over the scan reads it (join_reads.go). Any other reader
// of the scan (an aggregate, a pass-through Calc, a sink, a lookup) is
// taken to read every column, so nothing is pushed down.
//
// A ROW column those read only through field accesses (bid.price,
// bid['price'], r.f.g) is not decoded at all when the source can decode
// the fields read into columns of their own (connector.NestedSource):
// nested projection pushdown, as Flink pushes nested fields into a
// source. The scan's rows then carry those columns after the computed
// ones (pathColumns), and each field access reads its column instead of
// the ROW (expr.FieldPath.ReadAt).
//
// Last, a regular join or an event-time OVER whose one reader is a Calc
// that only picks columns is made to emit those columns itself
// (projectJoins, join_reads.go; projectOvers, over_reads.go).
func (b *builder) pushProjections() {
	nodes := b.plan.nodes()
	b.plan.pruneCalcs(nodes)
	for _, src := range b.plan.Sources {
		ps, ok := src.Conn.(connector.ProjectingSource)
		if !ok || src.Table == nil || src.lookedUp {
			continue
		}
		rd := b.plan.columnsRead(src, nodes)
		if rd == nil {
			continue
		}
		phys := src.Physical.Len()
		pushed := rd.pathColumns(src)
		needed := make([]bool, min(phys, len(rd.whole)))
		for i := range needed {
			// A column read through paths that are not pushed is read
			// whole, as it is when they are not.
			needed[i] = rd.reads(i) && !slices.Contains(pushed, i)
		}
		if len(pushed) > 0 {
			if ns, ok := src.Conn.(connector.NestedSource); ok {
				ps.SetColumns(someOrNil(needed))
				paths, commit := rd.fieldPaths(src, pushed)
				// The gap is the computed columns' room, between the
				// physical ones and the paths as in the scan's rows:
				// computeRows writes them in place.
				if ns.SetPaths(paths, src.Table.Root.Schema.Len()-phys) {
					commit()
					src.Projected = someOrNil(needed)
					continue
				}
			}
			for _, i := range pushed {
				needed[i] = true // read whole: the source cannot push the paths
			}
			ps.SetColumns(someOrNil(needed))
		} else if someOrNil(needed) != nil {
			ps.SetColumns(needed)
		}
		src.Projected = someOrNil(needed)
	}
	// A regular join emits the columns a Calc over it picks
	// (join_reads.go): after the pushdown above, which reads that Calc.
	b.plan.projectJoins(nodes)
	b.plan.projectOvers(nodes)
	// Last, a batch join's inputs are narrowed to the columns it reads
	// (join_narrow.go): what the sources decode is already settled.
	if !b.env.WholeJoinRows {
		b.plan.narrowJoins(nodes)
	}
}

// someOrNil is needed, or nil when it names every column.
func someOrNil(needed []bool) []bool {
	for _, ok := range needed {
		if !ok {
			return needed
		}
	}
	return nil
}

// pruneCalcs has a Calc compute NULL in place of each output column its
// readers never read, when they are all projecting Calcs or regular
// joins (a view's
// SELECT list read in part by the query over it, as Flink's Calc merge
// prunes it): what the column read is then not read, nor decoded. The
// column stays, so that its readers' column indices hold; a Calc that
// only picks columns is left as it is (it costs nothing and the runtime
// may have the source decode its columns alone).
func (p *Plan) pruneCalcs(nodes []*Node) {
	readers := joinReaders{}
	for _, n := range nodes {
		for _, in := range n.inputs() {
			readers[in] = append(readers[in], n)
		}
	}
	for _, s := range p.Sinks {
		if s.Input != nil {
			readers[s.Input.Root] = append(readers[s.Input.Root], nil) // reads every column
		}
	}
	// nodes lists a node before those it reads: a Calc pruned reads
	// less, which its own input's turn then sees; a join reads of its
	// inputs what its readers read of it (join_reads.go).
	for _, m := range nodes {
		if m.Kind == JoinNode {
			readers.pruneJoin(m)
			continue
		}
		if m.overed() != nil {
			readers.pruneOver(m)
			continue
		}
		c := m.calc()
		if c != nil && c.project == nil && len(readers[m]) > 0 {
			// A filter alone reads what its readers read, and its
			// condition: its input's turn, after it, sees that.
			if used := readers.usedOf(m); used != nil {
				if c.filter != nil {
					for _, i := range c.filter.Reads {
						used[i] = true
					}
				}
				c.passReads = used
			}
			continue
		}
		if c == nil || c.project == nil || len(readers[m]) == 0 || columnsOf(c.project) != nil {
			continue
		}
		used := readers.usedOf(m)
		if used == nil {
			continue
		}
		for j, e := range c.project {
			if !used[j] && !e.Const {
				c.project[j] = &expr.Compiled{Type: e.Type.Nullable(), Eval: func(row.Row) (row.Value, error) { return row.NullValue, nil },
					Const: true, Value: row.NullValue}
			}
		}
	}
}

// nodes lists every node the sinks read, each once: what Graph runs (a
// transform no sink reads is not run, so what it would read is not).
func (p *Plan) nodes() []*Node {
	seen := map[*Node]bool{}
	var out []*Node
	var visit func(n *Node)
	visit = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		for _, in := range n.inputs() {
			visit(in)
		}
	}
	for _, s := range p.Sinks {
		if s.Input != nil {
			visit(s.Input.Root)
		}
	}
	return out
}

// scanReads is what the plan reads of a source's scan: whole parallels
// the scan's columns (physical, then computed), true for a column read
// as it is; paths are the field-access chains read, wherever they are
// evaluated over the scan's rows.
type scanReads struct {
	whole []bool
	paths []*expr.FieldPath
}

func (r *scanReads) mark(cols []int) {
	for _, i := range cols {
		if i >= 0 && i < len(r.whole) {
			r.whole[i] = true
		}
	}
}

func (r *scanReads) read(e *expr.Compiled) {
	r.mark(e.ReadsWhole())
	r.paths = append(r.paths, e.Paths...)
}

// columnsRead returns which columns of src's scan the plan reads, or
// nil when it reads them all in ways it cannot tell (or the source has
// metadata columns, which the format does not see, so that the indices
// would not match).
func (p *Plan) columnsRead(src *Source, nodes []*Node) *scanReads {
	scan := src.Table.Root
	if scan.Kind == NormalizeNode {
		return nil // the normalization keeps whole rows
	}
	for _, c := range src.Spec.Schema {
		if c.Metadata != "" {
			return nil
		}
	}
	for _, s := range p.Sinks {
		if s.Input != nil && s.Input.Root == scan {
			return nil
		}
	}
	rd := &scanReads{whole: make([]bool, scan.Schema.Len())}
	for _, n := range nodes {
		for _, in := range n.inputs() {
			if in != scan {
				continue
			}
			if j := n.joined(); j != nil {
				reads := j.readsOf(n, scan)
				if reads == nil {
					return nil
				}
				for i, ok := range reads {
					if ok {
						rd.mark([]int{i})
					}
				}
				continue
			}
			if o := n.overed(); o != nil {
				if o.reads == nil {
					return nil
				}
				for i, ok := range o.reads {
					if ok {
						rd.mark([]int{i})
					}
				}
				continue
			}
			c := n.calc()
			if c != nil && c.project == nil && c.passReads != nil {
				// A filter alone over the scan: what it and its readers
				// read (pruneCalcs), its condition's paths as they are.
				for i, ok := range c.passReads {
					if ok && (c.filter == nil || !slices.Contains(c.filter.Reads, i)) {
						rd.mark([]int{i})
					}
				}
				if c.filter != nil {
					rd.read(c.filter)
				}
				continue
			}
			if c == nil || c.project == nil {
				return nil
			}
			if c.filter != nil {
				rd.read(c.filter)
			}
			for _, e := range c.project {
				rd.read(e)
			}
		}
	}
	if scan.TimeAttr >= 0 {
		rd.mark([]int{scan.TimeAttr})
	}
	if src.watermark != nil {
		rd.read(src.watermark)
	}
	for _, k := range src.Spec.Key {
		rd.mark([]int{scan.Schema.Index(k)})
	}
	// A computed column reads the columns before it: mark from the last
	// one back, so that one read by another is seen before its own turn.
	phys := src.Physical.Len()
	for k := len(src.computed) - 1; k >= 0; k-- {
		if i := phys + k; i < len(rd.whole) && rd.reads(i) {
			rd.whole[i] = true
			rd.read(src.computed[k])
		}
	}
	return rd
}

// reads reports whether column i is read, whole or through a path.
func (r *scanReads) reads(i int) bool {
	if r.whole[i] {
		return true
	}
	for _, p := range r.paths {
		if p.Column == i {
			return true
		}
	}
	return false
}

// pathColumns returns the physical ROW columns read only through field
// accesses, whose paths the source may decode instead: not read whole,
// and no path read a prefix of another (r.f beside r.f.g).
func (r *scanReads) pathColumns(src *Source) []int {
	phys := src.Physical.Len()
	byCol := map[int][]*expr.FieldPath{}
	for _, p := range r.paths {
		if p.Column < phys && !r.whole[p.Column] && src.Physical.Fields[p.Column].Type.ID == row.Struct {
			byCol[p.Column] = append(byCol[p.Column], p)
		}
	}
	var out []int
	for col := range phys {
		ps := byCol[col]
		if len(ps) == 0 {
			continue
		}
		ok := true
		for _, a := range ps {
			for _, b := range ps {
				if len(a.Fields) < len(b.Fields) && isPrefix(a.Fields, b.Fields) {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, col)
		}
	}
	return out
}

func isPrefix(a, b []int) bool {
	for i, f := range a {
		if b[i] != f {
			return false
		}
	}
	return true
}

// fieldPaths lists, once each, the paths over the columns pushed;
// commit, once the source took them, has every read of them read its
// column of the scan's rows (after the scan's own columns, in the order
// listed) and keeps the list in src.
func (r *scanReads) fieldPaths(src *Source, pushed []int) (paths []connector.FieldPath, commit func()) {
	isPushed := map[int]bool{}
	for _, c := range pushed {
		isPushed[c] = true
	}
	base := src.Table.Root.Schema.Len()
	var firsts []*expr.FieldPath
	var fields []row.Field
	at := map[*expr.FieldPath]int{}
	for _, p := range r.paths {
		if !isPushed[p.Column] {
			continue
		}
		j := 0
		for j < len(firsts) && !firsts[j].Same(p) {
			j++
		}
		if j == len(firsts) {
			firsts = append(firsts, p)
			paths = append(paths, connector.FieldPath{Column: p.Column, Fields: p.Fields})
			fields = append(fields, row.Field{Name: pathName(src.Physical, p), Type: p.Type})
		}
		at[p] = base + j
	}
	return paths, func() {
		for p, i := range at {
			p.ReadAt(i)
		}
		src.paths, src.pathFields = paths, fields
	}
}

// pathName is how a path's column is named where a row shows it (a dead
// letter): bid.price.
func pathName(s row.Schema, p *expr.FieldPath) string {
	t := s.Fields[p.Column].Type
	parts := []string{s.Fields[p.Column].Name}
	for _, f := range p.Fields {
		parts = append(parts, t.Fields()[f].Name)
		t = t.Fields()[f].Type
	}
	return strings.Join(parts, ".")
}

// NestedPaths names the fields of ROW columns the connector decodes into
// columns of their own (bid.price), in their order after the physical
// columns; nil when none.
func (s *Source) NestedPaths() []string {
	var out []string
	for _, f := range s.pathFields {
		out = append(out, f.Name)
	}
	return out
}
