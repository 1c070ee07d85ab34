package aggop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Expand is the first half of GROUPING SETS, ROLLUP and CUBE (Flink's
// Expand): each input change becomes one change per grouping set, of the
// same kind, with the group key columns the set leaves out set to NULL
// and a last BIGINT column, the set's id, which a group aggregate then
// takes as one more key. It keeps no state.
type Expand struct {
	keys []int    // the group key columns
	sets [][]bool // per set: whether it keeps each key
	ids  []int64  // per set: its id
}

// NewExpand builds the operator: keys are the key columns, sets say for
// each grouping set which of them it keeps, ids are the sets' ids.
func NewExpand(keys []int, sets [][]bool, ids []int64) (*Expand, error) {
	if len(sets) == 0 || len(sets) != len(ids) {
		return nil, fmt.Errorf("expand: %d grouping sets and %d ids", len(sets), len(ids))
	}
	for _, s := range sets {
		if len(s) != len(keys) {
			return nil, fmt.Errorf("expand: a grouping set of %d keys, want %d", len(s), len(keys))
		}
	}
	return &Expand{keys: keys, sets: sets, ids: ids}, nil
}

// Process emits each change once per grouping set.
func (e *Expand) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("expand", in, out, func(_ int, c *row.Change) error {
		for s, keep := range e.sets {
			r := make(row.Row, len(c.Row)+1)
			copy(r, c.Row)
			for i, k := range e.keys {
				if !keep[i] {
					r[k] = row.NullValue
				}
			}
			r[len(c.Row)] = row.BigIntValue(e.ids[s])
			out.Emit(c.Kind, r)
		}
		return nil
	})
}

func (e *Expand) Watermark(int64, operator.Emitter) error { return nil }
func (e *Expand) Finish(operator.Emitter) error           { return nil }

var _ operator.Operator = (*Expand)(nil)
