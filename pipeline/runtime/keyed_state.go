package runtime

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A Keyed operator's snapshot is its workers' state cut in key groups,
// so that a run with another number of workers restores it: each worker
// of that run takes the groups it owns.
//
//	keyedStateMagic, keyedStateVersion, then each part: its key group
//	(uvarint) and its bytes (uvarint length, then the operator's
//	SnapshotGroups part), and last the key group KeyGroups, which ends
//	them.
//
// The first byte tells it from the operator's own snapshot, which a
// checkpoint written before the operator ran keyed holds: that one is
// restored into one instance and cut in groups from there.
const (
	keyedStateMagic   = 0xCB
	keyedStateVersion = 1
)

// Snapshot implements operator.Snapshotter: the workers write their
// parts at once.
func (k *Keyed) Snapshot() ([]byte, error) {
	bufs := make([][]byte, len(k.workers))
	err := k.run(nil, func(w *keyedWorker) error {
		return w.op.SnapshotGroups(func(g int, p []byte) error {
			bufs[w.i] = appendKeyedPart(bufs[w.i], g, p)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	size := 16
	for _, b := range bufs {
		size += len(b)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, keyedStateMagic, keyedStateVersion)
	for _, b := range bufs {
		buf = append(buf, b...)
	}
	return binary.AppendUvarint(buf, operator.KeyGroups), nil
}

func appendKeyedPart(buf []byte, g int, p []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(g))
	buf = binary.AppendUvarint(buf, uint64(len(p)))
	return append(buf, p...)
}

// SnapshotTo implements operator.StreamSnapshotter: Snapshot's bytes,
// written a key group at a time, worker after worker, so that no second
// copy of the whole state is held.
func (k *Keyed) SnapshotTo(w io.Writer) error {
	if err := k.sync(); err != nil {
		return err
	}
	buf := []byte{keyedStateMagic, keyedStateVersion}
	for _, wk := range k.workers {
		err := wk.op.SnapshotGroups(func(g int, p []byte) error {
			buf = appendKeyedPart(buf, g, p)
			if len(buf) < 1<<20 {
				return nil
			}
			_, err := w.Write(buf)
			buf = buf[:0]
			return err
		})
		if err != nil {
			return err
		}
	}
	buf = binary.AppendUvarint(buf, operator.KeyGroups)
	_, err := w.Write(buf)
	return err
}

// RestoreFrom implements operator.StreamSnapshotter. It reads the
// snapshot whole, then restores as Restore does: the parts go to the
// workers that own their groups, whose number may differ from the
// writer's.
func (k *Keyed) RestoreFrom(r io.Reader, size int64) error {
	b, err := io.ReadAll(io.LimitReader(r, size))
	if err != nil {
		return fmt.Errorf("keyed operator: restore: %w", err)
	}
	return k.Restore(b)
}

// Restore implements operator.Snapshotter: each worker restores the
// parts of the key groups it owns, whatever number of workers wrote
// them.
func (k *Keyed) Restore(state []byte) error {
	groups, err := k.groupsOf(state)
	if err != nil {
		return err
	}
	if k.widen != nil {
		if groups, err = k.widened(groups); err != nil {
			return err
		}
	}
	mine := make([][][]byte, len(k.workers))
	for g, ps := range groups {
		w := operator.WorkerOf(g, len(k.workers))
		mine[w] = append(mine[w], ps...)
	}
	return k.run(nil, func(w *keyedWorker) error { return w.op.RestoreGroups(mine[w.i]) })
}

// groupsOf reads a snapshot's parts by key group. An operator's own
// snapshot (not a Keyed one) is restored into a new instance and cut in
// groups.
func (k *Keyed) groupsOf(state []byte) ([][][]byte, error) {
	groups := make([][][]byte, operator.KeyGroups)
	if len(state) == 0 || state[0] != keyedStateMagic {
		op, err := k.build()
		if err != nil {
			return nil, err
		}
		if err := op.Restore(state); err != nil {
			return nil, err
		}
		err = op.SnapshotGroups(func(g int, p []byte) error {
			groups[g] = append(groups[g], slices.Clone(p))
			return nil
		})
		if err != nil {
			return nil, err
		}
		return groups, nil
	}
	d := row.NewDecoder(state[1:])
	if v := d.Byte(); v != keyedStateVersion && d.Err() == nil {
		return nil, fmt.Errorf("keyed operator: state version %d, want %d", v, keyedStateVersion)
	}
	for d.Err() == nil {
		g := d.Uvarint()
		if g == operator.KeyGroups || d.Err() != nil {
			break
		}
		if g > operator.KeyGroups {
			d.Fail("key group %d of %d", g, operator.KeyGroups)
			break
		}
		groups[g] = append(groups[g], d.BytesView())
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("keyed operator: restore: %w", err)
	}
	return groups, nil
}

// CanWiden implements operator.Widener when the workers' operator does.
func (k *Keyed) CanWiden() bool {
	w, ok := k.workers[0].op.(operator.Widener)
	return ok && w.CanWiden()
}

// WidenRestore implements operator.Widener: the next restore retags the
// saved values and keys (INT to BIGINT, FLOAT to DOUBLE).
func (k *Keyed) WidenRestore(w map[row.TypeID]row.TypeID) { k.widen = w }

// widened restores every key group of a snapshot into one instance that
// retags its values and keys, and cuts its state in key groups again: a
// retagged key hashes into another group, whose worker must hold it.
func (k *Keyed) widened(groups [][][]byte) ([][][]byte, error) {
	op, err := k.build()
	if err != nil {
		return nil, err
	}
	w, ok := op.(operator.Widener)
	if !ok || !w.CanWiden() {
		return nil, fmt.Errorf("keyed operator: restore: its operator cannot widen saved values")
	}
	w.WidenRestore(k.widen)
	var all [][]byte
	for _, ps := range groups {
		all = append(all, ps...)
	}
	if err := op.RestoreGroups(all); err != nil {
		return nil, err
	}
	out := make([][][]byte, operator.KeyGroups)
	err = op.SnapshotGroups(func(g int, p []byte) error {
		out[g] = append(out[g], slices.Clone(p))
		return nil
	})
	return out, err
}
