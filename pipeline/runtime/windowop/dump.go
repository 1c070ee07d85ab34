package windowop

import (
	"fmt"
	"maps"
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
			if err := aggop.DecodeKey(r[:nk], g.kids.key(g.slotKid[id])); err != nil {
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

// Columns of dumped session state: an open session's bounds, instants
// (UTC) as the sessions keep them.
var (
	SessionStartColumn = row.Field{Name: "$session_start", Type: row.Type{ID: row.TimestampLTZ, Precision: 3, NotNull: true}}
	SessionEndColumn   = row.Field{Name: "$session_end", Type: row.Type{ID: row.TimestampLTZ, Precision: 3, NotNull: true}}
)

// DumpState lists the open sessions: a row per session with its key's
// columns, its bounds ($session_start, $session_end) and its aggregate
// results, in the order the sessions opened.
func (g *SessionAgg) DumpState(d *operator.StateDump) error {
	nk, na := len(g.keys), len(g.st.Aggs)
	if d.Out.Len() < nk+na {
		return fmt.Errorf("session window aggregate: %d output columns named for %d keys and %d aggregates", d.Out.Len(), nk, na)
	}
	cols := slices.Concat(d.Out.Fields[:nk], []row.Field{SessionStartColumn, SessionEndColumn}, d.Out.Fields[d.Out.Len()-na:])
	if err := d.Table("", row.NewSchema(cols...)); err != nil {
		return err
	}
	r := make(row.Row, nk+2+na)
	for _, s := range g.set.sessions() {
		if err := aggop.DecodeKeyView(r[:nk], g.set.key(s)); err != nil {
			return fmt.Errorf("session window aggregate: %w", err)
		}
		r[nk], r[nk+1] = row.TimestampLTZValue(s.start), row.TimestampLTZValue(s.end)
		g.st.Results(s.id, r[nk+2:])
		if err := d.Row(r); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists the rows waiting in the open sessions, the input's
// columns and their session's bounds, in the order the sessions opened.
func (t *SessionTable) DumpState(d *operator.StateDump) error {
	if err := d.Table("", row.NewSchema(slices.Concat(d.In[0].Fields, []row.Field{SessionStartColumn, SessionEndColumn})...)); err != nil {
		return err
	}
	var r row.Row
	for _, s := range t.set.sessions() {
		for _, held := range t.Held[s.id] {
			r = append(append(r[:0], held...), row.TimestampLTZValue(s.start), row.TimestampLTZValue(s.end))
			if err := d.Row(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// DumpState lists an event-time OVER's state: table "partitions", a row
// per partition with its key's columns, the rows aggregated so far
// ($rows) and the aggregate results over its frame now; "frame", the
// rows a bounded frame holds; "history", the rows LAG reads back;
// "waiting", the rows waiting for the watermark. Partitions by key.
func (g *OverAgg) DumpState(d *operator.StateDump) error {
	in, na := d.In[0], len(g.spec.Aggs)
	if d.Out.Len() < in.Len()+na {
		return fmt.Errorf("over aggregate: %d output columns named for %d input columns and %d aggregates", d.Out.Len(), in.Len(), na)
	}
	nk := len(g.spec.Keys)
	keyCols := make([]row.Field, nk)
	for i, k := range g.spec.Keys {
		keyCols[i] = in.Fields[k]
	}
	cols := slices.Concat(keyCols, []row.Field{operator.RowsColumn}, d.Out.Fields[in.Len():in.Len()+na])
	if err := d.Table("partitions", row.NewSchema(cols...)); err != nil {
		return err
	}
	keys := slices.Sorted(maps.Keys(g.parts))
	r := make(row.Row, nk+1+na)
	for _, k := range keys {
		p := g.parts[k]
		if err := aggop.DecodeKey(r[:nk], k); err != nil {
			return fmt.Errorf("over aggregate: %w", err)
		}
		r[nk] = row.BigIntValue(p.rows)
		g.st.Results(p.id, r[nk+1:])
		if err := d.Row(r); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name string
		ring func(p *overPart) ringRows
	}{{"frame", func(p *overPart) ringRows { return &p.frame }}, {"history", func(p *overPart) ringRows { return &p.hist }}} {
		if err := d.Table(t.name, in); err != nil {
			return err
		}
		for _, k := range keys {
			q := t.ring(g.parts[k])
			for i := range q.len() {
				if err := d.Row(q.at(i)); err != nil {
					return err
				}
			}
		}
	}
	if err := d.Table("waiting", in); err != nil {
		return err
	}
	queue := slices.Clone(g.queue.Items())
	slices.SortFunc(queue, func(a, b overWait) int {
		if a.before(&b) {
			return -1
		}
		return 1
	})
	for _, w := range queue {
		if err := d.Row(g.held[w.slot].r); err != nil {
			return err
		}
	}
	return nil
}

// DumpState lists an OVER ordered by a non-time column: every row held,
// with the results it was last emitted with (the output's columns), by
// partition key then order.
func (g *NonTimeOver) DumpState(d *operator.StateDump) error {
	if err := d.Table("", d.Out); err != nil {
		return err
	}
	var r row.Row
	for _, k := range slices.Sorted(maps.Keys(g.parts)) {
		for _, x := range g.parts[k].rows {
			r = append(append(r[:0], x.r...), x.res...)
			if len(r) != d.Out.Len() {
				return fmt.Errorf("over aggregate: a row of %d values for %d output columns", len(r), d.Out.Len())
			}
			if err := d.Row(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// DumpState lists the rows waiting in the open windows of a window
// Top-N or deduplication, the input's columns, by window end then
// partition first seen, each partition's in rank order.
func (w *WindowRank) DumpState(d *operator.StateDump) error {
	if err := d.Table("", d.In[0]); err != nil {
		return err
	}
	for _, end := range slices.Sorted(maps.Keys(w.windows)) {
		b := w.windows[end]
		for _, k := range b.order {
			for _, group := range b.parts[k].Groups {
				for _, r := range group {
					if err := d.Row(r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

var (
	_ operator.StateDumper = (*WindowAgg)(nil)
	_ operator.StateDumper = (*SessionAgg)(nil)
	_ operator.StateDumper = (*SessionTable)(nil)
	_ operator.StateDumper = (*OverAgg)(nil)
	_ operator.StateDumper = (*NonTimeOver)(nil)
	_ operator.StateDumper = (*WindowRank)(nil)
)
