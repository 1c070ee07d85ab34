package windowop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// An OverAgg's state cut in key groups, for the runtime's Keyed, which
// runs it as several workers keyed by the PARTITION BY keys and
// restores it with another number of them (operator.KeyGrouped). A
// group's part holds the partitions of its keys, their rows waiting for
// the watermark and their cleanup timers:
//
//	version (overGroupsVersion), the late and NULL-time counts (varints;
//	group 0 carries them, the others 0), the worker's next sequence
//	number (uvarint), the partitions (a count, then each one's key,
//	frame and LAG rows, row and time counts, last triggering and
//	cleanup times, and its TTL write time if it has one), the waiting
//	rows (a count, then each one's sequence number, partition in the
//	part and row), the cleanup timers (a count, then each one's time
//	and partition) and last the partitions' aggregates (uvarint length,
//	then each slot as aggop.Store writes it).
//
// A partition's rows all come from the one worker that owns its key, so
// their sequence numbers order them; a restored worker numbers new rows
// after the largest of the parts it got. The clock (the watermark and
// the time attribute's type) belongs to no key: it is the shared state
// (operator.SharedState).
//
// Version 2 carries overSortedMark when the stores lack the MIN and MAX
// kept in queues; in version 1 they lacked them only in a batch run over
// sorted input.
const overGroupsVersion = 2

// SnapshotGroups implements operator.KeyGrouped.
func (g *OverAgg) SnapshotGroups(part func(k int, b []byte) error) error {
	parts := make([]*overPart, 0, len(g.parts))
	for _, p := range g.parts {
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *overPart) int { return cmp.Compare(a.id, b.id) })
	var byGroup [operator.KeyGroups][]*overPart
	at := make(map[*overPart]int, len(parts)) // a partition's index in its part
	groupOf := make(map[*overPart]int, len(parts))
	for _, p := range parts {
		k := operator.KeyGroupOf([]byte(g.st.Keys[p.id]))
		at[p], groupOf[p] = len(byGroup[k]), k
		byGroup[k] = append(byGroup[k], p)
	}
	var queued [operator.KeyGroups][]overWait
	queue := slices.Clone(g.queue.Items())
	slices.SortFunc(queue, func(a, b overWait) int { return cmp.Compare(a.seq, b.seq) })
	for _, w := range queue {
		k := groupOf[g.held[w.slot].p]
		queued[k] = append(queued[k], w)
	}
	var timers [operator.KeyGroups][]overCleanup
	items := slices.Clone(g.cleanups.Items())
	slices.SortFunc(items, func(a, b overCleanup) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key, b.key)) })
	for _, c := range items {
		if p := g.parts[c.key]; p != nil {
			timers[groupOf[p]] = append(timers[groupOf[p]], c)
		}
	}
	var touched map[string]int64
	if g.ttl.On() {
		touched = make(map[string]int64, len(parts))
		g.ttl.Each(func(k string, t int64) { touched[k] = t })
	}
	appendRows := func(buf []byte, q ringRows) []byte {
		buf = binary.AppendUvarint(buf, uint64(q.len()))
		for i := range q.len() {
			buf = row.AppendRow(buf, q.at(i))
		}
		return buf
	}
	var buf, slots []byte
	var ids []int32
	for k := range operator.KeyGroups {
		ps := byGroup[k]
		if len(ps) == 0 && (k != 0 || g.dropped == 0 && g.nulls == 0) {
			continue
		}
		dropped, nulls := int64(0), int64(0)
		if k == 0 {
			dropped, nulls = g.dropped, g.nulls
		}
		buf = append(buf[:0], g.groupsVersion())
		buf = binary.AppendVarint(buf, dropped)
		buf = binary.AppendVarint(buf, nulls)
		buf = binary.AppendUvarint(buf, g.seq)
		buf = binary.AppendUvarint(buf, uint64(len(ps)))
		ids = ids[:0]
		for _, p := range ps {
			key := g.st.Keys[p.id]
			ids = append(ids, p.id)
			buf = row.AppendString(buf, key)
			buf = appendRows(buf, &p.frame)
			buf = appendRows(buf, &p.hist)
			buf = binary.AppendUvarint(buf, uint64(p.rows))
			buf = binary.AppendUvarint(buf, uint64(p.times))
			buf = binary.AppendVarint(buf, p.lastTrig)
			buf = append(buf, b2byte(p.cleanupSet))
			buf = binary.AppendVarint(buf, p.cleanupAt)
			t, ok := touched[key]
			buf = append(buf, b2byte(ok))
			buf = binary.AppendVarint(buf, t)
		}
		buf = binary.AppendUvarint(buf, uint64(len(queued[k])))
		for _, w := range queued[k] {
			x := &g.held[w.slot]
			buf = binary.AppendUvarint(buf, w.seq)
			buf = binary.AppendUvarint(buf, uint64(at[x.p]))
			buf = row.AppendRow(buf, x.r)
		}
		buf = binary.AppendUvarint(buf, uint64(len(timers[k])))
		for _, c := range timers[k] {
			buf = binary.AppendVarint(buf, c.at)
			buf = binary.AppendUvarint(buf, uint64(at[g.parts[c.key]]))
		}
		var err error
		if slots, err = g.st.AppendSlots(slots[:0], ids, nil); err != nil {
			return err
		}
		buf = binary.AppendUvarint(buf, uint64(len(slots)))
		buf = append(buf, slots...)
		if err := part(k, buf); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot of Snapshot's layout (the partitions numbered part after
// part, the TTL times oldest first) and restores that, with no clock
// until RestoreShared.
func (g *OverAgg) RestoreGroups(parts [][]byte) error {
	type stamp struct {
		key string
		at  int64
	}
	var (
		dropped, nulls   int64
		seq              uint64
		nparts, nqueue   int
		ps, queue, clean []byte
		timers           []byte
		ntimers          int
		store            []byte
		stamps           []stamp
	)
	queued := false // the parts' stores lack the queued MIN and MAX
	for i, p := range parts {
		d := row.NewDecoder(p)
		v := d.Byte()
		q := v&overSortedMark != 0
		switch v &^ overSortedMark {
		case 1:
			q = g.opt.Sorted && g.ext != nil
		case overGroupsVersion:
		default:
			if d.Err() == nil {
				return fmt.Errorf("over aggregate: key group part %d: version %d, want 1 to %d", i, v, overGroupsVersion)
			}
		}
		if i > 0 && q != queued {
			return fmt.Errorf("over aggregate: key group part %d: MIN and MAX kept otherwise than in part 0", i)
		}
		queued = q
		dropped += d.Varint()
		nulls += d.Varint()
		seq = max(seq, d.Uvarint())
		base := nparts
		raw := func(read func()) []byte {
			start := len(p) - d.Len()
			read()
			return p[start : len(p)-d.Len()]
		}
		rows := func() {
			for range d.Count(1) {
				d.Row()
			}
		}
		n := d.Count(8)
		for j := range n {
			key := d.Str()
			ps = binary.AppendUvarint(ps, uint64(base+j))
			ps = append(ps, raw(func() { rows(); rows(); d.Uvarint(); d.Uvarint() })...)
			clean = append(clean, raw(func() { d.Varint(); d.Byte(); d.Varint() })...)
			touched, t := d.Byte() == 1, d.Varint()
			if touched {
				stamps = append(stamps, stamp{key, t})
			}
		}
		nparts += n
		for range d.Count(3) {
			s, j := d.Uvarint(), d.Uvarint()
			if j >= uint64(n) {
				d.Fail("waiting row of partition %d of %d", j, n)
			}
			queue = binary.AppendUvarint(queue, s)
			queue = binary.AppendUvarint(queue, uint64(base)+j)
			queue = append(queue, raw(func() { d.Row() })...)
			nqueue++
		}
		for range d.Count(2) {
			t, j := d.Varint(), d.Uvarint()
			if j >= uint64(n) {
				d.Fail("cleanup timer of partition %d of %d", j, n)
			}
			timers = binary.AppendVarint(timers, t)
			timers = binary.AppendUvarint(timers, uint64(base)+j)
			ntimers++
		}
		store = append(store, d.BytesView()...)
		if err := d.End(); err != nil {
			return fmt.Errorf("over aggregate: key group part %d: %w", i, err)
		}
	}
	v := byte(overStateVersion)
	if g.ttl.On() {
		v = overTTLStateVersion
	}
	if g.rangeCleanup() {
		v += overCleanupShift
	}
	if queued {
		v |= overSortedMark // Restore leaves out the MIN and MAX otherwise
	}
	snap := aggop.AppendClock(v, operator.NoWatermark, row.Null, dropped)
	snap = binary.AppendUvarint(snap, seq)
	snap = binary.AppendUvarint(snap, uint64(nparts))
	snap = append(snap, ps...)
	snap = binary.AppendUvarint(snap, uint64(nqueue))
	snap = append(snap, queue...)
	snap = aggop.AppendStoreHead(snap, nparts)
	snap = append(snap, store...)
	if g.ttl.On() {
		slices.SortStableFunc(stamps, func(a, b stamp) int { return cmp.Compare(a.at, b.at) })
		snap = binary.AppendUvarint(snap, uint64(len(stamps)))
		for _, s := range stamps {
			snap = row.AppendString(snap, s.key)
			snap = binary.AppendVarint(snap, s.at)
		}
	}
	if g.rangeCleanup() {
		snap = append(snap, clean...)
		snap = binary.AppendUvarint(snap, uint64(ntimers))
		snap = append(snap, timers...)
	}
	if err := g.Restore(snap); err != nil {
		return err
	}
	g.nulls = nulls
	return nil
}

// groupsVersion is the version byte of a key group part.
func (g *OverAgg) groupsVersion() byte {
	if g.ext != nil {
		return overGroupsVersion | overSortedMark
	}
	return overGroupsVersion
}

// SnapshotShared implements operator.SharedState: the clock (the
// watermark and the time attribute's type).
func (g *OverAgg) SnapshotShared() ([]byte, error) {
	return aggop.AppendClock(overStateVersion, g.wm, g.timeID, 0), nil
}

// RestoreShared implements operator.SharedState: the latest watermark
// of the parts (every worker saw the same ones) and the time type of a
// worker that saw a row.
func (g *OverAgg) RestoreShared(parts [][]byte) error {
	wm, timeID, err := readSharedClock(parts, overStateVersion, "over aggregate")
	if err != nil {
		return err
	}
	g.wm, g.timeID = wm, timeID
	return nil
}

var (
	_ operator.KeyGrouped  = (*OverAgg)(nil)
	_ operator.SharedState = (*OverAgg)(nil)
)
