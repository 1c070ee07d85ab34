package sql

import (
	"strconv"
	"strings"
)

// Values is a constant table: `(VALUES (1, 'a'), (2, 'b')) [AS] alias
// [(col, ...)]` in a FROM clause. A SELECT without FROM reads the
// Implicit one: a single row of no columns, as Flink plans it. Every row
// has as many expressions as the first.
type Values struct {
	At       Pos // the VALUES keyword (the SELECT keyword when Implicit)
	Rows     [][]Expr
	Alias    Ident
	Columns  []Ident // the column aliases, nil when not written
	Implicit bool
}

// Pos returns the position of the VALUES keyword.
func (v *Values) Pos() Pos { return v.At }

func (*Values) fromNode() {}

var _ FromItem = (*Values)(nil)

// parseValuesRef reads `(VALUES row, ...) [AS] alias [(col, ...)]`; the
// current token is the opening parenthesis.
func (p *parser) parseValuesRef() (FromItem, *Error) {
	open := p.next()
	v, err := p.parseValues()
	if err != nil {
		return nil, err
	}
	if err := p.expectClose(")", "(", open.pos); err != nil {
		return nil, err
	}
	alias, err := p.optionalAlias()
	if err != nil {
		return nil, err
	}
	v.Alias = alias
	if cols := p.tok(); !alias.IsZero() && cols.isPunct("(") {
		if v.Columns, err = p.aliasColumns("VALUES"); err != nil {
			return nil, err
		}
		if n := len(v.Rows[0]); len(v.Columns) != n {
			return nil, p.errAt(cols, "the VALUES alias list names "+strconv.Itoa(len(v.Columns))+" columns, the rows have "+strconv.Itoa(n))
		}
	}
	return v, nil
}

// parseValues reads `VALUES row, ...`; the current token is VALUES.
func (p *parser) parseValues() (*Values, *Error) {
	v := &Values{At: p.next().pos}
	for {
		row, err := p.parseValuesRow(len(v.Rows) == 0, v)
		if err != nil {
			return nil, err
		}
		v.Rows = append(v.Rows, row)
		if !p.acceptPunct(",") {
			return v, nil
		}
	}
}

// valuesSelect reads a VALUES query, `VALUES row, ...` where a SELECT
// may stand, as `SELECT * FROM (VALUES row, ...)`, which is how Flink
// plans it.
func (p *parser) valuesSelect() (*Select, *Error) {
	at := p.tok().pos
	v, err := p.parseValues()
	if err != nil {
		return nil, err
	}
	return &Select{At: at, Items: []*SelectItem{{Expr: &Star{At: at}}}, From: v}, nil
}

// parseValuesRow reads one `(x, ...)` row of a VALUES list (a bare
// expression is a row of one column); it must be as wide as the first.
func (p *parser) parseValuesRow(first bool, v *Values) ([]Expr, *Error) {
	t := p.tok()
	var row []Expr
	if t.isPunct("(") && !p.startsQuery(1) {
		p.next()
		for {
			x, err := p.expectExpr("a VALUES row")
			if err != nil {
				return nil, err
			}
			row = append(row, x)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectClose(")", "(", t.pos); err != nil {
			return nil, err
		}
	} else {
		x, err := p.expectExpr("VALUES")
		if err != nil {
			return nil, err
		}
		row = []Expr{x}
	}
	if !first && len(row) != len(v.Rows[0]) {
		return nil, p.errAt(t, "this VALUES row has "+strconv.Itoa(len(row))+" columns, the first has "+strconv.Itoa(len(v.Rows[0])))
	}
	return row, nil
}

// aliasColumns reads the `(col, ...)` list after the alias of a FROM
// item (what names it in errors) and refuses a name written twice.
func (p *parser) aliasColumns(what string) ([]Ident, *Error) {
	open := p.next()
	var cols []Ident
	for {
		c, err := p.expectName("a column name in the " + what + " alias list")
		if err != nil {
			return nil, err
		}
		for _, o := range cols {
			if strings.EqualFold(o.Name, c.Name) {
				return nil, &Error{Pos: c.At, Msg: "duplicate column " + c.Name + " in the " + what + " alias list"}
			}
		}
		cols = append(cols, c)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectClose(")", "(", open.pos); err != nil {
		return nil, err
	}
	return cols, nil
}

func (f *formatter) values(v *Values) {
	f.w("(VALUES ")
	for i, r := range v.Rows {
		if i > 0 {
			f.w(", ")
		}
		f.w("(")
		f.exprList(r)
		f.w(")")
	}
	f.w(")")
	f.aliasColumns(v.Alias, v.Columns)
}

// aliasColumns writes ` AS alias (col, ...)`, nothing when alias is absent.
func (f *formatter) aliasColumns(alias Ident, cols []Ident) {
	if alias.IsZero() {
		return
	}
	f.w(" AS ")
	f.ident(alias)
	if len(cols) == 0 {
		return
	}
	f.w(" (")
	for i, c := range cols {
		if i > 0 {
			f.w(", ")
		}
		f.ident(c)
	}
	f.w(")")
}
