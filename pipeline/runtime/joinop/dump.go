package joinop

import (
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What `etld state dump` lists of the joins' state
// (operator.StateDumper).

// DumpState lists each side's rows: table "left" with the left input's
// columns, "right" with the right's, each row with its copies ($count)
// and its rows matched on the other side ($matches, kept for an outer
// side); a NOT IN's left rows with a NULL key are table "left nulls".
func (j *Join) DumpState(d *operator.StateDump) error {
	tables := []struct {
		name string
		side *joinSide
		in   int
	}{{"left", j.sides[0], 0}, {"right", j.sides[1], 1}, {"left nulls", j.leftNulls, 0}}
	for _, t := range tables {
		if t.side == j.leftNulls && t.side.size == 0 {
			continue
		}
		cols := slices.Concat(d.In[t.in].Fields, []row.Field{operator.CountColumn, operator.MatchesColumn})
		if err := d.Table(t.name, row.NewSchema(cols...)); err != nil {
			return err
		}
		for _, ref := range t.side.eachRow {
			count, assoc := t.side.counts(ref)
			r := append(t.side.row(ref), row.BigIntValue(int64(count)), row.BigIntValue(int64(assoc)))
			if err := d.Row(r); err != nil {
				return err
			}
		}
	}
	return nil
}

var _ operator.StateDumper = (*Join)(nil)
