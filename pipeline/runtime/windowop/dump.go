package windowop

import (
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What `etld state dump` lists of the window operators' state
// (operator.StateDumper).

// Columns of dumped window state, which no output names: where a slice
// of time ends (a TUMBLE window, a HOP slide, a CUMULATE step), on the
// windows' clock, and where a CUMULATE period starts.
var (
	SliceEndColumn   = row.Field{Name: "$slice_end", Type: row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}}
	CycleStartColumn = row.Field{Name: "$cycle_start", Type: row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}}
)

// DumpState lists the open slices of time: table "slices", a row per
// slice and key with the key's columns, the slice's end ($slice_end) and
// the slice's aggregate results, by end then key first seen; a HOP
// window fires the merge of its slices. A CUMULATE adds table
// "cumulated": per period ($cycle_start) and key, the results of the
// steps that fired already.
func (g *WindowAgg) DumpState(d *operator.StateDump) error {
	nk, na := len(g.keys), len(g.res)
	if d.Out.Len() < nk+na {
		return fmt.Errorf("window aggregate: %d output columns named for %d keys and %d aggregates", d.Out.Len(), nk, na)
	}
	keys, aggs := d.Out.Fields[:nk], d.Out.Fields[d.Out.Len()-na:]
	r := make(row.Row, nk+1+na)
	list := func(at int64, ids []int32) error {
		for _, id := range ids {
			if err := aggop.DecodeKey(r[:nk], g.st.Keys[id]); err != nil {
				return fmt.Errorf("window aggregate: %w", err)
			}
			r[nk] = row.TimestampValue(at)
			g.st.Results(id, r[nk+1:])
			if err := d.Row(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := d.Table("slices", row.NewSchema(slices.Concat(keys, []row.Field{SliceEndColumn}, aggs)...)); err != nil {
		return err
	}
	ends := make([]int64, 0, len(g.slices))
	for end := range g.slices {
		ends = append(ends, end)
	}
	slices.Sort(ends)
	for _, end := range ends {
		if err := list(end, g.slices[end].order); err != nil {
			return err
		}
	}
	if g.spec.Kind != Cumulate || g.opt.Attached {
		return nil
	}
	if err := d.Table("cumulated", row.NewSchema(slices.Concat(keys, []row.Field{CycleStartColumn}, aggs)...)); err != nil {
		return err
	}
	for _, c := range g.cycles {
		if err := list(c.start, c.shared.order); err != nil {
			return err
		}
	}
	return nil
}

var _ operator.StateDumper = (*WindowAgg)(nil)
