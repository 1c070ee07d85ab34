package sql

func (f *formatter) matchRecognize(m *MatchRecognize) {
	f.from(m.Input)
	f.w(" MATCH_RECOGNIZE (")
	if len(m.PartitionBy) > 0 {
		f.w("PARTITION BY ")
		f.exprList(m.PartitionBy)
		f.w(" ")
	}
	f.w("ORDER BY ")
	for i, o := range m.OrderBy {
		if i > 0 {
			f.w(", ")
		}
		f.expr(o.X, precLowest)
		if o.Desc {
			f.w(" DESC")
		}
	}
	if len(m.Measures) > 0 {
		f.w(" MEASURES ")
		for i, it := range m.Measures {
			if i > 0 {
				f.w(", ")
			}
			f.selectItem(it)
		}
	}
	switch {
	case m.AllRows:
		f.w(" ALL ROWS PER MATCH")
	case m.RowsAt.IsValid():
		f.w(" ONE ROW PER MATCH")
	}
	if m.Skip != SkipDefault {
		f.w(" AFTER MATCH " + m.Skip.String())
		if m.Skip == SkipToFirst || m.Skip == SkipToLast {
			f.w(" ")
			f.ident(m.SkipVar)
		}
	}
	f.w(" PATTERN (")
	for i, t := range m.Pattern.Terms {
		if i > 0 {
			f.w(" ")
		}
		f.ident(t.Var)
		f.w(t.Quant)
	}
	f.w(")")
	if m.Within != nil {
		f.w(" WITHIN ")
		f.expr(m.Within, precLowest)
	}
	f.w(" DEFINE ")
	for i, d := range m.Define {
		if i > 0 {
			f.w(", ")
		}
		f.ident(d.Var)
		f.w(" AS ")
		f.expr(d.Cond, precLowest)
	}
	f.w(")")
	f.alias(m.Alias)
}
