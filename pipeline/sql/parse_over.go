package sql

// This file holds the OVER clause: `call OVER (PARTITION BY ... ORDER BY
// ...)`, the AST nodes it builds and their formatting. The ranking
// functions (ROW_NUMBER, RANK, DENSE_RANK) of Top-N and deduplication and
// the OVER aggregates share it; a window frame (ROWS / RANGE BETWEEN ...)
// is read by parseWindowFrame (parse_frame.go).

// Over is a function call with an OVER clause: ROW_NUMBER() OVER (...),
// SUM(x) OVER (...). Its position is the call's.
type Over struct {
	Call   *Call
	OverAt Pos // the OVER keyword
	Window *WindowSpec
	// Name is the window's name for OVER w (zero for OVER (...)); the
	// parser sets Window to the WINDOW clause's definition, shared by
	// every call naming it.
	Name Ident
}

// WindowSpec is the parenthesised window of an OVER clause.
type WindowSpec struct {
	At          Pos // the opening parenthesis
	PartitionBy []Expr
	OrderBy     []*OrderItem
	// Frame is the ROWS / RANGE clause; nil when absent.
	Frame *Frame
}

// NullOrder is where an ORDER BY item puts NULLs.
type NullOrder uint8

// The NULL orders. NullsDefault follows Flink: NULLs sort first in
// ascending order and last in descending order (they compare lowest).
const (
	NullsDefault NullOrder = iota
	NullsFirst
	NullsLast
)

// OrderItem is one `expr [ASC|DESC] [NULLS FIRST|LAST]`.
type OrderItem struct {
	X     Expr
	Desc  bool
	Nulls NullOrder
}

// Pos returns the position of the item's expression.
func (o *OrderItem) Pos() Pos { return o.X.Pos() }

// NullsFirst reports whether NULLs come before every value, with the
// default resolved as Flink does.
func (o *OrderItem) NullsFirst() bool {
	switch o.Nulls {
	case NullsFirst:
		return true
	case NullsLast:
		return false
	}
	return !o.Desc
}

// Pos returns the position of the function name.
func (e *Over) Pos() Pos { return e.Call.At }

func (*Over) exprNode() {}

// parseOver reads `OVER (window)` after c, the current token OVER.
func (p *parser) parseOver(c *Call) (Expr, *Error) {
	kw := p.next()
	open := p.tok()
	if !open.isPunct("(") {
		if isName(open) {
			p.next()
			o := &Over{Call: c, OverAt: kw.pos, Name: ident(open)}
			p.namedOvers = append(p.namedOvers, o)
			return o, nil
		}
		return nil, p.errAt(open, `expected "(" or a window name after OVER, got `+open.describe(), `"("`)
	}
	p.next()
	w, err := p.windowSpecBody(open)
	if err != nil {
		return nil, err
	}
	return &Over{Call: c, OverAt: kw.pos, Window: w}, nil
}

// windowSpecBody reads a window after its opening parenthesis open, up to
// and with the closing one.
func (p *parser) windowSpecBody(open token) (*WindowSpec, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	w := &WindowSpec{At: open.pos}
	if p.acceptWord("PARTITION") {
		if err := p.expectWord("BY", "after PARTITION"); err != nil {
			return nil, err
		}
		list, err := p.exprList("PARTITION BY")
		if err != nil {
			return nil, err
		}
		w.PartitionBy = list
	}
	if p.acceptWord("ORDER") {
		if err := p.expectWord("BY", "after ORDER"); err != nil {
			return nil, err
		}
		items, err := p.orderItems()
		if err != nil {
			return nil, err
		}
		w.OrderBy = items
	}
	if t := p.tok(); t.is("ROWS") || t.is("RANGE") {
		f, err := p.parseWindowFrame()
		if err != nil {
			return nil, err
		}
		w.Frame = f
	}
	if err := p.expectClose(")", "OVER (", open.pos); err != nil {
		return nil, err
	}
	return w, nil
}

// exprList reads one or more comma-separated expressions after what.
func (p *parser) exprList(what string) ([]Expr, *Error) {
	var list []Expr
	after := what
	for {
		e, err := p.expectExpr(after)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.acceptPunct(",") {
			return list, nil
		}
		after = `","`
	}
}

// orderItems reads the items of an ORDER BY.
func (p *parser) orderItems() ([]*OrderItem, *Error) {
	var items []*OrderItem
	after := "ORDER BY"
	for {
		e, err := p.expectExpr(after)
		if err != nil {
			return nil, err
		}
		it := &OrderItem{X: e}
		switch {
		case p.acceptWord("DESC"):
			it.Desc = true
		case p.acceptWord("ASC"):
		}
		if p.acceptWord("NULLS") {
			switch {
			case p.acceptWord("FIRST"):
				it.Nulls = NullsFirst
			case p.acceptWord("LAST"):
				it.Nulls = NullsLast
			default:
				return nil, p.expected("FIRST or LAST after NULLS", "FIRST", "LAST")
			}
		}
		items = append(items, it)
		if !p.acceptPunct(",") {
			return items, nil
		}
		after = `","`
	}
}

// over writes an OVER call.
func (f *formatter) over(e *Over) {
	f.call(e.Call)
	if !e.Name.IsZero() {
		f.w(" OVER ")
		f.ident(e.Name)
		return
	}
	f.w(" OVER (")
	f.windowSpec(e.Window)
	f.w(")")
}

// windowSpec writes a window without its parentheses.
func (f *formatter) windowSpec(w *WindowSpec) {
	sep := ""
	if len(w.PartitionBy) > 0 {
		f.w("PARTITION BY ")
		f.exprList(w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		f.w(sep + "ORDER BY ")
		for i, it := range w.OrderBy {
			if i > 0 {
				f.w(", ")
			}
			f.orderItem(it)
		}
		sep = " "
	}
	if w.Frame != nil {
		f.w(sep)
		f.frame(w.Frame)
	}
}
