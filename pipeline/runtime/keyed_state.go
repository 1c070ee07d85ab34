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
// An operator with state of no key (operator.SharedState) writes
// keyedSharedVersion instead, and right after it each worker's shared
// state: a count (uvarint), then each one's bytes (uvarint length,
// then SnapshotShared's bytes). The others keep version 1, the format
// checkpoints held before there was shared state.
//
// The first byte tells it from the operator's own snapshot, which a
// checkpoint written before the operator ran keyed holds: that one is
// restored into one instance and cut in groups from there.
const (
	keyedStateMagic    = 0xCB
	keyedStateVersion  = 1
	keyedSharedVersion = 2
)

// head is the start of the Keyed snapshot: the magic, the version and
// with shared state the workers' shared parts.
func (k *Keyed) head() ([]byte, error) {
	if _, ok := k.workers[0].op.(operator.SharedState); !ok {
		return []byte{keyedStateMagic, keyedStateVersion}, nil
	}
	buf := []byte{keyedStateMagic, keyedSharedVersion}
	buf = binary.AppendUvarint(buf, uint64(len(k.workers)))
	for _, w := range k.workers {
		b, err := w.op.(operator.SharedState).SnapshotShared()
		if err != nil {
			return nil, err
		}
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	return buf, nil
}

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
	head, err := k.head()
	if err != nil {
		return nil, err
	}
	size := 16 + len(head)
	for _, b := range bufs {
		size += len(b)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, head...)
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
	buf, err := k.head()
	if err != nil {
		return err
	}
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
	_, err = w.Write(buf)
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
	groups, shared, err := k.groupsOf(state)
	if err != nil {
		return err
	}
	if k.widen != nil {
		if groups, shared, err = k.widened(groups, shared); err != nil {
			return err
		}
	}
	mine := make([][][]byte, len(k.workers))
	for g, ps := range groups {
		w := operator.WorkerOf(g, len(k.workers))
		mine[w] = append(mine[w], ps...)
	}
	return k.run(nil, func(w *keyedWorker) error {
		if err := w.op.RestoreGroups(mine[w.i]); err != nil {
			return err
		}
		if s, ok := w.op.(operator.SharedState); ok {
			return s.RestoreShared(shared)
		}
		return nil
	})
}

// cutInGroups is op's state cut in key groups, and its shared state.
func cutInGroups(op operator.KeyGrouped) ([][][]byte, [][]byte, error) {
	groups := make([][][]byte, operator.KeyGroups)
	err := op.SnapshotGroups(func(g int, p []byte) error {
		groups[g] = append(groups[g], slices.Clone(p))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var shared [][]byte
	if s, ok := op.(operator.SharedState); ok {
		b, err := s.SnapshotShared()
		if err != nil {
			return nil, nil, err
		}
		shared = [][]byte{b}
	}
	return groups, shared, nil
}

// groupsOf reads a snapshot's parts by key group, and its workers'
// shared states. An operator's own snapshot (not a Keyed one) is
// restored into a new instance and cut in groups.
func (k *Keyed) groupsOf(state []byte) ([][][]byte, [][]byte, error) {
	if len(state) == 0 || state[0] != keyedStateMagic {
		op, err := k.build()
		if err != nil {
			return nil, nil, err
		}
		if err := op.Restore(state); err != nil {
			return nil, nil, err
		}
		return cutInGroups(op)
	}
	groups := make([][][]byte, operator.KeyGroups)
	var shared [][]byte
	d := row.NewDecoder(state[1:])
	switch v := d.Byte(); {
	case d.Err() != nil:
	case v == keyedSharedVersion:
		for range d.Count(1) {
			shared = append(shared, d.BytesView())
		}
	case v != keyedStateVersion:
		return nil, nil, fmt.Errorf("keyed operator: state version %d, want %d or %d", v, keyedStateVersion, keyedSharedVersion)
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
		return nil, nil, fmt.Errorf("keyed operator: restore: %w", err)
	}
	return groups, shared, nil
}

// CanWiden implements operator.Widener when the workers' operator does.
func (k *Keyed) CanWiden() bool {
	w, ok := k.workers[0].op.(operator.Widener)
	return ok && w.CanWiden()
}

// WidenRestore implements operator.Widener: the next restore retags the
// saved values and keys (INT to BIGINT, FLOAT to DOUBLE).
func (k *Keyed) WidenRestore(w map[row.TypeID]row.TypeID) { k.widen = w }

// CanWidenColumns implements operator.ColumnWidener when the workers'
// operator does.
func (k *Keyed) CanWidenColumns() bool {
	w, ok := k.workers[0].op.(operator.ColumnWidener)
	return ok && w.CanWidenColumns()
}

// WidenColumns implements operator.ColumnWidener: the instance that
// restores every key group retags by column.
func (k *Keyed) WidenColumns(in []row.TypeID) { k.widenIn = in }

// widened restores every key group of a snapshot into one instance that
// retags its values and keys, and cuts its state in key groups again: a
// retagged key hashes into another group, whose worker must hold it.
func (k *Keyed) widened(groups [][][]byte, shared [][]byte) ([][][]byte, [][]byte, error) {
	op, err := k.build()
	if err != nil {
		return nil, nil, err
	}
	w, ok := op.(operator.Widener)
	if !ok || !w.CanWiden() {
		return nil, nil, fmt.Errorf("keyed operator: restore: its operator cannot widen saved values")
	}
	w.WidenRestore(k.widen)
	if k.widenIn != nil {
		cw, ok := op.(operator.ColumnWidener)
		if !ok || !cw.CanWidenColumns() {
			return nil, nil, fmt.Errorf("keyed operator: restore: its operator cannot widen saved values by column")
		}
		cw.WidenColumns(k.widenIn)
	}
	var all [][]byte
	for _, ps := range groups {
		all = append(all, ps...)
	}
	if err := op.RestoreGroups(all); err != nil {
		return nil, nil, err
	}
	if s, ok := op.(operator.SharedState); ok {
		if err := s.RestoreShared(shared); err != nil {
			return nil, nil, err
		}
	}
	return cutInGroups(op)
}
