package plan

import "strings"

// The lines the pictures (Dot, Mermaid) draw for nodes and edges, so that
// both say the same.

// nodeLines is what a node's box shows.
func nodeLines(n NodeInfo) []string {
	switch n.Kind {
	case KindSource:
		bounded := "unbounded"
		if n.Bounded {
			bounded = "bounded"
		}
		lines := []string{n.Label, n.Connector + " source, " + bounded}
		if n.Watermark != "" {
			lines = append(lines, "watermark "+n.Watermark)
		}
		return lines
	case KindSink:
		mode := n.Connector + " sink, " + n.SinkMode
		if n.SinkKey != nil {
			mode += " on " + KeyText(n.SinkKey)
		}
		return []string{n.Label, mode}
	case KindOperator:
		if n.Stateful {
			return []string{n.Label, "state " + n.StateID}
		}
	}
	return []string{n.Label}
}

// edgeLines is an edge's label: the changelog mode and, when known, the
// upsert key of the rows that flow; a lookup join's table is looked up.
func edgeLines(e EdgeInfo) []string {
	if e.Lookup {
		return []string{"lookup"}
	}
	if e.UpsertKey == nil {
		return []string{e.Changelog.Text}
	}
	return []string{e.Changelog.Text, "upsertKey=" + KeyText(e.UpsertKey)}
}

// children lists the operators of each transform node, by id, in order.
func children(d Description) map[string][]NodeInfo {
	out := map[string][]NodeInfo{}
	for _, n := range d.Nodes {
		if n.Kind == KindOperator {
			out[n.Parent] = append(out[n.Parent], n)
		}
	}
	return out
}

// replacer escapes s for one picture format, character by character.
func escapeWith(s string, esc func(r rune) string) string {
	var b strings.Builder
	for _, r := range s {
		if e := esc(r); e != "" {
			b.WriteString(e)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
