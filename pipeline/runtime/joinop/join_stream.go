package joinop

import (
	"encoding/binary"
	"io"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// pieceBytes is the size of the pieces a streamed snapshot is written in:
// a join's state may be larger than a second copy of it may take.
const pieceBytes = 256 << 10

// SnapshotTo implements operator.StreamSnapshotter: the version and
// whether a batch join settled, each side's entries (row in AppendRow's
// encoding, count, association count, and its time with a TTL), the
// NOT IN counts, then a batch join's held left changes; written to w in
// pieces of about pieceBytes.
func (j *Join) SnapshotTo(w io.Writer) error {
	buf := make([]byte, 0, pieceBytes+pieceBytes/4)
	var err error
	flush := func(force bool) {
		if err == nil && (force || len(buf) >= pieceBytes) {
			_, err = w.Write(buf)
			buf = buf[:0]
		}
	}
	buf = append(buf, j.stateVersion())
	if j.settled {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	for side, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		if side == 1 && j.direct {
			// The right rows are the probe table's alone.
			buf = binary.AppendUvarint(buf, uint64(j.hash.recs))
			for r, count := range j.hash.each {
				buf = row.AppendRow(buf, r)
				buf = binary.AppendUvarint(buf, uint64(count))
				buf = binary.AppendUvarint(buf, 0) // no match count: no right row is outer
				if flush(false); err != nil {
					return err
				}
			}
			continue
		}
		buf = binary.AppendUvarint(buf, uint64(s.size))
		for _, rid := range s.eachRow {
			count, assoc := s.counts(rid)
			buf = s.appendRow(buf, rid)
			buf = binary.AppendUvarint(buf, uint64(count))
			buf = binary.AppendUvarint(buf, uint64(assoc))
			buf = s.appendTime(buf, rid)
			if flush(false); err != nil {
				return err
			}
		}
	}
	buf = binary.AppendVarint(buf, j.rightRows)
	buf = binary.AppendVarint(buf, j.rightNulls)
	for _, cs := range [][]row.Change{j.held, j.nullRight} {
		buf = binary.AppendUvarint(buf, uint64(len(cs)))
		for _, c := range cs {
			buf = append(buf, byte(c.Kind))
			buf = row.AppendRow(buf, c.Row)
			if flush(false); err != nil {
				return err
			}
		}
	}
	flush(true)
	return err
}

// RestoreFrom implements operator.StreamSnapshotter, decoding the
// snapshot as it is read.
func (j *Join) RestoreFrom(r io.Reader, size int64) error {
	return j.restore(row.NewStreamDecoder(r, size))
}

var _ operator.StreamSnapshotter = (*Join)(nil)
