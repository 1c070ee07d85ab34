package sql

import (
	"fmt"
	"strings"
)

// parseTopQuery reads a whole query text: the query, an optional `;`, and
// nothing else.
func (p *parser) parseTopQuery() (*Query, *Error) {
	if p.tok().kind == tokEOF {
		return nil, p.errAt(p.tok(), "empty query: expected SELECT", "SELECT")
	}
	q, err := p.parseQuery()
	if err != nil {
		return nil, err
	}
	semi := p.acceptPunct(";")
	if t := p.tok(); t.kind != tokEOF {
		if err := p.unsupportedHere(); err != nil {
			return nil, err
		}
		if semi || t.isPunct(";") {
			return nil, p.errAt(t, "only one query is allowed; a transform holds a single SELECT")
		}
		if t.isPunct(")") {
			return nil, p.errAt(t, "unbalanced ): no ( is open here")
		}
		return nil, p.errAt(t, "expected end of query, got "+t.describe(), "end of query")
	}
	return q, nil
}

// parseQuery reads an optional WITH clause, then SELECTs joined by UNION
// ALL and UNION [DISTINCT].
func (p *parser) parseQuery() (*Query, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	q := &Query{}
	if p.tok().is("WITH") {
		if err := p.parseWith(q); err != nil {
			return nil, err
		}
	}
	distinct, op := false, Union
	for {
		if err := p.parseQueryTerm(q, distinct, op); err != nil {
			return nil, err
		}
		t := p.tok()
		op = setOpOf(t)
		if op == Union && !t.is("UNION") {
			break
		}
		p.next()
		distinct = true
		if p.acceptWord("ALL") {
			distinct = false
		} else {
			p.acceptWord("DISTINCT")
		}
		q.UnionAt = append(q.UnionAt, t.pos)
		if distinct && q.Distinct == nil {
			q.Distinct = make([]bool, len(q.UnionAt)-1, len(q.UnionAt))
		}
		if q.Distinct != nil {
			q.Distinct = append(q.Distinct, distinct)
		}
		if op != Union && q.Ops == nil {
			q.Ops = make([]SetOp, len(q.UnionAt)-1, len(q.UnionAt))
		}
		if q.Ops != nil {
			q.Ops = append(q.Ops, op)
		}
	}
	if err := p.parseOrderLimit(q); err != nil {
		return nil, err
	}
	return q, nil
}

// setOpOf returns the set operation t starts, Union for none.
func setOpOf(t token) SetOp {
	switch {
	case t.is("INTERSECT"):
		return Intersect
	case t.is("EXCEPT"):
		return Except
	}
	return Union
}

// parseWith reads `WITH name AS (query), ...` into q.With.
func (p *parser) parseWith(q *Query) *Error {
	p.next()
	if p.tok().is("RECURSIVE") {
		return p.errAt(p.tok(), "WITH RECURSIVE is not supported (Flink has no recursive queries)")
	}
	seen := map[string]bool{}
	for {
		nameTok := p.tok()
		name, err := p.expectName("a name for the WITH query")
		if err != nil {
			return err
		}
		if p.tok().isPunct("(") {
			return p.errAt(p.tok(), "column lists on a WITH query, name(a, b), are not supported; alias the columns in its SELECT list")
		}
		key := strings.ToLower(name.Name)
		if seen[key] {
			return p.errAt(nameTok, fmt.Sprintf("the WITH query %q is defined twice", name.Name))
		}
		seen[key] = true
		if err := p.expectWord("AS", "after the WITH query's name"); err != nil {
			return err
		}
		open := p.tok()
		if !open.isPunct("(") {
			return p.expected("( after AS in WITH", "(")
		}
		p.next()
		inner, err := p.parseQuery()
		if err != nil {
			return err
		}
		if err := p.expectClose(")", "(", open.pos); err != nil {
			return err
		}
		q.With = append(q.With, &CTE{Name: name, Query: inner})
		if !p.acceptPunct(",") {
			break
		}
	}
	if t := p.tok(); !t.is("SELECT") && !t.isPunct("(") {
		return p.expected("SELECT after the WITH clause", "SELECT")
	}
	return nil
}

// parseQueryTerm reads one SELECT, or a parenthesised query. A
// parenthesised query's SELECTs are appended to q when that keeps the
// meaning: it is the first operand (set operations associate to the
// left) and no INTERSECT (which binds tighter) follows it, or it and
// the operation before it (distinct and op tell which) are all UNION
// ALL. Otherwise it stands as SELECT * FROM (query).
func (p *parser) parseQueryTerm(q *Query, distinct bool, op SetOp) *Error {
	t := p.tok()
	switch {
	case t.is("SELECT"):
		s, err := p.parseSelect()
		if err != nil {
			return err
		}
		q.Selects = append(q.Selects, s)
		return nil
	case t.isPunct("(") && (p.startsQuery(1) || p.peek(1).isPunct("(")):
		p.next()
		inner, err := p.parseQuery()
		if err != nil {
			return err
		}
		if err := p.expectClose(")", "(", t.pos); err != nil {
			return err
		}
		first := len(q.Selects) == 0
		allUnionAll := !distinct && op == Union && inner.Distinct == nil && inner.Ops == nil
		if len(inner.With) == 0 && inner.Limit == nil && (len(inner.Selects) == 1 || !p.tok().is("INTERSECT") && (first || allUnionAll)) {
			if inner.Distinct != nil || q.Distinct != nil {
				for len(q.Distinct) < len(q.UnionAt) {
					q.Distinct = append(q.Distinct, false)
				}
				q.Distinct = append(q.Distinct, inner.Distinct...)
				for len(q.Distinct) < len(q.UnionAt)+len(inner.UnionAt) {
					q.Distinct = append(q.Distinct, false)
				}
			}
			if inner.Ops != nil || q.Ops != nil {
				for len(q.Ops) < len(q.UnionAt) {
					q.Ops = append(q.Ops, Union)
				}
				q.Ops = append(q.Ops, inner.Ops...)
				for len(q.Ops) < len(q.UnionAt)+len(inner.UnionAt) {
					q.Ops = append(q.Ops, Union)
				}
			}
			q.Selects = append(q.Selects, inner.Selects...)
			q.UnionAt = append(q.UnionAt, inner.UnionAt...)
			return nil
		}
		q.Selects = append(q.Selects, &Select{At: t.pos,
			Items: []*SelectItem{{Expr: &Star{At: t.pos}}},
			From:  &SubqueryRef{At: t.pos, Query: inner}})
		return nil
	case t.is("WITH"):
		return p.errAt(t, "WITH must begin the query (or a parenthesised query): write WITH name AS (...) SELECT ...")
	case t.is("VALUES"):
		s, err := p.valuesSelect()
		if err != nil {
			return err
		}
		q.Selects = append(q.Selects, s)
		return nil
	}
	if len(q.Selects) > 0 {
		return p.expected("SELECT after UNION", "SELECT")
	}
	return p.expected("SELECT", "SELECT")
}

// endsSelect reports whether t may follow a select list that has no
// FROM clause.
func endsSelect(t token) bool {
	switch {
	case t.kind == tokEOF, t.isPunct(";"), t.isPunct(")"):
		return true
	}
	for _, w := range []string{"UNION", "INTERSECT", "EXCEPT", "ORDER", "LIMIT", "OFFSET", "FETCH"} {
		if t.is(w) {
			return true
		}
	}
	return false
}

// startsQuery reports whether the token k places ahead begins a query,
// possibly behind more opening parentheses.
func (p *parser) startsQuery(k int) bool {
	// Looking further than the nesting limit is pointless: the parse
	// fails there anyway, and a bound keeps hostile input linear.
	stop := k + maxDepth
	for k < stop && p.peek(k).isPunct("(") {
		k++
	}
	t := p.peek(k)
	return t.is("SELECT") || t.is("WITH") || t.is("VALUES")
}

func (p *parser) parseSelect() (*Select, *Error) {
	sel := &Select{At: p.next().pos}
	overMark := len(p.namedOvers)
	if t := p.tok(); t.is("DISTINCT") {
		p.next()
		sel.Distinct, sel.DistinctAt = true, t.pos
	} else {
		p.acceptWord("ALL")
	}
	after := "SELECT"
	for {
		item, err := p.parseSelectItem(after)
		if err != nil {
			return nil, err
		}
		sel.Items = append(sel.Items, item)
		if !p.acceptPunct(",") {
			break
		}
		after = `","`
	}
	if endsSelect(p.tok()) {
		// SELECT without FROM reads one row of no columns.
		sel.From = &Values{At: sel.At, Rows: [][]Expr{{}}, Implicit: true}
	} else if !p.acceptWord("FROM") {
		if err := p.unsupportedHere(); err != nil {
			return nil, err
		}
		return nil, p.expected(`"," or FROM after a select item`, ",", "FROM")
	} else {
		from, err := p.parseFromItem()
		if err != nil {
			return nil, err
		}
		sel.From = from
	}
	var err *Error
	if p.acceptWord("WHERE") {
		if sel.Where, err = p.expectExpr("WHERE"); err != nil {
			return nil, err
		}
	}
	if t := p.tok(); t.is("GROUP") {
		p.next()
		if err := p.expectWord("BY", "after GROUP"); err != nil {
			return nil, err
		}
		sel.GroupByAt = t.pos
		if sel.GroupBy, err = p.parseGroupBy(); err != nil {
			return nil, err
		}
	}
	if p.acceptWord("HAVING") {
		if sel.Having, err = p.expectExpr("HAVING"); err != nil {
			return nil, err
		}
	}
	if p.tok().is("WINDOW") {
		if sel.Windows, err = p.parseWindowClause(); err != nil {
			return nil, err
		}
	}
	if err := p.resolveNamedOvers(sel, overMark); err != nil {
		return nil, err
	}
	if err := p.unsupportedHere(); err != nil {
		return nil, err
	}
	return sel, nil
}

func (p *parser) parseSelectItem(after string) (*SelectItem, *Error) {
	t := p.tok()
	if t.isPunct("*") {
		p.next()
		return &SelectItem{Expr: &Star{At: t.pos}}, nil
	}
	if isName(t) && p.peek(1).isPunct(".") && p.peek(2).isPunct("*") {
		p.next()
		p.next()
		p.next()
		return &SelectItem{Expr: &Star{At: t.pos, Table: ident(t)}}, nil
	}
	e, err := p.expectExpr(after)
	if err != nil {
		return nil, err
	}
	alias, err := p.optionalAlias()
	if err != nil {
		return nil, err
	}
	return &SelectItem{Expr: e, Alias: alias}, nil
}

func (p *parser) parseGroupBy() ([]Expr, *Error) {
	var out []Expr
	after := "GROUP BY"
	for {
		t := p.tok()
		switch {
		case (t.is("ROLLUP") || t.is("CUBE")) && p.peek(1).isPunct("(") || t.is("GROUPING") && p.peek(1).is("SETS"):
			g, err := p.parseGroupingSets()
			if err != nil {
				return nil, err
			}
			out = append(out, g)
			if !p.acceptPunct(",") {
				return out, nil
			}
			after = `","`
			continue
		case t.isPunct("(") && p.peek(1).isPunct(")"):
			return nil, p.errAt(t, "GROUP BY () is not supported; leave out GROUP BY to aggregate all rows")
		}
		e, err := p.expectExpr(after)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if !p.acceptPunct(",") {
			return out, nil
		}
		after = `","`
	}
}

// parseFromItem reads the single FROM item etld supports and refuses the
// joins that would follow it.
func (p *parser) parseFromItem() (FromItem, *Error) {
	item, err := p.parseTableFactor()
	if err != nil {
		return nil, err
	}
	if p.tok().is("MATCH_RECOGNIZE") {
		if item, err = p.parseMatchRecognize(item); err != nil {
			return nil, err
		}
	}
	for {
		// input CROSS JOIN UNNEST(x) ... and input, UNNEST(x) ...
		// (ast_nested.go); [LATERAL] is allowed before UNNEST.
		k, left, inner := 0, false, false
		switch t := p.tok(); {
		case t.is("CROSS") && p.peek(1).is("JOIN"):
			k = 2
		case t.isPunct(","):
			k = 1
		case t.is("LEFT") && p.peek(1).is("JOIN"):
			k, left = 2, true
		case t.is("LEFT") && p.peek(1).is("OUTER") && p.peek(2).is("JOIN"):
			k, left = 3, true
		case t.is("JOIN"):
			k, inner = 1, true
		case t.is("INNER") && p.peek(1).is("JOIN"):
			k, inner = 2, true
		}
		if k > 0 && p.lateralTableAt(k) {
			// A table function (parse_lateral.go).
			for range k {
				p.next()
			}
			if item, err = p.parseLateralTable(item, left, left || inner); err != nil {
				return nil, err
			}
			continue
		}
		if inner {
			break
		}
		if k > 0 && p.peek(k).is("LATERAL") {
			k++
		}
		if k == 0 || !p.peek(k).is("UNNEST") || !p.peek(k+1).isPunct("(") {
			break
		}
		for range k {
			p.next()
		}
		if item, err = p.parseUnnest(item); err != nil {
			return nil, err
		}
		if left {
			if err := p.unnestOnTrue(item.(*Unnest)); err != nil {
				return nil, err
			}
		}
	}
	for {
		next, ok, err := p.parseJoin(item)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		item = next
	}
	if err := p.unsupportedHere(); err != nil {
		return nil, err
	}
	return item, nil
}

func (p *parser) parseTableFactor() (FromItem, *Error) {
	t := p.tok()
	switch {
	case t.isPunct("(") && p.peek(1).is("VALUES"):
		return p.parseValuesRef()
	case t.is("UNNEST") && p.peek(1).isPunct("("):
		// UNNEST alone reads its array once: the correlate of a single
		// row of no columns, as Flink plans it.
		return p.parseUnnest(&Values{At: t.pos, Rows: [][]Expr{{}}, Implicit: true})
	case t.isPunct("("):
		if !p.startsQuery(1) {
			// (a JOIN b ON ...): a parenthesised join.
			p.next()
			item, err := p.parseTableFactor()
			if err != nil {
				return nil, err
			}
			joined := false
			for {
				next, ok, err := p.parseJoin(item)
				if err != nil {
					return nil, err
				}
				if !ok {
					break
				}
				item, joined = next, true
			}
			if !joined {
				return nil, p.expected("a query (SELECT ...) or a join after (", "SELECT")
			}
			if err := p.expectClose(")", "(", t.pos); err != nil {
				return nil, err
			}
			return item, nil
		}
		p.next()
		q, err := p.parseQuery()
		if err != nil {
			return nil, err
		}
		if err := p.expectClose(")", "(", t.pos); err != nil {
			return nil, err
		}
		alias, err := p.fromAlias()
		if err != nil {
			return nil, err
		}
		return &SubqueryRef{At: t.pos, Query: q, Alias: alias}, nil
	case t.is("TABLE"):
		if !p.peek(1).isPunct("(") {
			return nil, p.errAt(t, "TABLE name is only valid inside a window function; write FROM name to read a table")
		}
		return p.parseWindowTVF()
	case windowFuncStart(t) && p.peek(1).isPunct("("):
		return p.parseWindowTVF()
	case t.is("LATERAL"):
		return nil, p.errAt(t, t.up+" is not supported yet")
	case t.is("VALUES"):
		return nil, p.errAt(t, "VALUES in FROM must be parenthesised: FROM (VALUES (1, 'a')) AS t(x, y)")
	}
	name, err := p.expectName("a table name after FROM")
	if err != nil {
		return nil, err
	}
	if p.tok().isPunct(".") {
		return nil, p.errAt(p.tok(), "qualified table names (catalog.database.table) are not supported: name a source or a transform")
	}
	if p.tok().isPunct("(") {
		return nil, p.errAt(p.tok(), "table functions other than TUMBLE, HOP and CUMULATE are not supported")
	}
	ref := &TableRef{Name: name}
	if t := p.tok(); t.is("FOR") && p.peek(1).is("SYSTEM_TIME") {
		p.next()
		p.next()
		if !p.acceptWord("AS") || !p.acceptWord("OF") {
			return nil, p.expected("AS OF after FOR SYSTEM_TIME", "AS OF")
		}
		ref.AsOfAt = t.pos
		if ref.AsOf, err = p.expectExpr("FOR SYSTEM_TIME AS OF"); err != nil {
			return nil, err
		}
	}
	if ref.Alias, err = p.fromAlias(); err != nil {
		return nil, err
	}
	return ref, nil
}

// fromAlias reads a FROM item's alias and refuses a column alias list.
func (p *parser) fromAlias() (Ident, *Error) {
	alias, err := p.optionalAlias()
	if err != nil {
		return Ident{}, err
	}
	if !alias.IsZero() && p.tok().isPunct("(") {
		return Ident{}, p.errAt(p.tok(), "column aliases on a FROM item, alias(a, b), are not supported; alias the columns in the SELECT list")
	}
	return alias, nil
}
