package plan

import (
	"fmt"
	"strings"
)

// Mermaid draws descriptions as one Mermaid `flowchart LR`, with the
// same labels as Dot: sources as trapezoids, sinks as cylinders,
// operators as rounded boxes (stateful ones as subroutine boxes) inside
// a subgraph per transform, edges labelled with changelog mode and
// upsert key. Several descriptions (a directory) become one subgraph
// each. Node ids are generated (p0n3): names from the file may hold any
// character, and only labels are quoted in Mermaid.
func Mermaid(ds []Description) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for i, d := range ds {
		indent := "  "
		if len(ds) > 1 {
			fmt.Fprintf(&b, "  subgraph p%d[%s]\n", i, mermaidQuote(fmt.Sprintf("pipeline %s (%s, %s)", d.Name, d.File, d.Mode)))
			indent = "    "
		}
		mermaidPipeline(&b, d, fmt.Sprintf("p%d", i), indent)
		if len(ds) > 1 {
			b.WriteString("  end\n")
		}
	}
	return b.String()
}

func mermaidPipeline(b *strings.Builder, d Description, prefix, indent string) {
	ids := map[string]string{}
	for i, n := range d.Nodes {
		ids[n.ID] = fmt.Sprintf("%sn%d", prefix, i)
	}
	ops := children(d)
	for _, n := range d.Nodes {
		switch n.Kind {
		case KindTransform:
			fmt.Fprintf(b, "%ssubgraph %s[%s]\n", indent, ids[n.ID], mermaidQuote("transform "+n.Label))
			for _, op := range ops[n.ID] {
				mermaidNode(b, op, ids[op.ID], indent+"  ")
			}
			fmt.Fprintf(b, "%send\n", indent)
		case KindSource, KindSink:
			mermaidNode(b, n, ids[n.ID], indent)
		}
	}
	for _, e := range d.Edges {
		arrow := "-->"
		if e.Lookup {
			arrow = "-.->"
		}
		fmt.Fprintf(b, "%s%s %s|%s| %s\n", indent, ids[e.From], arrow, mermaidQuote(strings.Join(edgeLines(e), "\n")), ids[e.To])
	}
}

func mermaidNode(b *strings.Builder, n NodeInfo, id, indent string) {
	open, close := "(", ")"
	switch {
	case n.Kind == KindSource:
		open, close = "[/", `\]`
	case n.Kind == KindSink:
		open, close = "[(", ")]"
	case n.Stateful:
		open, close = "[[", "]]"
	}
	fmt.Fprintf(b, "%s%s%s%s%s\n", indent, id, open, mermaidQuote(strings.Join(nodeLines(n), "\n")), close)
}

// mermaidQuote makes s a Mermaid quoted label. Mermaid has no escape
// inside quotes, only entity codes (#34; for "), and renders labels as
// HTML: so ", #, &, <, >, |, ` (which would start a Markdown string)
// and % (which starts a comment) become numeric entity codes, and a line
// break <br>.
func mermaidQuote(s string) string {
	return `"` + escapeWith(s, func(r rune) string {
		switch r {
		case '"', '#', '&', '<', '>', '|', '`', '%':
			return fmt.Sprintf("#%d;", r)
		case '\n':
			return "<br>"
		case '\r':
			return " "
		}
		return ""
	}) + `"`
}
