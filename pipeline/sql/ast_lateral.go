package sql

// LateralTable is `Input CROSS JOIN LATERAL TABLE(f(args)) [AS] alias
// [(col, ...)]` (also `Input, LATERAL TABLE(...)` and `Input JOIN
// LATERAL TABLE(...) ... ON TRUE`): each row of Input joined with the
// rows the table function f gives for it, as Flink's correlate of a
// user-defined table function. Left is `Input LEFT JOIN LATERAL
// TABLE(...) ... ON TRUE`: a row f gives no rows for is kept, its
// columns NULL.
type LateralTable struct {
	At      Pos // the LATERAL keyword
	Input   FromItem
	Call    *Call
	Left    bool
	Alias   Ident
	Columns []Ident // the column aliases, nil when not written
}

// Pos returns the position of the LATERAL keyword.
func (l *LateralTable) Pos() Pos { return l.At }

func (*LateralTable) fromNode() {}
