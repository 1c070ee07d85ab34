package rankop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A TopN's state cut in key groups, for the runtime's Keyed, which runs
// it as several workers keyed by the PARTITION BY keys and restores it
// with another number of them (operator.KeyGrouped). A group's part is
// a snapshot (Snapshot's layout) of the group's partitions alone, with
// their TTL times; RestoreGroups joins parts into one snapshot. A Top-N
// has no clock: no shared state.

// SnapshotGroups implements operator.KeyGrouped.
func (t *TopN) SnapshotGroups(part func(g int, b []byte) error) error {
	ids := t.order
	if !t.spec.Batch {
		ids = t.liveIDs()
	}
	var byGroup [operator.KeyGroups][]int32
	for _, id := range ids {
		g := operator.KeyGroupOf(t.keys.Bytes(id))
		byGroup[g] = append(byGroup[g], id)
	}
	type stamp struct {
		key string
		at  int64
	}
	var times [operator.KeyGroups][]stamp
	if t.ttl.On() {
		t.ttl.Each(func(k string, at int64) {
			g := operator.KeyGroupOf([]byte(k))
			times[g] = append(times[g], stamp{k, at})
		})
	}
	var buf []byte
	for g := range operator.KeyGroups {
		if len(byGroup[g]) == 0 {
			continue
		}
		buf = t.appendParts(append(buf[:0], t.stateVersion()), byGroup[g])
		if t.ttl.On() {
			buf = binary.AppendUvarint(buf, uint64(len(times[g])))
			for _, s := range times[g] {
				buf = row.AppendString(buf, s.key)
				buf = binary.AppendVarint(buf, s.at)
			}
		}
		if err := part(g, buf); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot (the partitions part after part, the TTL times the
// oldest first) and restores that.
func (t *TopN) RestoreGroups(parts [][]byte) error {
	snap, err := joinTopNParts("top-n", parts, TopNStateVersion, topNTTLStateVersion, t.stateVersion(), t.ttl.On())
	if err != nil {
		return err
	}
	return t.Restore(snap)
}

// joinTopNParts joins key-group parts of a Top-N's snapshot layout (a
// count of partitions, each a count of groups of rows, then, in parts of
// version ttlVersion, the partitions' TTL times) into one snapshot of
// version out, the times the oldest first when withTTL.
func joinTopNParts(what string, parts [][]byte, version, ttlVersion, out byte, withTTL bool) ([]byte, error) {
	type stamp struct {
		key string
		at  int64
	}
	var (
		nparts int
		body   []byte
		times  []stamp
	)
	for i, p := range parts {
		d := row.NewDecoder(p)
		v := d.Byte()
		if v != version && v != ttlVersion && d.Err() == nil {
			return nil, fmt.Errorf("%s: key group part %d: version %d", what, i, v)
		}
		np := d.Count(1)
		start := len(p) - d.Len()
		for range np {
			for range d.Count(1) {
				for range d.Count(1) {
					d.Row()
				}
			}
		}
		body = append(body, p[start:len(p)-d.Len()]...)
		nparts += np
		if v == ttlVersion {
			for range d.Count(2) {
				k := d.Str()
				times = append(times, stamp{k, d.Varint()})
			}
		}
		if err := d.End(); err != nil {
			return nil, fmt.Errorf("%s: key group part %d: %w", what, i, err)
		}
	}
	snap := []byte{out}
	snap = binary.AppendUvarint(snap, uint64(nparts))
	snap = append(snap, body...)
	if withTTL {
		slices.SortStableFunc(times, func(a, b stamp) int { return cmp.Compare(a.at, b.at) })
		snap = binary.AppendUvarint(snap, uint64(len(times)))
		for _, s := range times {
			snap = row.AppendString(snap, s.key)
			snap = binary.AppendVarint(snap, s.at)
		}
	}
	return snap, nil
}

var _ operator.KeyGrouped = (*TopN)(nil)
