package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// StateColumns names the columns of the operator whose state is id
// (runtime.Node.ID, Description's StateID): the schema of each of its
// inputs and of its output, for `etld state dump`. An aggregate's
// results are named by their calls (COUNT(*)), as explain shows them,
// not by the internal names ($a0) the plan gives them.
func (p *Plan) StateColumns(id string) (in []row.Schema, out row.Schema, ok bool) {
	owners, _ := p.opOwners()
	for n, owner := range owners {
		if owner != id || n.Kind == UnionNode {
			continue
		}
		switch {
		case n.Kind == JoinNode:
			for _, i := range n.Inputs {
				in = append(in, i.Schema)
			}
		case n.Input != nil:
			in = []row.Schema{n.Input.Schema}
		}
		out = n.Schema
		out = namedAggregates(out, n.Label)
		return in, out, true
	}
	return nil, row.Schema{}, false
}

// namedAggregates renames the result columns of an aggregate ($a0,
// $a1, ...) or an OVER ($o0, ...) after the calls its label lists
// (select=[COUNT(*), SUM(price)]).
func namedAggregates(s row.Schema, label string) row.Schema {
	_, rest, ok := strings.Cut(label, "select=[")
	if !ok {
		return s
	}
	calls := splitTop(rest)
	fields := slices.Clone(s.Fields)
	for i, f := range fields {
		for _, prefix := range []string{"$a", "$o"} {
			var j int
			if _, err := fmt.Sscanf(f.Name, prefix+"%d", &j); err == nil && f.Name == fmt.Sprintf("%s%d", prefix, j) && j < len(calls) {
				fields[i].Name = calls[j]
			}
		}
	}
	return row.NewSchema(fields...)
}

// splitTop splits s at the commas outside parentheses, brackets and
// quotes, up to the bracket that closes the list it starts in.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			if depth == 0 {
				return append(out, strings.TrimSpace(s[start:i]))
			}
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return out
}
