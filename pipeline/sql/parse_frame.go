package sql

import "strings"

// Window frames and named windows of the OVER aggregates, as Flink takes
// them (its OVER windows end at the current row):
//
//	ROWS BETWEEN n PRECEDING AND CURRENT ROW
//	ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
//	RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW
//	RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
//	ROWS n PRECEDING, RANGE UNBOUNDED PRECEDING, ROWS CURRENT ROW  (the same, short)
//
//	SELECT SUM(x) OVER w, COUNT(*) OVER w FROM t
//	WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)

// FrameUnit says what a frame counts: rows, or a range of ORDER BY values.
type FrameUnit uint8

// The frame units. The zero FrameUnit is invalid.
const (
	FrameRows FrameUnit = iota + 1
	FrameRange
)

func (u FrameUnit) String() string {
	if u == FrameRange {
		return "RANGE"
	}
	return "ROWS"
}

// Frame is a window frame ending at the current row. Its start is
// UNBOUNDED PRECEDING (Unbounded), CURRENT ROW (neither Unbounded nor
// Preceding), or Preceding PRECEDING: an expression, for ROWS a row
// count, for RANGE an interval.
type Frame struct {
	At        Pos // the ROWS or RANGE keyword
	Unit      FrameUnit
	Unbounded bool
	Preceding Expr
	// Between records the BETWEEN ... AND CURRENT ROW form, for Format.
	Between bool
}

// NamedWindow is one `name AS (window)` of a WINDOW clause.
type NamedWindow struct {
	Name   Ident
	Window *WindowSpec
}

// parseWindowFrame reads a window frame, the current token ROWS or RANGE.
func (p *parser) parseWindowFrame() (*Frame, *Error) {
	t := p.next()
	f := &Frame{At: t.pos, Unit: FrameRows}
	if t.is("RANGE") {
		f.Unit = FrameRange
	}
	if p.acceptWord("BETWEEN") {
		f.Between = true
	}
	if err := p.frameStart(f); err != nil {
		return nil, err
	}
	if !f.Between {
		return f, nil
	}
	if err := p.expectWord("AND", "after the frame's start (BETWEEN ... AND CURRENT ROW)"); err != nil {
		return nil, err
	}
	if e := p.tok(); e.is("UNBOUNDED") || !e.is("CURRENT") {
		if e.is("UNBOUNDED") || p.peek(1).is("FOLLOWING") || p.peek(1).is("PRECEDING") || p.peek(2).is("FOLLOWING") || p.peek(2).is("PRECEDING") {
			return nil, p.errAt(e, "an OVER window ends at CURRENT ROW: Flink supports no other frame end")
		}
		return nil, p.expected("CURRENT ROW, the end of the frame", "CURRENT")
	}
	p.next()
	if err := p.expectWord("ROW", "after CURRENT"); err != nil {
		return nil, err
	}
	return f, nil
}

// frameStart reads UNBOUNDED PRECEDING, CURRENT ROW or x PRECEDING.
func (p *parser) frameStart(f *Frame) *Error {
	t := p.tok()
	switch {
	case t.is("UNBOUNDED"):
		p.next()
		if p.tok().is("FOLLOWING") {
			return p.errAt(p.tok(), "an OVER window ends at CURRENT ROW: UNBOUNDED FOLLOWING is not supported (Flink supports no FOLLOWING)")
		}
		f.Unbounded = true
		return p.expectWord("PRECEDING", "after UNBOUNDED")
	case t.is("CURRENT"):
		p.next()
		return p.expectWord("ROW", "after CURRENT")
	}
	e, err := p.expectExpr(f.Unit.String())
	if err != nil {
		return err
	}
	if p.tok().is("FOLLOWING") {
		return p.errAt(p.tok(), "an OVER window ends at CURRENT ROW: FOLLOWING is not supported (Flink supports no FOLLOWING)")
	}
	if err := p.expectWord("PRECEDING", "after the frame's offset"); err != nil {
		return err
	}
	f.Preceding = e
	return nil
}

// parseWindowClause reads `WINDOW name AS (window), ...`, the current
// token WINDOW.
func (p *parser) parseWindowClause() ([]*NamedWindow, *Error) {
	p.next()
	var out []*NamedWindow
	for {
		name, err := p.expectName("a window name after WINDOW")
		if err != nil {
			return nil, err
		}
		for _, w := range out {
			if strings.EqualFold(w.Name.Name, name.Name) {
				return nil, &Error{Pos: name.At, Msg: "window " + name.Name + " is defined twice"}
			}
		}
		if err := p.expectWord("AS", "after the window name"); err != nil {
			return nil, err
		}
		open := p.tok()
		if !open.isPunct("(") {
			return nil, p.expected(`"(" and the window after AS`, `"("`)
		}
		p.next()
		spec, err := p.windowSpecBody(open)
		if err != nil {
			return nil, err
		}
		out = append(out, &NamedWindow{Name: name, Window: spec})
		if !p.acceptPunct(",") {
			return out, nil
		}
	}
}

// frame writes a window frame.
func (f *formatter) frame(fr *Frame) {
	f.w(fr.Unit.String() + " ")
	if fr.Between {
		f.w("BETWEEN ")
	}
	switch {
	case fr.Unbounded:
		f.w("UNBOUNDED PRECEDING")
	case fr.Preceding != nil:
		f.expr(fr.Preceding, precLowest)
		f.w(" PRECEDING")
	default:
		f.w("CURRENT ROW")
	}
	if fr.Between {
		f.w(" AND CURRENT ROW")
	}
}

// windowClause writes a SELECT's WINDOW clause.
func (f *formatter) windowClause(ws []*NamedWindow) {
	for i, w := range ws {
		if i == 0 {
			f.w(" WINDOW ")
		} else {
			f.w(", ")
		}
		f.ident(w.Name)
		f.w(" AS (")
		f.windowSpec(w.Window)
		f.w(")")
	}
}

// resolveNamedOvers points the OVER w calls read since mark (those of
// sel) to sel's WINDOW definitions.
func (p *parser) resolveNamedOvers(sel *Select, mark int) *Error {
	defer func() { p.namedOvers = p.namedOvers[:mark] }()
	for _, o := range p.namedOvers[mark:] {
		for _, w := range sel.Windows {
			if strings.EqualFold(w.Name.Name, o.Name.Name) {
				o.Window = w.Window
			}
		}
		if o.Window == nil {
			return &Error{Pos: o.Name.At, Msg: "window " + o.Name.Name + " is not defined: add WINDOW " + o.Name.Name + " AS (PARTITION BY ... ORDER BY ...) after the query's WHERE, GROUP BY and HAVING"}
		}
	}
	return nil
}
