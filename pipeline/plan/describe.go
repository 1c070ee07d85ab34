package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// Description is the plan as plain data: what `etld explain --format
// json` prints and what the web console draws. It holds no connector
// options, only names, types, SQL labels and modes; a literal in the SQL
// may still have come from a ${VAR}, so callers that show it to people
// pass it through Redacted first.
//
// The graph: Nodes lists the sources, then each transform followed by
// its operators in data-flow order (deepest input first), then the
// sinks. A transform node groups its operators (their Parent) and joins
// no edge itself; Edges join sources, operators and sinks, in the
// direction rows flow.
type Description struct {
	Name  string     `json:"name"`
	File  string     `json:"file"`
	Mode  string     `json:"mode"` // "streaming" or "batch"
	Nodes []NodeInfo `json:"nodes"`
	Edges []EdgeInfo `json:"edges"`
}

// Node kinds of a Description.
const (
	KindSource    = "source"
	KindTransform = "transform"
	KindOperator  = "operator"
	KindSink      = "sink"
)

// NodeInfo is one node of a Description.
type NodeInfo struct {
	// ID is stable across runs and edits of other elements:
	// "source:NAME", "transform:NAME", "transform:NAME/KIND#N" for the
	// transform's Nth operator of that kind in data-flow order (NAME its
	// uid when it has one), "sink:NAME".
	ID   string `json:"id"`
	Kind string `json:"kind"` // source, transform, operator or sink
	// Label is what to draw: the name from the file for sources,
	// transforms and sinks, Flink's operator description for operators
	// (e.g. "GroupAggregate(groupBy=[id], select=[COUNT(*)])").
	Label string `json:"label"`
	// Name is the element's name in the file (for an operator, its
	// transform's).
	Name string `json:"name"`
	// Parent is an operator's transform node.
	Parent string `json:"parent,omitempty"`
	// Operator is an operator's kind: calc, group_aggregate,
	// window_aggregate, over_aggregate or distinct.
	Operator string `json:"operator,omitempty"`
	// OperatorID is an operator's short name, "<transform>/<kind>#<n>"
	// (oplabel.go): its `operator` label in /metrics and its name in
	// /pipelines, which stay put when the SQL around it changes.
	OperatorID string `json:"operator_id,omitempty"`
	// Connector is a source's or sink's type (file, kafka, ...).
	Connector string `json:"connector,omitempty"`
	// Schema is the node's output columns; a sink's is its input's.
	Schema []Column `json:"schema"`
	// Changelog is the kinds of change the node emits; a sink's is the
	// kinds it receives in its mode (an upsert sink gets no -U).
	Changelog ChangelogInfo `json:"changelog"`
	// UpsertKey names the columns that identify a row of the node's
	// output: null when no key is known, [] for the single row of a
	// global aggregate. A sink's is the key it writes by.
	UpsertKey []string `json:"upsert_key"`
	Bounded   bool     `json:"bounded"`
	// Watermark is a source's watermark expression and EventTime its
	// event-time attribute.
	Watermark string `json:"watermark,omitempty"`
	EventTime string `json:"event_time,omitempty"`
	// SinkMode is a sink's chosen mode: append, upsert or retract;
	// SinkKey the key an upsert sink writes by (also in UpsertKey, which
	// tells no key, null, from the empty key of a global aggregate).
	SinkMode string   `json:"sink_mode,omitempty"`
	SinkKey  []string `json:"sink_key,omitempty"`
	// Stateful marks an operator that keeps state across rows (group
	// and window aggregates, DISTINCT). StateID is the name its state
	// has in checkpoints and in the runtime (runtime.Node.ID), under
	// which a running pipeline reports its state.
	Stateful bool   `json:"stateful,omitempty"`
	StateID  string `json:"state_id,omitempty"`
	// StateTTL is the operator's `state_ttl` retention ("1h"), empty
	// when its state is kept forever or freed by the watermark.
	StateTTL string `json:"state_ttl,omitempty"`
}

// Column is one column of a schema.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// ChangelogInfo is a changelog mode in Flink's notation: the kinds
// ["I"] or ["I","UB","UA","D"], and the text "[I]" or "[I,UB,UA,D]".
type ChangelogInfo struct {
	Kinds []string `json:"kinds"`
	Text  string   `json:"text"`
}

// EdgeInfo is rows flowing from one node to another, labelled with the
// changelog mode and upsert key of what flows.
type EdgeInfo struct {
	From      string        `json:"from"`
	To        string        `json:"to"`
	Changelog ChangelogInfo `json:"changelog"`
	// UpsertKey is null when no key is known, [] for a global aggregate.
	UpsertKey []string `json:"upsert_key"`
	// Lookup marks the edge from a lookup join's table to the join: the
	// join looks rows up by key, no stream flows.
	Lookup bool `json:"lookup,omitempty"`
}

// KeyText is an upsert key as explain's text shows it: "none" for no
// key, else "[a, b]".
func KeyText(key []string) string {
	if key == nil {
		return "none"
	}
	return "[" + strings.Join(key, ", ") + "]"
}

func changelogInfo(kinds ...string) ChangelogInfo {
	return ChangelogInfo{Kinds: kinds, Text: "[" + strings.Join(kinds, ",") + "]"}
}

func (c Changelog) info() ChangelogInfo {
	if c.Updating {
		return changelogInfo("I", "UB", "UA", "D")
	}
	return changelogInfo("I")
}

// upsertKey names c's key columns: nil for no key, empty for the one-row
// table.
func (c Changelog) upsertKey(names []string) []string {
	if !c.HasKey {
		return nil
	}
	return keyList(c.Key, names)
}

// Describe returns the plan as data. The operator ids and state ids
// follow the names Graph gives the runtime's nodes (opOwners), so that
// what a running pipeline reports per node can be matched to the plan.
func (p *Plan) Describe() Description {
	mode := "streaming"
	if p.Batch {
		mode = "batch"
	}
	d := Description{Name: p.Spec.Name, File: p.Spec.File, Mode: mode, Nodes: []NodeInfo{}, Edges: []EdgeInfo{}}
	ids := map[*Node]string{}
	for _, s := range p.Sources {
		if s.Table == nil {
			continue // Build refuses such a plan; nothing to draw
		}
		n := s.Table.Root
		id := "source:" + s.Spec.Name
		ids[n] = id
		info := nodeInfo(n)
		info.ID, info.Kind, info.Label, info.Name, info.Connector = id, KindSource, s.Spec.Name, s.Spec.Name, s.Spec.Type
		if s.Spec.Watermark != nil && n.TimeAttr >= 0 {
			info.Watermark = strings.TrimSpace(s.Spec.Watermark.Text)
			info.EventTime = n.Schema.Fields[n.TimeAttr].Name
		}
		d.Nodes = append(d.Nodes, info)
	}
	owners, transforms := p.opOwners()
	opIDs := p.opIDs()
	for _, t := range p.Transforms {
		group := nodeInfo(t.Root)
		group.ID, group.Kind, group.Label, group.Name = "transform:"+t.Name, KindTransform, t.Name, t.Name
		d.Nodes = append(d.Nodes, group)
		// The operators this transform owns, from the table it reads up
		// to its result: listed and joined in data-flow order.
		for _, n := range chain(t, transforms) {
			id := "transform:" + strings.TrimPrefix(owners[n], "transform/")
			ids[n] = id
			info := nodeInfo(n)
			info.ID, info.Kind, info.Label, info.Name, info.Parent = id, KindOperator, n.Label, t.Name, group.ID
			info.Operator, info.OperatorID = operatorName(n.Kind), opIDs[n]
			if n.keepsState() {
				info.Stateful, info.StateID = true, owners[n]
			}
			if ttl := p.stateTTL(n, t.Name); ttl > 0 {
				info.StateTTL = durationText(ttl)
			}
			d.Nodes = append(d.Nodes, info)
			for _, in := range n.inputs() {
				if from, ok := ids[in]; ok {
					d.Edges = append(d.Edges, edgeInfo(from, id, in))
				}
			}
			if l, ok := n.op.(*lookupOp); ok && l.lookup.table.Table != nil {
				// The table looked up feeds the join, though no rows flow
				// from it as a stream.
				e := edgeInfo("source:"+l.lookup.table.Spec.Name, id, l.lookup.table.Table.Root)
				e.Lookup = true
				d.Edges = append(d.Edges, e)
			}
		}
	}
	for _, s := range p.Sinks {
		in := s.Input.Root
		id := "sink:" + s.Spec.Name
		info := nodeInfo(in)
		info.ID, info.Kind, info.Label, info.Name, info.Connector = id, KindSink, s.Spec.Name, s.Spec.Name, s.Spec.Type
		info.SinkMode = s.Mode.String()
		info.Changelog = sinkChangelog(s.Mode, in.Mode)
		info.UpsertKey = nil
		if s.Mode == connector.Upsert && s.Key != nil {
			// A nil key is an upsert sink that needs none; an empty
			// one the single row of a global aggregate.
			info.SinkKey = keyList(s.Key, in.Schema.Names())
			info.UpsertKey = info.SinkKey
		}
		d.Nodes = append(d.Nodes, info)
		if from, ok := ids[in]; ok {
			d.Edges = append(d.Edges, edgeInfo(from, id, in))
		}
	}
	return d
}

// nodeInfo fills what every node has: schema, changelog, key, bounded.
func nodeInfo(n *Node) NodeInfo {
	cols := make([]Column, len(n.Schema.Fields))
	for i, f := range n.Schema.Fields {
		cols[i] = Column{Name: f.Name, Type: f.Type.String()}
	}
	return NodeInfo{Schema: cols, Changelog: n.Mode.info(), UpsertKey: n.Mode.upsertKey(n.Schema.Names()), Bounded: n.Bounded}
}

func edgeInfo(from, to string, n *Node) EdgeInfo {
	return EdgeInfo{From: from, To: to, Changelog: n.Mode.info(), UpsertKey: n.Mode.upsertKey(n.Schema.Names())}
}

// sinkChangelog is what a sink receives in its mode (Flink's sink
// changelog modes): append gets +I, retract every kind, upsert no -U.
func sinkChangelog(m connector.Mode, in Changelog) ChangelogInfo {
	switch {
	case !in.Updating || m == connector.Append:
		return changelogInfo("I")
	case m == connector.Upsert:
		return changelogInfo("I", "UA", "D")
	}
	return changelogInfo("I", "UB", "UA", "D")
}

func operatorName(k NodeKind) string {
	switch k {
	case CalcNode:
		return "calc"
	case GroupAggNode:
		return "group_aggregate"
	case WindowAggNode:
		return "window_aggregate"
	case OverAggNode:
		return "over_aggregate"
	case MatchNode:
		return "match_recognize"
	case DistinctNode:
		return "distinct"
	case RankNode:
		return "rank"
	case SortNode:
		return "sort"
	case DedupNode:
		return "deduplicate"
	case NormalizeNode:
		return "changelog_normalize"
	case WindowTableNode:
		return "window_table"
	case WindowRankNode:
		return "window_rank"
	case ScanNode:
		return "scan"
	case ValuesNode:
		return "values"
	case UnionNode:
		return "union"
	case UnnestNode:
		return "unnest"
	case FunctionNode:
		return "function_calc"
	case LateralNode:
		return "lateral_table"
	case JoinNode:
		return "join"
	case LookupJoinNode:
		return "lookup_join"
	case SetOpNode:
		return "set_operation"
	case ExpandNode:
		return "expand"
	case SingleRowNode:
		return "single_value"
	case DeadLettersNode:
		return "dead_letters"
	}
	// A kind without a name here would be named by its number, which
	// moves when a kind is added before it: TestEveryKindHasAName keeps
	// this from being reached.
	return fmt.Sprintf("node%d", k)
}

// Redacted returns a copy of d with every string passed through redact,
// for showing a description to people: a ${VAR} value that reached a
// SQL literal, a name or the file path is then hidden, as in every other
// output of etld.
func (d Description) Redacted(redact func(string) string) Description {
	out := Description{Name: redact(d.Name), File: redact(d.File), Mode: d.Mode}
	list := func(xs []string) []string {
		if xs == nil {
			return nil
		}
		ys := make([]string, len(xs))
		for i, x := range xs {
			ys[i] = redact(x)
		}
		return ys
	}
	out.Nodes = make([]NodeInfo, len(d.Nodes))
	for i, n := range d.Nodes {
		n.ID, n.Label, n.Name, n.Parent = redact(n.ID), redact(n.Label), redact(n.Name), redact(n.Parent)
		n.Watermark, n.EventTime, n.StateID, n.OperatorID = redact(n.Watermark), redact(n.EventTime), redact(n.StateID), redact(n.OperatorID)
		cols := make([]Column, len(n.Schema))
		for j, c := range n.Schema {
			cols[j] = Column{Name: redact(c.Name), Type: c.Type}
		}
		n.Schema = cols
		n.UpsertKey, n.SinkKey = list(n.UpsertKey), list(n.SinkKey)
		out.Nodes[i] = n
	}
	out.Edges = make([]EdgeInfo, len(d.Edges))
	for i, e := range d.Edges {
		e.From, e.To, e.UpsertKey = redact(e.From), redact(e.To), list(e.UpsertKey)
		out.Edges[i] = e
	}
	return out
}
