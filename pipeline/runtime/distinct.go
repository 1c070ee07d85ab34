package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// Distinct is SELECT DISTINCT over all columns of an insert-only input:
// the first occurrence of a row is emitted as +I, later ones are dropped.
// Each +I is final when it is emitted, so the same operator serves the
// streaming and the batch mode (where Flink emits the same rows at the
// end). DISTINCT over an updating input is a GroupAgg over all columns
// with no aggregates instead: it must delete a row when its last copy is
// retracted.
type Distinct struct {
	seen *keyTable // each row's key encoding, off the Go heap; ids 0..n-1, never removed without a TTL
	kbuf []byte
	cols []int
	// With a state TTL (distinct_ttl.go) rows expire: ttl orders their
	// ids by last write, and free holds the ids of expired ones.
	ttl  ttlList
	free []int32
	ids  int32
}

// NewDistinct builds the operator.
func NewDistinct() *Distinct { return &Distinct{seen: newOffHeapKeyTable()} }

// Process with a TTL also refreshes a repeated row's time, as Flink's
// GroupAggFunction writes its state for every row.

// Rows is the number of distinct rows seen.
func (d *Distinct) Rows() int { return d.seen.len() }

// StateEntries implements StateSizer: the distinct rows seen.
func (d *Distinct) StateEntries() int64 { return int64(d.seen.len()) }

func (d *Distinct) Process(in *row.Batch, out Emitter) error {
	if d.ttl.on() {
		d.ttl.tick()
		defer d.sweep(sweepBudget(len(in.Changes)))
	}
	tr := trackerOf(in, out)
	for i := range in.Changes {
		c := &in.Changes[i]
		if c.Kind != row.Insert {
			return fmt.Errorf("select distinct: change %d: input planned as insert-only carries a %s change", i, c.Kind)
		}
		for len(d.cols) < len(c.Row) {
			d.cols = append(d.cols, len(d.cols))
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], c.Row, d.cols[:len(c.Row)])
		if id, ok := d.seen.find(d.kbuf); ok && !d.expireAt(id) {
			d.ttl.touch(id)
			continue
		}
		d.ttl.touch(d.insert(d.kbuf))
		if tr != nil {
			tr.at(i)
		}
		// The input row is immutable: pass it on as it is.
		out.Emit(row.Insert, c.Row)
	}
	return nil
}

func (d *Distinct) Watermark(int64, Emitter) error { return nil }
func (d *Distinct) Finish(Emitter) error           { return nil }

const distinctStateVersion = 1

// Snapshot encodes the rows seen: a version byte, their count, then each
// row's key encoding (row.AppendString's layout), in the order first seen.
func (d *Distinct) Snapshot() ([]byte, error) {
	if d.ttl.on() {
		return d.snapshotTTL(), nil
	}
	n := d.seen.len()
	size := 16
	for id := range n {
		size += len(d.seen.bytes(int32(id))) + 2
	}
	buf := make([]byte, 0, size)
	buf = append(buf, distinctStateVersion)
	buf = binary.AppendUvarint(buf, uint64(n))
	for id := range n {
		k := d.seen.bytes(int32(id))
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
	}
	return buf, nil
}

// Restore replaces the rows seen with a snapshot's.
func (d *Distinct) Restore(state []byte) error {
	dec := row.NewDecoder(state)
	v := dec.Byte()
	if v != distinctStateVersion && v != distinctTTLStateVersion {
		return fmt.Errorf("select distinct: state version %d, want %d or %d", v, distinctStateVersion, distinctTTLStateVersion)
	}
	d.resetTTL()
	n := dec.Count(1)
	seen := newOffHeapKeyTable()
	seen.reset(n)
	for i := range n {
		k := []byte(dec.Str())
		at := int64(0)
		if v == distinctTTLStateVersion {
			at = dec.Varint()
		}
		if dec.Err() != nil {
			break
		}
		if _, dup := seen.find(k); dup {
			dec.Fail("row %d repeats a key", i)
			break
		}
		seen.insert(k, int32(i))
		d.restoredAt(int32(i), at, v == distinctTTLStateVersion)
	}
	if err := dec.End(); err != nil {
		return fmt.Errorf("select distinct: restore: %w", err)
	}
	d.seen.release()
	d.seen, d.ids, d.free = seen, int32(n), nil
	return nil
}

var (
	_ Operator    = (*Distinct)(nil)
	_ Snapshotter = (*Distinct)(nil)
)
