package rankop

import (
	"encoding/binary"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// An UpdatableTopN's state cut in key groups, for the runtime's Keyed,
// which runs it as several workers keyed by the PARTITION BY keys and
// restores it with another number of them (operator.KeyGrouped). A
// group's part is a snapshot (Snapshot's layout) of the group's
// partitions alone, with their TTL times when a TTL is set;
// RestoreGroups joins parts into one snapshot (the times oldest first).
// A partition is its own: no state belongs to no key.

// SnapshotGroups implements operator.KeyGrouped.
func (t *UpdatableTopN) SnapshotGroups(part func(g int, b []byte) error) error {
	var byGroup [operator.KeyGroups][]string
	for k := range t.parts {
		g := operator.KeyGroupOf([]byte(k))
		byGroup[g] = append(byGroup[g], k)
	}
	var touched map[string]int64
	if t.ttl.On() {
		touched = make(map[string]int64, len(t.parts))
		t.ttl.Each(func(k string, at int64) { touched[k] = at })
	}
	var buf []byte
	for g, keys := range byGroup {
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys) // a part's bytes do not depend on the map's order
		buf = append(buf[:0], t.stateVersion())
		buf = binary.AppendUvarint(buf, uint64(len(keys)))
		for _, k := range keys {
			p := t.parts[k]
			buf = binary.AppendUvarint(buf, uint64(len(p.groups)))
			for _, grp := range p.groups {
				buf = binary.AppendUvarint(buf, uint64(len(grp)))
				for _, rk := range grp {
					buf = row.AppendRow(buf, p.rows[rk])
				}
			}
		}
		if t.ttl.On() {
			n := 0
			for _, k := range keys {
				if _, ok := touched[k]; ok {
					n++
				}
			}
			buf = binary.AppendUvarint(buf, uint64(n))
			for _, k := range keys {
				if at, ok := touched[k]; ok {
					buf = row.AppendString(buf, k)
					buf = binary.AppendVarint(buf, at)
				}
			}
		}
		if err := part(g, buf); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped.
func (t *UpdatableTopN) RestoreGroups(parts [][]byte) error {
	snap, err := joinTopNParts("top-n (UpdateFastStrategy)", parts, updatableTopNStateVersion, updatableTopNTTLStateVersion, t.stateVersion(), t.ttl.On())
	if err != nil {
		return err
	}
	return t.Restore(snap)
}

var _ operator.KeyGrouped = (*UpdatableTopN)(nil)
