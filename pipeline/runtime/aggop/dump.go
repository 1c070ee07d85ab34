package aggop

import (
	"fmt"
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

var (
	_ operator.StateDumper = (*GroupAgg)(nil)
	_ operator.StateDumper = (*Distinct)(nil)
)
