package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A Keyed operator's snapshot is its workers' state cut in key groups,
// so that a run with another number of workers restores it: each worker
// of that run takes the groups it owns.
//
//	keyedStateMagic, keyedStateVersion, the number of parts (uvarint),
//	then each part: its key group (uvarint) and its bytes (uvarint
//	length, then the operator's SnapshotGroups part).
//
// The first byte tells it from the operator's own snapshot, which a
// checkpoint written before the operator ran keyed holds: that one is
// restored into one instance and cut in groups from there.
const (
	keyedStateMagic   = 0xCB
	keyedStateVersion = 1
)

// Snapshot implements operator.Snapshotter.
func (k *Keyed) Snapshot() ([]byte, error) {
	parts := make([][][]byte, len(k.workers))
	err := k.run(nil, func(w *keyedWorker) error {
		p, err := w.op.SnapshotGroups()
		parts[w.i] = p
		return err
	})
	if err != nil {
		return nil, err
	}
	size, count := 16, 0
	for _, ps := range parts {
		for _, p := range ps {
			if p != nil {
				size += len(p) + 16
				count++
			}
		}
	}
	buf := make([]byte, 0, size)
	buf = append(buf, keyedStateMagic, keyedStateVersion)
	buf = binary.AppendUvarint(buf, uint64(count))
	for _, ps := range parts {
		for g, p := range ps {
			if p != nil {
				buf = binary.AppendUvarint(buf, uint64(g))
				buf = binary.AppendUvarint(buf, uint64(len(p)))
				buf = append(buf, p...)
			}
		}
	}
	return buf, nil
}

// Restore implements operator.Snapshotter: each worker restores the
// parts of the key groups it owns, whatever number of workers wrote
// them.
func (k *Keyed) Restore(state []byte) error {
	groups, err := k.groupsOf(state)
	if err != nil {
		return err
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
		ps, err := op.SnapshotGroups()
		if err != nil {
			return nil, err
		}
		for g, p := range ps {
			if p != nil {
				groups[g] = append(groups[g], p)
			}
		}
		return groups, nil
	}
	d := row.NewDecoder(state[1:])
	if v := d.Byte(); v != keyedStateVersion && d.Err() == nil {
		return nil, fmt.Errorf("keyed operator: state version %d, want %d", v, keyedStateVersion)
	}
	for range d.Count(2) {
		g := d.Uvarint()
		p := d.BytesView()
		if d.Err() != nil {
			break
		}
		if g >= operator.KeyGroups {
			d.Fail("key group %d of %d", g, operator.KeyGroups)
			break
		}
		groups[g] = append(groups[g], p)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("keyed operator: restore: %w", err)
	}
	return groups, nil
}
