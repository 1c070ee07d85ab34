package aggop_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestSingleRow: changes pass while at most one row is held, also across
// a restore before every step; a second live row is the error.
func TestSingleRow(t *testing.T) {
	steps := []row.Change{
		optest.Ins(1),
		optest.Change(row.UpdateBefore, 1),
		optest.Change(row.UpdateAfter, 2),
		optest.Change(row.Delete, 2),
		optest.Ins(3),
		optest.Ins(4),
	}
	op := aggop.NewSingleRow()
	var out optest.Out
	var err error
	for _, c := range steps {
		snap, serr := op.Snapshot()
		if serr != nil {
			t.Fatal(serr)
		}
		op = aggop.NewSingleRow()
		if rerr := op.Restore(snap); rerr != nil {
			t.Fatal(rerr)
		}
		if err = op.Process(optest.Batch(c), &out); err != nil {
			break
		}
	}
	if !errors.Is(err, aggop.ErrMoreThanOneRow) {
		t.Fatalf("error %v, want ErrMoreThanOneRow", err)
	}
	if got, want := strings.Join(out.Lines, " "), "+I[1] -U[1] +U[2] -D[2] +I[3]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if err := aggop.NewSingleRow().Restore([]byte{9}); err == nil {
		t.Error("restore of a bad version: no error")
	}
}
