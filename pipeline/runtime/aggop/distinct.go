package aggop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Distinct is SELECT DISTINCT over all columns of an insert-only input:
// the first occurrence of a row is emitted as +I, later ones are dropped.
// Each +I is final when it is emitted, so the same operator serves the
// streaming and the batch mode (where Flink emits the same rows at the
// end). DISTINCT over an updating input is a GroupAgg over all columns
// with no aggregates instead: it must delete a row when its last copy is
// retracted.
type Distinct struct {
	operator.ColumnWidening                 // a restore retags saved values of widened columns, by column (operator.ColumnWidener): a key holds every input column in order
	seen                    *state.KeyTable // each row's key encoding, off the Go heap; ids 0..n-1, never removed without a TTL
	kbuf                    []byte
	cols                    []int
	// With a state TTL (distinct_ttl.go) rows expire: ttl orders their
	// ids by last write, and free holds the ids of expired ones.
	ttl  state.TTLList
	free []int32
	ids  int32
	operator.Expiry
}

// NewDistinct builds the operator.
func NewDistinct() *Distinct {
	d := &Distinct{seen: state.NewOffHeapKeyTable()}
	d.InitExpiry(d.ttl.Set, d.ttl.Tick, d.sweep)
	return d
}

// Rows is the number of distinct rows seen.
func (d *Distinct) Rows() int { return d.seen.Len() }

// StateEntries implements StateSizer: the distinct rows seen.
func (d *Distinct) StateEntries() int64 { return int64(d.seen.Len()) }

// StateBytes implements StateMemory: the key table's memory.
func (d *Distinct) StateBytes() int64 { return d.seen.MemBytes() + int64(cap(d.free))*4 }

// Process emits the first copy of each row. With a TTL a repeated row
// refreshes its time, as Flink's GroupAggFunction writes its state for
// every row.
func (d *Distinct) Process(in *row.Batch, out operator.Emitter) error {
	defer d.Begin(len(in.Changes))()
	return operator.EachChange("select distinct", in, out, func(_ int, c *row.Change) error {
		if c.Kind != row.Insert {
			return fmt.Errorf("input planned as insert-only carries a %s change", c.Kind)
		}
		for len(d.cols) < len(c.Row) {
			d.cols = append(d.cols, len(d.cols))
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], c.Row, d.cols[:len(c.Row)])
		if id, ok := d.seen.Find(d.kbuf); ok && !d.expireAt(id) {
			d.ttl.Touch(id)
			return nil
		}
		d.ttl.Touch(d.insert(d.kbuf))
		// The input row is immutable: pass it on as it is.
		out.Emit(row.Insert, c.Row)
		return nil
	})
}

func (d *Distinct) Watermark(int64, operator.Emitter) error { return nil }
func (d *Distinct) Finish(operator.Emitter) error           { return nil }

const DistinctStateVersion = 1

// Snapshot encodes the rows seen: a version byte, their count, then each
// row's key encoding (row.AppendString's layout), in the order first seen.
func (d *Distinct) Snapshot() ([]byte, error) {
	if d.ttl.On() {
		return d.snapshotTTL(), nil
	}
	n := d.seen.Len()
	size := 16
	for id := range n {
		size += len(d.seen.Bytes(int32(id))) + 2
	}
	buf := make([]byte, 0, size)
	buf = append(buf, DistinctStateVersion)
	buf = binary.AppendUvarint(buf, uint64(n))
	for id := range n {
		k := d.seen.Bytes(int32(id))
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
	}
	return buf, nil
}

// Restore replaces the rows seen with a snapshot's.
func (d *Distinct) Restore(snap []byte) error {
	dec := d.Decoder(snap)
	v := dec.Byte()
	if v != DistinctStateVersion && v != distinctTTLStateVersion {
		return fmt.Errorf("select distinct: state version %d, want %d or %d", v, DistinctStateVersion, distinctTTLStateVersion)
	}
	d.resetTTL()
	n := dec.Count(1)
	seen := state.NewOffHeapKeyTable()
	seen.Reset(n)
	for i := range n {
		k := dec.KeyBytes()
		at := int64(0)
		if v == distinctTTLStateVersion {
			at = dec.Varint()
		}
		if dec.Err() != nil {
			break
		}
		if _, dup := seen.Find(k); dup {
			dec.Fail("row %d repeats a key", i)
			break
		}
		seen.Insert(k, int32(i))
		d.restoredAt(int32(i), at, v == distinctTTLStateVersion)
	}
	if err := dec.End(); err != nil {
		return fmt.Errorf("select distinct: restore: %w", err)
	}
	d.seen.Release()
	d.seen, d.ids, d.free = seen, int32(n), nil
	return nil
}

var (
	_ operator.Operator    = (*Distinct)(nil)
	_ operator.Snapshotter = (*Distinct)(nil)
)

var _ operator.StateSizer = (*Distinct)(nil)
