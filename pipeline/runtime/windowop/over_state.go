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

// Snapshot encodes the watermark, the time attribute's type, the late
// count, the next sequence number, each partition (its slot, its frame's
// and LAG's rows, its row and time counts), the rows waiting for the
// watermark (sequence, partition slot, row) in their order, then the
// aggregate store, which keeps each partition's key.
func (g *OverAgg) Snapshot() ([]byte, error) {
	v := byte(overStateVersion)
	if g.ttl.On() {
		v = overTTLStateVersion
	}
	if g.rangeCleanup() {
		v += overCleanupShift
	}
	if g.ext != nil {
		v |= overSortedMark
	}
	buf := aggop.AppendClock(v, g.wm, g.timeID, g.dropped)
	buf = binary.AppendUvarint(buf, g.seq)
	parts := make([]*overPart, 0, len(g.parts))
	for _, p := range g.parts {
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *overPart) int { return cmp.Compare(a.id, b.id) })
	appendRows := func(buf []byte, q ringRows) []byte {
		buf = binary.AppendUvarint(buf, uint64(q.len()))
		for i := range q.len() {
			buf = row.AppendRow(buf, q.at(i))
		}
		return buf
	}
	buf = binary.AppendUvarint(buf, uint64(len(parts)))
	for _, p := range parts {
		buf = binary.AppendUvarint(buf, uint64(p.id))
		buf = appendRows(buf, &p.frame)
		buf = appendRows(buf, &p.hist)
		buf = binary.AppendUvarint(buf, uint64(p.rows))
		buf = binary.AppendUvarint(buf, uint64(p.times))
	}
	queue := slices.Clone(g.queue.Items())
	slices.SortFunc(queue, func(a, b overWait) int { return cmp.Compare(a.seq, b.seq) })
	buf = binary.AppendUvarint(buf, uint64(len(queue)))
	for _, w := range queue {
		x := &g.held[w.slot]
		buf = binary.AppendUvarint(buf, w.seq)
		buf = binary.AppendUvarint(buf, uint64(x.p.id))
		buf = row.AppendRow(buf, x.r)
	}
	buf = g.appendTTL(g.st.AppendState(buf, nil))
	if g.rangeCleanup() {
		buf = g.appendCleanup(buf, parts)
	}
	return buf, nil
}

// Restore replaces the operator's state with a snapshot's.
func (g *OverAgg) Restore(snap []byte) error {
	d := g.Decoder(snap)
	var err error
	full := false // the store holds the queued MIN and MAX too
	if len(snap) > 0 {
		var v byte
		if v, full, err = g.checkLayout(snap[0]); err != nil {
			return err
		}
		if v != snap[0] {
			snap = append([]byte{v}, snap[1:]...)
			d = g.Decoder(snap)
		}
	}
	v, err := overVersion(snap)
	if err != nil {
		return err
	}
	if g.wm, g.timeID, g.dropped, err = aggop.ReadClock(d, v, "over aggregate"); err != nil {
		return err
	}
	timed := v > overTTLStateVersion // the cleanup timers follow
	if timed {
		v -= overCleanupShift
	}
	g.seq = d.Uvarint()
	readRows := func() rowRing {
		var q rowRing
		for range d.Count(1) {
			q.push(d.Row())
		}
		return q
	}
	slotID := func() int32 { return int32(min(d.Uvarint(), 1<<31-1)) }
	byID := map[int32]*overPart{}
	var parts []*overPart
	for range d.Count(3) {
		p := &overPart{id: slotID()}
		parts = append(parts, p)
		for range d.Count(1) {
			p.frame.pushKept(d.Row(), g.frameKept)
		}
		p.hist = readRows()
		if v >= overStateVersion {
			p.rows, p.times = int64(d.Uvarint()), int64(d.Uvarint())
		}
		byID[p.id] = p
	}
	type waiting struct {
		seq uint64
		id  int32
		r   row.Row
	}
	queue := make([]waiting, d.Count(3))
	for i := range queue {
		queue[i] = waiting{seq: d.Uvarint(), id: slotID(), r: d.Row()}
	}
	if err := g.restoreStore(d, full); err != nil {
		return err
	}
	g.readTTL(d, v == overTTLStateVersion || v == overOldTTLStateVersion)
	var cs *cleanupState
	if timed {
		c := readCleanup(d, parts)
		cs = &c
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("over aggregate: restore: %w", err)
	}
	g.parts = make(map[string]*overPart, len(byID))
	for id, p := range byID {
		if id < 0 || id >= g.st.Slots {
			return fmt.Errorf("over aggregate: restore: slot %d of %d", id, g.st.Slots)
		}
		g.parts[g.st.Keys[id]] = p
	}
	if !g.restoreCleanup(cs, byID) {
		return fmt.Errorf("over aggregate: restore: cleanup timer of an unknown partition")
	}
	g.held, g.vacant = make([]overRow, 0, len(queue)), nil
	waits := make([]overWait, 0, len(queue))
	for _, w := range queue {
		p := byID[w.id]
		if p == nil || len(w.r) <= g.spec.TimeCol {
			return fmt.Errorf("over aggregate: restore: waiting row of unknown partition %d", w.id)
		}
		waits = append(waits, overWait{ts: w.r[g.spec.TimeCol].Micros(), seq: w.seq, slot: g.hold(overRow{p: p, r: w.r})})
		p.waiting++
	}
	g.queue.Fill(waits)
	g.rebuildExtremes()
	return g.touchRestored()
}

var (
	_ operator.Operator    = (*OverAgg)(nil)
	_ operator.Counters    = (*OverAgg)(nil)
	_ operator.Snapshotter = (*OverAgg)(nil)
	_ operator.StateSizer  = (*OverAgg)(nil)
)
