package rankop

import (
	"testing"

	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestTTLAfterRestore: an operator restored from a snapshot still
// expires its state: Restore decodes into a fresh operator whose state
// becomes the receiver's, and the expiry must stay the receiver's.
func TestTTLAfterRestore(t *testing.T) {
	type ttlOp interface {
		operator.Operator
		operator.Snapshotter
		operator.StateSizer
		operator.TTLSetter
		operator.Sweeper
	}
	for name, mk := range map[string]func() ttlOp{
		"top-n":             func() ttlOp { return NewTopN(topNSpec(Retract, false, 1, 2)) },
		"top-n update-fast": func() ttlOp { return optest.Must(NewUpdatableTopN(updateFastSpec(false, 1, 2))) },
		"dedup":             func() ttlOp { return NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true}) },
	} {
		clock := optest.NewFakeClock()
		a := mk()
		a.SetStateTTL(operator.StateTTL{TTL: optest.TTL10s, Now: clock.Now})
		if err := a.Process(optest.Batch(optest.Ins("a", "x", 1)), &optest.Out{}); err != nil {
			t.Fatal(err)
		}
		snap, err := a.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		b := mk()
		b.SetStateTTL(operator.StateTTL{TTL: optest.TTL10s, Now: clock.Now})
		if err := b.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if b.StateEntries() != 1 || b.SweepEvery() <= 0 {
			t.Fatalf("%s: restored %d entries, sweeping every %v", name, b.StateEntries(), b.SweepEvery())
		}
		clock.Set(20)
		b.Sweep()
		if n := b.StateEntries(); n != 0 {
			t.Errorf("%s: %d entries after the TTL, want 0", name, n)
		}
	}
}
