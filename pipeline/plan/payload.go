package plan

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/runtime/sortop"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// payload is what a node of one kind carries besides the fields every
// node has, and how it becomes that node's operator for a run. The
// logical plan holds specs, never operators: each run builds its own.
type payload interface {
	operator(b opBuild) (operator.Lifecycle, error)
}

// opBuild is what a payload needs to build its operator: the plan (its
// options), the node (its input's mode, its scan's error policy) and the
// transform's name for errors.
type opBuild struct {
	p         *Plan
	n         *Node
	transform string
	// feed is the node's way into the error policy of the scan whose
	// rows it computes on; nil for none.
	feed *runtime.Feed
}

// reject hands a row the operator's expressions fail on to the error
// policy of the scan it came from; nil when there is none, and errors
// then stop the pipeline.
func (b opBuild) reject() func(connector.BadRecord) error {
	if b.feed == nil {
		return nil
	}
	return b.feed.Reject
}

// scanOp is a ScanNode's source; the graph reads it with a source node,
// not an operator.
type scanOp struct{ source *Source }

func (s *scanOp) operator(opBuild) (operator.Lifecycle, error) {
	return nil, fmt.Errorf("plan: a scan of %q is a source, not an operator", s.source.Spec.Name)
}

// calcOp is a CalcNode's filter and projection.
type calcOp struct {
	filter  *expr.Compiled
	project []*expr.Compiled // nil passes rows through
	// colSrc is the input column each output column copies, -1 when
	// computed (nil when unknown); monotonic.go reads it to pick a
	// Top-N's strategy.
	colSrc []int
	// proc marks the output columns that are a bare PROCTIME() call: a
	// processing-time attribute, as Flink types that call's result.
	proc []bool
	// passReads, of a Calc that passes its rows on as they are (project
	// nil: a filter alone), are the columns it and its readers read,
	// once pruneCalcs worked them out; nil for every one.
	passReads []bool
}

func (c *calcOp) operator(b opBuild) (operator.Lifecycle, error) {
	n := b.n
	run, wm, err := c.fresh()
	if err != nil {
		return nil, err
	}
	filter, project, shared, err := run.shared()
	if err != nil {
		return nil, err
	}
	calc := &runtime.Calc{Name: n.Label, Transform: b.transform, Project: evals(project), Columns: columnsOf(project)}
	for _, e := range append([]*expr.Compiled{run.filter}, run.project...) {
		calc.Sequential = calc.Sequential || (e != nil && e.Sequential != "")
	}
	if wm != nil {
		calc.OnWatermark = wm.Set
	}
	calc.ProjectInfallible = c.project != nil
	for _, e := range c.project {
		calc.ProjectInfallible = calc.ProjectInfallible && (e.Infallible || e.Const || e.IsColumn)
	}
	if shared != nil {
		calc.MemoAt, calc.Memo = shared.At, shared.Width
	}
	if filter != nil {
		calc.Filter = filter.True
		calc.FilterReads = append([]int{}, filter.Reads...)
		calc.InputWidth = n.Input.Schema.Len()
	}
	calc.Reject, calc.Input = b.reject(), n.Input.Schema
	return calc, nil
}

// fresh returns the Calc for one run: c itself, or, when an expression
// depends on the rows before (expr.Compiled.Sequential), a copy with
// those compiled again, so that each run starts a seeded RAND's
// sequence afresh and reads its own operator's watermark (wm, nil when
// no expression calls CURRENT_WATERMARK).
func (c *calcOp) fresh() (*calcOp, *expr.Watermark, error) {
	seq, reads := false, false
	for _, e := range append([]*expr.Compiled{c.filter}, c.project...) {
		seq = seq || (e != nil && e.Sequential != "")
		reads = reads || (e != nil && e.ReadsWatermark)
	}
	if !seq {
		return c, nil, nil
	}
	var wm *expr.Watermark
	if reads {
		wm = expr.NewWatermark()
	}
	out := *c
	var err error
	if out.filter, err = c.filter.Fresh(wm); err != nil {
		return nil, nil, err
	}
	if c.project != nil {
		out.project = make([]*expr.Compiled, len(c.project))
		for i, e := range c.project {
			if out.project[i], err = e.Fresh(wm); err != nil {
				return nil, nil, err
			}
		}
	}
	return &out, wm, nil
}

// shared returns the filter and the projection to run: compiled again
// so that a subexpression they repeat is evaluated once per row
// (expr.Share), with how, or as they are when they repeat none. It runs
// when the operator is built, after the planner pushed the source's
// nested fields into columns (FieldPath.ReadAt), so that the memo goes
// after every column the expressions read.
func (c *calcOp) shared() (*expr.Compiled, []*expr.Compiled, *expr.Shared, error) {
	all := c.project
	if c.filter != nil {
		all = append([]*expr.Compiled{c.filter}, c.project...)
	}
	sh, err := expr.Share(all)
	if err != nil || sh == nil {
		return c.filter, c.project, nil, err
	}
	filter, project := (*expr.Compiled)(nil), sh.Exprs
	if c.filter != nil {
		filter, project = sh.Exprs[0], sh.Exprs[1:]
	}
	if c.project == nil {
		project = nil
	}
	return filter, project, sh, nil
}

// groupAggOp is a GroupAggNode's keys and aggregates.
type groupAggOp struct {
	keys []int
	aggs []aggop.AggCall
	// aggMono is each aggregate's monotonicity over an insert-only input
	// (monotonic.go).
	aggMono []monotonicity
	batch   bool
	// state: the columns its state is made for, when aggregates share
	// an argument column.
	state argColumns
}

func (g *groupAggOp) operator(b opBuild) (operator.Lifecycle, error) {
	opt := b.p.groupAggOptions(g.batch, !b.n.Input.Mode.Updating)
	opt.StateCols = g.state.cols
	return b.p.keyed(g.keys, func() (operator.KeyGrouped, error) {
		// Each worker its own user aggregates: they hold state.
		return aggop.NewGroupAgg(g.keys, freshUserAggs(g.aggs), opt)
	})
}

// distinctOp is a DistinctNode: SELECT DISTINCT over every column.
type distinctOp struct {
	keys  []int
	batch bool
}

func (d *distinctOp) operator(b opBuild) (operator.Lifecycle, error) {
	if b.n.Input.Mode.Updating {
		// A retracted row's last copy must delete it: a GROUP BY of
		// every column with no aggregates.
		opt := b.p.groupAggOptions(d.batch, false)
		return b.p.keyed(d.keys, func() (operator.KeyGrouped, error) { return aggop.NewGroupAgg(d.keys, nil, opt) })
	}
	return b.p.keyed(d.keys, func() (operator.KeyGrouped, error) { return aggop.NewDistinct(), nil })
}

// keyed runs a keyed operator as the pipeline's parallelism of workers,
// one unless the file says (`parallelism`: measured on 2 cores, two
// workers were slower than one, as the split costs more than the idle
// core gives while the sources decode). A GROUP BY without
// keys has one group: one worker.
func (p *Plan) keyed(keys []int, build func() (operator.KeyGrouped, error)) (operator.Lifecycle, error) {
	n := p.Spec.Parallelism
	if n == 0 || len(keys) == 0 {
		n = 1
	}
	k, err := runtime.NewKeyed(keys, n, build)
	if err != nil {
		return nil, err
	}
	return k.Op(), nil
}

// groupAggOptions are a GROUP BY's options under the pipeline's
// mini-batch setting.
func (p *Plan) groupAggOptions(batch, insertOnly bool) aggop.GroupAggOptions {
	return aggop.GroupAggOptions{Batch: batch, InsertOnly: insertOnly, MiniBatch: p.Spec.MiniBatchAggregate, MiniBatchSize: miniBatchSize, MiniBatchLatency: miniBatchLatency,
		LocalPhase: p.Spec.TwoPhaseAggregate}
}

// windowAggOp is a WindowAggNode's window, keys and aggregates.
type windowAggOp struct {
	keys   []int
	aggs   []aggop.AggCall
	window *windowop.WindowSpec
	// attached: over rows that carry their windows
	// (windowop.WindowOptions.Attached); attachedLTZ: those windows were
	// over a TIMESTAMP_LTZ.
	attached, attachedLTZ bool
	batch                 bool
	// updating: its input is a changelog (windowop.WindowOptions.Updating).
	updating bool
	// state: the columns its state is made for, when aggregates share
	// an argument column.
	state argColumns
}

func (w *windowAggOp) operator(b opBuild) (operator.Lifecycle, error) {
	if w.window.ProcTime {
		return windowop.NewProcWindowAgg(*w.window, w.keys, freshUserAggs(w.aggs), windowop.WindowOptions{}, nil)
	}
	opt := windowop.WindowOptions{Batch: w.batch, Attached: w.attached, AttachedLTZ: w.attachedLTZ, Updating: w.updating, Zone: b.p.Spec.Zone}
	session := w.window.Kind == windowop.Session
	build := func() (operator.KeyGrouped, error) {
		// Each worker its own user aggregates: they hold state.
		if session {
			return windowop.NewSessionAgg(w.window.TimeCol, w.window.Gap, w.keys, freshUserAggs(w.aggs), windowop.WindowOptions{Batch: w.batch, Sorted: w.batch, Zone: b.p.Spec.Zone})
		}
		return windowop.NewWindowAgg(*w.window, w.keys, freshUserAggs(w.aggs), opt)
	}
	var op operator.Lifecycle
	var err error
	if _, why := w.keyedBy(b.n); why != "" {
		op, err = build()
	} else {
		op, err = b.p.keyed(w.keys, build)
	}
	if err != nil || !session || !w.batch {
		return op, err
	}
	// A batch run's sessions over its input in time order: each fires
	// once no later row can touch it.
	return sortop.NewTimeSorted(op, [2]int{w.window.TimeCol}, windowop.SessionSortedWatermark), nil
}

// overOp is an OverAggNode's OVER spec; reads, once pruneCalcs set it,
// the columns of its input it reads (nil: every one, join_reads.go).
type overOp struct {
	spec  *windowop.OverSpec
	batch bool
	reads []bool
}

func (o *overOp) operator(b opBuild) (operator.Lifecycle, error) {
	sorted := o.batch && o.spec.Sortable()
	build := func() (operator.KeyGrouped, error) {
		// Each worker its own user aggregates: they hold state.
		spec := *o.spec
		spec.Aggs = freshUserAggs(spec.Aggs)
		return windowop.NewOverAgg(spec, windowop.WindowOptions{Batch: o.batch, Sorted: sorted})
	}
	var op operator.Lifecycle
	var err error
	if _, why := o.keyedBy(b.n); why != "" {
		op, err = build()
	} else {
		op, err = b.p.keyed(o.spec.Keys, build)
	}
	if err != nil || !sorted {
		return op, err
	}
	// A batch run's OVER over its input in time order: each row is
	// emitted, and its frame slides, once no earlier row can come.
	return sortop.NewTimeSorted(op, [2]int{o.spec.TimeCol}, windowop.OverSortedWatermark), nil
}

// unnestOp is an UnnestNode's operator template, copied per run, and the
// unnested expression.
type unnestOp struct {
	unnest *runtime.Unnest
	of     *expr.Compiled
}

func (u *unnestOp) operator(b opBuild) (operator.Lifecycle, error) {
	op := *u.unnest
	op.Transform, op.Reject, op.Input = b.transform, b.reject(), b.n.Input.Schema
	return &op, nil
}

// rankOp is a RankNode's Top-N.
type rankOp struct{ spec *rankop.RankSpec }

func (r *rankOp) operator(b opBuild) (operator.Lifecycle, error) {
	build := func() (operator.KeyGrouped, error) {
		if r.spec.Strategy == rankop.UpdateFast {
			return rankop.NewUpdatableTopN(*r.spec)
		}
		return rankop.NewTopN(*r.spec), nil
	}
	if _, why := r.keyedBy(b.n); why != "" {
		return build()
	}
	return b.p.keyed(r.spec.Partition, build)
}

// dedupOp is a DedupNode's deduplication.
type dedupOp struct{ spec *rankop.DedupSpec }

func (d *dedupOp) operator(b opBuild) (operator.Lifecycle, error) {
	if _, why := d.keyedBy(b.n); why != "" {
		return rankop.NewDedup(*d.spec), nil
	}
	return b.p.keyed(d.spec.Key, func() (operator.KeyGrouped, error) { return rankop.NewDedup(*d.spec), nil })
}

// windowTableOp is a WindowTableNode's window TVF.
type windowTableOp struct{ table *windowop.WindowTable }

func (w *windowTableOp) operator(opBuild) (operator.Lifecycle, error) {
	t := *w.table
	if t.Spec.Kind == windowop.Session {
		return windowop.NewSessionTable(t)
	}
	return &t, nil
}

// windowRankOp is a WindowRankNode's window Top-N or deduplication.
type windowRankOp struct{ spec *windowop.WindowRankSpec }

func (w *windowRankOp) operator(opBuild) (operator.Lifecycle, error) {
	return windowop.NewWindowRank(*w.spec)
}

// joinOp is a JoinNode's join: a regular one (join), or one of the
// special joins whose spec is set beside it.
type joinOp struct {
	join     *joinop.JoinSpec
	interval *joinop.IntervalJoinSpec
	temporal *joinop.TemporalJoinSpec
	window   *joinop.WindowJoinSpec
	// residualReads are the joined row's columns the residual reads.
	residualReads []int
	// residualSrc is the regular join's residual as written over the
	// joined row's field names, for narrowJoins to compile it again
	// over the narrowed row (nil without a residual).
	residualSrc sql.Expr
	// wholeInputs, once narrowJoins narrowed the join's inputs, are
	// their schemas before: what its fingerprint names.
	wholeInputs [2]row.Schema
	// reads, once the plan is pruned, are the columns of each input
	// the join and its readers read (nil: every one).
	reads [2][]bool
}

func (j *joinOp) operator(b opBuild) (operator.Lifecycle, error) {
	switch {
	case j.temporal != nil:
		return joinop.NewTemporalJoin(*j.temporal), nil
	case j.window != nil:
		return joinop.NewWindowJoin(*j.window), nil
	}
	_, why := j.keyedBy(b.n)
	if j.interval != nil {
		var op operator.Lifecycle
		var err error
		if why != "" {
			op = joinop.NewIntervalJoin(*j.interval)
		} else {
			op, err = b.p.keyedTwo(j.interval.LeftKeys, j.interval.RightKeys, func() (operator.KeyGrouped, error) { return joinop.NewIntervalJoin(*j.interval), nil })
		}
		if err != nil || !j.interval.Sorted {
			return op, err
		}
		if j.hashInterval(b.p) {
			// A hash join; op takes the rows of a NULL time and keeps
			// the snapshot's layout, and the sorted join over it the
			// rows past half the state budget.
			h := joinop.NewIntervalHashJoin(*j.interval, op.(operator.TwoInput))
			h.SetSorted(func(inner operator.TwoInput, budget int64) operator.TwoInput {
				s := sortop.NewTimeSorted(inner, [2]int{j.interval.LeftTime, j.interval.RightTime}, j.interval.SortedWatermark)
				s.(interface{ SetStateBudget(int64) }).SetStateBudget(budget)
				return s.(operator.TwoInput)
			})
			return h, nil
		}
		// A batch run's interval join over its inputs in time order: a
		// row is cached only while a later row may still join it.
		return sortop.NewTimeSorted(op, [2]int{j.interval.LeftTime, j.interval.RightTime}, j.interval.SortedWatermark), nil
	}
	if why != "" {
		return joinop.NewJoin(*j.join), nil
	}
	return b.p.keyedTwo(j.join.LeftKeys, j.join.RightKeys, func() (operator.KeyGrouped, error) { return joinop.NewJoin(*j.join), nil })
}

// hashInterval reports whether a batch interval join runs as a hash
// join (joinop.IntervalHashJoin): an INNER or LEFT one (no right row is
// ever padded) on one worker (the sorted join runs on several; on 2
// cores two workers never paid).
func (j *joinOp) hashInterval(p *Plan) bool {
	return j.interval != nil && j.interval.Sorted && j.interval.HashJoinable() && p.Spec.Parallelism <= 1
}

// keyedTwo runs a keyed two-input operator (a join) as the pipeline's
// parallelism of workers, its inputs split by left and right.
func (p *Plan) keyedTwo(left, right []int, build func() (operator.KeyGrouped, error)) (operator.Lifecycle, error) {
	k, err := runtime.NewKeyedTwo(left, right, max(1, p.Spec.Parallelism), build)
	if err != nil {
		return nil, err
	}
	return k.Op(), nil
}

// regular reports whether the join keeps both inputs' rows in its state
// until they are retracted (none of the special joins).
func (j *joinOp) regular() bool { return j.temporal == nil && j.interval == nil && j.window == nil }

// lookupOp is a LookupJoinNode's lookup table.
type lookupOp struct{ lookup *lookupPlan }

func (l *lookupOp) operator(opBuild) (operator.Lifecycle, error) {
	lp := l.lookup
	lsrc, ok := lp.table.Conn.(connector.LookupSource)
	if !ok {
		return nil, fmt.Errorf("plan: the lookup table %q cannot be looked up", lp.table.Spec.Name)
	}
	lk, err := lsrc.Lookuper(lp.keys)
	if err != nil {
		return nil, fmt.Errorf("the lookup table %q: %w", lp.table.Spec.Name, err)
	}
	spec := lp.spec
	spec.Lookuper = lk
	return joinop.NewLookupJoin(spec), nil
}

// Typed views of a node's payload: nil when the node is of another kind.

func (n *Node) calc() *calcOp { x, _ := n.op.(*calcOp); return x }
func (n *Node) scanned() *Source {
	if x, _ := n.op.(*scanOp); x != nil {
		return x.source
	}
	return nil
}
func (n *Node) groupAgg() *groupAggOp       { x, _ := n.op.(*groupAggOp); return x }
func (n *Node) windowAgg() *windowAggOp     { x, _ := n.op.(*windowAggOp); return x }
func (n *Node) joined() *joinOp             { x, _ := n.op.(*joinOp); return x }
func (n *Node) overed() *overOp             { x, _ := n.op.(*overOp); return x }
func (n *Node) windowTable() *windowTableOp { x, _ := n.op.(*windowTableOp); return x }
func (n *Node) deduped() *dedupOp           { x, _ := n.op.(*dedupOp); return x }
func (n *Node) ranked() *rankOp             { x, _ := n.op.(*rankOp); return x }

// windowJoin is a JoinNode's window join, nil for a node of another kind
// or another join.
func (n *Node) windowJoin() *joinop.WindowJoinSpec {
	if j := n.joined(); j != nil {
		return j.window
	}
	return nil
}
