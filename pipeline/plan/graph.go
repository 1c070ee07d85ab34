package plan

import (
	"fmt"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Graph instantiates the plan as a runtime graph with fresh operator state.
// The connectors are the plan's own: a plan runs once.
func (p *Plan) Graph() (*runtime.Graph, error) {
	if len(p.Sinks) != len(p.Spec.Sinks) {
		// Build refuses such a plan; a run must never write to fewer
		// sinks than its file declares.
		return nil, fmt.Errorf("plan: %d of the %d declared sinks are planned", len(p.Sinks), len(p.Spec.Sinks))
	}
	g := &runtime.Graph{Name: p.Spec.Name}
	built := map[*Node]*runtime.Node{}
	for _, d := range p.deadLetterOrder {
		g.DeadLetters = append(g.DeadLetters, d.node)
		if d.table != nil {
			built[d.table.Root] = &d.node.Node
		}
	}
	scanned := p.scannedSources()
	for _, s := range p.Sources {
		sn := sourceNode(s, scanned[s])
		g.Sources = append(g.Sources, sn)
		built[s.scanNode()] = &sn.Node
	}
	owners, transforms := p.opOwners()
	opIDs := p.opIDs()
	aliases := p.stateAliases()
	var build func(n *Node) (*runtime.Node, error)
	build = func(n *Node) (*runtime.Node, error) {
		if rn, ok := built[n]; ok {
			return rn, nil
		}
		if n.Kind == UnionNode {
			un := &runtime.UnionNode{Node: runtime.Node{Name: n.Label, Short: opIDs[n], Kind: "transform", ID: owners[n], Transform: transforms[n]}}
			for _, in := range n.Inputs {
				rn, err := build(in)
				if err != nil {
					return nil, err
				}
				un.Inputs = append(un.Inputs, rn)
			}
			g.Unions = append(g.Unions, un)
			built[n] = &un.Node
			return &un.Node, nil
		}
		if n.Kind == ValuesNode {
			sn := constSourceNode(n, owners[n], transforms[n], aliases[n])
			g.Sources = append(g.Sources, sn)
			built[n] = &sn.Node
			return &sn.Node, nil
		}
		if n.Kind == JoinNode {
			rn, err := p.joinGraph(g, n, owners[n], opIDs[n], transforms[n], aliases[n], build)
			if err == nil {
				built[n] = rn
			}
			return rn, err
		}
		in, err := build(n.Input)
		if err != nil {
			return nil, err
		}
		if c := n.calc(); c != nil && c.filter == nil && c.project == nil {
			// A pure renaming: the rows pass unchanged.
			built[n] = in
			return in, nil
		}
		op, feed, err := p.operator(n, transforms[n])
		if err != nil {
			return nil, err
		}
		as := aliases[n]
		if n.Kind == NormalizeNode {
			// Checkpoints written before the normalization had an ID of
			// its own hold it under the one the coordinator derived
			// then: its plan and its place among the graph's operators.
			as = append(slices.Clone(as), fmt.Sprintf("transform/%s/%d", n.Label, len(g.Ops)))
		}
		on := &runtime.OpNode{Node: runtime.Node{Name: n.Label, Short: opIDs[n], Kind: "transform", ID: owners[n], Transform: transforms[n],
			Fingerprint: fmt.Sprintf("%s, input %s, output %s", n.Label, n.stateInput(), n.Schema), Feed: feed, Aliases: as}, Input: in, Op: op}
		on.StateTTL = p.setStateTTL(op, n, transforms[n])
		if err := p.lateRows(on, n); err != nil {
			return nil, err
		}
		g.Ops = append(g.Ops, on)
		built[n] = &on.Node
		return &on.Node, nil
	}
	for _, s := range p.Sinks {
		in, err := build(s.Input.Root)
		if err != nil {
			return nil, err
		}
		g.Sinks = append(g.Sinks, &runtime.SinkNode{
			Node: runtime.Node{Name: s.Spec.Name, Kind: "sink", ID: "sink/" + s.Spec.Name, Feed: s.feed,
				Fingerprint: fmt.Sprintf("type %s, mode %s, key %s, input %s", s.Spec.Type, s.Mode, keyNames(s.Key, s.Input.Root.Schema.Names()), s.Input.Root.Schema)},
			Input: in, Sink: s.Conn, Mode: s.Mode,
			Key: s.Key, Compact: s.Mode == connector.Upsert && p.Spec.MiniBatch,
		})
	}
	// Where each operator's transform is in the file: a refusal of its
	// saved state points there.
	at := map[string]string{}
	for _, st := range p.Spec.Transforms {
		at[st.Name] = st.Pos.String()
	}
	for _, on := range g.Ops {
		on.Pos = at[on.Transform]
	}
	return g, nil
}

// lateRows gives an operator that drops late rows the way into the
// pipeline's late_rows: dead-letter, a policy of its transform's.
func (p *Plan) lateRows(on *runtime.OpNode, n *Node) error {
	if _, ok := on.Op.(operator.LateReporter); !ok || p.late == nil {
		return nil
	}
	policy, err := runtime.NewPolicy("transform", on.Transform, "dead-letter", p.late, p.lateLog)
	if err != nil {
		return err
	}
	on.Late = policy.Feed()
	if n.Kind == JoinNode {
		for _, in := range n.Inputs {
			on.LateInputs = append(on.LateInputs, in.Schema)
		}
		return nil
	}
	on.LateColumns = n.Input.Schema
	return nil
}

// sourceNode is the runtime node of source s; scanned says a query
// reads it as a table (not only a lookup join by key).
func sourceNode(s *Source, scanned bool) *runtime.SourceNode {
	sn := &runtime.SourceNode{
		Node: runtime.Node{Name: s.Spec.Name, Kind: "source", ID: "source/" + s.Spec.Name,
			Fingerprint: fmt.Sprintf("type %s, schema %s", s.Spec.Type, s.Physical), Feed: s.feed},
		Source:  s.Conn,
		Columns: s.Physical,
	}
	if s.paths != nil {
		sn.Columns = row.Schema{Fields: append(slices.Clip(s.Physical.Fields), s.pathFields...)}
		// The decoded rows leave the computed columns' room before the
		// paths (pushProjections), which Columns does not name.
		sn.GapAt, sn.Gap = s.Physical.Len(), s.Table.Root.Schema.Len()-s.Physical.Len()
	}
	if s.lookedUp && !scanned {
		// Only lookup joins read it: looked up, never scanned.
		sn.Source = joinop.EmptySource{}
	}
	if s.computed != nil {
		sn.Calc = computedCalc(s)
		sn.Compute = computeRows(s)
	}
	if s.watermark != nil {
		sn.EventTime = eventTime(s)
		sn.IdleTimeout = s.Spec.IdleTimeout
		attr := s.Table.Root.TimeAttr
		sn.RowTime = func(r row.Row) int64 { return r[attr].Micros() }
		// What they read: a source may decode those columns only.
		sn.TimeReads = append([]int{attr}, s.watermark.Reads...)
		if wm := s.watermark; wm.Shifted && wm.ShiftColumn == attr {
			sn.TimeShift = &runtime.TimeShift{Column: attr, Micros: wm.ShiftMicros}
		}
	}
	return sn
}

// eventTime gives a row's watermark candidate: the source's watermark
// expression over it. A row without an event time (NULL: absent, or a
// computed one whose text did not parse) cannot be placed in any window
// or interval, so it is a bad record for the source's on_error, named by
// its column, as a failing watermark expression is.
func eventTime(s *Source) func(r row.Row) (int64, bool, error) {
	wm, attr := s.watermark, s.Table.Root.TimeAttr
	name := s.Table.Root.Schema.Fields[attr].Name
	if wm.Shifted && wm.ShiftColumn == attr {
		// The column less a constant, read without the expression's
		// calls; Eval only for the error of an overflow.
		by := wm.ShiftMicros
		return func(r row.Row) (int64, bool, error) {
			v := r[attr]
			if v.IsNull() {
				return 0, false, fmt.Errorf("event-time column %q is NULL", name)
			}
			us := v.Micros()
			if t := us + by; (us >= 0) != (by >= 0) || (t >= 0) == (us >= 0) {
				return t, true, nil
			}
			_, err := wm.Eval(r)
			return 0, false, fmt.Errorf("watermark: %w", err)
		}
	}
	return func(r row.Row) (int64, bool, error) {
		if r[attr].IsNull() {
			return 0, false, fmt.Errorf("event-time column %q is NULL", name)
		}
		v, err := wm.Eval(r)
		if err != nil {
			return 0, false, fmt.Errorf("watermark: %w", err)
		}
		if v.IsNull() {
			return 0, false, nil
		}
		return v.Micros(), true, nil
	}
}

// legacyOwners names each transform's operators as checkpoints of
// format 3 and before did: "transform/<name>/<depth>", depth counted from
// the transform's result down its input chain (below a union or a join
// the input's number, "2/u1/0"). A filter added after an aggregate moved
// its depth, so those names did not survive an edit; opOwners replaced
// them, and a restore of an older checkpoint matches by these.
// transforms maps each operator to the name of the transform it belongs
// to.
func (p *Plan) legacyOwners() (owners, transforms map[*Node]string) {
	roots := map[*Node]bool{}
	for _, s := range p.Sources {
		roots[s.Table.Root] = true
	}
	for _, t := range p.Transforms {
		roots[t.Root] = true
	}
	owners, transforms = map[*Node]string{}, map[*Node]string{}
	for _, t := range p.Transforms {
		var walk func(n *Node, prefix string, depth int)
		walk = func(n *Node, prefix string, depth int) {
			if n == nil || n != t.Root && roots[n] {
				return
			}
			if _, ok := owners[n]; !ok {
				owners[n] = fmt.Sprintf("transform/%s/%s%d", t.Name, prefix, depth)
				transforms[n] = t.Name
			}
			if n.Kind == UnionNode || n.Kind == JoinNode {
				tag := "u"
				if n.Kind == JoinNode {
					tag = "j"
				}
				for i, in := range n.Inputs {
					walk(in, fmt.Sprintf("%s%d/%s%d/", prefix, depth, tag, i), 0)
				}
				return
			}
			walk(n.Input, prefix, depth+1)
		}
		walk(t.Root, "", 0)
	}
	return owners, transforms
}

// A streaming GROUP BY with mini_batch holds up to miniBatchSize input
// changes, or miniBatchLatency, before it emits the net change per key
// (Flink's table.exec.mini-batch.size and allow-latency, which Flink
// leaves to the user). What is held is one entry per key touched, not per
// change, so the size can be large: the latency is the bound that acts
// first on a fast stream (at 600k rows/s a 100k-key GROUP BY then emits
// about one change pair per key per second instead of one per row).
const (
	miniBatchSize    = 1 << 20
	miniBatchLatency = time.Second
)

// operator builds n's operator, and the feed of its node into the error
// policy of the scan it computes on (nil for none).
func (p *Plan) operator(n *Node, transform string) (operator.Lifecycle, *runtime.Feed, error) {
	if n.op == nil {
		return nil, nil, fmt.Errorf("plan: no operator for node %q", n.Label)
	}
	var feed *runtime.Feed
	if src := n.scan(); src != nil {
		feed = src.policy.Feed()
	}
	op, err := n.op.operator(opBuild{p: p, n: n, transform: transform, feed: feed})
	return op, feed, err
}

// columnsOf returns the input column of each expression, when every one
// is a column as it is (runtime.Calc.Columns), else nil.
func columnsOf(cs []*expr.Compiled) []int {
	if len(cs) == 0 {
		return nil
	}
	cols := make([]int, len(cs))
	for i, c := range cs {
		if !c.IsColumn {
			return nil
		}
		cols[i] = c.Column
	}
	return cols
}

func evals(cs []*expr.Compiled) []func(row.Row) (row.Value, error) {
	if cs == nil {
		return nil
	}
	out := make([]func(row.Row) (row.Value, error), len(cs))
	for i, c := range cs {
		out[i] = c.Eval
	}
	return out
}

// computedCalc appends a source's computed columns to its physical row,
// on the source's goroutine (one computeRows row for all).
func computedCalc(s *Source) *runtime.Calc {
	width := s.Table.Root.Schema.Len()
	compute := computeRows(s)()
	project := make([]func(row.Row) (row.Value, error), width+len(s.paths))
	// The first column computes the whole row into compute's scratch; the
	// others read it. Calc evaluates project in order, per row.
	var scratch row.Row
	project[0] = func(r row.Row) (row.Value, error) {
		var err error
		scratch, err = compute(r)
		if err != nil {
			return row.NullValue, err
		}
		return scratch[0], nil
	}
	for j := 1; j < len(project); j++ {
		project[j] = func(row.Row) (row.Value, error) { return scratch[j], nil }
	}
	return &runtime.Calc{Name: "source " + s.Spec.Name, Project: project}
}

// computeRows returns a maker of functions that turn a source's physical
// row into its table row: the computed columns after the physical ones,
// each of which may read the ones before it, so they are evaluated in
// order into the growing row. When the connector decodes nested paths
// (Source.paths), its rows already have the table's layout: the paths'
// columns after a gap as wide as the computed ones (connector.NestedSource),
// which are evaluated there, in the decoded row, and that row is the
// result (a row's computed columns depend on its other columns only, so
// computing a row again gives the same). Without paths the rows are the
// physical ones, copied into a scratch row of the function's own, valid
// until its next call: one function per goroutine
// (runtime.SourceNode.Compute: a fused Calc's decoders).
func computeRows(s *Source) func() func(row.Row) (row.Row, error) {
	width := s.Table.Root.Schema.Len()
	phys := s.Physical.Len()
	computed := s.computed
	inPlace := s.paths != nil
	return func() func(row.Row) (row.Row, error) {
		var scratch row.Row
		if !inPlace {
			scratch = make(row.Row, width)
		}
		return func(r row.Row) (row.Row, error) {
			if inPlace {
				scratch = r
			} else {
				copy(scratch, r[:phys])
			}
			for k, c := range computed {
				v, err := c.Eval(scratch)
				if err != nil {
					return nil, err
				}
				scratch[phys+k] = v
			}
			return scratch, nil
		}
	}
}

// joinGraph builds a join as a union of its two inputs, which aligns
// their barriers and tags each batch with its side, followed by the
// join operator.
func (p *Plan) joinGraph(g *runtime.Graph, n *Node, id, short, transform string, aliases []string, build func(*Node) (*runtime.Node, error)) (*runtime.Node, error) {
	var inputAliases []string
	for _, a := range aliases {
		inputAliases = append(inputAliases, a+"/inputs")
	}
	un := &runtime.UnionNode{Node: runtime.Node{Name: "inputs of " + n.Label, Kind: "transform", ID: id + "/inputs", Transform: transform, Aliases: inputAliases}}
	un.Build, un.BuildFirst, un.Strict = buildInput(n, p.Batch)
	for _, in := range n.Inputs {
		rn, err := build(in)
		if err != nil {
			return nil, err
		}
		un.Inputs = append(un.Inputs, rn)
	}
	g.Unions = append(g.Unions, un)
	left, right := n.Inputs[0].Schema, n.Inputs[1].Schema
	if j := n.joined(); j != nil && j.wholeInputs[0].Len() > 0 {
		left, right = j.wholeInputs[0], j.wholeInputs[1] // narrowJoins
	}
	on := &runtime.OpNode{Node: runtime.Node{Name: n.Label, Short: short, Kind: "transform", ID: id, Transform: transform,
		Fingerprint: fmt.Sprintf("%s, left %s, right %s, output %s", n.Label, left, right, n.Schema), Aliases: aliases},
		Input: &un.Node}
	op, feed, err := p.operator(n, transform)
	if err != nil {
		return nil, err
	}
	if h, ok := op.(interface{ SetSameInputs() }); ok && un.Inputs[0] == un.Inputs[1] {
		// A self-join: one node feeds both inputs the same rows (an
		// interval join, batch or streaming, run as one instance).
		h.SetSameInputs()
		if s, ok := op.(interface{ SameInputs() bool }); ok && s.SameInputs() && !un.BuildFirst {
			// The join adds each row of its left input to both sides
			// and passes over the right input: read the node once, so
			// its watermarks follow its rows in its own order, not in
			// whichever order a second copy of them would arrive.
			un.Inputs = un.Inputs[:1]
		}
	}
	on.Op, on.Feed = op, feed
	on.StateTTL = p.setStateTTL(on.Op, n, transform)
	if err := p.lateRows(on, n); err != nil {
		return nil, err
	}
	g.Ops = append(g.Ops, on)
	return &on.Node, nil
}

// setStateTTL gives a streaming operator with keyed state the retention
// of `state_ttl` (Plan.stateTTL). It is not part of the fingerprint, so
// changing it keeps the checkpoint. It returns the TTL set, 0 for none.
func (p *Plan) setStateTTL(op operator.Lifecycle, n *Node, transform string) time.Duration {
	setter, ok := op.(operator.TTLSetter)
	if !ok {
		return 0
	}
	ttl := p.stateTTL(n, transform)
	if ttl > 0 {
		setter.SetStateTTL(operator.StateTTL{TTL: ttl})
	}
	return ttl
}
