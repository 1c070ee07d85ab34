package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// Explain renders the plan: every source with its schema, every transform
// as its operator tree with each node's changelog mode and upsert key
// (Flink's EXPLAIN CHANGELOG_MODE, readable), and each sink's mode.
func (p *Plan) Explain() string {
	var b strings.Builder
	mode := "streaming"
	if p.Batch {
		mode = "batch"
	}
	fmt.Fprintf(&b, "pipeline %s (%s, %s)\n", p.Spec.Name, p.Spec.File, mode)
	b.WriteString("\nsources:\n")
	for _, s := range p.Sources {
		n := s.Table.Root
		bounded := "unbounded"
		if n.Bounded {
			bounded = "bounded"
		}
		fmt.Fprintf(&b, "  %s: %s, %s, changelogMode=%s, upsertKey=%s\n", s.Spec.Name, s.Spec.Type, bounded, n.Mode.Kinds(), n.Mode.keyText(n.Schema.Names()))
		fmt.Fprintf(&b, "    schema: %s\n", n.Schema)
		if s.Spec.Watermark != nil {
			fmt.Fprintf(&b, "    watermark: %s (event time: %s)\n", strings.TrimSpace(s.Spec.Watermark.Text), n.Schema.Fields[n.TimeAttr].Name)
		}
	}
	if len(p.Transforms) > 0 {
		b.WriteString("\ntransforms:\n")
	}
	_, owners := p.opOwners()
	for _, t := range p.Transforms {
		n := t.Root
		fmt.Fprintf(&b, "  %s: changelogMode=%s, upsertKey=%s\n", t.Name, n.Mode.Kinds(), n.Mode.keyText(n.Schema.Names()))
		fmt.Fprintf(&b, "    schema: %s\n", n.Schema)
		p.explainNode(&b, n, 2, owners)
	}
	b.WriteString("\nsinks:\n")
	for _, s := range p.Sinks {
		key := ""
		if s.Mode.String() == "upsert" {
			key = " on " + keyNames(s.Key, s.Input.Root.Schema.Names())
		}
		fmt.Fprintf(&b, "  %s: %s <- %s, mode=%s%s\n", s.Spec.Name, s.Spec.Type, s.Input.Name, s.Mode, key)
		if eo, ok := s.Conn.(connector.ExactlyOnceSink); ok {
			if yes, why := eo.ExactlyOnce(); yes {
				b.WriteString("    exactly-once: yes (with a state directory: a restored run skips what a crashed one wrote)\n")
			} else {
				fmt.Fprintf(&b, "    exactly-once: no: %s (at least once)\n", why)
			}
		}
	}
	return b.String()
}

// owners names the transform each operator belongs to, whose state_ttl
// it runs with.
func (p *Plan) explainNode(b *strings.Builder, n *Node, depth int, owners map[*Node]string) {
	pad := strings.Repeat("  ", depth)
	if n.Kind == ScanNode {
		name := "?"
		if src := n.scanned(); src != nil {
			name = src.Spec.Name
		}
		kinds := n.Mode.Kinds()
		if src := n.scanned(); src != nil {
			if u, ok := src.Conn.(connector.UpsertSource); ok && u.Upsert() && n.Mode.Updating {
				kinds = "[I,UA,D]" // Flink's upsert changelog: no -U
			}
		}
		fmt.Fprintf(b, "%sScan(%s), changelogMode=%s\n", pad, name, kinds)
		return
	}
	fmt.Fprintf(b, "%s%s, changelogMode=%s, upsertKey=%s%s%s\n", pad, n.Label, n.Mode.Kinds(), n.Mode.keyText(n.Schema.Names()), p.ttlText(n, owners[n]), p.workersText(n))
	for _, in := range n.inputs() {
		p.explainNode(b, in, depth+1, owners)
	}
}
