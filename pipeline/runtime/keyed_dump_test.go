package runtime_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A keyed operator's state dump lists each of its tables once, with
// every worker's rows of it under it: a join of three workers dumps
// what one worker holds (before, the second worker's left rows came
// under the first one's "right" table).
func TestKeyedDumpListsEachTableOnce(t *testing.T) {
	spec := joinop.JoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}
	dump := func(workers int) []string {
		k, err := runtime.NewKeyedTwo([]int{0}, []int{0}, workers, func() (operator.KeyGrouped, error) { return joinop.NewJoin(spec), nil })
		if err != nil {
			t.Fatal(err)
		}
		for i := range 24 {
			b := optest.Batch(optest.Ins(fmt.Sprintf("k%d", i%6), i))
			if err := k.ProcessInput(i%2, b, &optest.Out{}); err != nil {
				t.Fatal(err)
			}
		}
		var lines []string
		table := ""
		d := &operator.StateDump{
			In: []row.Schema{row.NewSchema(row.Field{Name: "k"}, row.Field{Name: "v"}), row.NewSchema(row.Field{Name: "k"}, row.Field{Name: "w"})},
			Table: func(name string, cols row.Schema) error {
				table = name
				lines = append(lines, "table "+name)
				return nil
			},
			Row: func(r row.Row) error {
				lines = append(lines, table+": "+row.Change{Kind: row.Insert, Row: r}.String())
				return nil
			},
		}
		if err := k.DumpState(d); err != nil {
			t.Fatal(err)
		}
		slices.Sort(lines)
		return lines
	}
	one, three := dump(1), dump(3)
	if len(one) < 20 {
		t.Fatalf("one worker holds %q: the case shows nothing", one)
	}
	if !slices.Equal(three, one) {
		t.Errorf("three workers dump\n %q\none dumps\n %q", three, one)
	}
}
