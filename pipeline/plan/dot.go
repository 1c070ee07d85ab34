package plan

import (
	"fmt"
	"strings"
)

// Dot draws descriptions as one Graphviz digraph, left to right: sources
// as inverted houses, sinks as cylinders, operators as rounded boxes
// (stateful ones with a double border) inside a dashed cluster per
// transform, and each edge labelled with its changelog mode and upsert
// key. Several descriptions (a directory) become one cluster each.
func Dot(ds []Description) string {
	var b strings.Builder
	name := "etld"
	if len(ds) == 1 {
		name = ds[0].Name
	}
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(name))
	b.WriteString("  rankdir=LR;\n")
	b.WriteString("  graph [fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for i, d := range ds {
		indent := "  "
		prefix := ""
		if len(ds) > 1 {
			// Pipeline names are unique in a directory, so they keep
			// node ids apart.
			prefix = d.Name + "/"
			fmt.Fprintf(&b, "  subgraph %s {\n", dotQuote(fmt.Sprintf("cluster_%d", i)))
			fmt.Fprintf(&b, "    label=%s;\n", dotQuote(fmt.Sprintf("pipeline %s (%s, %s)", d.Name, d.File, d.Mode)))
			indent = "    "
		}
		dotPipeline(&b, d, prefix, indent, i)
		if len(ds) > 1 {
			b.WriteString("  }\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func dotPipeline(b *strings.Builder, d Description, prefix, indent string, pipeline int) {
	ops := children(d)
	transform := 0
	for _, n := range d.Nodes {
		switch n.Kind {
		case KindTransform:
			fmt.Fprintf(b, "%ssubgraph %s {\n", indent, dotQuote(fmt.Sprintf("cluster_%d_%d", pipeline, transform)))
			transform++
			fmt.Fprintf(b, "%s  label=%s; style=dashed;\n", indent, dotQuote("transform "+n.Label))
			for _, op := range ops[n.ID] {
				dotNode(b, op, prefix, indent+"  ")
			}
			fmt.Fprintf(b, "%s}\n", indent)
		case KindSource, KindSink:
			dotNode(b, n, prefix, indent)
		}
	}
	for _, e := range d.Edges {
		style := ""
		if e.Lookup {
			style = ", style=dashed"
		}
		fmt.Fprintf(b, "%s%s -> %s [label=%s%s];\n", indent, dotQuote(prefix+e.From), dotQuote(prefix+e.To), dotQuote(strings.Join(edgeLines(e), "\n")), style)
	}
}

func dotNode(b *strings.Builder, n NodeInfo, prefix, indent string) {
	attrs := ""
	switch {
	case n.Kind == KindSource:
		attrs = "shape=invhouse"
	case n.Kind == KindSink:
		attrs = "shape=cylinder"
	case n.Stateful:
		attrs = "shape=box, style=rounded, peripheries=2"
	default:
		attrs = "shape=box, style=rounded"
	}
	fmt.Fprintf(b, "%s%s [%s, label=%s];\n", indent, dotQuote(prefix+n.ID), attrs, dotQuote(strings.Join(nodeLines(n), "\n")))
}

// dotQuote makes s a DOT quoted string. Inside one only \" is an escape
// of the language, but labels read backslash sequences (\n, \l, \N), so
// a backslash is doubled, and HTML entities (&amp;), so & is written
// &amp;; a line break becomes \n.
func dotQuote(s string) string {
	return `"` + escapeWith(s, func(r rune) string {
		switch r {
		case '"':
			return `\"`
		case '\\':
			return `\\`
		case '&':
			return "&amp;"
		case '\n':
			return `\n`
		case '\r':
			return " "
		}
		return ""
	}) + `"`
}
