package expr

import (
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// exprString renders an expression back to SQL for messages: run-time
// errors name the subexpression that failed.
func exprString(e sql.Expr) string {
	var b strings.Builder
	writeExpr(&b, e, 0)
	return b.String()
}

// precedence of binary operators, higher binds tighter.
func precedence(op sql.BinaryOp) int {
	switch op {
	case sql.OpOr:
		return 1
	case sql.OpAnd:
		return 2
	case sql.OpEq, sql.OpNe, sql.OpLt, sql.OpLe, sql.OpGt, sql.OpGe:
		return 4
	case sql.OpAdd, sql.OpSub, sql.OpConcat:
		return 5
	case sql.OpMul, sql.OpDiv, sql.OpMod:
		return 6
	}
	return 0
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func writeIdent(b *strings.Builder, id sql.Ident) {
	if id.Quoted {
		b.WriteString("`" + strings.ReplaceAll(id.Name, "`", "``") + "`")
		return
	}
	b.WriteString(id.Name)
}

// writeExpr writes e, parenthesised when its operators bind looser than
// the context's (ctx is the enclosing precedence; 3 stands for the
// predicates IS, BETWEEN, IN and LIKE).
func writeExpr(b *strings.Builder, e sql.Expr, ctx int) {
	paren := func(p int, f func()) {
		if p < ctx {
			b.WriteByte('(')
			f()
			b.WriteByte(')')
			return
		}
		f()
	}
	switch e := e.(type) {
	case nil:
		b.WriteString("?")
	case *sql.Literal:
		switch e.Kind {
		case sql.LitNull:
			b.WriteString("NULL")
		case sql.LitUnknown:
			b.WriteString("UNKNOWN")
		case sql.LitBool:
			b.WriteString(strings.ToUpper(e.Value.Text(row.Type{ID: row.Boolean})))
		case sql.LitString:
			b.WriteString(quoteString(e.Text))
		case sql.LitBytes:
			b.WriteString("X'" + e.Text + "'")
		case sql.LitDate:
			b.WriteString("DATE " + quoteString(e.Text))
		case sql.LitTimestamp:
			b.WriteString("TIMESTAMP " + quoteString(e.Text))
		default:
			b.WriteString(e.Text)
		}
	case *sql.IntervalLit:
		b.WriteString("INTERVAL " + quoteString(e.Text) + " " + e.Unit.String())
		if e.To != 0 {
			b.WriteString(" TO " + e.To.String())
		}
	case *sql.ColumnRef:
		if !e.Table.IsZero() {
			writeIdent(b, e.Table)
			b.WriteByte('.')
		}
		writeIdent(b, e.Column)
	case *sql.Star:
		if !e.Table.IsZero() {
			writeIdent(b, e.Table)
			b.WriteByte('.')
		}
		b.WriteByte('*')
	case *sql.Unary:
		if e.Op == sql.OpNot {
			paren(3, func() { b.WriteString("NOT "); writeExpr(b, e.X, 3) })
			return
		}
		b.WriteString(e.Op.String())
		writeExpr(b, e.X, 7)
	case *sql.Binary:
		p := precedence(e.Op)
		paren(p, func() {
			writeExpr(b, e.L, p)
			b.WriteString(" " + e.Op.String() + " ")
			writeExpr(b, e.R, p+1)
		})
	case *sql.IsExpr:
		paren(3, func() {
			writeExpr(b, e.X, 4)
			b.WriteString(" IS ")
			if e.Not {
				b.WriteString("NOT ")
			}
			b.WriteString(e.What.String())
		})
	case *sql.Between:
		paren(3, func() {
			writeExpr(b, e.X, 4)
			b.WriteString(notWord(e.Not) + " BETWEEN ")
			writeExpr(b, e.Lo, 4)
			b.WriteString(" AND ")
			writeExpr(b, e.Hi, 4)
		})
	case *sql.InList:
		paren(3, func() {
			writeExpr(b, e.X, 4)
			b.WriteString(notWord(e.Not) + " IN (")
			writeList(b, e.List)
			b.WriteByte(')')
		})
	case *sql.Like:
		paren(3, func() {
			writeExpr(b, e.X, 4)
			b.WriteString(notWord(e.Not) + " LIKE ")
			writeExpr(b, e.Pattern, 4)
			if e.Escape != nil {
				b.WriteString(" ESCAPE ")
				writeExpr(b, e.Escape, 4)
			}
		})
	case *sql.Call:
		b.WriteString(e.Name + "(")
		switch {
		case e.Star:
			b.WriteByte('*')
		case e.Distinct:
			b.WriteString("DISTINCT ")
			fallthrough
		default:
			writeList(b, e.Args)
		}
		b.WriteByte(')')
	case *sql.Cast:
		if e.Try {
			b.WriteString("TRY_")
		}
		b.WriteString("CAST(")
		writeExpr(b, e.X, 0)
		b.WriteString(" AS " + e.TypeText + ")")
	case *sql.Case:
		b.WriteString("CASE")
		if e.Operand != nil {
			b.WriteByte(' ')
			writeExpr(b, e.Operand, 0)
		}
		for _, w := range e.Whens {
			b.WriteString(" WHEN ")
			writeExpr(b, w.Cond, 0)
			b.WriteString(" THEN ")
			writeExpr(b, w.Result, 0)
		}
		if e.Else != nil {
			b.WriteString(" ELSE ")
			writeExpr(b, e.Else, 0)
		}
		b.WriteString(" END")
	case *sql.Trim:
		b.WriteString("TRIM(")
		if e.Mode != sql.TrimBoth || e.Chars != nil {
			b.WriteString(e.Mode.String() + " ")
			if e.Chars != nil {
				writeExpr(b, e.Chars, 0)
				b.WriteByte(' ')
			}
			b.WriteString("FROM ")
		}
		writeExpr(b, e.X, 0)
		b.WriteByte(')')
	case *sql.Extract:
		b.WriteString("EXTRACT(" + e.Unit + " FROM ")
		writeExpr(b, e.X, 0)
		b.WriteByte(')')
	default:
		b.WriteString("?")
	}
}

func writeList(b *strings.Builder, es []sql.Expr) {
	for i, a := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, a, 0)
	}
}

func notWord(neg bool) string {
	if neg {
		return " NOT"
	}
	return ""
}
