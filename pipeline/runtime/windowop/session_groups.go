package windowop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A SessionAgg's state cut in key groups, for the runtime's Keyed,
// which runs it as several workers keyed by the GROUP BY keys and
// restores it with another number of them (operator.KeyGrouped). A
// group's part holds the open sessions of its keys:
//
//	version (sessionGroupsVersion), the late count (varint; group 0
//	carries it, the others 0), the worker's next sequence number
//	(uvarint), the sessions (a count, then each one's start, end and
//	sequence number, in sequence order) and last their aggregates
//	(uvarint length, then each slot as aggop.Store writes it, the
//	sessions' in their order).
//
// A key's sessions are disjoint and never end together, so the
// sequence numbers, which order sessions ending together, only order
// keys: a restored worker numbers new sessions after the largest it
// got. The clock (the watermark and the time attribute's type) belongs
// to no key: it is the shared state (operator.SharedState).
const sessionGroupsVersion = 1

// SnapshotGroups implements operator.KeyGrouped.
func (g *SessionAgg) SnapshotGroups(part func(k int, b []byte) error) error {
	var byGroup [operator.KeyGroups][]*session
	all := g.set.sessions()
	for _, s := range all {
		k := operator.KeyGroupOf(g.set.key(s))
		byGroup[k] = append(byGroup[k], s)
	}
	key := g.slotKeys(all)
	var buf, slots []byte
	var ids []int32
	for k, ss := range byGroup {
		if len(ss) == 0 && (k != 0 || g.dropped == 0) {
			continue
		}
		dropped := int64(0)
		if k == 0 {
			dropped = g.dropped
		}
		buf = append(buf[:0], sessionGroupsVersion)
		buf = binary.AppendVarint(buf, dropped)
		buf = binary.AppendUvarint(buf, g.set.seq)
		buf = binary.AppendUvarint(buf, uint64(len(ss)))
		ids = ids[:0]
		for _, s := range ss {
			buf = binary.AppendVarint(buf, s.start)
			buf = binary.AppendVarint(buf, s.end)
			buf = binary.AppendUvarint(buf, s.seq)
			ids = append(ids, s.id)
		}
		var err error
		if slots, err = g.st.AppendSlots(slots[:0], ids, key); err != nil {
			return err
		}
		buf = binary.AppendUvarint(buf, uint64(len(slots)))
		buf = append(buf, slots...)
		if err := part(k, buf); err != nil {
			return err
		}
	}
	return g.st.Err()
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot of Snapshot's layout (the sessions' slots numbered part
// after part) and restores that, with no clock until RestoreShared.
func (g *SessionAgg) RestoreGroups(parts [][]byte) error {
	var (
		dropped  int64
		seq      uint64
		n        int
		sessions []byte
		store    []byte
	)
	for i, p := range parts {
		d := row.NewDecoder(p)
		if v := d.Byte(); v != sessionGroupsVersion && d.Err() == nil {
			return fmt.Errorf("session window aggregate: key group part %d: version %d, want %d", i, v, sessionGroupsVersion)
		}
		dropped += d.Varint()
		seq = max(seq, d.Uvarint())
		for range d.Count(3) {
			start, end, sq := d.Varint(), d.Varint(), d.Uvarint()
			sessions = binary.AppendVarint(sessions, start)
			sessions = binary.AppendVarint(sessions, end)
			sessions = binary.AppendUvarint(sessions, uint64(n))
			sessions = binary.AppendUvarint(sessions, sq)
			n++
		}
		store = append(store, d.BytesView()...)
		if err := d.End(); err != nil {
			return fmt.Errorf("session window aggregate: key group part %d: %w", i, err)
		}
	}
	snap := aggop.AppendClock(sessionStateVersion, operator.NoWatermark, row.Null, dropped)
	snap = binary.AppendUvarint(snap, seq)
	snap = binary.AppendUvarint(snap, uint64(n))
	snap = append(snap, sessions...)
	snap = aggop.AppendStoreHead(snap, n)
	snap = append(snap, store...)
	return g.Restore(snap)
}

// SnapshotShared implements operator.SharedState: the clock (the
// watermark and the time attribute's type).
func (g *SessionAgg) SnapshotShared() ([]byte, error) {
	return aggop.AppendClock(sessionStateVersion, g.wm, g.timeID, 0), nil
}

// RestoreShared implements operator.SharedState: the latest watermark
// of the parts (every worker saw the same ones) and the time type of a
// worker that saw a row.
func (g *SessionAgg) RestoreShared(parts [][]byte) error {
	wm, timeID, err := readSharedClock(parts, sessionStateVersion, "session window aggregate")
	if err != nil {
		return err
	}
	g.wm, g.timeID = wm, timeID
	return nil
}

var (
	_ operator.KeyGrouped  = (*SessionAgg)(nil)
	_ operator.SharedState = (*SessionAgg)(nil)
)
