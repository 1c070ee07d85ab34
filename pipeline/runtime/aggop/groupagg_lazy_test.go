package aggop

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// lazyAggs is batchAggs without COUNT DISTINCT, whose sets' order
// differs between runs: snapshots of these compare byte for byte.
func lazyAggs() []AggCall {
	return slices.DeleteFunc(batchAggs(), func(c AggCall) bool { return c.Func == CountDistinct })
}

// TestGroupAggLazyKeys: a batch-mode GROUP BY of one integer column,
// whose keys stay out of the index (groupagg_lazy.go), emits at Finish
// what the row-by-row fold emits, in the same order, and its snapshot,
// taken at the end or between batches (the index then built), is the
// row-by-row one's byte for byte, restores to the same output, and its
// key groups are the same; over BIGINT and INT keys, dense, spread over
// 10M and at int64's ends, with a NULL key or a batch of NULL keys
// arriving (which ends the lazy mode), and with the keyed split's hash
// (UseKeyHash).
func TestGroupAggLazyKeys(t *testing.T) {
	type keyGen func(r *rand.Rand) int64
	gens := map[string]keyGen{
		"dense": func(r *rand.Rand) int64 { return int64(r.IntN(3000)) },
		"10M":   func(r *rand.Rand) int64 { return int64(r.IntN(10_000_000)) },
		"extreme": func(r *rand.Rand) int64 {
			return []int64{math.MinInt64, math.MaxInt64, -1, 0}[r.IntN(4)] + int64(r.IntN(50))
		},
	}
	for _, gen := range []string{"dense", "10M", "extreme"} {
		for _, typ := range []row.TypeID{row.BigInt, row.Int} {
			for _, nulls := range []string{"none", "one", "batch"} {
				for _, snapAt := range []int{-1, 2} { // -1: at the end only
					for _, fixed := range []bool{false, true} {
						if fixed && (gen != "10M" || typ != row.BigInt) {
							continue // the split's hash changes the index only
						}
						name := fmt.Sprintf("%s/%v/nulls=%s/snap@%d/fixed=%v", gen, typ, nulls, snapAt, fixed)
						t.Run(name, func(t *testing.T) {
							checkLazy(t, gens[gen], typ, nulls, snapAt, fixed)
						})
					}
				}
			}
		}
	}
}

func checkLazy(t *testing.T, gen func(*rand.Rand) int64, typ row.TypeID, nulls string, snapAt int, fixed bool) {
	rnd := rand.New(rand.NewPCG(11, uint64(typ)))
	opt := GroupAggOptions{Batch: true, InsertOnly: true}
	mk := func() *GroupAgg {
		g := optest.Must(NewGroupAgg([]int{0}, lazyAggs(), opt))
		if fixed {
			g.UseKeyHash()
		}
		return g
	}
	lazy, snapped, slow := mk(), mk(), mk()
	slow.RowByRow = true
	sizes := []int{1, 700, 1024, 0, 2000, 64, 1024, 3000}
	for step, size := range sizes {
		b := &row.Batch{}
		for i := range size {
			r := batchRow(rnd, 1)
			k := gen(rnd)
			if typ == row.Int {
				r[0] = row.IntValue(int32(k))
			} else {
				r[0] = row.BigIntValue(k)
			}
			switch {
			case nulls == "one" && step == 4 && i == 30,
				nulls == "batch" && step == 5:
				r[0] = row.NullValue
			}
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
		}
		for _, g := range []*GroupAgg{lazy, snapped, slow} {
			if err := g.Process(b, &optest.Out{}); err != nil {
				t.Fatal(err)
			}
		}
		if lazy.Groups() != slow.Groups() {
			t.Fatalf("step %d: %d groups lazy, %d row by row", step, lazy.Groups(), slow.Groups())
		}
		if step == snapAt {
			sameSnapshots(t, snapped, slow)
		}
	}
	if want := nulls == "none"; lazy.lazy != want || want && lazy.index.Len() != 0 {
		t.Fatalf("lazy %v with %d keys in the index, want lazy %v", lazy.lazy, lazy.index.Len(), want)
	}
	if snapAt < 0 && !snapped.lazy && nulls == "none" {
		t.Fatal("the lazy mode ended without a snapshot")
	}
	snap := sameSnapshots(t, snapped, slow)
	sameGroups(t, mk(), slow)
	want := finishLines(t, slow)
	if got := finishLines(t, lazy); !slices.Equal(got, want) {
		t.Fatalf("outputs differ:\nlazy       %v\nrow by row %v", got, want)
	}
	if got := finishLines(t, snapped); !slices.Equal(got, want) {
		t.Fatal("output after a snapshot differs")
	}
	restored := mk()
	if err := restored.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if lazyWant := nulls == "none"; restored.lazy != lazyWant || lazyWant && restored.index.Len() != 0 {
		t.Fatalf("restored: lazy %v with %d keys in the index, want lazy %v", restored.lazy, restored.index.Len(), lazyWant)
	}
	if got := finishLines(t, restored); !slices.Equal(got, want) {
		t.Fatal("restored output differs")
	}
}

// sameSnapshots checks that a's snapshot is b's, byte for byte, and
// returns it.
func sameSnapshots(t *testing.T, a, b *GroupAgg) []byte {
	t.Helper()
	as, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	bs, err := b.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(as, bs) {
		t.Fatalf("snapshots differ: %d and %d bytes", len(as), len(bs))
	}
	return as
}

// sameGroups checks that fresh, fed b's snapshot, has b's key groups:
// SnapshotGroups of a restored operator is not lazy, so the lazy one's
// is checked in TestGroupAggLazyKeyGroups.
func sameGroups(t *testing.T, fresh, b *GroupAgg) {
	t.Helper()
	s, err := b.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Restore(s); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(keyGroupParts(t, fresh), keyGroupParts(t, b), bytes.Equal) {
		t.Fatal("key groups differ")
	}
}

func keyGroupParts(t *testing.T, g *GroupAgg) [][]byte {
	t.Helper()
	var parts [][]byte
	if err := g.SnapshotGroups(func(k int, b []byte) error {
		parts = append(parts, append([]byte{byte(k), byte(k >> 8)}, b...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return parts
}

// TestGroupAggLazyKeyGroups: the key groups of a lazy operator are
// those of the row-by-row fold, and taking them leaves it lazy.
func TestGroupAggLazyKeyGroups(t *testing.T) {
	rnd := rand.New(rand.NewPCG(4, 4))
	opt := GroupAggOptions{Batch: true, InsertOnly: true}
	lazy, slow := optest.Must(NewGroupAgg([]int{0}, lazyAggs(), opt)), optest.Must(NewGroupAgg([]int{0}, lazyAggs(), opt))
	slow.RowByRow = true
	b := &row.Batch{}
	for range 5000 {
		r := batchRow(rnd, 1)
		r[0] = row.BigIntValue(rnd.Int64N(1 << 40))
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
	}
	for _, g := range []*GroupAgg{lazy, slow} {
		if err := g.Process(b, &optest.Out{}); err != nil {
			t.Fatal(err)
		}
	}
	if !lazy.lazy {
		t.Fatal("not lazy")
	}
	if !slices.EqualFunc(keyGroupParts(t, lazy), keyGroupParts(t, slow), bytes.Equal) {
		t.Fatal("key groups differ")
	}
	if !lazy.lazy || lazy.index.Len() != 0 {
		t.Fatal("SnapshotGroups ended the lazy mode")
	}
}

// TestGroupAggLazyKeysStreaming: a streaming mini-batch GROUP BY of one
// integer column keeps its keys lazy too; it emits what the row-by-row
// fold emits, change for change, with the same positions, at every
// flush; its snapshots and key groups, taken between batches, are the
// row-by-row one's byte for byte and leave it lazy; a restore of them
// is lazy again and runs on to the same output and state; a NULL key
// ends the lazy mode with the same results.
func TestGroupAggLazyKeysStreaming(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		for _, keys := range []int{3000, 10_000_000} {
			t.Run(fmt.Sprintf("keys=%d/nulls=%v", keys, nulls), func(t *testing.T) {
				checkLazyStreaming(t, keys, nulls)
			})
		}
	}
}

func checkLazyStreaming(t *testing.T, keys int, nulls bool) {
	rnd := rand.New(rand.NewPCG(5, uint64(keys)))
	opt := GroupAggOptions{MiniBatch: true, MiniBatchSize: 900, InsertOnly: true}
	mk := func() *GroupAgg { return optest.Must(NewGroupAgg([]int{0}, lazyAggs(), opt)) }
	lazy, slow := mk(), mk()
	slow.RowByRow = true
	var restored *GroupAgg
	for step, size := range []int{1, 700, 1024, 0, 2000, 64, 1024, 3000, 5} {
		b := &row.Batch{Origin: row.Sequence{Prefix: "in:", First: int64(step * 10000)}}
		for i := range size {
			r := batchRow(rnd, 1)
			r[0] = row.BigIntValue(int64(rnd.IntN(keys)))
			if nulls && step == 6 && i == 10 {
				r[0] = row.NullValue
			}
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
		}
		ops := []*GroupAgg{lazy, slow}
		if restored != nil {
			ops = append(ops, restored)
		}
		var outs []*posOut
		for _, g := range ops {
			o := &posOut{}
			if err := g.Process(b, o); err != nil {
				t.Fatal(err)
			}
			if step == 2 || step == 4 || step == 5 { // a barrier: flush, then snapshot
				if err := g.Flush(o); err != nil {
					t.Fatal(err)
				}
			}
			outs = append(outs, o)
		}
		for _, o := range outs[1:] {
			if !slices.Equal(outs[0].lines, o.lines) {
				t.Fatalf("step %d: outputs differ:\n%s", step, firstDiff(o.lines, outs[0].lines))
			}
		}
		if step == 2 || step == 5 {
			snap := sameSnapshots(t, lazy, slow)
			if !slices.EqualFunc(keyGroupParts(t, lazy), keyGroupParts(t, slow), bytes.Equal) {
				t.Fatalf("step %d: key groups differ", step)
			}
			if !lazy.lazy || lazy.index.Len() != 0 {
				t.Fatalf("step %d: the snapshot ended the lazy mode", step)
			}
			if step == 2 {
				restored = mk()
				if err := restored.Restore(snap); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if lazy.lazy == nulls || restored.lazy == nulls {
		t.Fatalf("lazy %v (restored: %v) at the end, with a NULL key %v", lazy.lazy, restored.lazy, nulls)
	}
	sameSnapshots(t, lazy, slow)
	sameSnapshots(t, restored, slow)
}

// TestGroupAggKeyGroupsOfNoKey: the key groups of a global aggregate
// (a key of no columns, which encodes to no bytes) hold its one group:
// restored from them it emits its result as the original does.
func TestGroupAggKeyGroupsOfNoKey(t *testing.T) {
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Max, Arg: 0, ArgType: optest.TBigInt}}
	mk := func() *GroupAgg {
		return optest.Must(NewGroupAgg(nil, aggs, GroupAggOptions{Batch: true, InsertOnly: true}))
	}
	g := mk()
	if err := g.Process(groupBatch(10), &optest.Out{}); err != nil {
		t.Fatal(err)
	}
	var parts [][]byte
	if err := g.SnapshotGroups(func(_ int, b []byte) error {
		parts = append(parts, slices.Clone(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	restored := mk()
	if err := restored.RestoreGroups(parts); err != nil {
		t.Fatal(err)
	}
	if restored.Groups() != 1 {
		t.Fatalf("%d groups restored, want 1", restored.Groups())
	}
	if got, want := finishLines(t, restored), finishLines(t, g); !slices.Equal(got, want) {
		t.Fatalf("restored emits %v, want %v", got, want)
	}
}
