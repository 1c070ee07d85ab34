package aggop

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What `etld state dump` lists of the aggregates' state
// (operator.StateDumper).

// DumpState lists each group's current result, the row the operator
// last emitted for it: [key columns..., aggregate results...], the
// output's columns, in slot order.
func (g *GroupAgg) DumpState(d *operator.StateDump) error {
	g.settle()
	if w := len(g.keys) + len(g.next); d.Out.Len() != w {
		return fmt.Errorf("group aggregate: %d output columns named for rows of %d", d.Out.Len(), w)
	}
	if err := d.Table("", d.Out); err != nil {
		return err
	}
	for id := range g.store.Slots {
		if !g.index.Has(id) {
			continue // a free slot
		}
		r, err := g.keyedRow(id)
		if err != nil {
			return err
		}
		g.store.Results(id, r[len(g.keys):])
		if err := d.Row(r); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists the distinct rows seen, the output's columns, in the
// order first seen (ids reused after a TTL aside).
func (d *Distinct) DumpState(dump *operator.StateDump) error {
	if err := dump.Table("", dump.Out); err != nil {
		return err
	}
	r := make(row.Row, dump.Out.Len())
	for id := range d.ids {
		if !d.seen.Has(id) {
			continue
		}
		b := d.seen.Bytes(id)
		if err := DecodeKey(r, unsafe.String(unsafe.SliceData(b), len(b))); err != nil {
			return fmt.Errorf("select distinct: row %d: %w", id, err)
		}
		for i, v := range r {
			if v.Type() == row.String {
				r[i] = row.StringValue(strings.Clone(v.Str()))
			}
		}
		if err := dump.Row(r); err != nil {
			return err
		}
	}
	return nil
}

// Columns of a dumped set operation's rows: the copies each input
// holds.
var (
	LeftColumn  = row.Field{Name: "$left", Type: row.Type{ID: row.BigInt, NotNull: true}}
	RightColumn = row.Field{Name: "$right", Type: row.Type{ID: row.BigInt, NotNull: true}}
)

// DumpState lists each distinct row counted, the output's columns, with
// the copies of it each input holds ($left, $right), in id order.
func (s *SetOp) DumpState(d *operator.StateDump) error {
	if err := d.Table("", row.NewSchema(slices.Concat(d.Out.Fields, []row.Field{LeftColumn, RightColumn})...)); err != nil {
		return err
	}
	var out row.Row
	for id, r := range s.rows {
		if r == nil {
			continue
		}
		out = append(append(out[:0], r...), row.BigIntValue(s.counts[id][0]), row.BigIntValue(s.counts[id][1]))
		if err := d.Row(out); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists the rows a scalar subquery has seen ($rows): one row.
func (s *SingleRow) DumpState(d *operator.StateDump) error {
	if err := d.Table("", row.NewSchema(operator.RowsColumn)); err != nil {
		return err
	}
	return d.Row(row.Row{row.BigIntValue(s.rows)})
}

var (
	_ operator.StateDumper = (*GroupAgg)(nil)
	_ operator.StateDumper = (*Distinct)(nil)
	_ operator.StateDumper = (*SetOp)(nil)
	_ operator.StateDumper = (*SingleRow)(nil)
)
