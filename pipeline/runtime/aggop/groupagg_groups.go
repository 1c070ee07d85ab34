package aggop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A GroupAgg's state cut in key groups, for the runtime's Keyed, which
// runs it as several workers and restores it with another number of
// them (operator.KeyGrouped). A part is one group's slots in the
// layout of Snapshot's, and RestoreGroups joins parts into one such
// snapshot:
//
//	version (groupAggGroupsVersion), flags (1: TTL times follow),
//	dropped count (varint; group 0 carries it, the others 0),
//	slots (uvarint), the slots' bytes (uvarint length, then each slot
//	as Store.appendSlot writes it), and with flag 1 the TTL times:
//	a count, then per group (the oldest first) its slot's index in the
//	part and the time.
const groupAggGroupsVersion = 1

// SnapshotGroups implements operator.KeyGrouped.
func (g *GroupAgg) SnapshotGroups(part func(k int, b []byte) error) error {
	s := g.store
	s.settle()
	if s.hasUser() {
		if s.flushUser(); s.userErr != nil {
			return s.userErr
		}
	}
	var ids [operator.KeyGroups][]int32
	// pos is a slot's index in its group's part, grp its group.
	pos := make([]int32, s.Slots)
	grp := make([]uint8, s.Slots)
	for id := range s.Slots {
		if !g.hasKey(id) {
			continue // a free slot
		}
		k := operator.KeyGroupOf(g.slotKey(id))
		pos[id], grp[id] = int32(len(ids[k])), uint8(k)
		ids[k] = append(ids[k], id)
	}
	on := g.ttl.On()
	var times [operator.KeyGroups][]byte
	var counts [operator.KeyGroups]int
	if on {
		g.ttl.Each(func(id int32, at int64) {
			if !g.hasKey(id) {
				return
			}
			k := grp[id]
			times[k] = binary.AppendUvarint(times[k], uint64(pos[id]))
			times[k] = binary.AppendVarint(times[k], at)
			counts[k]++
		})
	}
	var slots, p []byte
	for k := range operator.KeyGroups {
		if len(ids[k]) == 0 && (k != 0 || g.dropped == 0) {
			continue
		}
		slots = slots[:0]
		for _, id := range ids[k] {
			slots = s.appendSlot(slots, id, g.slotKey)
		}
		if err := errors.Join(s.Err(), g.keyErr); err != nil {
			return err
		}
		flags := byte(0)
		if on {
			flags = 1
		}
		p = append(p[:0], groupAggGroupsVersion, flags)
		dropped := int64(0)
		if k == 0 {
			dropped = g.dropped
		}
		p = binary.AppendVarint(p, dropped)
		p = binary.AppendUvarint(p, uint64(len(ids[k])))
		p = binary.AppendUvarint(p, uint64(len(slots))) // row.AppendString's layout
		p = append(p, slots...)
		if on {
			p = binary.AppendUvarint(p, uint64(counts[k]))
			p = append(p, times[k]...)
		}
		if err := part(k, p); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot (slots numbered part after part, TTL times the oldest
// first) and restores that.
func (g *GroupAgg) RestoreGroups(parts [][]byte) error {
	type stamp struct {
		id int32
		at int64
	}
	var (
		dropped int64
		slots   int
		body    []byte // the slots of every part, after a header written last
		times   []stamp
		ttl     bool
	)
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	const room = 3 * binary.MaxVarintLen64
	body = make([]byte, room, room+size)
	for i, p := range parts {
		d := row.NewDecoder(p)
		if v := d.Byte(); v != groupAggGroupsVersion && d.Err() == nil {
			return fmt.Errorf("group aggregate: key group part %d: version %d, want %d", i, v, groupAggGroupsVersion)
		}
		flags := d.Byte()
		dropped += d.Varint()
		n := d.Uvarint()
		body = append(body, d.BytesView()...)
		if flags&1 != 0 {
			ttl = true
			for range d.Count(2) {
				id, at := d.Uvarint(), d.Varint()
				if d.Err() == nil && id >= n {
					d.Fail("state time of slot %d in %d slots", id, n)
				}
				times = append(times, stamp{int32(slots) + int32(id), at})
			}
		}
		if err := d.End(); err != nil {
			return fmt.Errorf("group aggregate: key group part %d: %w", i, err)
		}
		slots += int(n)
	}
	v := byte(GroupAggStateVersion)
	if ttl {
		v = groupAggTTLStateVersion
	}
	// The header goes right before the slots, in the room left for it.
	head := []byte{v}
	head = binary.AppendVarint(head, dropped)
	head = binary.AppendUvarint(head, uint64(slots))
	head = binary.AppendUvarint(head, 0) // no free slots
	snap := body[room-len(head):]
	copy(snap, head)
	if ttl {
		// Each part's times are the oldest first; their union must be too.
		slices.SortStableFunc(times, func(a, b stamp) int { return cmpInt64(a.at, b.at) })
		snap = binary.AppendUvarint(snap, uint64(len(times)))
		for _, t := range times {
			snap = binary.AppendUvarint(snap, uint64(t.id))
			snap = binary.AppendVarint(snap, t.at)
		}
	}
	return g.Restore(snap)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var _ operator.KeyGrouped = (*GroupAgg)(nil)
