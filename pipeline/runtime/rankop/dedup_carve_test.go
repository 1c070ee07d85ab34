package rankop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// carvingOut is an emitter that lends rows (operator.RowCarver), from
// one slab, as a node's batch emitter does.
type carvingOut struct {
	optest.Out
	slab   []row.Value
	carved int
}

func (o *carvingOut) CarveRow(w int) row.Row {
	if len(o.slab) < w {
		o.slab = make([]row.Value, 1<<16)
	}
	r := o.slab[:w:w]
	o.slab = o.slab[w:]
	o.carved++
	return r
}

// discardOut lends rows and drops what it is given.
type discardOut struct{ carvingOut }

func (o *discardOut) Emit(row.Kind, row.Row) {}

// TestDedupCarvesReplacedRows: a deduplication keeping the last row
// emits the replaced row's -U in a row its emitter lends, the same
// changes as into an emitter that lends none, and the -U rows stay
// whole while the keys' rows are replaced again and again (their
// strings are copies, not views of the state's arena).
func TestDedupCarvesReplacedRows(t *testing.T) {
	for _, spec := range []DedupSpec{
		{Key: []int{0}, TimeCol: 2, KeepLast: true},
		{Key: []int{0, 1}, TimeCol: 2, RowTime: true, KeepLast: true},
		{Key: []int{1}, TimeCol: 2, RowTime: true, KeepLast: true},
	} {
		t.Run(fmt.Sprint(spec.Key, spec.RowTime), func(t *testing.T) {
			plain, carving := NewDedup(spec), NewDedup(spec)
			var want optest.Out
			got := &carvingOut{}
			var kept []row.Change
			for i := range 5000 {
				c := optest.Ins(fmt.Sprint("k", i%37), i%5, optest.LTZSec(int64(i)), strings.Repeat("x", i%300))
				if err := plain.Process(optest.Batch(c), &want); err != nil {
					t.Fatal(err)
				}
				if err := carving.Process(optest.Batch(c), got); err != nil {
					t.Fatal(err)
				}
				kept = append(kept, got.Changes()...)
			}
			lines := make([]string, len(kept))
			for i, c := range kept {
				lines[i] = c.String()
			}
			if w := want.Take(); !slices.Equal(lines, w) {
				t.Fatalf("%d changes carving, %d not; they differ", len(lines), len(w))
			}
			if got.carved == 0 {
				t.Fatal("no -U row was carved from the emitter's memory")
			}
		})
	}
}

// TestDedupReplaceAllocates: replacing a key's row allocates nothing per
// row when the emitter lends rows (a copy of the kept row was two
// allocations: its bytes and its slice).
func TestDedupReplaceAllocates(t *testing.T) {
	d := NewDedup(DedupSpec{Key: []int{0}, TimeCol: 2, KeepLast: true})
	out := &discardOut{}
	rows := []row.Row{
		optest.Ins("k", 1, optest.LTZSec(1), "a string of some length").Row,
		optest.Ins("k", 2, optest.LTZSec(2), "another string").Row,
	}
	i := 0
	allocs := testing.AllocsPerRun(10000, func() {
		d.kbuf = row.KeyOf(d.kbuf[:0], rows[i%2], d.spec.Key)
		d.keepOrReplace(rows[i%2], out, out)
		i++
	})
	if allocs > 0.1 {
		t.Fatalf("%.2f allocations per replaced row", allocs)
	}
}
