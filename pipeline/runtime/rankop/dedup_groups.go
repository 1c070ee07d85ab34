package rankop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A Dedup's state cut in key groups, for the runtime's Keyed, which
// runs it as several workers keyed by the PARTITION BY keys and
// restores it with another number of them (operator.KeyGrouped). A
// group's part is a snapshot (Snapshot's layout) of the group's keys
// alone; group 0's carries the late count. RestoreGroups joins parts
// into one snapshot. The watermark (event time, keep first: a row older
// than it is late) belongs to no key: it is the shared state
// (operator.SharedState), which every worker gets back.

// SnapshotGroups implements operator.KeyGrouped.
func (d *Dedup) SnapshotGroups(part func(g int, b []byte) error) error {
	grp := make([]uint8, len(d.times))
	var has [operator.KeyGroups]bool
	for _, id := range d.ids() {
		g := operator.KeyGroupOf(d.keys.Bytes(id))
		grp[id], has[g] = uint8(g), true
	}
	bucket := func(ids []int32) *[operator.KeyGroups][]int32 {
		var out [operator.KeyGroups][]int32
		for _, id := range ids {
			out[grp[id]] = append(out[grp[id]], id)
		}
		return &out
	}
	doneIDs, keptIDs := d.doneAndKept()
	done, kept := bucket(doneIDs), bucket(keptIDs)
	ttl := bucket(d.ttlOrder())
	for g := range operator.KeyGroups {
		if !has[g] && (g != 0 || d.dropped == 0) {
			continue
		}
		dropped := int64(0)
		if g == 0 {
			dropped = d.dropped
		}
		if err := part(g, d.encode(dropped, done[g], kept[g], ttl[g])); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot (their keys done, rows kept and times, the times the
// oldest first) and restores that.
func (d *Dedup) RestoreGroups(parts [][]byte) error {
	type stamp struct {
		key []byte
		at  int64
	}
	var (
		v            = byte(DedupStateVersion)
		wm           = int64(operator.NoWatermark)
		dropped      int64
		done, kept   []byte
		ndone, nkept int
		times        []stamp
	)
	if d.ttl.On() {
		v = dedupTTLStateVersion
	}
	for i, p := range parts {
		dec := row.NewDecoder(p)
		pv := dec.Byte()
		if pv != DedupStateVersion && pv != dedupTTLStateVersion && dec.Err() == nil {
			return fmt.Errorf("deduplicate: key group part %d: version %d", i, pv)
		}
		wm = max(wm, dec.Varint())
		dropped += dec.Varint()
		for range dec.Count(1) {
			done = row.AppendString(done, string(dec.Bytes()))
			ndone++
		}
		for range dec.Count(1) {
			start := len(p) - dec.Len()
			dec.Row()
			kept = append(kept, p[start:len(p)-dec.Len()]...)
			nkept++
		}
		if pv == dedupTTLStateVersion {
			for range dec.Count(2) {
				k := dec.Bytes()
				times = append(times, stamp{k, dec.Varint()})
			}
		}
		if err := dec.End(); err != nil {
			return fmt.Errorf("deduplicate: key group part %d: %w", i, err)
		}
	}
	snap := []byte{v}
	snap = binary.AppendVarint(snap, wm)
	snap = binary.AppendVarint(snap, dropped)
	snap = binary.AppendUvarint(snap, uint64(ndone))
	snap = append(snap, done...)
	snap = binary.AppendUvarint(snap, uint64(nkept))
	snap = append(snap, kept...)
	if v == dedupTTLStateVersion {
		slices.SortStableFunc(times, func(a, b stamp) int { return cmp.Compare(a.at, b.at) })
		snap = binary.AppendUvarint(snap, uint64(len(times)))
		for _, t := range times {
			snap = row.AppendString(snap, string(t.key))
			snap = binary.AppendVarint(snap, t.at)
		}
	}
	return d.Restore(snap)
}

// SnapshotShared implements operator.SharedState: the watermark.
func (d *Dedup) SnapshotShared() ([]byte, error) {
	return binary.AppendVarint(nil, d.wm), nil
}

// RestoreShared implements operator.SharedState: the latest watermark
// of the parts (every worker saw the same ones).
func (d *Dedup) RestoreShared(parts [][]byte) error {
	for i, p := range parts {
		dec := row.NewDecoder(p)
		wm := dec.Varint()
		if err := dec.End(); err != nil {
			return fmt.Errorf("deduplicate: shared state %d: %w", i, err)
		}
		d.wm = max(d.wm, wm)
	}
	return nil
}

var _ operator.SharedState = (*Dedup)(nil)
