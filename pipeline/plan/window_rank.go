package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// This file plans window Top-N and window deduplication:
// a Top-N whose PARTITION BY holds window_start and window_end, over a
// window aggregate's result or over a window TVF read directly. Both are
// insert-only: a window's ranks are emitted when the watermark reaches
// its end, and its state is then freed.

// windowTable plans a window TVF read as a table: its input's columns
// plus window_start, window_end and window_time, one row per window.
// Only a window aggregate runs on processing time.
func (q *queryBuilder) windowTable(s *scope) (*scope, error) {
	if s.windowSpec.ProcTime {
		return nil, errProcWindowTable(s.window)
	}
	if s.node.Mode.Updating {
		return nil, updatingWindowErr(s.window, s.table)
	}
	in := s.node
	timeType := in.Schema.Fields[s.windowSpec.TimeCol].Type
	fields := append(append([]row.Field(nil), in.Schema.Fields...), windowop.WindowColumns(timeType)...)
	wt := &windowop.WindowTable{Spec: *s.windowSpec, LTZ: timeType.ID == row.TimestampLTZ, Batch: q.b.plan.Batch}
	if wt.LTZ {
		wt.Zone = q.b.plan.Spec.Zone
	}
	if s.window.Kind == sql.Session {
		// A session's rows wait for it to end, per PARTITION BY key.
		for _, p := range s.window.PartitionBy {
			wt.Keys = append(wt.Keys, in.Schema.Index(p.Name))
		}
	}
	n := &Node{
		Kind: WindowTableNode, Input: in, Schema: row.NewSchema(fields...),
		Mode: InsertOnly, TimeAttr: len(fields) - 1, Bounded: in.Bounded,
		op: &windowTableOp{table: wt},
	}
	n.Label = fmt.Sprintf("WindowTableFunction(window=[%s])", windowText(s.window))
	return &scope{node: n, name: s.name, table: s.table}, nil
}

// windowed reports whether n's rows come from a window (a window
// aggregate or a window TVF, through Calcs). A processing-time window
// aggregate's rows are not: their windows fired by the clock, and no
// watermark closes them again downstream.
func windowed(n *Node) bool {
	for x := n; x != nil; x = x.Input {
		switch x.Kind {
		case WindowAggNode:
			return !x.windowAgg().window.ProcTime
		case WindowTableNode:
			return true
		case CalcNode:
			continue
		}
		return false
	}
	return false
}

// windowEnd returns the index of the window_end partition key, or -1 when
// the partition does not hold both window_start and window_end.
func windowEnd(over *sql.Over, spec rankop.RankSpec) int {
	start, end := -1, -1
	for i, e := range over.Window.PartitionBy {
		ref, ok := e.(*sql.ColumnRef)
		if !ok {
			continue
		}
		switch strings.ToLower(ref.Column.Name) {
		case "window_start":
			start = i
		case "window_end":
			end = i
		}
	}
	if start < 0 || end < 0 {
		return -1
	}
	return spec.Partition[end]
}

// windowRankNode builds the WindowRank or WindowDeduplicate node over
// calc; endCol is the window_end column, timeCol the TVF's own time
// column in calc (-1 when the rows come from a window aggregate).
func (q *queryBuilder) windowRankNode(calc *Node, spec rankop.RankSpec, endCol, timeCol int, rnName, part string, orderText []string) (*Node, error) {
	fields := append([]row.Field(nil), calc.Schema.Fields...)
	rnCol := -1
	if spec.OutputRank {
		rnCol = len(fields)
		fields = append(fields, row.Field{Name: rnName, Type: row.Type{ID: row.BigInt, NotNull: true}})
	}
	n := &Node{
		Kind: WindowRankNode, Input: calc, Schema: row.NewSchema(fields...),
		TimeAttr: calc.TimeAttr, Bounded: calc.Bounded,
		Mode: windowRankMode(spec.Partition, spec.Start == 1 && spec.End == 1, rnCol, calc.Mode),
	}
	wr := &windowop.WindowRankSpec{Rank: spec, EndCol: endCol}
	if wp, ok := windowPropsOf(calc); ok && wp.ltz {
		wr.Zone = q.b.plan.Spec.Zone
	}
	dedup := spec.Start == 1 && spec.End == 1 && !spec.OutputRank && len(spec.Order) == 1 && timeCol >= 0 && spec.Order[0].Col == timeCol
	if dedup {
		keep := "FirstRow"
		if spec.Order[0].Desc {
			keep, wr.LastWins = "LastRow", true
		}
		n.Label = fmt.Sprintf("WindowDeduplicate(keep=%s, partitionBy=%s, orderKey=[%s])", keep, part, calc.Schema.Fields[timeCol].Name)
	} else {
		noNumber := ""
		if !spec.OutputRank {
			noNumber = ", outputRankNumber=false"
		}
		n.Label = fmt.Sprintf("WindowRank(rankRange=[%d..%d], partitionBy=%s, orderBy=[%s]%s)", spec.Start, spec.End, part, strings.Join(orderText, ", "), noNumber)
	}
	n.op = &windowRankOp{spec: wr}
	return n, nil
}

// updatingWindowErr refuses a window over the updating table tabName
// where only a streaming TUMBLE, HOP or CUMULATE aggregate over event
// time takes one.
func updatingWindowErr(w *sql.WindowTVF, tabName string) error {
	return errAt(w.At, "%s cannot read the updating table %q here: over a changelog only a TUMBLE, HOP or CUMULATE window aggregate (GROUP BY window_start, window_end) on event time, in streaming, runs", w.Kind, tabName)
}
