package joinop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestJoinRestoreKeeps restores a snapshot of a join that kept every row
// into one whose inputs are filtered below it (JoinSpec.LeftKeep,
// RightKeep: the planner moved a WHERE conjunct there): the restored
// join must drop the rows the filter rejects, so that it emits and
// snapshots what a join that was given the filtered inputs from the
// start does. Sides append-only and with row ids, whole and streamed
// snapshots.
func TestJoinRestoreKeeps(t *testing.T) {
	even := func(r row.Row) (bool, error) { return r[1].Int64()%2 == 0, nil }
	for _, appendOnly := range []bool{true, false} {
		for _, streamed := range []bool{false, true} {
			for _, keepLeft := range []bool{false, true} {
				name := fmt.Sprintf("appendOnly=%v/streamed=%v/keepLeft=%v", appendOnly, streamed, keepLeft)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(len(name)), 34))
					spec := joinSpec2(InnerJoin)
					spec.LeftTypes = []row.TypeID{row.BigInt, row.BigInt}
					spec.RightTypes = spec.LeftTypes
					spec.LeftAppendOnly, spec.RightAppendOnly = appendOnly, appendOnly
					kept := spec
					if keepLeft {
						kept.LeftKeep = even
					} else {
						kept.RightKeep = even
					}
					keep := func(side int, r row.Row) bool {
						f := kept.RightKeep
						if side == 0 {
							f = kept.LeftKeep
						}
						if f == nil {
							return true
						}
						ok, _ := f(r)
						return ok
					}
					batch := func(side int, n int) *row.Batch {
						b := &row.Batch{}
						for range n {
							r := row.Row{row.BigIntValue(int64(rng.IntN(8))), row.BigIntValue(int64(rng.IntN(100)))}
							b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
						}
						return b
					}
					filtered := func(side int, b *row.Batch) *row.Batch {
						out := &row.Batch{}
						for _, c := range b.Changes {
							if keep(side, c.Row) {
								out.Changes = append(out.Changes, c)
							}
						}
						return out
					}
					before := []*row.Batch{batch(0, 30), batch(1, 30), batch(0, 20)}
					after := []*row.Batch{batch(1, 25), batch(0, 25)}
					sides := []int{0, 1, 0, 1, 0}

					// The plan before the move: every row reaches the join.
					old := NewJoin(spec)
					var sink joinCollector
					for i, b := range before {
						if err := old.ProcessInput(sides[i], b, &sink); err != nil {
							t.Fatal(err)
						}
					}
					snap, err := old.Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					restored := NewJoin(kept)
					if streamed {
						err = restored.RestoreFrom(bytes.NewReader(snap), int64(len(snap)))
					} else {
						err = restored.Restore(snap)
					}
					if err != nil {
						t.Fatal(err)
					}
					// The plan after: the join is given the filtered rows.
					ref := NewJoin(kept)
					for i, b := range before {
						if err := ref.ProcessInput(sides[i], filtered(sides[i], b), &sink); err != nil {
							t.Fatal(err)
						}
					}
					if restored.StateEntries() != ref.StateEntries() {
						t.Errorf("restored join holds %d rows, the filtered one %d", restored.StateEntries(), ref.StateEntries())
					}
					if restored.StateEntries() == old.StateEntries() {
						t.Fatalf("the filter dropped no row (%d held): the test checks nothing", old.StateEntries())
					}
					gotSnap, _ := restored.Snapshot()
					wantSnap, _ := ref.Snapshot()
					if g, w := snapEntries(t, gotSnap), snapEntries(t, wantSnap); g != w {
						t.Errorf("the restored join's snapshot holds\n%s\nthe filtered join's\n%s", g, w)
					}
					var got, want joinCollector
					for i, b := range after {
						side := sides[len(before)+i]
						fb := filtered(side, b)
						if err := restored.ProcessInput(side, fb, &got); err != nil {
							t.Fatal(err)
						}
						if err := ref.ProcessInput(side, fb, &want); err != nil {
							t.Fatal(err)
						}
					}
					if len(want.got) == 0 {
						t.Fatal("no joined rows after the restore: the test checks nothing")
					}
					slices.Sort(got.got)
					slices.Sort(want.got)
					if !slices.Equal(got.got, want.got) {
						t.Errorf("after the restore: got %q, want %q", got.got, want.got)
					}
				})
			}
		}
	}
}

// snapEntries is the rows of an inner join's snapshot (without a TTL),
// each side's sorted with their counts: the order of keys is that of
// the key ids, which differ between joins given the same rows otherwise.
// The match counts are left out: an inner join's side with row ids
// keeps them as it was given them, but nothing reads them (only an
// outer side's count its matches), and the restored rows' still count
// the other side's dropped rows.
func snapEntries(t *testing.T, snap []byte) string {
	t.Helper()
	d := row.NewDecoder(snap)
	d.Byte()
	d.Byte()
	var out string
	for side := range 3 {
		var rows []string
		for range d.Count(1) {
			r := d.Row()
			count := d.Uvarint()
			d.Uvarint() // the match count: an inner join reads none
			rows = append(rows, fmt.Sprintf("%v x%d", r, count))
		}
		slices.Sort(rows)
		out += fmt.Sprintf("side %d: %v\n", side, rows)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
