package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// This file plans window joins (Flink's WindowJoin): a join of two window
// TVFs (or of what a window aggregate or a window Top-N made of them) on
// both window_start and window_end, plus any equality keys and a
// residual; also semi and anti joins (IN, EXISTS and their negations)
// whose subquery is correlated on both. Insert-only: a window's matches
// are emitted once the watermark passes its end.

// windowProps is what Flink's RelWindowProperties records of a table: the
// window its rows were assigned to and which columns hold its start and
// end.
type windowProps struct {
	spec       windowop.WindowSpec
	start, end int
	ltz        bool // the window's time attribute is a TIMESTAMP_LTZ
}

// windowPropsOf follows n down through Calcs and window Top-Ns to the
// window TVF, window aggregate or window join that assigned its windows.
// It reports false when n's rows have no window, or the projection
// dropped window_start or window_end.
func windowPropsOf(n *Node) (windowProps, bool) {
	switch n.Kind {
	case WindowTableNode:
		w := n.Input.Schema.Len()
		t := n.windowTable().table
		return windowProps{spec: t.Spec, start: w, end: w + 1, ltz: t.LTZ}, true
	case WindowAggNode:
		wa := n.windowAgg()
		if wa.window.ProcTime {
			// Its windows fired by the clock: nothing downstream can
			// close them again by a watermark.
			return windowProps{}, false
		}
		k := len(wa.keys)
		if wa.attached {
			k-- // window_start is the last key
		}
		return windowProps{spec: *wa.window, start: k, end: k + 1, ltz: n.Schema.Fields[k+2].Type.ID == row.TimestampLTZ}, true
	case WindowRankNode:
		// Its rows are its input's, with the rank number appended.
		return windowPropsOf(n.Input)
	case JoinNode:
		if n.windowJoin() == nil {
			return windowProps{}, false
		}
		// The side that is never padded with NULLs keeps its window.
		switch n.windowJoin().Kind {
		case joinop.InnerJoin, joinop.LeftJoin, joinop.SemiJoin, joinop.AntiJoin:
			p, _ := windowPropsOf(n.Inputs[0])
			p.start, p.end = n.windowJoin().LeftStart, n.windowJoin().LeftEnd
			return p, true
		case joinop.RightJoin:
			p, _ := windowPropsOf(n.Inputs[1])
			lw := n.windowJoin().LeftWidth
			p.start, p.end = lw+n.windowJoin().RightStart, lw+n.windowJoin().RightEnd
			return p, true
		}
		return windowProps{}, false
	case CalcNode:
		in, ok := windowPropsOf(n.Input)
		if !ok {
			return windowProps{}, false
		}
		c := n.calc()
		if c.project == nil && c.colSrc == nil {
			return in, true
		}
		start, end := -1, -1
		for i, src := range c.colSrc {
			if src == in.start && start < 0 {
				start = i
			}
			if src == in.end && end < 0 {
				end = i
			}
		}
		if start < 0 || end < 0 {
			return windowProps{}, false
		}
		in.start, in.end = start, end
		return in, true
	}
	return windowProps{}, false
}

// sameWindow compares two windows as Flink's WindowSpec.equals does: the
// kind and every length, whatever the time column.
func sameWindow(a, b windowop.WindowSpec) bool {
	a.TimeCol, b.TimeCol = 0, 0
	return a == b
}

// flinkWindowText is a window as Flink's explain shows a window join's
// leftWindow and rightWindow.
func flinkWindowText(s windowop.WindowSpec, in row.Schema, p windowProps) string {
	parts := []string{
		fmt.Sprintf("win_start=[%s]", in.Fields[p.start].Name),
		fmt.Sprintf("win_end=[%s]", in.Fields[p.end].Name),
	}
	switch s.Kind {
	case windowop.Tumble:
		parts = append(parts, "size=["+flinkDuration(s.Size)+"]")
	case windowop.Hop:
		parts = append(parts, "size=["+flinkDuration(s.Size)+"]", "slide=["+flinkDuration(s.Slide)+"]")
	case windowop.Cumulate:
		parts = append(parts, "max_size=["+flinkDuration(s.Size)+"]", "step=["+flinkDuration(s.Step)+"]")
	case windowop.Session:
		parts = append(parts, "gap=["+flinkDuration(s.Gap)+"]")
	}
	if s.Offset != 0 {
		parts = append(parts, "offset=["+flinkDuration(s.Offset)+"]")
	}
	return fmt.Sprintf("%s(%s)", s.Kind, strings.Join(parts, ", "))
}

// flinkDuration writes µs in the largest unit that divides it, as
// Flink's TimeUtils.formatWithHighestUnit does ("5 min", "10 s").
func flinkDuration(us int64) string {
	d := time.Duration(us) * time.Microsecond
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.d == 0 {
			return fmt.Sprintf("%d %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d us", us)
}

// windowJoin plans the join as a window join when both inputs have
// windows and the keys equate both their window_start and their
// window_end columns (Flink's WindowJoinUtil.satisfyWindowJoin). Where
// Flink would fall back to a regular join of window TVF rows (different
// windows, only one of the two equalities), whose outer results update
// and whose state never expires, it refuses with the reason. It reports
// false, and changes nothing, when the join is not a window join.
func (q *queryBuilder) windowJoin(n *Node, js *joinop.JoinSpec, residual []sql.Expr, keyTexts []string, at sql.Pos) (bool, error) {
	left, right := n.Inputs[0], n.Inputs[1]
	if q.b.plan.Batch {
		return false, nil
	}
	lp, lok := windowPropsOf(left)
	rp, rok := windowPropsOf(right)
	lw := left.Schema.Len()
	startEq, endEq, keys, windowKey := windowJoinEqualities(js, lp, lok, rp, rok)
	if !lok || !rok {
		// One side has windows: an equality of its window bounds with
		// the other's same-named column meant a window join.
		for _, i := range windowKey {
			l, r := js.LeftKeys[i], js.RightKeys[i]
			ln, rn := left.Schema.Fields[l].Name, right.Schema.Fields[r].Name
			if strings.EqualFold(ln, rn) {
				side, which := "right", right
				if !lok {
					side, which = "left", left
				}
				return true, errAt(at, "a window join needs window TVFs on both sides, and its %s input (%s) has no window (or its select list dropped window_start or window_end): read it FROM TABLE(TUMBLE|HOP|CUMULATE(...)) too, with the same window as the other side", side, which.Label)
			}
		}
		return false, nil
	}
	if !startEq && !endEq {
		return false, nil
	}
	if !startEq || !endEq {
		missing := "window_start"
		if !endEq {
			missing = "window_end"
		}
		return true, errAt(at, "a window join needs both window_start = window_start and window_end = window_end of its two inputs in its condition, and %s is missing: without it Flink plans a regular join, whose state never expires", missing)
	}
	if lp.spec.Kind == windowop.Session || rp.spec.Kind == windowop.Session {
		return true, errAt(at, "a window join over SESSION windows is not supported (as in Flink): use TUMBLE, HOP or CUMULATE on both sides")
	}
	lt, rt := flinkWindowText(lp.spec, left.Schema, lp), flinkWindowText(rp.spec, right.Schema, rp)
	if !sameWindow(lp.spec, rp.spec) {
		return true, errAt(at, "a window join needs the same window on both sides, and they differ: the left is %s, the right %s (Flink would plan a regular join, whose state never expires)", lt, rt)
	}
	if lp.ltz != rp.ltz {
		return true, errAt(at, "a window join needs the same time attribute type on both sides: one window is over TIMESTAMP_LTZ, the other over TIMESTAMP")
	}
	ws := &joinop.WindowJoinSpec{Kind: js.Kind, LeftWidth: lw, RightWidth: js.RightWidth,
		LeftStart: lp.start, LeftEnd: lp.end, RightStart: rp.start, RightEnd: rp.end}
	if zone := q.b.plan.Spec.Zone; lp.ltz && zone != nil {
		ws.EndInstant = func(end int64) int64 { return row.AtZoneLater(zone, end) }
	}
	var where []string
	for _, i := range keys {
		ws.LeftKeys = append(ws.LeftKeys, js.LeftKeys[i])
		ws.RightKeys = append(ws.RightKeys, js.RightKeys[i])
		where = append(where, keyTexts[i])
	}
	if len(residual) > 0 {
		res := andAll(residual)
		c, err := compileExpr(q.zone(), res, n.Schema, "join")
		if err != nil {
			return true, err
		}
		if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
			return true, errAt(res.Pos(), "a join condition must be BOOLEAN, this one is %s", c.Type)
		}
		ws.Residual = c.True
		where = append(where, sql.Format(res))
	}
	js.Residual = ws.Residual
	n.op = &joinOp{join: js, window: ws}
	// Insert-only, with the upsert keys of a join whose keys are every
	// equality, the window bounds included: within a window, a side unique
	// on its keys and window (a window aggregate's rows) matches each row
	// of the other side at most once.
	n.Mode = joinMode(js.Kind, left.Mode, right.Mode, js.LeftKeys, js.RightKeys, lw, false)
	n.Mode.Updating = false
	// The output keeps the time attribute (window_time) of a side that
	// is never padded with NULLs, as the interval join does.
	switch js.Kind {
	case joinop.InnerJoin, joinop.LeftJoin, joinop.SemiJoin, joinop.AntiJoin:
		n.TimeAttr = left.TimeAttr
	case joinop.RightJoin:
		if right.TimeAttr >= 0 {
			n.TimeAttr = lw + right.TimeAttr
		}
	}
	whereText := ""
	if len(where) > 0 {
		whereText = fmt.Sprintf(", where=[%s]", strings.Join(where, ", "))
	}
	n.Label = fmt.Sprintf("WindowJoin(joinType=[%s]%s, leftWindow=[%s], rightWindow=[%s], select=[%s])",
		js.Kind, whereText, lt, rt, strings.Join(n.Schema.Names(), ", "))
	return true, nil
}

// windowJoinEqualities sorts a join's key equalities: the equality of
// the two sides' window_start (startEq) and of their window_end (endEq),
// and the others (keys, indexes in js's keys), of which windowKey are
// those that compare a window bound of one side with another column.
func windowJoinEqualities(js *joinop.JoinSpec, lp windowProps, lok bool, rp windowProps, rok bool) (startEq, endEq bool, keys, windowKey []int) {
	for i := range js.LeftKeys {
		l, r := js.LeftKeys[i], js.RightKeys[i]
		switch {
		case lok && rok && l == lp.start && r == rp.start:
			startEq = true
		case lok && rok && l == lp.end && r == rp.end:
			endEq = true
		default:
			if lok && (l == lp.start || l == lp.end) || rok && (r == rp.start || r == rp.end) {
				windowKey = append(windowKey, i)
			}
			keys = append(keys, i)
		}
	}
	return startEq, endEq, keys, windowKey
}

// windowKeyPos returns the position of the equality of window_start (or
// else window_end, else the first key) in cond, for messages about the
// window join's condition.
func windowKeyPos(cond sql.Expr) sql.Pos {
	var first, end sql.Pos
	for _, c := range conjuncts(cond) {
		b, ok := c.(*sql.Binary)
		if !ok || b.Op != sql.OpEq {
			continue
		}
		if first.Line == 0 {
			first = b.OpAt
		}
		if l, ok := b.L.(*sql.ColumnRef); ok {
			switch strings.ToLower(l.Column.Name) {
			case "window_start":
				return b.OpAt
			case "window_end":
				if end.Line == 0 {
					end = b.OpAt
				}
			}
		}
	}
	switch {
	case end.Line != 0:
		return end
	case first.Line != 0:
		return first
	}
	return cond.Pos()
}
