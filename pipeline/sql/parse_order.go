package sql

import (
	"strconv"
	"strings"
)

// This file holds the ORDER BY and LIMIT of a query: `query ORDER BY
// keys LIMIT n`, `... OFFSET m ROWS FETCH FIRST n ROWS ONLY`. The plan
// runs them as Flink does: a Top-N over the whole query, ranked by the
// keys (a streaming query's result updates as better rows arrive); an
// ORDER BY without a row count is a batch query's sort.

// Limit is the rows a query keeps after its ORDER BY: Offset rows are
// skipped and the next Fetch kept.
type Limit struct {
	At     Pos // the LIMIT, OFFSET or FETCH keyword
	Offset int64
	Fetch  int64
}

// parseOrderLimit reads an optional `ORDER BY keys` and the LIMIT,
// OFFSET and FETCH clauses after a query's SELECTs.
func (p *parser) parseOrderLimit(q *Query) *Error {
	if !p.tok().is("ORDER") || !p.peek(1).is("BY") {
		return nil
	}
	at := p.tok()
	p.next()
	p.next()
	items, err := p.orderItems()
	if err != nil {
		return err
	}
	q.OrderBy, q.OrderAt = items, at.pos
	lim := &Limit{At: p.tok().pos, Fetch: -1}
	if p.acceptWord("LIMIT") {
		if lim.Fetch, err = p.rowCount("a row count after LIMIT"); err != nil {
			return err
		}
	}
	if p.acceptWord("OFFSET") {
		if lim.Offset, err = p.rowCount("a row count after OFFSET"); err != nil {
			return err
		}
		if !p.acceptWord("ROWS") {
			p.acceptWord("ROW")
		}
	}
	if p.tok().is("FETCH") && lim.Fetch < 0 {
		p.next()
		if !p.acceptWord("FIRST") && !p.acceptWord("NEXT") {
			return p.expected("FIRST or NEXT after FETCH", "FIRST", "NEXT")
		}
		if lim.Fetch, err = p.rowCount("a row count after FETCH FIRST"); err != nil {
			return err
		}
		if !p.acceptWord("ROWS") && !p.acceptWord("ROW") {
			return p.expected("ROWS after the row count", "ROWS")
		}
		if !p.acceptWord("ONLY") {
			return p.expected("ONLY after FETCH FIRST n ROWS", "ONLY")
		}
	}
	if lim.Fetch < 0 {
		// A sort of every row: the plan decides (a batch sort; a
		// subquery's is dropped). Flink refuses an OFFSET without a row
		// count ("Not support limitEnd is max value now!").
		if lim.Offset > 0 {
			return &Error{Pos: lim.At, Msg: "OFFSET without LIMIT or FETCH is not supported (nor in Flink); add FETCH NEXT n ROWS ONLY"}
		}
		return nil
	}
	q.Limit = lim
	return nil
}

// rowCount reads a non-negative integer literal.
func (p *parser) rowCount(what string) (int64, *Error) {
	t := p.tok()
	if t.kind != tokInt {
		return 0, p.expected(what, "row count")
	}
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return 0, p.errAt(t, what+": "+t.text+" is too large")
	}
	p.next()
	return n, nil
}

// orderLimit writes the ORDER BY and LIMIT of q.
func (f *formatter) orderLimit(q *Query) {
	if len(q.OrderBy) == 0 {
		return
	}
	f.w(" ORDER BY ")
	for i, it := range q.OrderBy {
		if i > 0 {
			f.w(", ")
		}
		f.orderItem(it)
	}
	if q.Limit == nil {
		return
	}
	if q.Limit.Offset > 0 {
		f.w(" OFFSET " + strconv.FormatInt(q.Limit.Offset, 10) + " ROWS")
	}
	f.w(" FETCH NEXT " + strconv.FormatInt(q.Limit.Fetch, 10) + " ROWS ONLY")
}

// orderItem writes `x [DESC] [NULLS FIRST|LAST]`.
func (f *formatter) orderItem(it *OrderItem) {
	f.expr(it.X, precLowest)
	var b strings.Builder
	if it.Desc {
		b.WriteString(" DESC")
	}
	switch it.Nulls {
	case NullsFirst:
		b.WriteString(" NULLS FIRST")
	case NullsLast:
		b.WriteString(" NULLS LAST")
	}
	f.w(b.String())
}
