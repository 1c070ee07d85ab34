package runtime

import (
	"fmt"
	"io"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// snapshotted is an operator's state for a checkpoint: its bytes, or the
// name of the store's part that holds them.
type snapshotted struct {
	state   []byte
	part    string
	entries int64 // operator.StateSizer's count, 0 for others
}

// snapshot encodes the operator's state for the checkpoint of barrier
// (0: its final state). A run without a checkpoint store keeps no
// state: its barriers only make sinks flush, and encoding the
// operators' state (hundreds of MB for a million keys) at every barrier
// and at the end would be wasted work. An operator.StreamSnapshotter
// writes its state into a part of the store in pieces, so that neither
// it nor the checkpoint holds the whole of it; the part's fsync runs in
// the background (checkpoint.Store.WritePart), off the barrier's path.
func (n *OpNode) snapshot(co *coordinator, barrier int64) (snapshotted, error) {
	sn, ok := n.Op.(operator.Snapshotter)
	if !ok || co.opt.Store == nil {
		return snapshotted{}, nil
	}
	var entries int64
	if sz, ok := n.Op.(operator.StateSizer); ok {
		entries = sz.StateEntries()
	}
	if ss, ok := sn.(operator.StreamSnapshotter); ok {
		part, size, err := co.opt.Store.WritePart(barrier, n.ID, ss.SnapshotTo)
		if err != nil {
			return snapshotted{}, fmt.Errorf("snapshot: %w", err)
		}
		n.Stats.StateBytes.Store(size)
		return snapshotted{part: part, entries: entries}, nil
	}
	state, err := sn.Snapshot()
	if err != nil {
		return snapshotted{}, fmt.Errorf("snapshot: %w", err)
	}
	n.Stats.StateBytes.Store(int64(len(state)))
	return snapshotted{state: state, entries: entries}, nil
}

// RestoreOperator restores op, an operator.Snapshotter, from comp, its
// component of a checkpoint of store, as a run does before it starts:
// a part of the store streamed into RestoreFrom, which decodes it as it
// reads (or read whole for an operator that no longer streams), or the
// bytes the checkpoint holds. `etld state dump` restores an operator
// with it without running the pipeline.
func RestoreOperator(store *checkpoint.Store, comp *checkpoint.Component, op operator.Lifecycle) error {
	sn, ok := op.(operator.Snapshotter)
	if !ok {
		return fmt.Errorf("%s keeps no state", comp.ID)
	}
	if comp.RuntimePart == "" {
		return sn.Restore(comp.Runtime)
	}
	r, err := store.OpenPart(comp.RuntimePart)
	if err != nil {
		return err
	}
	defer r.Close()
	if ss, ok := sn.(operator.StreamSnapshotter); ok {
		return ss.RestoreFrom(r, r.Size())
	}
	state, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return sn.Restore(state)
}

// WidenRestore tells op, before RestoreOperator, the retagging the
// verdict v of its saved state asks for (INT to BIGINT, FLOAT to DOUBLE;
// Compare migrates them only for an operator.Widener).
func WidenRestore(v Verdict, op operator.Lifecycle) {
	if w, ok := op.(operator.Widener); ok && v.Widen != nil {
		w.WidenRestore(v.Widen)
	}
	if w, ok := op.(operator.ColumnWidener); ok && v.WidenCols != nil {
		w.WidenColumns(v.WidenCols)
	}
}
