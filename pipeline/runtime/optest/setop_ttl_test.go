package optest

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TestSetOpTTLAcrossRestore: a SetOp restored from a snapshot before
// every step keeps each row's last change, so rows expire when they
// would have without the restore.
func TestSetOpTTLAcrossRestore(t *testing.T) {
	steps := []TTLStep{
		{At: 0, In: Ins("x", int32(0)), Want: nil},
		{At: 2, In: Ins("y", int32(0)), Want: nil},
		{At: 5, In: Ins("x", int32(1)), Want: []string{"+I[x]"}},
		// y was written at 2: alive until 12.
		{At: 11, In: Ins("y", int32(1)), Want: []string{"+I[y]"}},
		// x was written at 5: expired at 15, its retraction dropped.
		{At: 15, In: Del("x", int32(1)), Want: nil},
		{At: 16, In: Ins("x", int32(0)), Want: nil},
		// y (written at 11) has 2 left copies and 1 right: still one.
		{At: 17, In: Ins("y", int32(0)), Want: nil},
	}
	clock := NewFakeClock()
	mk := func() *aggop.SetOp {
		op := Must(aggop.NewSetOp(aggop.IntersectAll, 1, false))
		op.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
		return op
	}
	op := mk()
	for i, s := range steps {
		clock.Set(s.At)
		snap, err := op.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		op = mk()
		if err := op.Restore(snap); err != nil {
			t.Fatalf("step %d: restore: %v", i, err)
		}
		out := &Out{}
		if err := op.Process(&row.Batch{Changes: []row.Change{s.In}}, out); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := out.Take(); !slices.Equal(got, s.Want) {
			t.Errorf("step %d (t=%ds, %s): got %q, want %q", i, s.At, s.In, got, s.Want)
		}
	}
}
