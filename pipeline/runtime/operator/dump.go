package operator

import "github.com/etld/etld/pipeline/row"

// StateDumper is an operator whose state `etld state dump` lists as rows,
// from a checkpoint restored into it, without running it: a GROUP BY's
// current result per group, a join's rows of each side. DumpState is
// called on a restored (or a live) operator from one goroutine; it does
// not change the state.
type StateDumper interface {
	DumpState(d *StateDump) error
}

// StateDump is what an operator lists its state into. In and Out name
// the operator's columns (one schema per input, and its output's), from
// the plan; the operator names its tables' columns after them. It calls
// Table before the rows of each table, then Row for each row of it.
type StateDump struct {
	In  []row.Schema
	Out row.Schema
	// Table starts a table of the state: name tells the tables of one
	// operator apart ("" for an operator's only one), cols are its rows'
	// columns.
	Table func(name string, cols row.Schema) error
	// Row is one row of the current table; it may be reused after the
	// call.
	Row func(r row.Row) error
}

// Extra columns of dumped tables, which no input or output names: the
// rows an aggregate has seen, the copies of a row a state holds, its
// matches on the other side of a join.
var (
	RowsColumn    = row.Field{Name: "$rows", Type: row.Type{ID: row.BigInt, NotNull: true}}
	CountColumn   = row.Field{Name: "$count", Type: row.Type{ID: row.BigInt, NotNull: true}}
	MatchesColumn = row.Field{Name: "$matches", Type: row.Type{ID: row.BigInt, NotNull: true}}
)
