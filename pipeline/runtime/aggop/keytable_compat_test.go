package aggop

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// Snapshots written before keyTable replaced the map[string]int32 index
// (same version byte, same layout): GroupAgg over [STRING key, BIGINT]
// with COUNT(*), SUM, MAX after +I a/0, +I <44-byte key>/10, +I b/20,
// +I c/30, -D b/20 (so slot 2 is free); Distinct after +I[x, 0], +I[y, 1].
const (
	goldenGroupAgg = "01000401020407000161020002020300002e07002b61206c6f6e67206b65792074686174206973206c6f6e676572207468616e207477656e747920627974657302140202031400000000000000000407000163023c0202033c00"
	goldenDistinct = "01020e07000178030000000000000000000e0700017903000100000000000000"
)

func TestGroupAggRestoresPreKeyTableSnapshot(t *testing.T) {
	state, _ := hex.DecodeString(goldenGroupAgg)
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 1, ArgType: optest.TBigInt}, {Func: Max, Arg: 1, ArgType: optest.TBigInt}}
	g := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{}))
	if err := g.Restore(state); err != nil {
		t.Fatal(err)
	}
	if g.Groups() != 3 {
		t.Fatalf("groups %d, want 3", g.Groups())
	}
	again, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, state) {
		t.Fatalf("snapshot after restore differs:\n got %x\nwant %x", again, state)
	}
	long := "a long key that is longer than twenty bytes"
	out := &optest.Out{}
	if err := g.Process(optest.Batch(
		optest.Change(row.Insert, "a", 5),
		optest.Change(row.Insert, long, 50),
		optest.Change(row.Insert, "b", 7), // dropped before the snapshot: new again
		optest.Change(row.Delete, "c", 30),
	), out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-U[a, 1, 0, 0]", "+U[a, 2, 5, 5]",
		"-U[" + long + ", 1, 10, 10]", "+U[" + long + ", 2, 60, 50]",
		"+I[b, 1, 7, 7]",
		"-D[c, 1, 30, 30]",
	}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("after restore:\n got %q\nwant %q", got, want)
	}
}

func TestDistinctRestoresPreKeyTableSnapshot(t *testing.T) {
	state, _ := hex.DecodeString(goldenDistinct)
	d := NewDistinct()
	if err := d.Restore(state); err != nil {
		t.Fatal(err)
	}
	out := &optest.Out{}
	if err := d.Process(optest.Batch(optest.Change(row.Insert, "x", 0), optest.Change(row.Insert, "z", 2), optest.Change(row.Insert, "y", 1)), out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[z, 2]"}; !slices.Equal(got, want) {
		t.Fatalf("after restore: got %q, want %q", got, want)
	}
	if d.Rows() != 3 {
		t.Fatalf("rows %d, want 3", d.Rows())
	}
}
