package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/sql"
)

// Flink's legacy group windows: a window function in GROUP BY
//
//	GROUP BY TUMBLE(ts, size), k     HOP(ts, slide, size)     SESSION(ts, gap)
//
// with the window's properties in the select list and HAVING:
// TUMBLE_START(ts, size) (and HOP_START, SESSION_START) the window's
// start, *_END its end, *_ROWTIME its last millisecond, which stays an
// event-time attribute so that another window can group the result
// (*_PROCTIME on a processing-time window, which is no event time).
// They mean what the window table functions mean, so they are planned
// on the same window aggregate: the GROUP BY window becomes the window
// of the scope, its properties the columns window_start, window_end and
// window_time of the aggregate's row.

var groupWindowKinds = map[string]sql.WindowKind{"TUMBLE": sql.Tumble, "HOP": sql.Hop, "SESSION": sql.Session}

// groupWindowProps maps a property suffix to the aggregate's column.
var groupWindowProps = map[string]string{"_START": "window_start", "_END": "window_end", "_ROWTIME": "window_time"}

// groupWindow plans the legacy group window of sel over s, if its GROUP
// BY has one: it sets s's window and returns sel with the window call
// replaced by window_start and window_end, and its properties by those
// columns.
func (q *queryBuilder) groupWindow(sel *sql.Select, s *scope) (*sql.Select, error) {
	var call *sql.Call
	var rest []sql.Expr
	for _, g := range sel.GroupBy {
		c, ok := g.(*sql.Call)
		if _, win := groupWindowKinds[callName(c, ok)]; !win {
			rest = append(rest, g)
			continue
		}
		if call != nil {
			return nil, errAt(c.At, "a GROUP BY has at most one group window (%s is the first)", call.Name)
		}
		call = c
	}
	if call == nil {
		return sel, strayWindowProps(sel)
	}
	if s.window != nil {
		return nil, errAt(call.At, "%s in GROUP BY groups by a window, and FROM is already a window table function", call.Name)
	}
	w, err := q.groupWindowTVF(call, s)
	if err != nil {
		return nil, err
	}
	if s.windowSpec, err = q.windowSpec(w, s.node, s.table); err != nil {
		return nil, err
	}
	if s.node.Mode.Updating {
		return nil, errAt(call.At, "%s in GROUP BY cannot read the updating table %q: legacy group windows take insert-only input; a TUMBLE, HOP or CUMULATE window table function's aggregate reads a changelog", call.Name, s.table)
	}
	s.window = w
	out := *sel
	out.GroupBy = append(rest,
		&sql.ColumnRef{Column: sql.Ident{At: call.At, Name: "window_start"}},
		&sql.ColumnRef{Column: sql.Ident{At: call.At, Name: "window_end"}})
	args := strings.ToLower(argsText(call))
	proc := s.windowSpec.ProcTime
	var bad error
	props := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			c, ok := x.(*sql.Call)
			kind, suffix, prop := windowProp(callName(c, ok))
			if !prop {
				return nil, false
			}
			col, known := groupWindowProps[suffix]
			if suffix == "_ROWTIME" || suffix == "_PROCTIME" {
				// The window's time is *_ROWTIME on event time, *_PROCTIME
				// on processing time.
				col, known = "window_time", (suffix == "_PROCTIME") == proc
			}
			switch {
			case bad != nil:
			case kind != call.Name:
				bad = errAt(c.At, "%s names a %s window, and this query groups by %s", c.Name, kind, call.Name)
			case !known && proc:
				bad = errAt(c.At, "%s needs an event-time window, and this query's %s is on processing time (use %s_PROCTIME for the window's time)", c.Name, call.Name, kind)
			case !known:
				bad = errAt(c.At, "%s needs a processing-time window, and %s groups by an event-time attribute (use %s_ROWTIME for the window's time)", c.Name, call.Name, kind)
			case strings.ToLower(argsText(c)) != args:
				bad = errAt(c.At, "%s must repeat the arguments of the GROUP BY's %s(%s)", c.Name, call.Name, argsText(call))
			}
			return &sql.ColumnRef{Column: sql.Ident{At: c.At, Name: col}}, true
		})
	}
	out.Items = make([]*sql.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		out.Items[i] = &sql.SelectItem{Expr: props(it.Expr), Alias: it.Alias}
		if it.Alias.IsZero() && out.Items[i].Expr != it.Expr {
			if _, ok := out.Items[i].Expr.(*sql.ColumnRef); ok {
				// Named as Flink names a property with no alias.
				out.Items[i].Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
			}
		}
	}
	out.Having = props(sel.Having)
	return &out, bad
}

// groupWindowTVF returns the window table function that call (TUMBLE,
// HOP or SESSION in GROUP BY) stands for, over s's table.
func (q *queryBuilder) groupWindowTVF(call *sql.Call, s *scope) (*sql.WindowTVF, error) {
	kind := groupWindowKinds[call.Name]
	want := map[sql.WindowKind]string{sql.Tumble: "(time_attr, size)", sql.Hop: "(time_attr, slide, size)", sql.Session: "(time_attr, gap)"}[kind]
	n := strings.Count(want, ",") + 1
	if len(call.Args) != n || call.Distinct || call.Star {
		return nil, errAt(call.At, "%s in GROUP BY takes %s", call.Name, want)
	}
	ref, ok := call.Args[0].(*sql.ColumnRef)
	if !ok {
		return nil, errAt(call.Args[0].Pos(), "the first argument of %s is the time attribute column", call.Name)
	}
	e, err := s.unqualify(ref)
	if err != nil {
		return nil, err
	}
	ref, _ = e.(*sql.ColumnRef)
	if ref == nil || s.node.Schema.Index(ref.Column.Name) < 0 {
		return nil, errAt(call.Args[0].Pos(), "column %q not found in %s%s", sql.Format(call.Args[0]), s.table, suggest(sql.Format(call.Args[0]), s.node.Schema.Names()))
	}
	w := &sql.WindowTVF{At: call.At, Kind: kind, KindAt: call.At, TimeCol: sql.Ident{At: ref.Column.At, Name: ref.Column.Name}}
	switch kind {
	case sql.Tumble:
		w.Size = call.Args[1]
	case sql.Hop:
		// HOP(ts, slide, size): the slide first, as in the table function.
		w.Slide, w.Size = call.Args[1], call.Args[2]
	case sql.Session:
		w.Gap = call.Args[1]
	}
	return w, nil
}

// strayWindowProps refuses a window property in a query without a group
// window.
func strayWindowProps(sel *sql.Select) error {
	var bad error
	check := func(e sql.Expr) {
		walk(e, func(x sql.Expr) bool {
			c, ok := x.(*sql.Call)
			if kind, _, prop := windowProp(callName(c, ok)); prop && bad == nil {
				bad = errAt(c.At, "%s needs GROUP BY %s(...): it is a property of the group window", c.Name, kind)
			}
			return bad == nil
		})
	}
	for _, it := range sel.Items {
		check(it.Expr)
	}
	check(sel.Having)
	check(sel.Where)
	return bad
}

// windowProp splits a window property's name (TUMBLE_START) into the
// window (TUMBLE) and the suffix (_START).
func windowProp(name string) (kind, suffix string, ok bool) {
	for k := range groupWindowKinds {
		if rest, found := strings.CutPrefix(name, k+"_"); found {
			switch rest {
			case "START", "END", "ROWTIME", "PROCTIME":
				return k, "_" + rest, true
			}
		}
	}
	return "", "", false
}

func callName(c *sql.Call, ok bool) string {
	if !ok {
		return ""
	}
	return c.Name
}

func argsText(c *sql.Call) string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = sql.Format(a)
	}
	return strings.Join(parts, ", ")
}
