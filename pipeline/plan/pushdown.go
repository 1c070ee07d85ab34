package plan

import "github.com/etld/etld/pipeline/connector"

// pushProjections tells each source that can leave columns undecoded
// (connector.ProjectingSource) which of its physical columns the plan
// reads: Flink's projection pushdown. A column is read when a projecting
// Calc over the scan reads it (its condition or its SELECT list), when a
// read computed column, the watermark or the key needs it. Any other
// reader of the scan (a join, an aggregate, a pass-through Calc, a sink,
// a lookup) is taken to read every column, so nothing is pushed down.
func (b *builder) pushProjections() {
	nodes := b.plan.nodes()
	for _, src := range b.plan.Sources {
		ps, ok := src.Conn.(connector.ProjectingSource)
		if !ok || src.Table == nil || src.lookedUp {
			continue
		}
		if needed := b.plan.columnsRead(src, nodes); needed != nil {
			ps.SetColumns(needed)
			src.Projected = needed
		}
	}
}

// nodes lists every node the transforms and sinks read, each once.
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
	for _, t := range p.Transforms {
		visit(t.Root)
	}
	for _, s := range p.Sinks {
		if s.Input != nil {
			visit(s.Input.Root)
		}
	}
	return out
}

// columnsRead returns which physical columns of src the plan reads, or
// nil when it reads them all (or the source has metadata columns, which
// the format does not see, so that the indices would not match).
func (p *Plan) columnsRead(src *Source, nodes []*Node) []bool {
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
	needed := make([]bool, scan.Schema.Len())
	mark := func(cols []int) {
		for _, i := range cols {
			if i >= 0 && i < len(needed) {
				needed[i] = true
			}
		}
	}
	for _, n := range nodes {
		for _, in := range n.inputs() {
			if in != scan {
				continue
			}
			c := n.calc()
			if c == nil || c.project == nil {
				return nil
			}
			if c.filter != nil {
				mark(c.filter.Reads)
			}
			for _, e := range c.project {
				mark(e.Reads)
			}
		}
	}
	if scan.TimeAttr >= 0 {
		needed[scan.TimeAttr] = true
	}
	if src.watermark != nil {
		mark(src.watermark.Reads)
	}
	for _, k := range src.Spec.Key {
		mark([]int{scan.Schema.Index(k)})
	}
	// A computed column reads the columns before it: mark from the last
	// one back, so that one read by another is seen before its own turn.
	phys := src.Physical.Len()
	for k := len(src.computed) - 1; k >= 0; k-- {
		if i := phys + k; i < len(needed) && needed[i] {
			mark(src.computed[k].Reads)
		}
	}
	needed = needed[:min(phys, len(needed))]
	for _, ok := range needed {
		if !ok {
			return needed
		}
	}
	return nil
}
