package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// timeBound is one comparison of the two inputs' time attributes,
// normalised to left.time OP right.time + off (µs).
type timeBound struct {
	lower bool // left.time >= right.time + off (else <=)
	off   int64
	ms    int64 // the bound in milliseconds as Flink computes it
	expr  sql.Expr
}

// timeTerm reads e as a column plus a constant day-time interval: col,
// col + INTERVAL, INTERVAL + col, col - INTERVAL (nested).
func timeTerm(e sql.Expr, schema row.Schema) (col int, off int64, ok bool) {
	switch x := e.(type) {
	case *sql.ColumnRef:
		if !x.Table.IsZero() {
			return 0, 0, false
		}
		i := schema.Index(x.Column.Name)
		return i, 0, i >= 0
	case *sql.Binary:
		if x.Op != sql.OpAdd && x.Op != sql.OpSub {
			return 0, 0, false
		}
		iv, isIv := x.R.(*sql.IntervalLit)
		other := x.L
		if !isIv && x.Op == sql.OpAdd {
			iv, isIv = x.L.(*sql.IntervalLit)
			other = x.R
		}
		if !isIv || iv.YearMonth() {
			return 0, 0, false
		}
		c, o, ok := timeTerm(other, schema)
		d := iv.Value.Microseconds()
		if x.Op == sql.OpSub {
			d = -d
		}
		return c, o + d, ok
	}
	return 0, 0, false
}

// boundOf reads c as a comparison of the left and the right time
// attribute (lt, rt: their indexes in the joined schema).
func boundOf(c sql.Expr, schema row.Schema, lt, rt int) (timeBound, bool) {
	b, ok := c.(*sql.Binary)
	if !ok || b.Op != sql.OpLt && b.Op != sql.OpLe && b.Op != sql.OpGt && b.Op != sql.OpGe {
		return timeBound{}, false
	}
	lc, lo, lok := timeTerm(b.L, schema)
	rc, ro, rok := timeTerm(b.R, schema)
	if !lok || !rok {
		return timeBound{}, false
	}
	op := b.Op
	var off int64
	switch {
	case lc == lt && rc == rt:
		off = ro - lo
	case lc == rt && rc == lt:
		off = lo - ro
		op = map[sql.BinaryOp]sql.BinaryOp{sql.OpLt: sql.OpGt, sql.OpLe: sql.OpGe, sql.OpGt: sql.OpLt, sql.OpGe: sql.OpLe}[op]
	default:
		return timeBound{}, false
	}
	// A strict bound moves by the smallest step: 1 ms in Flink (its time
	// attributes are TIMESTAMP(3)), 1 µs here, which selects the same
	// rows of millisecond timestamps.
	tb := timeBound{off: off, ms: off / 1000, expr: c}
	switch op {
	case sql.OpGe:
		tb.lower = true
	case sql.OpGt:
		tb.lower, tb.off, tb.ms = true, off+1, tb.ms+1
	case sql.OpLt:
		tb.off, tb.ms = off-1, tb.ms-1
	}
	return tb, true
}

// expandBetween turns `x BETWEEN lo AND hi` into `x >= lo` and `x <= hi`,
// as Calcite does before Flink looks for time bounds.
func expandBetween(cs []sql.Expr) []sql.Expr {
	var out []sql.Expr
	for _, c := range cs {
		if b, ok := c.(*sql.Between); ok && !b.Not {
			out = append(out, &sql.Binary{OpAt: b.OpAt, Op: sql.OpGe, L: b.X, R: b.Lo}, &sql.Binary{OpAt: b.OpAt, Op: sql.OpLe, L: b.X, R: b.Hi})
			continue
		}
		out = append(out, c)
	}
	return out
}

// intervalJoin plans the join as an event-time interval join when its
// condition bounds one input's time attribute by the other's from below
// and from above (Flink's IntervalJoinUtil): exactly two such
// comparisons, one of each kind. It reports false, and changes nothing,
// when the join is a regular one.
func (q *queryBuilder) intervalJoin(n *Node, js *joinop.JoinSpec, residual []sql.Expr, keyTexts []string) (bool, error) {
	left, right := n.Inputs[0], n.Inputs[1]
	if js.Kind > joinop.FullJoin {
		return false, nil
	}
	lw := left.Schema.Len()
	if pos, ok := procTimeBound(residual, n.Schema, left, right); ok {
		return true, errAt(pos, "a processing-time interval join is not supported: etld's interval join runs on event time only; bound the two sources' rowtime columns (each with a WATERMARK) instead, or drop the time bounds for a regular join")
	}
	if left.TimeAttr < 0 || right.TimeAttr < 0 {
		return false, nil
	}
	lt, rt := left.TimeAttr, lw+right.TimeAttr
	var bounds []timeBound
	var rest []sql.Expr
	for _, c := range expandBetween(residual) {
		if b, ok := boundOf(c, n.Schema, lt, rt); ok {
			bounds = append(bounds, b)
			continue
		}
		rest = append(rest, c)
	}
	if len(bounds) != 2 || bounds[0].lower == bounds[1].lower {
		return false, nil
	}
	lo, hi := bounds[0], bounds[1]
	if hi.lower {
		lo, hi = hi, lo
	}
	for i, in := range n.Inputs {
		if in.Mode.Updating {
			return true, errAt(lo.expr.Pos(), "an interval join takes insert-only inputs, and its %s input is updating: join an insert-only table, or drop the time bounds for a regular join", [2]string{"left", "right"}[i])
		}
	}
	is := &joinop.IntervalJoinSpec{Kind: js.Kind, LeftKeys: js.LeftKeys, RightKeys: js.RightKeys,
		LeftWidth: js.LeftWidth, RightWidth: js.RightWidth, LeftTime: left.TimeAttr, RightTime: right.TimeAttr,
		LeftTypes: typeIDs(left.Schema), RightTypes: typeIDs(right.Schema),
		Lower: lo.off, Upper: hi.off, Sorted: q.b.plan.Batch}
	where := append(keyTexts, sql.Format(lo.expr), sql.Format(hi.expr))
	var residualReads []int
	if len(rest) > 0 {
		res := andAll(rest)
		c, err := compileExpr(q.zone(), res, n.Schema, "join")
		if err != nil {
			return true, err
		}
		if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
			return true, errAt(res.Pos(), "a join condition must be BOOLEAN, this one is %s", c.Type)
		}
		is.Residual = c.True
		residualReads = c.Reads
		where = append(where, sql.Format(res))
	}
	js.Residual = is.Residual
	n.op = &joinOp{join: js, interval: is, residualReads: residualReads}
	n.Mode = joinMode(js.Kind, left.Mode, right.Mode, js.LeftKeys, js.RightKeys, lw, true)
	// The output keeps the time attribute of a side that is never padded
	// with NULLs (Flink keeps both; etld has one per table).
	switch js.Kind {
	case joinop.RightJoin:
		n.TimeAttr = rt
	case joinop.InnerJoin, joinop.LeftJoin:
		n.TimeAttr = lt
	}
	n.Label = fmt.Sprintf("IntervalJoin(joinType=[%s], windowBounds=[isRowTime=true, leftLowerBound=%d, leftUpperBound=%d, leftTimeIndex=%d, rightTimeIndex=%d], where=[%s], select=[%s])",
		js.Kind, lo.ms, hi.ms, left.TimeAttr, right.TimeAttr, strings.Join(where, ", "), strings.Join(n.Schema.Names(), ", "))
	return true, nil
}

// procTimeBound finds a comparison of a PROCTIME() column of each input
// (as Flink's ProcTimeIntervalJoin would bound them), to refuse it rather
// than run it as a regular join whose state never expires.
func procTimeBound(residual []sql.Expr, schema row.Schema, left, right *Node) (sql.Pos, bool) {
	lw := left.Schema.Len()
	isProc := func(c int) (side int, ok bool) {
		if c < lw {
			return 0, procTimeCol(left, c)
		}
		return 1, procTimeCol(right, c-lw)
	}
	for _, c := range expandBetween(residual) {
		b, ok := c.(*sql.Binary)
		if !ok || b.Op != sql.OpLt && b.Op != sql.OpLe && b.Op != sql.OpGt && b.Op != sql.OpGe {
			continue
		}
		lc, _, lok := timeTerm(b.L, schema)
		rc, _, rok := timeTerm(b.R, schema)
		if !lok || !rok {
			continue
		}
		ls, lp := isProc(lc)
		rs, rp := isProc(rc)
		if lp && rp && ls != rs {
			return c.Pos(), true
		}
	}
	return sql.Pos{}, false
}
