package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// rowFuncs are the OVER functions of a row's place in its partition
// (windowop.RowFunc), which take no frame.
var rowFuncs = map[string]windowop.FuncKind{
	"LAG": windowop.Lag, "LEAD": windowop.Lead, "ROW_NUMBER": windowop.RowNumber,
	"RANK": windowop.Rank, "DENSE_RANK": windowop.DenseRank,
	"NTILE": windowop.NTile, "PERCENT_RANK": windowop.PercentRank, "CUME_DIST": windowop.CumeDist,
}

// wholePartitionFunc reports the row functions that read the whole
// partition, which Flink runs in batch mode only ("NTILE Function is not
// supported in stream mode").
func wholePartitionFunc(name string) bool {
	return name == "NTILE" || name == "PERCENT_RANK" || name == "CUME_DIST"
}

// isRowFunc reports whether name (upper case) is one of rowFuncs.
func isRowFunc(name string) bool {
	_, ok := rowFuncs[name]
	return ok
}

// defaultFrame is the frame of a window without one, as SQL has it.
const defaultFrame = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"

// window checks that the calls share PARTITION BY, ORDER BY and a frame,
// and returns that window. As in Flink (Calcite), LAG, LEAD, ROW_NUMBER,
// RANK and DENSE_RANK refuse a frame; ROW_NUMBER gets ROWS BETWEEN
// UNBOUNDED PRECEDING AND CURRENT ROW and the others the default RANGE
// frame, so in streaming, where Flink computes one frame per operator,
// ROW_NUMBER cannot stand beside a RANGE frame. In batch mode LAG, LEAD
// and ROW_NUMBER read the row's position whatever the frame, and join any.
func (o *overPlan) window() (*sql.WindowSpec, error) {
	batch := o.q.b.plan.Batch
	first := o.overs[0]
	with := func(w *sql.WindowSpec, f *sql.Frame) string {
		c := *w
		c.Frame = f
		return overWindowText(&c)
	}
	var (
		frame              *sql.Frame
		frameKey, frameWin string
		set                bool
	)
	for _, ov := range o.overs {
		if with(ov.Window, nil) != with(first.Window, nil) {
			return nil, errAt(ov.OverAt, "all OVER aggregates of a SELECT must use the same window (Flink computes them in one operator): %s differs from %s; name one WINDOW w AS (...) and write OVER w", overWindowText(ov.Window), overWindowText(first.Window))
		}
		name := strings.ToUpper(ov.Call.Name)
		f := ov.Window.Frame
		if isRowFunc(name) {
			if f != nil {
				return nil, errAt(f.At, "%s takes no ROWS or RANGE frame (Flink refuses one with LAG, LEAD, ROW_NUMBER, RANK and DENSE_RANK): drop the frame, or compute the framed aggregates in a subquery", name)
			}
			if name == "ROW_NUMBER" && !batch {
				f = &sql.Frame{Unit: sql.FrameRows, Unbounded: true, Between: true}
			} else if batch && name != "RANK" && name != "DENSE_RANK" && !wholePartitionFunc(name) {
				continue
			}
		}
		key := defaultFrame
		if f != nil {
			n := *f
			n.Between = true
			key = strings.Trim(overWindowText(&sql.WindowSpec{Frame: &n}), "()")
		}
		switch {
		case !set:
			frame, frameKey, frameWin, set = f, key, with(ov.Window, f), true
		case key != frameKey:
			return nil, errAt(ov.OverAt, "all OVER aggregates of a SELECT must use the same window (Flink computes them in one operator): %s differs from %s; name one WINDOW w AS (...) and write OVER w%s", with(ov.Window, f), frameWin, frameNote(name))
		}
	}
	w := *first.Window
	w.Frame = frame
	o.win = &w
	return &w, nil
}

func frameNote(name string) string {
	if !isRowFunc(name) {
		return ""
	}
	return fmt.Sprintf(" (%s takes the frame shown, as in Flink)", name)
}

// rowFuncCall plans LAG(x [, offset [, default]]) and LEAD (offset an
// integer literal, default 1; default an expression of x's type, default
// NULL), ROW_NUMBER(), RANK() and DENSE_RANK() (BIGINT NOT NULL).
func (q *queryBuilder) rowFuncCall(c *sql.Call, schema row.Schema, table string, add func(string, *expr.Compiled, string) int) (windowop.RowFunc, row.Type, error) {
	name := strings.ToUpper(c.Name)
	l := windowop.RowFunc{Kind: rowFuncs[name], Offset: 1, Default: -1}
	if wholePartitionFunc(name) && !q.b.plan.Batch {
		return l, row.Type{}, errAt(c.At, "%s counts the rows of the whole partition: Flink supports it in batch mode only (\"%s Function is not supported in stream mode\"), and so does etld (`execution: batch`)", name, name)
	}
	switch name {
	case "NTILE":
		var lit *sql.Literal
		ok := len(c.Args) == 1 && !c.Distinct && !c.Star && c.Filter == nil
		if ok {
			lit, ok = c.Args[0].(*sql.Literal)
		}
		n, err := strconv.Atoi(litText(lit, ok))
		if !ok || lit.Kind != sql.LitInt || err != nil || n < 1 {
			return l, row.Type{}, errAt(c.At, "NTILE takes one positive whole number literal, the number of buckets: NTILE(4)")
		}
		l.Offset = n
		return l, row.Type{ID: row.BigInt, NotNull: true}, nil
	case "PERCENT_RANK", "CUME_DIST":
		if len(c.Args) > 0 || c.Distinct || c.Star || c.Filter != nil {
			return l, row.Type{}, errAt(c.At, "%s takes no arguments: write %s()", name, name)
		}
		return l, row.Type{ID: row.Double, NotNull: true}, nil
	}
	if l.Kind != windowop.Lag && l.Kind != windowop.Lead {
		if len(c.Args) > 0 || c.Distinct || c.Star || c.Filter != nil {
			return l, row.Type{}, errAt(c.At, "%s takes no arguments: write %s()", name, name)
		}
		return l, row.Type{ID: row.BigInt, NotNull: true}, nil
	}
	if l.Kind == windowop.Lead && !q.b.plan.Batch {
		return l, row.Type{}, errAt(c.At, "LEAD reads rows that have not arrived yet: Flink supports it in batch mode only (`execution: batch`), and so does etld")
	}
	if len(c.Args) < 1 || len(c.Args) > 3 || c.Distinct || c.Star || c.Filter != nil {
		return l, row.Type{}, errAt(c.At, "%s takes (value [, offset [, default]])", name)
	}
	arg, err := compileExpr(q.zone(), c.Args[0], schema, table)
	if err != nil {
		return l, row.Type{}, err
	}
	l.Arg = add(fmt.Sprintf("$lag%d", len(schema.Fields)), arg, sql.Format(c.Args[0]))
	if len(c.Args) > 1 {
		lit, ok := c.Args[1].(*sql.Literal)
		n, err := strconv.Atoi(litText(lit, ok))
		if !ok || lit.Kind != sql.LitInt || err != nil || n < 0 {
			return l, row.Type{}, errAt(c.Args[1].Pos(), "%s's offset must be a whole number literal", name)
		}
		l.Offset = n
	}
	typ := arg.Type
	typ.NotNull = false
	if len(c.Args) > 2 {
		d, err := compileExpr(q.zone(), &sql.Cast{At: c.Args[2].Pos(), X: c.Args[2], Type: arg.Type, TypeText: arg.Type.String()}, schema, table)
		if err != nil {
			return l, row.Type{}, errAt(c.Args[2].Pos(), "%s's default must have the value's type %s: %v", name, arg.Type, err)
		}
		l.Default = add("$lagdefault", d, sql.Format(c.Args[2]))
	}
	return l, typ, nil
}

// limitsRank reports whether sel's WHERE limits the rank that item of
// the subquery computes, which makes the subquery a Top-N; without a
// limit ROW_NUMBER, RANK and DENSE_RANK are OVER aggregates, as in Flink.
// A malformed limit counts as one, for the Top-N planner to report.
func limitsRank(sel *sql.Select, sub *sql.SubqueryRef, inner *sql.Select, item int) bool {
	rnName := inner.Items[item].Alias.Name
	if rnName == "" {
		rnName = fmt.Sprintf("EXPR$%d", item)
	}
	rr, _, err := rankCondition(sel.Where, rnName, sub.Alias.Name)
	return err != nil || rr.found
}

// rankHint adds to an OVER window's error, when a ranking function has
// that window, that ranking by another order is a Top-N.
func rankHint(err error, overs []*sql.Over) error {
	var e *sql.Error
	if !errors.As(err, &e) {
		return err
	}
	for _, ov := range overs {
		if name := strings.ToUpper(ov.Call.Name); name == "ROW_NUMBER" || name == "RANK" || name == "DENSE_RANK" {
			c := *e
			c.Msg += fmt.Sprintf("; to rank by another order, limit %s() in the query that reads it, a Top-N (SELECT ... FROM (SELECT ..., %s() OVER (...) AS rn FROM t) WHERE rn <= N)", name, name)
			return &c
		}
	}
	return err
}
