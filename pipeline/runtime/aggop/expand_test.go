package aggop_test

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestExpand: each change once per grouping set, its kind kept, the
// keys a set leaves out NULL, the set's id last.
func TestExpand(t *testing.T) {
	// ROLLUP(a, b) over rows (a, b, v): sets (a, b), (a), ().
	op, err := aggop.NewExpand([]int{0, 1}, [][]bool{{true, true}, {true, false}, {false, false}}, []int64{0, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	var out optest.Out
	if err := op.Process(optest.Batch(optest.Ins("x", "y", 1), optest.Change(row.UpdateBefore, "x", nil, 2)), &out); err != nil {
		t.Fatal(err)
	}
	want := "+I[x, y, 1, 0] +I[x, null, 1, 1] +I[null, null, 1, 3] -U[x, null, 2, 0] -U[x, null, 2, 1] -U[null, null, 2, 3]"
	if got := strings.Join(out.Lines, " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := aggop.NewExpand([]int{0}, [][]bool{{true, false}}, []int64{0}); err == nil {
		t.Error("a set of the wrong width: no error")
	}
}
