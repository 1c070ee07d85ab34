package sql

// The formatting of queries: WITH, UNION, the SELECT block, FROM and its
// window table functions. format.go writes expressions.

func (f *formatter) query(q *Query) {
	if q == nil {
		f.w("?")
		return
	}
	for i, c := range q.With {
		if i == 0 {
			f.w("WITH ")
		} else {
			f.w(", ")
		}
		f.ident(c.Name)
		f.w(" AS (")
		f.query(c.Query)
		f.w(")")
	}
	if len(q.With) > 0 {
		f.w(" ")
	}
	for i, s := range q.Selects {
		if i > 0 {
			f.w(" " + q.Op(i-1).String() + " ")
			if !q.UnionDistinct(i - 1) {
				f.w("ALL ")
			}
		}
		f.selectBlock(s)
	}
	f.orderLimit(q)
}

func (f *formatter) selectBlock(s *Select) {
	if s == nil {
		f.w("?")
		return
	}
	f.w("SELECT ")
	if s.Distinct {
		f.w("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			f.w(", ")
		}
		f.selectItem(it)
	}
	if v, ok := s.From.(*Values); s.From != nil && (!ok || !v.Implicit) {
		f.w(" FROM ")
		f.from(s.From)
	}
	if s.Where != nil {
		f.w(" WHERE ")
		f.expr(s.Where, precLowest)
	}
	if len(s.GroupBy) > 0 {
		f.w(" GROUP BY ")
		f.exprList(s.GroupBy)
	}
	if s.Having != nil {
		f.w(" HAVING ")
		f.expr(s.Having, precLowest)
	}
	f.windowClause(s.Windows)
}

func (f *formatter) selectItem(it *SelectItem) {
	if it == nil {
		f.w("?")
		return
	}
	f.expr(it.Expr, precLowest)
	f.alias(it.Alias)
}

func (f *formatter) alias(a Ident) {
	if !a.IsZero() {
		f.w(" AS ")
		f.ident(a)
	}
}

func (f *formatter) from(n FromItem) {
	switch n := n.(type) {
	case *Join:
		f.from(n.Left)
		switch {
		case n.Type == CommaJoin:
			f.w(", ")
		case n.Natural:
			f.w(" NATURAL " + n.Type.String() + " ")
		default:
			f.w(" " + n.Type.String() + " ")
		}
		f.from(n.Right)
		if n.On != nil {
			f.w(" ON ")
			f.expr(n.On, precLowest)
		}
		if n.Using != nil {
			f.w(" USING (")
			for i, c := range n.Using {
				if i > 0 {
					f.w(", ")
				}
				f.ident(c)
			}
			f.w(")")
		}
	case *TableRef:
		f.ident(n.Name)
		if n.AsOf != nil {
			f.w(" FOR SYSTEM_TIME AS OF ")
			f.expr(n.AsOf, precLowest)
		}
		f.alias(n.Alias)
	case *SubqueryRef:
		f.w("(")
		f.query(n.Query)
		f.w(")")
		f.alias(n.Alias)
	case *Values:
		f.values(n)
	case *Unnest:
		if v, ok := n.Input.(*Values); ok && v.Implicit {
			f.w("UNNEST(")
		} else if f.from(n.Input); n.Left {
			f.w(" LEFT JOIN UNNEST(")
		} else {
			f.w(" CROSS JOIN UNNEST(")
		}
		f.expr(n.X, precLowest)
		f.w(")")
		if n.Ordinality {
			f.w(" WITH ORDINALITY")
		}
		f.aliasColumns(n.Alias, n.Columns)
		if n.Left {
			f.w(" ON TRUE")
		}
	case *LateralTable:
		f.from(n.Input)
		if n.Left {
			f.w(" LEFT JOIN LATERAL TABLE(")
		} else {
			f.w(" CROSS JOIN LATERAL TABLE(")
		}
		f.expr(n.Call, precLowest)
		f.w(")")
		f.aliasColumns(n.Alias, n.Columns)
		if n.Left {
			f.w(" ON TRUE")
		}
	case *WindowTVF:
		f.window(n)
	case *MatchRecognize:
		f.matchRecognize(n)
	}
}

func (f *formatter) window(w *WindowTVF) {
	f.w("TABLE(")
	f.w(w.Kind.String())
	f.w("(")
	if w.Named {
		f.w("DATA => ")
	}
	f.w("TABLE ")
	f.ident(w.Table)
	if len(w.PartitionBy) > 0 {
		f.w(" PARTITION BY ")
		if w.PartitionParens {
			f.w("(")
		}
		for i, c := range w.PartitionBy {
			if i > 0 {
				f.w(", ")
			}
			f.ident(c)
		}
		if w.PartitionParens {
			f.w(")")
		}
	}
	f.w(", ")
	if w.Named {
		f.w("TIMECOL => ")
	}
	f.w("DESCRIPTOR(")
	f.ident(w.TimeCol)
	f.w(")")
	for _, param := range windowParams[w.Kind] {
		var e Expr
		switch param {
		case "SIZE":
			e = w.Size
		case "SLIDE":
			e = w.Slide
		case "STEP":
			e = w.Step
		case "OFFSET":
			e = w.Offset
		case "GAP":
			e = w.Gap
		}
		if e == nil {
			continue
		}
		f.w(", ")
		if w.Named {
			f.w(param + " => ")
		}
		f.expr(e, precLowest)
	}
	f.w("))")
	f.alias(w.Alias)
}
