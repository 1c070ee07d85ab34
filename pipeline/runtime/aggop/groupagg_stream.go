package aggop

import (
	"encoding/binary"
	"io"

	"github.com/etld/etld/pipeline/row"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// Streamed snapshots (operator.StreamSnapshotter): the bytes Snapshot
// returns, written in pieces of about stateFlushBytes, so that a
// checkpoint of millions of groups holds one piece at a time beside the
// state, not a second copy of it.

// stateFlushBytes is the size of the pieces WriteState hands on.
const stateFlushBytes = 256 << 10

// WriteState writes AppendState's encoding to w in pieces.
func (s *Store) WriteState(w io.Writer, buf []byte, key func(id int32) []byte) ([]byte, error) {
	flush := func(b []byte) ([]byte, error) {
		_, err := w.Write(b)
		return b[:0], err
	}
	buf, err := s.appendState(buf, key, flush)
	if err != nil {
		return buf, err
	}
	return flush(buf)
}

// SnapshotTo implements operator.StreamSnapshotter: Snapshot's bytes,
// written to w in pieces.
func (g *GroupAgg) SnapshotTo(w io.Writer) error {
	v := byte(GroupAggStateVersion)
	if g.ttl.On() {
		v = groupAggTTLStateVersion
	}
	buf := make([]byte, 0, stateFlushBytes+stateFlushBytes/4)
	buf = append(buf, v)
	buf = binary.AppendVarint(buf, g.dropped)
	buf, err := g.store.WriteState(w, buf, g.slotKey)
	if err == nil {
		err = g.keyErr
	}
	if err != nil {
		return err
	}
	if !g.ttl.On() {
		return nil
	}
	// appendTTL's layout, in pieces.
	buf = binary.AppendUvarint(buf, uint64(g.ttl.N))
	g.ttl.Each(func(id int32, at int64) {
		if err != nil {
			return
		}
		buf = binary.AppendUvarint(buf, uint64(id))
		buf = binary.AppendVarint(buf, at)
		if len(buf) >= stateFlushBytes {
			_, err = w.Write(buf)
			buf = buf[:0]
		}
	})
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// RestoreFrom implements operator.StreamSnapshotter, decoding the
// snapshot as it is read.
func (g *GroupAgg) RestoreFrom(r io.Reader, size int64) error {
	return g.restore(row.NewStreamDecoder(r, size))
}

// slotKey is a slot's group key in row.KeyOf's encoding, a view valid
// until the next call or change of the index; empty, perhaps nil, for a
// free slot and for the key of no columns (hasKey tells them apart).
// Lazy keys (groupagg_lazy.go) are encoded from lazyKeys, the bytes the
// index would hold: a snapshot leaves the lazy mode on.
func (g *GroupAgg) slotKey(id int32) []byte {
	if !g.hasKey(id) {
		return nil
	}
	if g.lazy {
		g.cbuf = row.AppendKey(g.cbuf[:0], g.ints.value(g.lazyKeys[id]))
		return g.cbuf
	}
	return g.canonical(id)
}

// hasKey reports whether slot id holds a group.
func (g *GroupAgg) hasKey(id int32) bool {
	if g.lazy {
		return int(id) < len(g.lazyKeys)
	}
	return g.index.Has(id)
}

var _ operator.StreamSnapshotter = (*GroupAgg)(nil)
