package windowop

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A WindowAgg's state cut in key groups, for the runtime's Keyed, which
// runs it as several workers keyed by the GROUP BY keys, and restores it
// with another number of them (operator.KeyGrouped). A group's part
// holds the groups of its keys in every open slice and CUMULATE cycle
// (every cycle, which fires the slices of its steps):
//
//	version (windowGroupsVersion), the late count (varint; group 0
//	carries it, the others 0), the slices (a count, then each one's end
//	and its slots' numbers in the part, first seen first), the cycles
//	(a count, then each one's start, next end to fire and shared slots),
//	and the slots: their count, then their bytes (uvarint length, then
//	each slot as aggop.Store writes it).
//
// The clock (the watermark and the time attribute's type) belongs to no
// key, and a worker owning no group with state needs it all the same:
// it is the shared state (operator.SharedState). The windows still to
// fire are not written: they are those of the slices restored
// (reschedule).
const windowGroupsVersion = 1

// SnapshotGroups implements operator.KeyGrouped. A slot is in one
// slice or cycle: the slots of a group, taken slice after slice (by
// end) then cycle after cycle, are runs of one owner each, numbered in
// the part in that order, so that the state is walked once, not once a
// group.
func (g *WindowAgg) SnapshotGroups(part func(k int, b []byte) error) error {
	type run struct{ owner, n int32 } // owner: a slice's index in ends, or len(ends) + a cycle's
	var ids [operator.KeyGroups][]int32
	var runs [operator.KeyGroups][]run
	place := func(owner int, order []int32) {
		for _, id := range order {
			k := operator.KeyGroupOf(g.slotKey(id))
			ids[k] = append(ids[k], id)
			if r := runs[k]; len(r) > 0 && r[len(r)-1].owner == int32(owner) {
				r[len(r)-1].n++
			} else {
				runs[k] = append(r, run{int32(owner), 1})
			}
		}
	}
	ends := make([]int64, 0, len(g.slices))
	for e := range g.slices {
		ends = append(ends, e)
	}
	slices.Sort(ends)
	for i, e := range ends {
		place(i, g.slices[e].order)
	}
	for i, c := range g.cycles {
		place(len(ends)+i, c.shared.order)
	}
	appendRange := func(buf []byte, from, n int32) []byte {
		buf = binary.AppendUvarint(buf, uint64(n))
		for i := range n {
			buf = binary.AppendUvarint(buf, uint64(from+i))
		}
		return buf
	}
	var p, slots []byte
	for k := range operator.KeyGroups {
		if len(ids[k]) == 0 && (k != 0 || g.dropped == 0) {
			continue
		}
		dropped := int64(0)
		if k == 0 {
			dropped = g.dropped
		}
		p = append(p[:0], windowGroupsVersion)
		p = binary.AppendVarint(p, dropped)
		rs, at := runs[k], int32(0)
		nslices := 0
		for nslices < len(rs) && int(rs[nslices].owner) < len(ends) {
			nslices++
		}
		p = binary.AppendUvarint(p, uint64(nslices))
		for _, r := range rs[:nslices] {
			p = binary.AppendVarint(p, ends[r.owner])
			p = appendRange(p, at, r.n)
			at += r.n
		}
		// Every cycle, even with no shared group of k: it fires the
		// group's step slices.
		rs = rs[nslices:]
		p = binary.AppendUvarint(p, uint64(len(g.cycles)))
		for i, c := range g.cycles {
			p = binary.AppendVarint(p, c.start)
			p = binary.AppendVarint(p, c.next)
			if len(rs) > 0 && int(rs[0].owner) == len(ends)+i {
				p = appendRange(p, at, rs[0].n)
				at, rs = at+rs[0].n, rs[1:]
			} else {
				p = binary.AppendUvarint(p, 0)
			}
		}
		var err error
		if slots, err = g.st.AppendSlots(slots[:0], ids[k], g.slotKey); err != nil {
			return err
		}
		p = binary.AppendUvarint(p, uint64(len(ids[k])))
		p = binary.AppendUvarint(p, uint64(len(slots))) // row.AppendString's layout
		p = append(p, slots...)
		if err := part(k, p); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot (slots numbered part after part, the slices and cycles
// of one end or start merged) and restores that, with no clock until
// RestoreShared.
func (g *WindowAgg) RestoreGroups(parts [][]byte) error {
	type cyc struct {
		start, next int64
		ids         []int32
	}
	var (
		dropped int64
		slots   int
		store   []byte
	)
	ends := map[int64][]int32{}
	cycles := map[int64]*cyc{}
	for i, p := range parts {
		d := row.NewDecoder(p)
		if v := d.Byte(); v != windowGroupsVersion && d.Err() == nil {
			return fmt.Errorf("window aggregate: key group part %d: version %d, want %d", i, v, windowGroupsVersion)
		}
		dropped += d.Varint()
		base := int32(slots)
		ids := func() []int32 {
			out := make([]int32, d.Count(1))
			for j := range out {
				out[j] = base + int32(min(d.Uvarint(), 1<<30))
			}
			return out
		}
		for range d.Count(2) {
			e := d.Varint()
			ends[e] = append(ends[e], ids()...)
		}
		for range d.Count(3) {
			start, next := d.Varint(), d.Varint()
			c := cycles[start]
			if c == nil {
				c = &cyc{start: start, next: next}
				cycles[start] = c
			}
			// Every worker's cycle of a start has fired the same steps:
			// all see every watermark.
			c.next = max(c.next, next)
			c.ids = append(c.ids, ids()...)
		}
		n := d.Uvarint()
		store = append(store, d.BytesView()...)
		if err := d.End(); err != nil {
			return fmt.Errorf("window aggregate: key group part %d: %w", i, err)
		}
		slots += int(n)
	}
	snap := aggop.AppendClock(windowStateVersion, operator.NoWatermark, row.Null, dropped)
	snap = binary.AppendUvarint(snap, 0) // no windows to fire until RestoreShared
	keys := slices.Sorted(maps.Keys(ends))
	snap = binary.AppendUvarint(snap, uint64(len(keys)))
	for _, e := range keys {
		snap = binary.AppendVarint(snap, e)
		snap = appendIDs(snap, ends[e])
	}
	starts := slices.Sorted(maps.Keys(cycles))
	snap = binary.AppendUvarint(snap, uint64(len(starts)))
	for _, s := range starts {
		c := cycles[s]
		snap = binary.AppendVarint(snap, c.start)
		snap = binary.AppendVarint(snap, c.next)
		snap = appendIDs(snap, c.ids)
	}
	snap = aggop.AppendStoreHead(snap, slots)
	snap = append(snap, store...)
	return g.Restore(snap)
}

// SnapshotShared implements operator.SharedState: the clock (the
// watermark and the time attribute's type).
func (g *WindowAgg) SnapshotShared() ([]byte, error) {
	return aggop.AppendClock(windowStateVersion, g.wm, g.timeID, 0), nil
}

// RestoreShared implements operator.SharedState: the latest watermark
// of the parts (every worker saw the same ones) and the time type of a
// worker that saw a row; then the windows of the restored slices are
// scheduled to fire.
func (g *WindowAgg) RestoreShared(parts [][]byte) error {
	wm, timeID, err := readSharedClock(parts, windowStateVersion, "window aggregate")
	if err != nil {
		return err
	}
	g.wm, g.timeID = wm, timeID
	g.reschedule()
	return nil
}

// readSharedClock reads the clocks of several workers' shared states
// (aggop.AppendClock of version): the latest watermark (every worker
// saw the same ones) and the time type of a worker that saw a row.
func readSharedClock(parts [][]byte, version byte, what string) (int64, row.TypeID, error) {
	wm, timeID := int64(operator.NoWatermark), row.Null
	for i, p := range parts {
		d := row.NewDecoder(p)
		w, t, _, err := aggop.ReadClock(d, version, what)
		if err == nil {
			err = d.End()
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: shared state %d: %w", what, i, err)
		}
		wm = max(wm, w)
		if timeID == row.Null {
			timeID = t
		}
	}
	return wm, timeID, nil
}

// reschedule sets the windows to fire from the slices: each slice's
// windows not yet due, as add schedules them when it opens the slice
// (a window fires after every slice it holds was opened, and frees its
// first slice only then, so a window not yet fired has all of its).
func (g *WindowAgg) reschedule() {
	g.pending = g.pending[:0]
	if g.spec.Kind == Cumulate && !g.opt.Attached {
		return // the cycles say what fires next
	}
	wm := g.wm
	if g.opt.Batch {
		wm = operator.NoWatermark
	}
	slide, last := g.slide(), g.spec.Size-g.slide()
	if g.opt.Attached {
		last = 0
	}
	for end := range g.slices {
		for e := end; e <= end+last; e += slide {
			if g.due(e) > wm {
				g.pending = append(g.pending, e)
			}
		}
	}
	slices.Sort(g.pending)
	g.pending = slices.Compact(g.pending)
}

var (
	_ operator.KeyGrouped  = (*WindowAgg)(nil)
	_ operator.SharedState = (*WindowAgg)(nil)
)
