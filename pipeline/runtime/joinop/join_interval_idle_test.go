package joinop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestIntervalJoinIdleKeys: a key whose rows all expired stays in the
// index, idle, and takes its id again when it comes back; a snapshot
// leaves idle keys out (a restore of it holds no key, and snapshots
// again to the same bytes); once idle keys are as many as the others
// and at least idleSweep, they are dropped.
func TestIntervalJoinIdleKeys(t *testing.T) {
	r0 := ijRowOf(1, 0, "a")
	types := []row.TypeID{r0[0].Type(), r0[1].Type(), r0[2].Type()}
	for _, typed := range []bool{false, true} {
		spec := ijSpec(InnerJoin)
		if typed {
			spec.LeftTypes, spec.RightTypes = types, types
		}
		j := NewIntervalJoin(spec)
		var c rowsCollector
		if err := j.ProcessInput(0, ijBatch(ijRowOf(1, 100, "a")), &c); err != nil {
			t.Fatal(err)
		}
		kid, _ := j.index.Find(row.KeyOf(nil, ijRowOf(1, 0, ""), []int{0}))
		if err := j.Watermark(1000, &c); err != nil {
			t.Fatal(err)
		}
		if j.StateEntries() != 0 || j.index.Len() != 1 || j.heldKeys() != 0 || !j.keys[kid].idle {
			t.Fatalf("typed %v: %d rows, %d keys, %d held, idle %v after the watermark", typed, j.StateEntries(), j.index.Len(), j.heldKeys(), j.keys[kid].idle)
		}
		snap, err := j.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		r := NewIntervalJoin(spec)
		if err := r.Restore(snap); err != nil {
			t.Fatal(err)
		}
		again, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if r.index.Len() != 0 || !slices.Equal(again, snap) {
			t.Fatalf("typed %v: restored %d keys; snapshots the same: %v", typed, r.index.Len(), slices.Equal(again, snap))
		}
		if err := j.ProcessInput(1, ijBatch(ijRowOf(1, 2000, "b")), &c); err != nil {
			t.Fatal(err)
		}
		if back, _ := j.index.Find(row.KeyOf(nil, ijRowOf(1, 0, ""), []int{0})); back != kid || j.keys[kid].idle || j.heldKeys() != 1 {
			t.Fatalf("typed %v: the key came back as %d (was %d), idle %v", typed, back, kid, j.keys[kid].idle)
		}
		// Many keys, all expired: swept once idleSweep of them are idle.
		at := int64(3000)
		for k := range idleSweep + 10 {
			if err := j.ProcessInput(0, ijBatch(ijRowOf(k+10, at, "x")), &c); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Watermark(1<<40, &c); err != nil {
			t.Fatal(err)
		}
		if j.index.Len() >= idleSweep || j.idleN != j.index.Len() {
			t.Fatalf("typed %v: %d keys, %d idle after all expired", typed, j.index.Len(), j.idleN)
		}
	}
}
