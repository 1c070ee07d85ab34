package matchop

import (
	"maps"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What `etld state dump` lists of MATCH_RECOGNIZE's state
// (operator.StateDumper).

// Columns of a dumped match's rows: the match's number in its partition
// (its first row's arrival), the pattern variable the row is mapped to,
// and whether the match is complete (held until no earlier-started
// partial match is open).
var (
	MatchColumn    = row.Field{Name: "$match", Type: row.Type{ID: row.BigInt, NotNull: true}}
	VariableColumn = row.Field{Name: "$variable", Type: row.Type{ID: row.String, NotNull: true}}
	CompleteColumn = row.Field{Name: "$complete", Type: row.Type{ID: row.Boolean, NotNull: true}}
)

// DumpState lists, by partition key, table "waiting": the rows waiting
// for the watermark; table "matches": the rows of each partial and held
// complete match, in the match's order, with $match, $variable and
// $complete.
func (m *Match) DumpState(d *operator.StateDump) error {
	keys := slices.Sorted(maps.Keys(m.parts))
	if err := d.Table("waiting", d.In[0]); err != nil {
		return err
	}
	for _, k := range keys {
		for _, w := range m.parts[k].pending {
			if err := d.Row(w.r); err != nil {
				return err
			}
		}
	}
	cols := slices.Concat(d.In[0].Fields, []row.Field{MatchColumn, VariableColumn, CompleteColumn})
	if err := d.Table("matches", row.NewSchema(cols...)); err != nil {
		return err
	}
	var rows []mrow
	var r row.Row
	for _, k := range keys {
		p := m.parts[k]
		for i, list := range [][]*partial{p.partials.items, p.completed.items} {
			for _, pm := range list {
				rows = rowsOf(rows, pm.last)
				for _, x := range rows {
					r = append(append(r[:0], x.ev.r...), row.BigIntValue(int64(pm.startSeq)), row.StringValue(m.spec.Vars[x.v]), row.BoolValue(i == 1))
					if err := d.Row(r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

var _ operator.StateDumper = (*Match)(nil)
