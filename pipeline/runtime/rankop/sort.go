package rankop

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Sort is a batch query's `ORDER BY keys` without a row count (Flink's
// batch Sort): it holds every input row and, at the end of the input,
// emits them all in the order of keys, rows of equal keys in arrival
// order (a stable sort, as Flink's batch sort keeps no other order
// either). Its memory is counted in StateBytes, so the pipeline's
// max_state_bytes bounds it: past the budget the run fails naming the
// sort; it does not spill to disk.
type Sort struct {
	operator.ColumnWidening // a restore retags saved values of widened columns
	keys                    []SortKey
	rows                    []row.Row
}

// NewSort returns the sort of a batch input by keys.
func NewSort(keys []SortKey) *Sort { return &Sort{keys: keys} }

// Process keeps the rows of in; a batch input carries inserts only.
func (s *Sort) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("sort", in, out, func(_ int, c *row.Change) error {
		if c.Kind != row.Insert {
			return fmt.Errorf("a batch input carries a %s change", c.Kind)
		}
		s.rows = append(s.rows, row.Detach(c.Row))
		return nil
	})
}

// Watermark does nothing: the rows wait for the end of the input.
func (s *Sort) Watermark(int64, operator.Emitter) error { return nil }

// Finish sorts the rows and emits them, freeing each as it goes.
func (s *Sort) Finish(out operator.Emitter) error {
	slices.SortStableFunc(s.rows, func(a, b row.Row) int { return CompareRows(s.keys, a, b) })
	for i, r := range s.rows {
		out.Emit(row.Insert, r)
		s.rows[i] = nil
	}
	s.rows = nil
	return nil
}

// StateEntries implements operator.StateSizer: the rows held.
func (s *Sort) StateEntries() int64 { return int64(len(s.rows)) }

// StateBytes implements operator.StateMemory: each row's values and its
// place in the slice (a floor: strings' bytes are not counted).
func (s *Sort) StateBytes() int64 {
	w := state.RowWidth(1, func(yield func(row.Row) bool) {
		if len(s.rows) > 0 {
			yield(s.rows[0])
		}
	})
	return int64(cap(s.rows))*24 + int64(len(s.rows))*state.RowBytes(w)
}

// sortStateVersion is the first byte of a Sort's snapshot.
const sortStateVersion = 1

// Snapshot encodes the rows held: the version, their count, the rows.
func (s *Sort) Snapshot() ([]byte, error) {
	buf := binary.AppendUvarint([]byte{sortStateVersion}, uint64(len(s.rows)))
	for _, r := range s.rows {
		buf = row.AppendRow(buf, r)
	}
	return buf, nil
}

// Restore replaces the rows held by those of a snapshot.
func (s *Sort) Restore(snap []byte) error {
	d := s.Decoder(snap)
	if v := d.Byte(); v != sortStateVersion {
		return fmt.Errorf("sort: state version %d, want %d", v, sortStateVersion)
	}
	n := d.Count(1)
	rows := make([]row.Row, 0, n)
	for range n {
		rows = append(rows, d.Row())
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("sort: %w", err)
	}
	s.rows = rows
	return nil
}

var (
	_ operator.Operator    = (*Sort)(nil)
	_ operator.StateMemory = (*Sort)(nil)
	_ operator.Snapshotter = (*Sort)(nil)
)
