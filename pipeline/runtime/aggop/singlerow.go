package aggop

import (
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// ErrMoreThanOneRow is SingleRow's error: Flink's SINGLE_VALUE
// aggregate fails the job with "SingleValueAggFunction received more
// than one element." when a scalar subquery's result has a second row.
var ErrMoreThanOneRow = errors.New("a scalar subquery returned more than one row (Flink: SingleValueAggFunction received more than one element)")

// SingleRow passes its input on while it holds at most one row: the
// result of a scalar subquery that is not one by its form (not a global
// aggregate). Its state is the number of rows it holds: an insert or
// update-after adds one, a retraction takes one away, and a second row
// is an error, as Flink's SINGLE_VALUE aggregate counts with retractions.
type SingleRow struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	rows              int64
}

// NewSingleRow builds the operator.
func NewSingleRow() *SingleRow { return &SingleRow{} }

// Process passes each change on, or fails at a second row.
func (s *SingleRow) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("scalar subquery", in, out, func(_ int, c *row.Change) error {
		if c.Kind == row.UpdateBefore || c.Kind == row.Delete {
			s.rows--
		} else if s.rows++; s.rows > 1 {
			return ErrMoreThanOneRow
		}
		out.Emit(c.Kind, c.Row)
		return nil
	})
}

func (s *SingleRow) Watermark(int64, operator.Emitter) error { return nil }
func (s *SingleRow) Finish(operator.Emitter) error           { return nil }

const singleRowStateVersion = 1

// Snapshot encodes a version byte and the row count.
func (s *SingleRow) Snapshot() ([]byte, error) {
	return row.AppendValue([]byte{singleRowStateVersion}, row.BigIntValue(s.rows)), nil
}

// Restore takes the row count of a snapshot.
func (s *SingleRow) Restore(snap []byte) error {
	dec := row.NewDecoder(snap)
	if v := dec.Byte(); v != singleRowStateVersion {
		return fmt.Errorf("scalar subquery: state version %d, want %d", v, singleRowStateVersion)
	}
	rows := dec.Value().Int64()
	if err := dec.End(); err != nil {
		return fmt.Errorf("scalar subquery: restore: %w", err)
	}
	s.rows = rows
	return nil
}

var (
	_ operator.Operator    = (*SingleRow)(nil)
	_ operator.Snapshotter = (*SingleRow)(nil)
)
