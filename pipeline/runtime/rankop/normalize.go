package rankop

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Normalize turns an upsert changelog into a full one, as Flink's
// ChangelogNormalize does for an upsert source: it keeps the last row of
// every key and
//
//   - for +I or +U of a key it has no row for, emits +I; for one it has,
//     emits -U[kept] +U[new], or nothing when the new row equals the kept
//     one (a source that repeats a row after a restore, or an update that
//     changed columns nobody reads);
//   - for -D (or -U) of a key it has a row for, emits -D[kept] and forgets
//     the key; of a key it has none for, nothing.
//
// A -D may carry the key alone, its other columns NULL (a PostgreSQL
// delete under the default replica identity): what leaves is the kept
// row, whole, so that an aggregate downstream retracts what it added.
type Normalize struct {
	operator.ColumnWidening // a restore retags saved values of widened columns, by column (operator.ColumnWidener)
	key                     []int
	keys                    *state.KeyIDs
	kept                    state.RowStore
	kbuf                    []byte
	rbuf                    []byte
	fbuf                    []byte
	top                     int32 // one past the largest id handed out
}

// NewNormalize builds the operator for rows keyed by the columns key.
func NewNormalize(key []int) *Normalize {
	return &Normalize{key: key, keys: state.NewKeyIDs()}
}

// StateEntries implements StateSizer: the keys with a row.
func (n *Normalize) StateEntries() int64 { return int64(n.keys.Len()) }

// StateBytes implements StateMemory.
func (n *Normalize) StateBytes() int64 { return n.keys.MemBytes() + n.kept.MemBytes() }

func (n *Normalize) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("changelog normalize", in, out, func(_ int, c *row.Change) error {
		n.kbuf = row.KeyOf(n.kbuf[:0], c.Row, n.key)
		id, seen := n.keys.Find(n.kbuf)
		switch c.Kind {
		case row.Insert, row.UpdateAfter:
			if !seen {
				id = n.add()
				n.kept.Put(id, c.Row)
				out.Emit(row.Insert, c.Row)
				return nil
			}
			n.rbuf = row.AppendRow(n.rbuf[:0], c.Row)
			if bytes.Equal(n.rbuf, n.kept.Bytes(id)) {
				return nil
			}
			prev := n.kept.Row(id)
			n.kept.Put(id, c.Row)
			out.Emit(row.UpdateBefore, prev)
			out.Emit(row.UpdateAfter, c.Row)
		default: // -D, -U
			if !seen {
				return nil
			}
			prev := n.kept.Row(id)
			n.fbuf = append(n.fbuf[:0], n.kbuf...)
			n.keys.Drop(n.fbuf)
			n.kept.Remove(id)
			out.Emit(row.Delete, prev)
		}
		return nil
	})
}

// add gives the key in n.kbuf an id.
func (n *Normalize) add() int32 {
	id, _ := n.keys.Add(n.kbuf)
	n.top = max(n.top, id+1)
	return id
}

// Watermark has nothing to do: the operator emits as rows arrive.
func (n *Normalize) Watermark(int64, operator.Emitter) error { return nil }

// Finish has nothing to do: every change was emitted as it came.
func (n *Normalize) Finish(operator.Emitter) error { return nil }

// DumpState lists the row kept per key (the input's columns).
func (n *Normalize) DumpState(dump *operator.StateDump) error {
	if err := dump.Table("", dump.In[0]); err != nil {
		return err
	}
	for id := range n.top {
		if !n.kept.Has(id) {
			continue
		}
		if err := dump.Row(n.kept.Row(id)); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeStateVersion is the first byte of a snapshot.
const NormalizeStateVersion = 1

// Snapshot encodes the state: a version byte, the count of rows, then
// the kept rows (AppendRow's encoding); the keys follow from the rows.
func (n *Normalize) Snapshot() ([]byte, error) {
	buf := []byte{NormalizeStateVersion}
	buf = binary.AppendUvarint(buf, uint64(n.kept.Len()))
	for id := range n.top {
		if n.kept.Has(id) {
			buf = append(buf, n.kept.Bytes(id)...)
		}
	}
	return buf, nil
}

// Restore replaces the state with a snapshot's.
func (n *Normalize) Restore(snap []byte) error {
	dec := n.Decoder(snap)
	if v := dec.Byte(); v != NormalizeStateVersion && dec.Err() == nil {
		return fmt.Errorf("changelog normalize: state version %d, want %d", v, NormalizeStateVersion)
	}
	r := NewNormalize(n.key)
	for range dec.Count(1) {
		kr := dec.Row()
		if dec.Err() != nil {
			break
		}
		for _, k := range n.key {
			if k >= len(kr) {
				dec.Fail("row of %d columns has no key column %d", len(kr), k)
			}
		}
		if dec.Err() != nil {
			break
		}
		r.kbuf = row.KeyOf(r.kbuf[:0], kr, n.key)
		if _, dup := r.keys.Find(r.kbuf); dup {
			dec.Fail("key of row %v twice", kr)
			break
		}
		r.kept.Put(r.add(), kr)
	}
	if err := dec.End(); err != nil {
		return fmt.Errorf("changelog normalize: restore: %w", err)
	}
	r.ColumnWidening = n.ColumnWidening
	*n = *r
	return nil
}

var (
	_ operator.Operator    = (*Normalize)(nil)
	_ operator.Snapshotter = (*Normalize)(nil)
	_ operator.StateMemory = (*Normalize)(nil)
	_ operator.StateDumper = (*Normalize)(nil)
)
