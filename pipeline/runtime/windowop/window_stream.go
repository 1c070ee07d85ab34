package windowop

import (
	"encoding/binary"
	"io"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// pieceBytes is the size of the pieces a streamed snapshot is written
// in: a window aggregate over many keys holds a state larger than a
// second copy of it may take.
const pieceBytes = 256 << 10

// SnapshotTo implements operator.StreamSnapshotter: the clock, the
// windows to fire, each slice's end and group ids, the CUMULATE cycles,
// then the accumulators (aggop.Store's encoding); written to w in pieces
// of about pieceBytes.
func (g *WindowAgg) SnapshotTo(w io.Writer) error {
	buf := aggop.AppendClock(windowStateVersion, g.wm, g.timeID, g.dropped)
	var err error
	flush := func() {
		if err == nil && len(buf) >= pieceBytes {
			_, err = w.Write(buf)
			buf = buf[:0]
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(g.pending)))
	for _, e := range g.pending {
		buf = binary.AppendVarint(buf, e)
	}
	ends := make([]int64, 0, len(g.slices))
	for e := range g.slices {
		ends = append(ends, e)
	}
	slices.Sort(ends)
	buf = binary.AppendUvarint(buf, uint64(len(ends)))
	for _, e := range ends {
		buf = binary.AppendVarint(buf, e)
		buf = appendIDs(buf, g.slices[e].order)
		flush()
	}
	buf = binary.AppendUvarint(buf, uint64(len(g.cycles)))
	for _, c := range g.cycles {
		buf = binary.AppendVarint(buf, c.start)
		buf = binary.AppendVarint(buf, c.next)
		buf = appendIDs(buf, c.shared.order)
		flush()
	}
	if err != nil {
		return err
	}
	_, err = g.st.WriteState(w, buf, g.slotKey)
	return err
}

// RestoreFrom implements operator.StreamSnapshotter, decoding the
// snapshot as it is read.
func (g *WindowAgg) RestoreFrom(r io.Reader, size int64) error {
	return g.restore(row.NewStreamDecoder(r, size))
}

// SnapshotTo implements operator.StreamSnapshotter: the clock, the
// session counter, then each session (start, end, seq, key) with its
// rows; written to w in pieces of about pieceBytes.
func (t *SessionTable) SnapshotTo(w io.Writer) error {
	buf := aggop.AppendClock(sessionTableStateVersion, t.wm, t.timeID, t.dropped)
	buf = binary.AppendUvarint(buf, t.set.seq)
	all := t.set.sessions()
	buf = binary.AppendUvarint(buf, uint64(len(all)))
	for _, s := range all {
		buf = binary.AppendVarint(buf, s.start)
		buf = binary.AppendVarint(buf, s.end)
		buf = binary.AppendUvarint(buf, s.seq)
		buf = row.AppendString(buf, string(t.set.key(s)))
		rows := t.Held[s.id]
		buf = binary.AppendUvarint(buf, uint64(len(rows)))
		for _, r := range rows {
			buf = row.AppendRow(buf, r)
			if len(buf) >= pieceBytes {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// RestoreFrom implements operator.StreamSnapshotter, decoding the
// snapshot as it is read.
func (t *SessionTable) RestoreFrom(r io.Reader, size int64) error {
	return t.restore(row.NewStreamDecoder(r, size))
}

var (
	_ operator.StreamSnapshotter = (*WindowAgg)(nil)
	_ operator.StreamSnapshotter = (*SessionTable)(nil)
)
