package rankop

import (
	"maps"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What `etld state dump` lists of the ranking operators' state
// (operator.StateDumper).

// RankColumn is a Top-N row's rank in its partition, in a dump: rows
// past the range are held too (a retracting Top-N keeps every row).
var RankColumn = row.Field{Name: "$rank", Type: row.Type{ID: row.BigInt, NotNull: true}}

// DumpState lists the kept row of each key, the input's columns; a key
// of an event-time keep-first deduplication that already emitted its
// row keeps no row and is not listed.
func (d *Dedup) DumpState(dump *operator.StateDump) error {
	if err := dump.Table("", dump.In[0]); err != nil {
		return err
	}
	for _, id := range d.ids() {
		if !d.kept.Has(id) {
			continue
		}
		if err := dump.Row(d.kept.Row(id)); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists the rows of each partition in rank order, the input's
// columns and the row's rank ($rank).
func (t *TopN) DumpState(dump *operator.StateDump) error {
	if err := dump.Table("", withRank(dump.In[0])); err != nil {
		return err
	}
	for _, id := range t.liveIDs() {
		if err := dumpRanked(&t.spec, t.groupsOf(id, true), dump); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists the rows of each partition in rank order, the input's
// columns and the row's rank ($rank); partitions by key.
func (t *UpdatableTopN) DumpState(dump *operator.StateDump) error {
	if err := dump.Table("", withRank(dump.In[0])); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(t.parts)) {
		p := t.parts[k]
		groups := make([][]row.Row, len(p.groups))
		for i, g := range p.groups {
			for _, key := range g {
				groups[i] = append(groups[i], p.rows[key])
			}
		}
		if err := dumpRanked(&t.spec, groups, dump); err != nil {
			return err
		}
	}
	return nil
}

func withRank(s row.Schema) row.Schema {
	return row.NewSchema(append(slices.Clone(s.Fields), RankColumn)...)
}

// dumpRanked gives dump a partition's rows, groups of equal sort keys in
// order, each with its rank as Finish numbers them.
func dumpRanked(spec *RankSpec, groups [][]row.Row, dump *operator.StateDump) error {
	var n, rank, dense int64
	out := row.Row{}
	for _, g := range groups {
		dense++
		for i, r := range g {
			n++
			switch spec.Kind {
			case RowNumber:
				rank = n
			case Rank:
				if i == 0 {
					rank = n
				}
			case DenseRank:
				rank = dense
			}
			out = append(append(out[:0], r...), row.BigIntValue(rank))
			if err := dump.Row(out); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	_ operator.StateDumper = (*Dedup)(nil)
	_ operator.StateDumper = (*TopN)(nil)
	_ operator.StateDumper = (*UpdatableTopN)(nil)
)
