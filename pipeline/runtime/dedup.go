package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// DedupSpec is a deduplication: ROW_NUMBER() OVER (PARTITION BY Key
// ORDER BY a time attribute) = 1 with the rank number not selected.
type DedupSpec struct {
	Key []int
	// TimeCol is the ORDER BY column; RowTime says it is an event-time
	// attribute (compared by value), else processing time (arrival order).
	TimeCol int
	RowTime bool
	// KeepLast: ORDER BY ... DESC keeps the last row, ASC the first.
	KeepLast bool
	// Batch: emit each key's kept row as +I at Finish.
	Batch bool
}

// Dedup keeps one row per key of an insert-only input, with Flink's
// changes (ProcTimeDeduplicateKeepFirstRowFunction, ...KeepLastRowFunction,
// RowTimeDeduplicateFunction):
//
//   - processing time, keep first: +I of a key's first row, later rows
//     dropped: insert-only;
//   - processing time, keep last: +I of the first row, then -U[kept]
//     +U[new] for every later one;
//   - event time: the first row +I; a later row replaces the kept one with
//     -U[kept] +U[new] when its time is earlier (keep first) or not
//     earlier (keep last). Rows are not dropped as late: a row arriving
//     after the watermark still competes by its time, as in Flink.
type Dedup struct {
	spec  DedupSpec
	kept  map[string]row.Row
	order []string // batch: keys in first-seen order
	kbuf  []byte
}

// NewDedup builds the operator.
func NewDedup(spec DedupSpec) *Dedup { return &Dedup{spec: spec, kept: map[string]row.Row{}} }

// StateEntries implements StateSizer: the keys seen.
func (d *Dedup) StateEntries() int64 { return int64(len(d.kept)) }

func (d *Dedup) Process(in *row.Batch, out Emitter) error {
	tr := trackerOf(in, out)
	for i := range in.Changes {
		c := &in.Changes[i]
		if c.Kind != row.Insert {
			return fmt.Errorf("deduplicate: change %d: input planned as insert-only carries a %s change", i, c.Kind)
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], c.Row, d.spec.Key)
		prev, seen := d.kept[string(d.kbuf)]
		if seen && !d.replaces(prev, c.Row) {
			continue
		}
		if !seen {
			k := string(d.kbuf)
			d.kept[k] = c.Row
			if d.spec.Batch {
				d.order = append(d.order, k)
			}
		} else {
			d.kept[string(d.kbuf)] = c.Row
		}
		if d.spec.Batch {
			continue
		}
		if tr != nil {
			tr.at(i)
		}
		if !seen {
			out.Emit(row.Insert, c.Row)
			continue
		}
		out.Emit(row.UpdateBefore, prev)
		out.Emit(row.UpdateAfter, c.Row)
	}
	return nil
}

// replaces reports whether next takes the place of the kept row prev.
func (d *Dedup) replaces(prev, next row.Row) bool {
	if !d.spec.RowTime {
		return d.spec.KeepLast
	}
	c := row.Compare(next[d.spec.TimeCol], prev[d.spec.TimeCol])
	if d.spec.KeepLast {
		return c >= 0
	}
	return c < 0
}

func (d *Dedup) Watermark(int64, Emitter) error { return nil }

// Finish emits a batch deduplication's rows.
func (d *Dedup) Finish(out Emitter) error {
	if !d.spec.Batch {
		return nil
	}
	for _, k := range d.order {
		out.Emit(row.Insert, d.kept[k])
	}
	return nil
}

const dedupStateVersion = 1

// Snapshot encodes the kept rows: a version byte, their count, the rows
// (in first-seen order in batch mode).
func (d *Dedup) Snapshot() ([]byte, error) {
	buf := []byte{dedupStateVersion}
	buf = binary.AppendUvarint(buf, uint64(len(d.kept)))
	if d.spec.Batch {
		for _, k := range d.order {
			buf = row.AppendRow(buf, d.kept[k])
		}
		return buf, nil
	}
	for _, r := range d.kept {
		buf = row.AppendRow(buf, r)
	}
	return buf, nil
}

// Restore replaces the kept rows with a snapshot's.
func (d *Dedup) Restore(state []byte) error {
	dec := row.NewDecoder(state)
	if v := dec.Byte(); v != dedupStateVersion {
		return fmt.Errorf("deduplicate: state version %d, want %d", v, dedupStateVersion)
	}
	n := dec.Count(1)
	kept := make(map[string]row.Row, n)
	var order []string
	for range n {
		r := dec.Row()
		if dec.Err() != nil {
			break
		}
		for _, k := range d.spec.Key {
			if k >= len(r) {
				dec.Fail("row of %d columns has no key column %d", len(r), k)
			}
		}
		if dec.Err() != nil {
			break
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], r, d.spec.Key)
		kept[string(d.kbuf)] = r
		order = append(order, string(d.kbuf))
	}
	if err := dec.End(); err != nil {
		return fmt.Errorf("deduplicate: restore: %w", err)
	}
	d.kept = kept
	if d.spec.Batch {
		d.order = order
	}
	return nil
}

var (
	_ Operator    = (*Dedup)(nil)
	_ Snapshotter = (*Dedup)(nil)
	_ StateSizer  = (*Dedup)(nil)
)
