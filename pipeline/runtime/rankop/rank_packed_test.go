package rankop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// Snapshots written by the code before the packed state (8f53447e, rows
// as Partition's groups) restore into it, and it then emits what that
// code emitted for the rest of the input (testdata, written by a
// one-off run of that commit's code over goldenInput).
func TestTopNRestoresSnapshotsOfRowGroups(t *testing.T) {
	for name, spec := range goldenSpecs() {
		t.Run(name, func(t *testing.T) {
			snap, err := os.ReadFile("testdata/topn-" + name + "-8f53447e.snap")
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("testdata/topn-" + name + "-8f53447e.out")
			if err != nil {
				t.Fatal(err)
			}
			op := NewTopN(spec)
			if op.pack == nil {
				t.Fatal("the golden spec does not run packed")
			}
			if err := op.Restore(snap); err != nil {
				t.Fatal(err)
			}
			again, err := op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, snap) {
				t.Fatal("a restored snapshot does not snapshot to the same bytes")
			}
			in := goldenInput(name)
			var out optest.Out
			if err := op.Process(&row.Batch{Changes: in[len(in)/2:]}, &out); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(out.Take(), "\n") + "\n"; got != string(want) {
				t.Fatalf("after restore:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// unpacked is spec's Top-N on Partition's row groups, the algorithm the
// packed state replaces (the reference), without the floor: every row
// compared against the partition's rows.
func unpacked(spec RankSpec) *TopN {
	t := NewTopN(spec)
	t.pack = nil
	t.floorCol = -1
	return t
}

// The packed AppendFast Top-N emits exactly what the row-group one does,
// batch by batch, over random inputs with ties, NULLs, strings, doubles
// and a column of mixed integer types, for random orders (one column or
// several, the first an integer, a string or a double) and ranges,
// partitioned by an integer, a string or both; a
// snapshot taken midway is byte for byte the same, and restores (whole
// and by key groups) into a Top-N that goes on emitting the same.
func TestPackedTopNMatchesRowGroups(t *testing.T) {
	orders := [][]SortKey{
		{{Col: 1, Desc: true}},
		{{Col: 1, NullsFirst: true}},
		{{Col: 2}},
		{{Col: 2, Desc: true, NullsFirst: true}, {Col: 1, Desc: true}},
		{{Col: 3, Desc: true}},
		{{Col: 4}},
		{{Col: 4, Desc: true}, {Col: 2}},
		{{Col: 1}, {Col: 3, Desc: true}, {Col: 2, NullsFirst: true}},
		{{Col: 3}, {Col: 1, Desc: true}},
	}
	partitions := [][]int{{0}, {2}, {2, 0}}
	for i := range 200 {
		rnd := rand.New(rand.NewPCG(uint64(i), 11))
		start := 1 + rnd.Int64N(3)
		if rnd.IntN(2) == 0 {
			start = 1
		}
		spec := RankSpec{
			Partition: partitions[rnd.IntN(len(partitions))], Order: orders[rnd.IntN(len(orders))],
			Start: start, End: start + rnd.Int64N(4), Kind: RowNumber, Strategy: AppendFast, OutputRank: rnd.IntN(3) > 0,
		}
		in := randomInserts(rnd, 600, 1+rnd.IntN(30))
		for j := range in {
			r := append(in[j].Row, row.BigIntValue(rnd.Int64N(5)))
			if rnd.IntN(3) == 0 {
				r[4] = row.IntValue(int32(rnd.IntN(5)))
			}
			in[j].Row = r
		}
		name := fmt.Sprintf("%d/by%v/order%v/%d-%d/rank=%v", i, spec.Partition, spec.Order, spec.Start, spec.End, spec.OutputRank)
		ref, op := unpacked(spec), NewTopN(spec)
		var refOut, out optest.Out
		cut := rnd.IntN(len(in))
		run := func(op *TopN, o *optest.Out, part []row.Change) []string {
			for len(part) > 0 {
				n := min(len(part), 1+rnd.IntN(40))
				if err := op.Process(&row.Batch{Changes: part[:n]}, o); err != nil {
					t.Fatal(err)
				}
				part = part[n:]
			}
			return o.Take()
		}
		if a, b := run(ref, &refOut, in[:cut]), run(op, &out, in[:cut]); !slices.Equal(a, b) {
			t.Fatalf("%s: before the snapshot:\n%v\nwant\n%v", name, b, a)
		}
		refSnap, _ := ref.Snapshot()
		snap, _ := op.Snapshot()
		if !bytes.Equal(refSnap, snap) {
			t.Fatalf("%s: snapshots differ", name)
		}
		if ref.StateEntries() != op.StateEntries() {
			t.Fatalf("%s: %d rows held, want %d", name, op.StateEntries(), ref.StateEntries())
		}
		op = NewTopN(spec)
		if rnd.IntN(2) == 0 {
			if err := op.Restore(snap); err != nil {
				t.Fatal(err)
			}
		} else {
			var parts [][]byte
			src := NewTopN(spec)
			if err := src.Restore(snap); err != nil {
				t.Fatal(err)
			}
			if err := src.SnapshotGroups(func(_ int, b []byte) error { parts = append(parts, slices.Clone(b)); return nil }); err != nil {
				t.Fatal(err)
			}
			rnd.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			if err := op.RestoreGroups(parts); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := run(ref, &refOut, in[cut:]), run(op, &out, in[cut:]); !slices.Equal(a, b) {
			t.Fatalf("%s: after the restore:\n%v\nwant\n%v", name, b, a)
		}
		if ref.StateEntries() != op.StateEntries() {
			t.Fatalf("%s: %d rows held, want %d", name, op.StateEntries(), ref.StateEntries())
		}
	}
}
