package windowop

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Flink's cleanup timers of an event-time OVER with a bounded RANGE frame
// (RowTimeRangeBoundedPrecedingFunction). Each row taken registers a
// cleanup timer at ts + 1.5 * the frame + 1 ms when the key's current one
// is before ts + the frame + 1 ms; the timer it replaces is not deleted.
// Every timer that fires moves the key's last triggering time, the bound
// under which a row is late (OverAgg.late), to its time; the current one
// clears the key's state instead, after which no row of it is late until
// it emits again. A partition keeps its last triggering time and current
// cleanup time, and the operator the timers still to fire, all in its
// snapshot.

// overCleanup is a cleanup timer of the partition with key key.
type overCleanup struct {
	at  int64
	key string
}

func (x *overCleanup) before(y *overCleanup) bool { return x.at < y.at }

// rangeCleanup reports whether the operator keeps Flink's cleanup timers:
// an event-time OVER with a bounded RANGE frame, in streaming mode.
func (g *OverAgg) rangeCleanup() bool {
	return !g.spec.Rows && !g.spec.ProcTime && g.spec.Preceding != Unbounded && !g.opt.Batch
}

// registerCleanup is Flink's registerCleanupTimer for a row of p (whose
// key is in g.kbuf) at ts; Flink computes in milliseconds.
func (g *OverAgg) registerCleanup(p *overPart, ts int64) {
	const ms = 1000
	off := g.spec.Preceding / ms
	minAt := ts + g.spec.Preceding + ms
	maxAt := ts + (off+off/2)*ms + ms // (long) (precedingOffset * 1.5)
	if p.cleanupSet && p.cleanupAt >= minAt {
		return
	}
	p.cleanupAt, p.cleanupSet = maxAt, true
	g.cleanups.Push(overCleanup{at: maxAt, key: string(g.kbuf)})
}

// fireCleanups fires the cleanup timers at or below wm, after the rows up
// to wm were emitted: a partition with none of its rows waiting (all of
// them are before its current cleanup time) is freed by its current
// timer, and a superseded one moves its last triggering time.
func (g *OverAgg) fireCleanups(wm int64) {
	for g.cleanups.Len() > 0 && g.cleanups.Top().at <= wm {
		c := g.cleanups.Pop()
		p := g.parts[c.key]
		if p == nil {
			continue
		}
		if p.cleanupSet && c.at >= p.cleanupAt && p.waiting == 0 {
			g.free(c.key, p)
			continue
		}
		p.lastTrig = max(p.lastTrig, c.at)
	}
}

// overCleanupVersions: a snapshot of a version-3 (4, with TTL) layout
// followed by the cleanup timers is version 5 (6).
const overCleanupShift = 2

// appendCleanup encodes each partition's last triggering and cleanup
// times (in slot order) and the timers to fire (by partition slot).
func (g *OverAgg) appendCleanup(buf []byte, parts []*overPart) []byte {
	for _, p := range parts {
		buf = binary.AppendVarint(buf, p.lastTrig)
		buf = append(buf, b2byte(p.cleanupSet))
		buf = binary.AppendVarint(buf, p.cleanupAt)
	}
	timers := slices.Clone(g.cleanups.Items())
	slices.SortFunc(timers, func(a, b overCleanup) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key, b.key)) })
	n := 0
	for _, c := range timers {
		if g.parts[c.key] != nil {
			n++
		}
	}
	buf = binary.AppendUvarint(buf, uint64(n))
	for _, c := range timers {
		if p := g.parts[c.key]; p != nil {
			buf = binary.AppendVarint(buf, c.at)
			buf = binary.AppendUvarint(buf, uint64(p.id))
		}
	}
	return buf
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// cleanupState is a snapshot's cleanup section, read before the
// partitions have their keys.
type cleanupState struct {
	timers []struct {
		at int64
		id int32
	}
}

// readCleanup reads the section appendCleanup wrote; parts are the
// partitions in slot order.
func readCleanup(d *row.Decoder, parts []*overPart) cleanupState {
	for _, p := range parts {
		p.lastTrig = d.Varint()
		p.cleanupSet = d.Byte() == 1
		p.cleanupAt = d.Varint()
	}
	var cs cleanupState
	for range d.Count(2) {
		cs.timers = append(cs.timers, struct {
			at int64
			id int32
		}{d.Varint(), int32(min(d.Uvarint(), 1<<31-1))})
	}
	return cs
}

// restoreCleanup gives the operator the timers of a snapshot, or, from a
// snapshot without them, each partition the time of its last emitted row
// as its last triggering time, the bound it had then.
func (g *OverAgg) restoreCleanup(cs *cleanupState, byID map[int32]*overPart) bool {
	g.cleanups = state.NewHeap((*overCleanup).before)
	if cs == nil {
		for _, p := range byID {
			if p.frame.n > 0 {
				p.lastTrig = p.frame.kept(p.frame.n - 1)[g.frameTime].Micros()
			}
		}
		return true
	}
	for _, t := range cs.timers {
		p := byID[t.id]
		if p == nil {
			return false
		}
		g.cleanups.Push(overCleanup{at: t.at, key: g.st.Keys[t.id]})
	}
	return true
}
