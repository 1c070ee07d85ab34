package runtime

import (
	"fmt"
	"slices"
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
// share is folded, and the result is the one worker's, with shares
// handed over as they fill (asyncChunk) and at Finish.
func TestKeyedBehindProcessGivesEachBatchBackOnce(t *testing.T) {
	var batches []*row.Batch
	for i := range 40 {
		var cs []row.Change
		for j := range i % 7 * 300 { // some empty
			cs = append(cs, optest.Ins(fmt.Sprintf("k%d", (i*31+j)%997), j, j))
		}
		batches = append(batches, &row.Batch{Changes: cs})
	}
	var want []string
	for n := 1; n <= 3; n++ {
		k := batchKeyed(t, n)
		if k.async.on != (n > 1) {
			t.Fatalf("%d workers: behind Process %v", n, k.async.on)
		}
		var mu sync.Mutex
		given := map[*row.Batch]int{}
		k.setRelease(func(b *row.Batch) {
			mu.Lock()
			given[b]++
			mu.Unlock()
		})
		for _, b := range batches {
			if err := k.Process(b, nil); err != nil {
				t.Fatal(err)
			}
		}
		out := &collectLines{}
		if err := k.Finish(out); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out.lines)
		if n == 1 {
			want = out.lines
			if len(want) != 997 {
				t.Fatalf("%d groups, want 997", len(want))
			}
			continue
		}
		if !slices.Equal(out.lines, want) {
			t.Fatalf("%d workers: another result than one worker's", n)
		}
		mu.Lock()
		for i, b := range batches {
			if given[b] != 1 {
				t.Errorf("%d workers: batch %d given back %d times, want once", n, i, given[b])
			}
		}
		mu.Unlock()
		if k.StateEntries() != 997 {
			t.Errorf("%d workers: %d state entries, want 997", n, k.StateEntries())
		}
	}
}

type collectLines struct{ lines []string }

func (c *collectLines) Emit(k row.Kind, r row.Row) {
	c.lines = append(c.lines, row.Change{Kind: k, Row: r}.String())
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
	// Two good batches first: the bad change's share holds changes of
	// three batches, and names the third's.
	for range 2 {
		if err := k.Process(&row.Batch{Changes: slices.Clone(changes[:13]), Origin: otherNames{}}, nil); err != nil {
			t.Fatal(err)
		}
	}
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

type otherNames struct{}

func (otherNames) Position(i int) string { return fmt.Sprintf("record %d", i+1) }
