package runtime

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Shared state that moves with every key (operator.SyncedState): an
// interval join decides whether a row scans the other side's cache by
// an expiration time that the rows and timers of all keys move, in
// input order. One instance moves it over every row; a worker sees
// only its keys'. So every worker first walks the whole batch and moves
// its copy as one instance would (SeeInput, on its own goroutine: the
// batch is only read), noting what each change read, and then its share
// reads those notes; after a watermark, whose timers each worker fires
// for its own keys alone, the workers' shared states are joined
// (SyncShared) into what one instance's would be.

// see lets w's operator see the whole of batch in of input input, when
// its shared state moves with every key.
func (k *Keyed) see(w *keyedWorker, input int, in *row.Batch) {
	if k.synced {
		w.op.(operator.SyncedState).SeeInput(input, in)
	}
}

// syncShared hands every worker the shared state of all, when it moves
// with every key.
func (k *Keyed) syncShared() error {
	if !k.synced || len(k.workers) == 1 {
		return nil
	}
	parts := make([][]byte, len(k.workers))
	for i, w := range k.workers {
		b, err := w.op.(operator.SyncedState).SnapshotShared()
		if err != nil {
			return err
		}
		parts[i] = b
	}
	for _, w := range k.workers {
		if err := w.op.(operator.SyncedState).SyncShared(parts); err != nil {
			return err
		}
	}
	return nil
}

// HoldWatermark implements operator.WatermarkHolder: the operator's
// (an interval join's fixed delay, the same in every worker), the
// watermark itself when it holds none back.
func (k *Keyed) HoldWatermark(wm int64) int64 {
	if h, ok := k.workers[0].op.(operator.WatermarkHolder); ok {
		return h.HoldWatermark(wm)
	}
	return wm
}

var _ operator.WatermarkHolder = (*Keyed)(nil)
