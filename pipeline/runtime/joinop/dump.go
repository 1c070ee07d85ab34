package joinop

import (
	"cmp"
	"maps"
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
		if t.side == j.sides[1] && j.direct {
			for r, count := range j.hash.each {
				r := append(row.Detach(r), row.BigIntValue(int64(count)), row.BigIntValue(0))
				if err := d.Row(r); err != nil {
					return err
				}
			}
			continue
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

// EmittedColumn tells whether an interval join's cached row joined
// already (an outer side's row that never did is emitted padded when it
// leaves the cache).
var EmittedColumn = row.Field{Name: "$emitted", Type: row.Type{ID: row.Boolean, NotNull: true}}

// sideTables gives d each side's table, "left" and "right", of the
// input's columns and extra, then the rows rows yields for the side.
func sideTables(d *operator.StateDump, extra []row.Field, rows func(side int, emit func(row.Row) error) error) error {
	for side, name := range []string{"left", "right"} {
		if err := d.Table(name, row.NewSchema(slices.Concat(d.In[side].Fields, extra)...)); err != nil {
			return err
		}
		if err := rows(side, d.Row); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists each side's cached rows, "left" and "right", with
// whether each joined already ($emitted), by key then time.
func (j *IntervalJoin) DumpState(d *operator.StateDump) error {
	return sideTables(d, []row.Field{EmittedColumn}, func(side int, emit func(row.Row) error) error {
		ents := j.sides[side].ents
		for kid := range j.keys {
			if !j.keys[kid].used {
				continue
			}
			rids := slices.Collect(j.rows(int32(kid), side))
			slices.SortStableFunc(rids, func(a, b int32) int { return cmp.Compare(ents[a].at, ents[b].at) })
			for _, rid := range rids {
				r := append(j.sides[side].store.Row(rid), row.BoolValue(ents[rid].emitted))
				if err := emit(r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// KindColumn is the kind of a change a temporal join holds: a probe
// change waiting for the watermark, a version of the versioned table.
var KindColumn = row.Field{Name: "$kind", Type: row.Type{ID: row.String, NotNull: true}}

// DumpState lists the probe changes waiting for the watermark ("left")
// and the versions kept ("right", by time), each with its kind ($kind),
// by key.
func (j *TemporalJoin) DumpState(d *operator.StateDump) error {
	keys := slices.Sorted(maps.Keys(j.Keys))
	return sideTables(d, []row.Field{KindColumn}, func(side int, emit func(row.Row) error) error {
		for _, k := range keys {
			s := j.Keys[k]
			if side == 0 {
				for _, l := range s.Left {
					if err := emit(append(slices.Clone(l.Row), row.StringValue(l.kind.String()))); err != nil {
						return err
					}
				}
				continue
			}
			for _, v := range s.Versions {
				if err := emit(append(slices.Clone(v.Row), row.StringValue(v.kind.String()))); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// DumpState lists the rows waiting in the open windows, each side's
// ("left", "right") with its window's columns, by window then key first
// seen.
func (j *WindowJoin) DumpState(d *operator.StateDump) error {
	ws := slices.SortedFunc(maps.Keys(j.Windows), compareWindows)
	return sideTables(d, nil, func(side int, emit func(row.Row) error) error {
		for _, w := range ws {
			b := j.Windows[w]
			for _, k := range b.order {
				for _, r := range b.Keys[k].Rows[side] {
					if err := emit(r); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

var (
	_ operator.StateDumper = (*Join)(nil)
	_ operator.StateDumper = (*IntervalJoin)(nil)
	_ operator.StateDumper = (*TemporalJoin)(nil)
	_ operator.StateDumper = (*WindowJoin)(nil)
)
