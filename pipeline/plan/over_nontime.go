package plan

import (
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// An OVER window ordered by a column that is not a time attribute, as
// Flink 2.x runs it (NonTimeRangeUnboundedPrecedingFunction and its ROWS
// kin): one ascending column, the frame from UNBOUNDED PRECEDING to the
// current row, aggregates, ROW_NUMBER, RANK and DENSE_RANK. A row
// arriving in the middle of the order changes the results of the rows
// after it, so in streaming the output is updating (retractions, no
// key); the input may be updating too. In batch mode each row is
// emitted once. etld applies the streaming rules in batch too.

// nonTimeSpec reports whether the window is ordered by such a column,
// with its spec, or the error Flink gives for what it does not run.
func (o *overPlan) nonTimeSpec(w *sql.WindowSpec) (*windowop.NonTimeSpec, bool, error) {
	in, s := o.in, o.s
	if len(w.OrderBy) == 0 {
		return nil, false, nil
	}
	ob := w.OrderBy[0]
	x, err := s.unqualify(ob.X)
	if err != nil {
		return nil, false, err
	}
	ref, ok := x.(*sql.ColumnRef)
	if !ok {
		return nil, false, nil
	}
	c := in.Schema.Index(ref.Column.Name)
	if c < 0 || c == in.TimeAttr || procTimeCol(in, c) {
		return nil, false, nil
	}
	name := in.Schema.Fields[c].Name
	switch {
	case len(w.OrderBy) != 1:
		return nil, true, errAt(w.OrderBy[1].Pos(), "an OVER window is ordered by one column (Flink: \"The window can only be ordered by a single time column\"): order by %s alone, or rank by several columns with a Top-N", name)
	case ob.Desc:
		return nil, true, errAt(ob.Pos(), "an OVER window orders ascending (Flink refuses DESC): drop DESC")
	}
	spec := &windowop.NonTimeSpec{Order: c, Rows: o.win.Frame != nil && o.win.Frame.Unit == sql.FrameRows}
	if f := o.win.Frame; f != nil && !f.Unbounded {
		// Flink refuses any bounded frame here ("Non-time attribute sort
		// is not supported for bounded OVER window"); etld runs ROWS N
		// PRECEDING, whose change touches N rows only.
		n, err := o.boundedRows(f, name)
		if err != nil {
			return nil, true, err
		}
		spec.Bounded, spec.Preceding = true, n
	}
	for _, ov := range o.overs {
		switch fn := strings.ToUpper(ov.Call.Name); fn {
		case "LAG", "LEAD":
			if o.q.b.plan.Batch {
				continue // by position in the sorted partition, as Flink's batch
			}
			return nil, true, errAt(ov.Call.At, "%s over a window ordered by %s, which is not a time attribute, is not supported in streaming (Flink 2.3 plans LAG there and fails at run time); order by a time attribute, or run in batch execution", fn, name)
		}
	}
	return spec, true, nil
}

// boundedRows checks a bounded frame over a non-time order: ROWS
// BETWEEN N PRECEDING AND CURRENT ROW over aggregates, and returns N.
func (o *overPlan) boundedRows(f *sql.Frame, name string) (int, error) {
	if f.Unit != sql.FrameRows {
		return 0, errAt(f.At, "an OVER window ordered by %s, which is not a time attribute, takes ROWS BETWEEN N PRECEDING AND CURRENT ROW or a frame from UNBOUNDED PRECEDING (Flink refuses every bounded frame there: \"Non-time attribute sort is not supported for bounded OVER window\"); a RANGE frame needs ORDER BY a time attribute", name)
	}
	n := int64(0)
	if f.Preceding != nil {
		lit, ok := f.Preceding.(*sql.Literal)
		v, err := strconv.ParseInt(litText(lit, ok), 10, 32)
		if !ok || lit.Kind != sql.LitInt || err != nil || v < 0 {
			return 0, errAt(f.Preceding.Pos(), "ROWS takes a whole number of rows PRECEDING (such as ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)")
		}
		n = v
	}
	for _, ov := range o.overs {
		switch fn := strings.ToUpper(ov.Call.Name); fn {
		case "ROW_NUMBER", "RANK", "DENSE_RANK", "LAG", "LEAD", "NTILE", "PERCENT_RANK", "CUME_DIST":
			return 0, errAt(ov.Call.At, "%s over a bounded frame ordered by %s, which is not a time attribute, is not supported: drop the frame (ranks count the rows up to the row)", fn, name)
		}
	}
	return int(n), nil
}

// nonTimeNode builds the OverAggregate of a window ordered by a non-time
// column.
func (o *overPlan) nonTimeNode(pre *Node, outFields []row.Field) *Node {
	batch := o.q.b.plan.Batch
	spec := *o.nonTime
	spec.Keys, spec.Aggs = o.spec.Keys, o.spec.Aggs
	for _, f := range o.spec.Funcs {
		spec.Funcs = append(spec.Funcs, f.Kind)
	}
	if batch {
		spec.Calls = o.spec.Funcs
	}
	node := &Node{
		Kind: OverAggNode, Input: pre, Schema: row.NewSchema(outFields...),
		Mode: overNonTimeMode(batch), TimeAttr: -1, Bounded: o.in.Bounded,
		op: &nonTimeOverOp{spec: spec, batch: batch}, batch: batch,
	}
	if batch {
		node.TimeAttr = o.in.TimeAttr
	}
	node.Label = overLabel(o.keyTexts, o.in.Schema.Fields[spec.Order].Name, o.win, o.aggTexts)
	return node
}

// overNonTimeMode: in streaming a row arriving before others updates
// them: retractions, and no key (rows need not be unique); batch mode
// emits each row once.
func overNonTimeMode(batch bool) Changelog { return Changelog{Updating: !batch} }

// nonTimeOverOp is the operator of such an OverAggNode.
type nonTimeOverOp struct {
	spec  windowop.NonTimeSpec
	batch bool
}

func (o *nonTimeOverOp) operator(opBuild) (operator.Lifecycle, error) {
	return windowop.NewNonTimeOver(o.spec, windowop.WindowOptions{Batch: o.batch})
}
