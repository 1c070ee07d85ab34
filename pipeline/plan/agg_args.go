package plan

import "github.com/etld/etld/pipeline/row"

// argColumns is how an aggregate whose first Calc computes an argument
// several aggregates share (SUM(amount), MAX(amount)) into one column
// reads the columns its state is made for. The state keeps one argument
// per aggregate: its fingerprint lists the columns so, as a plan that
// shared none listed them, and a checkpoint's widening of a column
// (operator.ColumnWidener) names them by that list.
type argColumns struct {
	// fields are the state's input columns: the keys, then an argument
	// (and FILTER condition) per aggregate, then the time; nil when no
	// column is shared, the state's columns then being the input's.
	fields []row.Field
	// cols is, per column of fields, the input column it is read from.
	cols []int
}

// expanded is s under an Expand of grouping sets (aggPlan.expand): the
// keys a set leaves out nullable, and $e, input column width, last.
func (s argColumns) expanded(keys []int, sets [][]bool, width int, e row.Field) argColumns {
	if s.fields == nil {
		return s
	}
	fields := append([]row.Field(nil), s.fields...)
	for i, k := range keys {
		for _, keep := range sets {
			if !keep[i] {
				fields[k].Type = fields[k].Type.Nullable()
			}
		}
	}
	return argColumns{fields: append(fields, e), cols: append(append([]int(nil), s.cols...), width)}
}

// stateInput is the input schema n's state is made for, which its
// fingerprint names: its input's, unless it is an aggregate that shares
// an argument column.
func (n *Node) stateInput() row.Schema {
	var s argColumns
	switch op := n.op.(type) {
	case *groupAggOp:
		s = op.state
	case *windowAggOp:
		s = op.state
	}
	if s.fields == nil {
		return n.Input.Schema
	}
	return row.NewSchema(s.fields...)
}
