package sql

import (
	"strconv"
	"strings"
)

// Format renders a node (an Expr, a *Query, a *Select, a FromItem or a
// *SelectItem) as canonical SQL on one line: keywords upper-case, single
// spaces, only the parentheses precedence needs, names backquoted when they
// are not plain or are reserved in Flink. The text is valid Flink SQL and
// parses back to the same tree, so it names unaliased columns and shows
// plans in `etld explain`.
func Format(n Node) string {
	var f formatter
	f.node(n)
	return f.b.String()
}

type formatter struct {
	b strings.Builder
}

func (f *formatter) w(s string) { f.b.WriteString(s) }

func (f *formatter) node(n Node) {
	switch n := n.(type) {
	case *Query:
		f.query(n)
	case *Select:
		f.selectBlock(n)
	case *SelectItem:
		f.selectItem(n)
	case FromItem:
		f.from(n)
	case Expr:
		f.expr(n, precLowest)
	case *When:
		if n == nil {
			return
		}
		f.w("WHEN ")
		f.expr(n.Cond, precLowest)
		f.w(" THEN ")
		f.expr(n.Result, precLowest)
	case Ident:
		f.ident(n)
	}
}

// Precedence levels, lowest first, as the parser reads them.
const (
	precLowest = iota
	precOr
	precAnd
	precNot
	precCompare
	precAdd
	precMul
	precUnary
	precPrimary
)

func binaryPrec(op BinaryOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpDistinct, OpNotDistinct:
		return precCompare
	case OpAdd, OpSub:
		return precAdd
	}
	return precMul
}

func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return binaryPrec(e.Op)
	case *Unary:
		if e.Op == OpNot {
			return precNot
		}
		return precUnary
	case *IsExpr, *Between, *InList, *Like:
		return precCompare
	case *Literal:
		if strings.HasPrefix(e.Text, "-") {
			return precUnary
		}
	}
	return precPrimary
}

// expr writes e, in parentheses when its precedence is below min. The
// switch is a table: one writer per node kind.
func (f *formatter) expr(e Expr, min int) {
	if e == nil {
		f.w("?")
		return
	}
	if exprPrec(e) < min {
		f.w("(")
		defer f.w(")")
	}
	switch e := e.(type) {
	case *Literal:
		f.literal(e)
	case *IntervalLit:
		f.interval(e)
	case *ColumnRef:
		f.qualifier(e.Table)
		f.ident(e.Column)
	case *Star:
		f.qualifier(e.Table)
		f.w("*")
	case *Unary:
		f.unary(e)
	case *Binary:
		p := binaryPrec(e.Op)
		f.expr(e.L, p)
		f.w(" " + e.Op.String() + " ")
		f.expr(e.R, p+1)
	case *IsExpr:
		f.isExpr(e)
	case *Between:
		f.between(e)
	case *InQuery:
		f.predicate(e.X, e.Not, " IN (")
		f.query(e.Query)
		f.w(")")
	case *Exists:
		f.w("EXISTS (")
		f.query(e.Query)
		f.w(")")
	case *InList:
		f.predicate(e.X, e.Not, " IN (")
		f.exprList(e.List)
		f.w(")")
	case *Like:
		f.like(e)
	case *Call:
		f.call(e)
	case *Over:
		f.over(e)
	case *Cast:
		f.cast(e)
	case *Case:
		f.caseExpr(e)
	case *Trim:
		f.trim(e)
	case *Extract:
		f.w("EXTRACT(" + e.Unit + " FROM ")
		f.expr(e.X, precLowest)
		f.w(")")
	case *Index:
		f.expr(e.X, precPrimary)
		f.w("[")
		f.expr(e.Index, precLowest)
		f.w("]")
	case *FieldAccess:
		f.fieldAccess(e)
	case *GroupingSets:
		f.groupingSets(e)
	case *ScalarQuery:
		f.w("(")
		f.query(e.Query)
		f.w(")")
	}
}

// qualifier writes `table.`, or nothing when table is zero.
func (f *formatter) qualifier(table Ident) {
	if !table.IsZero() {
		f.ident(table)
		f.w(".")
	}
}

// predicate writes `X [NOT]` and then op, the start of the predicates
// that test their left operand.
func (f *formatter) predicate(x Expr, not bool, op string) {
	f.expr(x, precCompare)
	f.not(not)
	f.w(op)
}

func (f *formatter) isExpr(e *IsExpr) {
	f.expr(e.X, precCompare)
	f.w(" IS ")
	if e.Not {
		f.w("NOT ")
	}
	f.w(e.What.String())
}

func (f *formatter) between(e *Between) {
	f.predicate(e.X, e.Not, " BETWEEN ")
	f.expr(e.Lo, precAdd)
	f.w(" AND ")
	f.expr(e.Hi, precAdd)
}

func (f *formatter) like(e *Like) {
	op := " LIKE "
	if e.Similar {
		op = " SIMILAR TO "
	}
	f.predicate(e.X, e.Not, op)
	f.expr(e.Pattern, precAdd)
	if e.Escape != nil {
		f.w(" ESCAPE ")
		f.expr(e.Escape, precAdd)
	}
}

func (f *formatter) cast(e *Cast) {
	if e.Try {
		f.w("TRY_CAST(")
	} else {
		f.w("CAST(")
	}
	f.expr(e.X, precLowest)
	f.w(" AS " + castTypeText(e) + ")")
}

// castTypeText is the type a CAST converts to. CHAR(n), BINARY(n) and
// VARBINARY(n) are written as such: the first two are typed VARCHAR(n)
// and VARBINARY(n) but pad to n, and the type's own text of the last is
// BYTES, which does not cut to n (so the text tells the CASTs apart, and
// Flink reads what etld runs).
func castTypeText(e *Cast) string {
	name, n := e.SizedType()
	if name == "" {
		return e.Type.String()
	}
	if e.Type.NotNull {
		return name + "(" + strconv.Itoa(n) + ") NOT NULL"
	}
	return name + "(" + strconv.Itoa(n) + ")"
}

// SizedType is the name (upper case) and n of a CAST's type written
// CHAR(n), BINARY(n) or VARBINARY(n), or "" and 0 for any other: etld
// types the first two as VARCHAR(n) and VARBINARY(n), which neither
// pad nor (for the type's own text) cut, so the type as written is what
// the CAST's kernel and its SQL text read.
func (e *Cast) SizedType() (string, int) {
	up := strings.ToUpper(strings.Join(strings.Fields(e.TypeText), ""))
	name, rest, ok := strings.Cut(up, "(")
	if !ok || name != "CHAR" && name != "BINARY" && name != "VARBINARY" {
		return "", 0
	}
	num, _, ok := strings.Cut(rest, ")")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return "", 0
	}
	return name, n
}

func (f *formatter) trim(e *Trim) {
	f.w("TRIM(")
	if e.Mode != TrimBoth || e.Chars != nil {
		f.w(e.Mode.String() + " ")
		if e.Chars != nil {
			f.expr(e.Chars, precLowest)
			f.w(" ")
		}
		f.w("FROM ")
	}
	f.expr(e.X, precLowest)
	f.w(")")
}

func (f *formatter) fieldAccess(e *FieldAccess) {
	if c, ok := e.X.(*ColumnRef); ok && c.Table.IsZero() {
		// x.f alone would read as column f of table x.
		f.w("(")
		f.ident(c.Column)
		f.w(")")
	} else if _, ok := e.X.(*Literal); ok {
		// 0.f would read as a malformed number.
		f.w("(")
		f.expr(e.X, precLowest)
		f.w(")")
	} else {
		f.expr(e.X, precPrimary)
	}
	f.w(".")
	f.ident(e.Field)
}

func (f *formatter) not(not bool) {
	if not {
		f.w(" NOT")
	}
}

func (f *formatter) unary(e *Unary) {
	if e.Op == OpNot {
		f.w("NOT ")
		f.expr(e.X, precNot)
		return
	}
	f.w(e.Op.String())
	// A sign before another sign or a negative number would read as a
	// comment (--) or fold into the literal: keep them apart.
	if inner := exprPrec(e.X); inner == precUnary {
		f.w("(")
		f.expr(e.X, precLowest)
		f.w(")")
		return
	}
	if lit, ok := e.X.(*Literal); ok && e.Op == OpNeg && isNumberLit(lit) {
		f.w("(")
		f.literal(lit)
		f.w(")")
		return
	}
	f.expr(e.X, precUnary)
}

func isNumberLit(l *Literal) bool {
	return l.Kind == LitInt || l.Kind == LitDecimal || l.Kind == LitDouble
}

func (f *formatter) call(c *Call) {
	switch {
	case (c.Name == "ARRAY" || c.Name == "MAP") && len(c.Args) > 0 && !c.Distinct && !c.Star:
		f.w(c.Name + "[")
		f.exprList(c.Args)
		f.w("]")
		return
	case niladic[c.Name] && len(c.Args) == 0 && !c.Star:
		f.w(c.Name)
		return
	case c.Name == "SUBSTRING" && (len(c.Args) == 2 || len(c.Args) == 3) && !c.Distinct:
		f.w("SUBSTRING(")
		f.expr(c.Args[0], precLowest)
		f.w(" FROM ")
		f.expr(c.Args[1], precLowest)
		if len(c.Args) == 3 {
			f.w(" FOR ")
			f.expr(c.Args[2], precLowest)
		}
		f.w(")")
		return
	case c.Name == "OVERLAY" && (len(c.Args) == 3 || len(c.Args) == 4) && !c.Distinct:
		f.w("OVERLAY(")
		for i, kw := range []string{"", " PLACING ", " FROM ", " FOR "}[:len(c.Args)] {
			f.w(kw)
			f.expr(c.Args[i], precLowest)
		}
		f.w(")")
		return
	case c.Name == "POSITION" && len(c.Args) == 2 && !c.Distinct:
		f.w("POSITION(")
		f.expr(c.Args[0], precAdd)
		f.w(" IN ")
		f.expr(c.Args[1], precLowest)
		f.w(")")
		return
	}
	if c.Name == "POSITION" && len(c.Args) > 0 && !c.Distinct {
		// The parser reads POSITION's first argument above the IN level.
		f.w("POSITION(")
		f.expr(c.Args[0], precAdd)
		for _, a := range c.Args[1:] {
			f.w(", ")
			f.expr(a, precLowest)
		}
		f.w(")")
		return
	}
	if isPlainName(c.Name) && !reserved[c.Name] || c.Name == "LEFT" || c.Name == "RIGHT" {
		f.w(c.Name)
	} else {
		f.w(quoteName(c.Name))
	}
	f.w("(")
	if c.Unit != "" && isFloorCeil(c.Name) && len(c.Args) == 1 {
		// Parenthesised, an argument that ends in an interval literal
		// does not take the TO (INTERVAL '1' HOUR TO MINUTE).
		if _, ok := c.Args[0].(*IntervalLit); ok {
			f.w("(")
			f.expr(c.Args[0], precLowest)
			f.w(")")
		} else {
			f.expr(c.Args[0], precPrimary)
		}
		f.w(" TO " + c.Unit + ")")
		return
	}
	if c.Unit != "" {
		f.w(c.Unit)
		if len(c.Args) > 0 {
			f.w(", ")
		}
	}
	switch {
	case c.JSON != nil:
		f.jsonCall(c)
	case c.Star:
		f.w("*")
	case c.Distinct:
		f.w("DISTINCT ")
		fallthrough
	default:
		f.exprList(c.Args)
	}
	if c.Nulls != "" {
		f.w(" " + c.Nulls + " NULLS")
	}
	f.w(")")
	if c.Filter != nil {
		f.w(" FILTER (WHERE ")
		f.expr(c.Filter, precLowest)
		f.w(")")
	}
}

func (f *formatter) caseExpr(c *Case) {
	f.w("CASE")
	if c.Operand != nil {
		f.w(" ")
		f.expr(c.Operand, precLowest)
	}
	for _, w := range c.Whens {
		if w == nil {
			continue
		}
		f.w(" WHEN ")
		f.expr(w.Cond, precLowest)
		f.w(" THEN ")
		f.expr(w.Result, precLowest)
	}
	if c.Else != nil {
		f.w(" ELSE ")
		f.expr(c.Else, precLowest)
	}
	f.w(" END")
}

func (f *formatter) exprList(list []Expr) {
	for i, e := range list {
		if i > 0 {
			f.w(", ")
		}
		f.expr(e, precLowest)
	}
}

func (f *formatter) literal(l *Literal) {
	switch l.Kind {
	case LitString:
		f.w(quoteString(l.Text))
	case LitBytes:
		f.w("X'" + l.Text + "'")
	case LitDate:
		f.w("DATE " + quoteString(l.Text))
	case LitTimestamp:
		f.w("TIMESTAMP " + quoteString(l.Text))
	case LitTime:
		f.w("TIME " + quoteString(l.Text))
	default:
		f.w(l.Text)
	}
}

// interval writes the literal with the leading precision Flink needs when
// the leading field has more than the default two digits.
func (f *formatter) interval(l *IntervalLit) {
	f.w("INTERVAL " + quoteString(l.Text) + " " + l.Unit.String())
	lead := strings.TrimLeft(strings.TrimSpace(l.Text), "+-")
	seps := " :."
	if l.YearMonth() {
		seps = "-"
	}
	if i := strings.IndexAny(lead, seps); i >= 0 {
		lead = lead[:i]
	}
	if n := len(strings.TrimLeft(lead, "0")); n > 2 {
		f.w("(" + strconv.Itoa(n) + ")")
	}
	if l.To != 0 {
		f.w(" TO " + l.To.String())
	}
}

func (f *formatter) ident(i Ident) {
	if isPlainName(i.Name) && !reserved[strings.ToUpper(i.Name)] &&
		!flinkReserved[strings.ToUpper(i.Name)] && !niladic[strings.ToUpper(i.Name)] {
		f.w(i.Name)
		return
	}
	f.w(quoteName(i.Name))
}

// isPlainName reports whether s lexes as one unquoted word.
func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || i > 0 && !isIdentPart(r) {
			return false
		}
	}
	return true
}

func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// jsonCall writes the arguments and clauses of a SQL/JSON call.
func (f *formatter) jsonCall(c *Call) {
	j := c.JSON
	n := len(c.Args)
	for _, b := range []JSONBehavior{j.OnEmpty, j.OnError} {
		if b.Kind == "DEFAULT" && b.Arg < n {
			n = b.Arg
		}
	}
	for i := 0; i < n; i++ {
		switch {
		case j.Keyed && i%2 == 0:
			if i > 0 {
				f.w(", ")
			}
			f.w("KEY ")
		case j.Keyed:
			f.w(" VALUE ")
		case i > 0:
			f.w(", ")
		}
		f.expr(c.Args[i], precLowest)
	}
	if j.OnNull != "" {
		if n > 0 {
			f.w(" ")
		}
		f.w(j.OnNull + " ON NULL")
	}
	if j.ReturningText != "" {
		f.w(" RETURNING " + j.ReturningText)
	}
	if j.Wrapper != "" {
		f.w(" " + j.Wrapper + " ARRAY WRAPPER")
	}
	for _, b := range []struct {
		JSONBehavior
		on string
	}{{j.OnEmpty, "EMPTY"}, {j.OnError, "ERROR"}} {
		switch b.Kind {
		case "":
			continue
		case "DEFAULT":
			f.w(" DEFAULT ")
			if b.Arg < len(c.Args) {
				f.expr(c.Args[b.Arg], precLowest)
			}
		default:
			f.w(" " + b.Kind)
		}
		f.w(" ON " + b.on)
	}
}

// isFloorCeil says name is FLOOR or CEIL, which write their unit last:
// FLOOR(t TO DAY).
func isFloorCeil(name string) bool {
	return name == "FLOOR" || name == "CEIL" || name == "CEILING"
}
