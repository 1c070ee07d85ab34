package runtime

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// A late row of an operator of two inputs (a window join) is described
// with the columns of the input it came from, not of the other.
func TestLateRecordNamesItsInputsColumns(t *testing.T) {
	left := row.NewSchema(row.Field{Name: "k"}, row.Field{Name: "v"})
	right := row.NewSchema(row.Field{Name: "id"}, row.Field{Name: "rate"}, row.Field{Name: "ts"})
	n := &OpNode{Node: Node{Name: "WindowJoin", Transform: "j"}, LateInputs: []row.Schema{left, right}}
	b := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(1), row.BigIntValue(2), row.NullValue}}}}
	for input, want := range []row.Schema{left, right} {
		rec := n.lateRecord(b, input, 0)
		if !slices.Equal(rec.Columns.Names(), want.Names()) || rec.Transform != "j" {
			t.Errorf("input %d: columns %v of transform %q, want %v of j", input, rec.Columns.Names(), rec.Transform, want.Names())
		}
	}
	one := &OpNode{Node: Node{Name: "Over"}, LateColumns: left}
	if rec := one.lateRecord(b, 0, 0); !slices.Equal(rec.Columns.Names(), left.Names()) {
		t.Errorf("one input: columns %v, want %v", rec.Columns.Names(), left.Names())
	}
}
