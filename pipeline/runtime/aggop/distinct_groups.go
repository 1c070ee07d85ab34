package aggop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A Distinct's state cut in key groups, for the runtime's Keyed, which
// runs it as several workers keyed by every column and restores it with
// another number of them (operator.KeyGrouped). A group's part is a
// snapshot (Snapshot's layout) of the rows of its keys alone, with their
// times when a TTL is set; RestoreGroups joins parts into one snapshot
// (the times oldest first). A row is its own key: no state belongs to
// no key.

// SnapshotGroups implements operator.KeyGrouped.
func (d *Distinct) SnapshotGroups(part func(g int, b []byte) error) error {
	var bodies [operator.KeyGroups][]byte
	var counts [operator.KeyGroups]int
	add := func(k []byte, at int64, timed bool) {
		g := operator.KeyGroupOf(k)
		bodies[g] = binary.AppendUvarint(bodies[g], uint64(len(k)))
		bodies[g] = append(bodies[g], k...)
		if timed {
			bodies[g] = binary.AppendVarint(bodies[g], at)
		}
		counts[g]++
	}
	v := byte(DistinctStateVersion)
	if d.ttl.On() {
		v = distinctTTLStateVersion
		d.ttl.Each(func(id int32, at int64) { add(d.seen.Bytes(id), at, true) })
	} else {
		for id := range d.seen.Len() {
			add(d.seen.Bytes(int32(id)), 0, false)
		}
	}
	var buf []byte
	for g := range operator.KeyGroups {
		if counts[g] == 0 {
			continue
		}
		buf = append(buf[:0], v)
		buf = binary.AppendUvarint(buf, uint64(counts[g]))
		buf = append(buf, bodies[g]...)
		if err := part(g, buf); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped.
func (d *Distinct) RestoreGroups(parts [][]byte) error {
	type seen struct {
		key []byte
		at  int64
	}
	var rows []seen
	timed := d.ttl.On()
	if timed {
		d.ttl.Tick()
	}
	for i, p := range parts {
		dec := row.NewDecoder(p)
		v := dec.Byte()
		if v != DistinctStateVersion && v != distinctTTLStateVersion && dec.Err() == nil {
			return fmt.Errorf("select distinct: key group part %d: version %d", i, v)
		}
		for range dec.Count(1) {
			s := seen{key: dec.BytesView()}
			if v == distinctTTLStateVersion {
				s.at = dec.Varint()
			} else if timed {
				// A part written without a TTL: the restore time, as
				// Restore gives it.
				s.at = d.ttl.Clock
			}
			rows = append(rows, s)
		}
		if err := dec.End(); err != nil {
			return fmt.Errorf("select distinct: key group part %d: %w", i, err)
		}
	}
	v := byte(DistinctStateVersion)
	if timed {
		v = distinctTTLStateVersion
		slices.SortStableFunc(rows, func(a, b seen) int { return cmp.Compare(a.at, b.at) })
	}
	snap := []byte{v}
	snap = binary.AppendUvarint(snap, uint64(len(rows)))
	for _, s := range rows {
		snap = binary.AppendUvarint(snap, uint64(len(s.key)))
		snap = append(snap, s.key...)
		if timed {
			snap = binary.AppendVarint(snap, s.at)
		}
	}
	return d.Restore(snap)
}

var _ operator.KeyGrouped = (*Distinct)(nil)
