package runtime_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A keyed GROUP BY's workers must give, key by key, the changes one
// instance gives (and so the same table), whatever the number of workers,
// the input and how it is cut in batches, in every mode of the
// operator, and across a checkpoint restored with another number of
// workers.

type keyedCase struct {
	name string
	keys []int
	opt  aggop.GroupAggOptions
	// retract: the input has -U/-D of earlier rows.
	retract bool
}

var keyedCases = []keyedCase{
	{name: "streaming, string key", keys: []int{0}, opt: aggop.GroupAggOptions{InsertOnly: true}},
	{name: "streaming retractions, two-column key", keys: []int{0, 1}, retract: true},
	{name: "mini-batch, int key", keys: []int{1}, opt: aggop.GroupAggOptions{InsertOnly: true, MiniBatch: true}},
	{name: "mini-batch retractions, string key", keys: []int{0}, opt: aggop.GroupAggOptions{MiniBatch: true}, retract: true},
	{name: "batch, two-column key", keys: []int{0, 1}, opt: aggop.GroupAggOptions{Batch: true, InsertOnly: true}},
	{name: "batch, int key", keys: []int{1}, opt: aggop.GroupAggOptions{Batch: true, InsertOnly: true}},
	// The split hands the workers their keys encoded and hashed in
	// batch mode and mini-batch: keys of every length and kind.
	{name: "batch, string key", keys: []int{0}, opt: aggop.GroupAggOptions{Batch: true, InsertOnly: true}},
	{name: "mini-batch, string key", keys: []int{0}, opt: aggop.GroupAggOptions{InsertOnly: true, MiniBatch: true}},
	{name: "batch, one-byte code", keys: []int{5}, opt: aggop.GroupAggOptions{Batch: true, InsertOnly: true}},
	{name: "batch, 40-byte URL", keys: []int{4}, opt: aggop.GroupAggOptions{Batch: true, InsertOnly: true}},
	{name: "batch, URL, nullable DOUBLE and BIGINT", keys: []int{4, 3, 1}, opt: aggop.GroupAggOptions{Batch: true, InsertOnly: true}},
	{name: "mini-batch, nullable DOUBLE and code", keys: []int{3, 5}, opt: aggop.GroupAggOptions{InsertOnly: true, MiniBatch: true}},
}

func keyedAggs(insertOnly bool) []aggop.AggCall {
	aggs := []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Min, Arg: 0, ArgType: row.Type{ID: row.String}},
	}
	if !insertOnly {
		aggs = append(aggs, aggop.AggCall{Func: aggop.Count, Arg: 2, ArgType: optest.TBigInt, Distinct: true})
	}
	return aggs
}

func newKeyed(t *testing.T, c keyedCase, n int) *runtime.Keyed {
	t.Helper()
	k, err := runtime.NewKeyed(c.keys, n, func() (operator.KeyGrouped, error) {
		return aggop.NewGroupAgg(c.keys, keyedAggs(c.opt.InsertOnly), c.opt)
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyedInput is random rows [name, number, value] over a few keys, cut
// in batches of random sizes; with retract, some changes retract an
// earlier row (-D, or -U followed by its +U).
func keyedInput(rng *rand.Rand, retract bool) []*row.Batch {
	nkeys := 1 + rng.IntN(40)
	var live []row.Row
	var all []row.Change
	for range 50 + rng.IntN(400) {
		if retract && len(live) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(live))
			old := live[i]
			live = slices.Delete(live, i, i+1)
			if rng.IntN(2) == 0 {
				all = append(all, row.Change{Kind: row.Delete, Row: old})
				continue
			}
			r := keyedRow(rng, nkeys)
			all = append(all, row.Change{Kind: row.UpdateBefore, Row: old}, row.Change{Kind: row.UpdateAfter, Row: r})
			live = append(live, r)
			continue
		}
		r := keyedRow(rng, nkeys)
		all = append(all, row.Change{Kind: row.Insert, Row: r})
		live = append(live, r)
	}
	var batches []*row.Batch
	for len(all) > 0 {
		n := min(len(all), 1+rng.IntN(60))
		batches = append(batches, &row.Batch{Changes: all[:n:n]})
		all = all[n:]
	}
	return batches
}

// keyedRow is [name, number, value, a DOUBLE or NULL, a 40-byte URL,
// a one-letter code] of one of nkeys keys.
func keyedRow(rng *rand.Rand, nkeys int) row.Row {
	k := rng.IntN(nkeys)
	d := row.NullValue
	if k%5 != 0 {
		d = row.DoubleValue(float64(k/3) / 4)
	}
	return row.Row{row.StringValue(fmt.Sprintf("sensor_%05d", k%17)), row.BigIntValue(int64(k)), row.BigIntValue(int64(rng.IntN(100) - 20)),
		d, row.StringValue(fmt.Sprintf("https://example.com/a/b/c/page-%09d", k%23)), row.StringValue(string(rune('A' + k%7)))}
}

// byKey is a run's output, each key's changes in order, and under ""
// all of them in order.
type byKey map[string][]string

func (b byKey) add(keys int, lines []row.Change) {
	for _, l := range lines {
		key := fmt.Sprint(l.Row[:keys])
		b[key] = append(b[key], l.String())
		b[""] = append(b[""], l.String())
	}
}

// runKeyed feeds batches to op and returns its output by key; restart,
// when > 0, snapshots op after that many batches and goes on in an
// operator of restartN workers restored from it.
func runKeyed(t *testing.T, c keyedCase, n int, batches []*row.Batch, restart, restartN int) byKey {
	t.Helper()
	op := newKeyed(t, c, n)
	out := &collect{}
	got := byKey{}
	for i, b := range batches {
		if i == restart && restart > 0 {
			if err := op.Flush(out); err != nil {
				t.Fatal(err)
			}
			// Whole, or streamed as a checkpoint store takes it.
			var err error
			if restartN%2 == 0 {
				var snap []byte
				if snap, err = op.Snapshot(); err == nil {
					op = newKeyed(t, c, restartN)
					err = op.Restore(snap)
				}
			} else {
				var buf bytes.Buffer
				if err = op.SnapshotTo(&buf); err == nil {
					op = newKeyed(t, c, restartN)
					err = op.RestoreFrom(&buf, int64(buf.Len()))
				}
			}
			if err != nil {
				t.Fatalf("restore %d workers from %d: %v", restartN, n, err)
			}
		}
		if err := op.Process(b, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Flush(out); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	got.add(len(c.keys), out.lines)
	return got
}

// collect is an Emitter that keeps every change.
type collect struct{ lines []row.Change }

func (c *collect) Emit(k row.Kind, r row.Row) {
	c.lines = append(c.lines, row.Change{Kind: k, Row: slices.Clone(r)})
}

func TestKeyedSameAsOneWorker(t *testing.T) {
	rounds := 25
	if testing.Short() {
		rounds = 5
	}
	for _, c := range keyedCases {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(rounds) {
				rng := rand.New(rand.NewPCG(seed, 35))
				batches := keyedInput(rng, c.retract)
				want := runKeyed(t, c, 1, batches, 0, 0)
				if len(want) == 0 {
					t.Fatal("no output: the test proves nothing")
				}
				for n := 2; n <= 4; n++ {
					if got := runKeyed(t, c, n, batches, 0, 0); !sameByKey(got, want, !c.opt.Batch && !c.opt.MiniBatch) {
						t.Fatalf("seed %d, %d workers:\n%s", seed, n, diffByKey(got, want))
					}
				}
				// A restore with another number of workers, at a random batch.
				for _, nn := range [][2]int{{2, 3}, {3, 1}, {1, 4}, {4, 2}} {
					at := 1 + rng.IntN(len(batches))
					if got := runKeyed(t, c, nn[0], batches, at, nn[1]); !sameByKey(got, want, !c.opt.Batch && !c.opt.MiniBatch) {
						t.Fatalf("seed %d, %d workers restored as %d after batch %d:\n%s", seed, nn[0], nn[1], at, diffByKey(got, want))
					}
				}
			}
		})
	}
}

// An operator's own snapshot, written before it ran keyed, restores
// into any number of workers.
func TestKeyedRestoresAnOperatorsOwnSnapshot(t *testing.T) {
	c := keyedCases[1]
	rng := rand.New(rand.NewPCG(7, 35))
	batches := keyedInput(rng, true)
	want := runKeyed(t, c, 1, batches, 0, 0)
	plain := optest.Must(aggop.NewGroupAgg(c.keys, keyedAggs(false), c.opt))
	out := &collect{}
	half := len(batches) / 2
	for _, b := range batches[:half] {
		if err := plain.Process(b, out); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := plain.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	op := newKeyed(t, c, 3)
	if err := op.Restore(snap); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches[half:] {
		if err := op.Process(b, out); err != nil {
			t.Fatal(err)
		}
	}
	got := byKey{}
	got.add(len(c.keys), out.lines)
	if !sameByKey(got, want, !c.opt.Batch && !c.opt.MiniBatch) {
		t.Fatal(diffByKey(got, want))
	}
	if op.StateEntries() != int64(plainGroups(t, c, batches)) {
		t.Fatalf("%d groups in the workers, want %d", op.StateEntries(), plainGroups(t, c, batches))
	}
}

func plainGroups(t *testing.T, c keyedCase, batches []*row.Batch) int {
	g := optest.Must(aggop.NewGroupAgg(c.keys, keyedAggs(c.opt.InsertOnly), c.opt))
	for _, b := range batches {
		if err := g.Process(b, &optest.Discard{}); err != nil {
			t.Fatal(err)
		}
	}
	return g.Groups()
}

// A worker's error names the input change it came from, as the one
// instance's does.
func TestKeyedErrorNamesTheInputChange(t *testing.T) {
	c := keyedCase{keys: []int{0}, opt: aggop.GroupAggOptions{InsertOnly: true}}
	for n := 1; n <= 3; n++ {
		op := newKeyed(t, c, n)
		var changes []row.Change
		for i := range 20 {
			changes = append(changes, optest.Ins(fmt.Sprintf("k%d", i), i, i))
		}
		changes[13].Kind = row.Delete
		b := &row.Batch{Changes: changes, Origin: lineOrigin{}}
		err := op.Process(b, &collect{})
		if err == nil || !strings.Contains(err.Error(), "line 14: change 13:") {
			t.Fatalf("%d workers: %v, want an error at line 14, change 13", n, err)
		}
	}
}

// lineOrigin names change i "line i+1".
type lineOrigin struct{}

func (lineOrigin) Position(i int) string { return fmt.Sprintf("line %d", i+1) }

// sameByKey compares two runs key by key; a streaming GROUP BY's whole
// sequence too (batch mode and mini-batches list keys worker after
// worker).
func sameByKey(a, b byKey, whole bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if k == "" && !whole {
			continue
		}
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func diffByKey(got, want byKey) string {
	var sb strings.Builder
	for k, w := range want {
		if g := got[k]; !slices.Equal(g, w) {
			fmt.Fprintf(&sb, "key %s:\n got  %v\n want %v\n", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&sb, "key %s: got %v, want nothing\n", k, g)
		}
	}
	return sb.String()
}
