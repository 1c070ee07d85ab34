package runtime

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

func batchKeyed(t *testing.T, n int) *Keyed {
	t.Helper()
	keys := []int{0}
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	k, err := NewKeyed(keys, n, func() (operator.KeyGrouped, error) {
		return aggop.NewGroupAgg(keys, aggs, aggop.GroupAggOptions{Batch: true, InsertOnly: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Behind Process, each input batch is given back once, after its last
// share is folded, and the result is the one worker's.
func TestKeyedBehindProcessGivesEachBatchBackOnce(t *testing.T) {
	for n := 2; n <= 3; n++ {
		k := batchKeyed(t, n)
		if !k.async.on {
			t.Fatal("a batch-mode GROUP BY on several workers does not fold behind Process")
		}
		var mu sync.Mutex
		given := map[*row.Batch]int{}
		k.setRelease(func(b *row.Batch) {
			mu.Lock()
			given[b]++
			mu.Unlock()
		})
		var batches []*row.Batch
		for i := range 40 {
			var cs []row.Change
			for j := range i % 7 * 30 { // some empty
				cs = append(cs, optest.Ins(fmt.Sprintf("k%d", (i*31+j)%97), j, j))
			}
			b := &row.Batch{Changes: cs}
			batches = append(batches, b)
			if err := k.Process(b, nil); err != nil {
				t.Fatal(err)
			}
		}
		out := &optest.Discard{}
		if err := k.Finish(out); err != nil {
			t.Fatal(err)
		}
		if out.N != 97 {
			t.Fatalf("%d workers: %d groups, want 97", n, out.N)
		}
		mu.Lock()
		for i, b := range batches {
			if given[b] != 1 {
				t.Errorf("%d workers: batch %d given back %d times, want once", n, i, given[b])
			}
		}
		mu.Unlock()
		if k.StateEntries() != 97 {
			t.Errorf("%d workers: %d state entries, want 97", n, k.StateEntries())
		}
	}
}

// A worker's error behind Process is the next call's, and names the
// input change.
func TestKeyedBehindProcessReportsAnError(t *testing.T) {
	k := batchKeyed(t, 2)
	var changes []row.Change
	for i := range 20 {
		changes = append(changes, optest.Ins(fmt.Sprintf("k%d", i), i, i))
	}
	changes[13].Kind = row.Delete
	err := k.Process(&row.Batch{Changes: changes, Origin: lineNames{}}, nil)
	if err == nil {
		err = k.Finish(&optest.Discard{})
	}
	if err == nil || !strings.Contains(err.Error(), "line 14: change 13:") {
		t.Fatalf("%v, want an error at line 14, change 13", err)
	}
	if again := k.Process(&row.Batch{Changes: changes[:2]}, nil); again == nil {
		t.Fatal("a call after a worker failed went on")
	}
}

type lineNames struct{}

func (lineNames) Position(i int) string { return fmt.Sprintf("line %d", i+1) }
