package runtime

// Fusion: a Calc (projection and filter) that is the only reader of an
// insert-only source whose decoding runs on several goroutines
// (connector.MappingSource) runs there too, together with the source's
// watermark expression; not behind computed columns, whose compiled form
// shares a scratch row (plan.computedCalc). A Calc over inserts keeps no
// state (it holds a -U only until its +U), so each batch maps on its
// own, and the source returns the batches in order. The Calc's node stays
// in the graph, for its counters and checkpoints, and passes the mapped
// batches on as they are; a batch that could not be mapped (a row whose
// expressions failed goes to on_error in order, on the source's goroutine)
// comes as the source decoded it and takes the usual way. explain is not
// changed: the plan is the same, only where its Calc runs.

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// fusion is a source node's fused Calc and that Calc's node.
type fusion struct {
	src  *SourceNode
	calc *Calc
	op   *OpNode
}

// fusedOrigin marks a batch the fusion mapped, and is its Origin: change
// i came from change from[i] of the decoded batch. read is the number of
// rows decoded, kept the number the source's computed columns let
// through (the counters of the source node and of the Calc's), wm the
// largest event time among them (NoWatermark for none).
type fusedOrigin struct {
	derivedOrigin
	read, kept int
	wm         int64
}

// fuse finds the Calcs to run in their sources' decoders and tells the
// sources; it returns the fusion of each source node that has one.
func fuse(g *Graph) map[*SourceNode]*fusion {
	readers := map[*Node]int{}
	for _, op := range g.Ops {
		readers[op.Input]++
	}
	for _, u := range g.Unions {
		for _, in := range u.Inputs {
			readers[in]++
		}
	}
	for _, s := range g.Sinks {
		readers[s.Input]++
	}
	var out map[*SourceNode]*fusion
	for _, op := range g.Ops {
		c, ok := op.Op.(*Calc)
		if !ok || readers[op.Input] != 1 {
			continue
		}
		for _, s := range g.Sources {
			if &s.Node != op.Input {
				continue
			}
			if u, ok := s.Source.(connector.UpdatingSource); ok && u.Updating() {
				break // a Calc over updates pairs -U with +U: not per batch
			}
			if s.Calc != nil {
				// The planner's computed columns share a scratch row
				// (plan.computedCalc): not for several goroutines.
				break
			}
			ms, ok := s.Source.(connector.MappingSource)
			if !ok {
				break
			}
			f := &fusion{src: s, calc: c, op: op}
			// The mapped rows are new when a Calc projects them.
			if !ms.MapBatches(f.mapBatch, c.Project != nil) {
				break
			}
			c.fused = true
			if out == nil {
				out = map[*SourceNode]*fusion{}
			}
			out[s] = f
		}
	}
	return out
}

// mapBatch runs the source's watermark expression and the fused Calc
// over b, on one of the source's decode goroutines; nil when a row's
// expressions fail (the batch then takes the serial way, in which
// on_error sees the row in order).
func (f *fusion) mapBatch(b *row.Batch) *row.Batch {
	return f.calcRows(b, b.Changes, nil, b.Len())
}

// calcRows evaluates the watermark and the Calc over rows, the source
// node's output for b; srcFrom maps rows to b's changes (nil: one to
// one).
func (f *fusion) calcRows(b *row.Batch, rows []row.Change, srcFrom []int32, kept int) *row.Batch {
	s, c := f.src, f.calc
	wm := NoWatermark
	// Pass one: the watermark and the filter, keeping the passing rows'
	// numbers.
	pass := make([]int32, 0, len(rows))
	for i, ch := range rows {
		if s.EventTime != nil {
			ts, has, err := s.EventTime(ch.Row)
			if err != nil {
				return nil
			}
			if has && ts > wm {
				wm = ts
			}
		}
		if c.Filter != nil {
			ok, err := c.Filter(ch.Row)
			if err != nil {
				return nil
			}
			if !ok {
				continue
			}
		}
		pass = append(pass, int32(i))
	}
	// Pass two: the projection, into one arena for the batch.
	var out *row.Batch
	if c.Project == nil {
		out = &row.Batch{Changes: make([]row.Change, len(pass))}
		for j, i := range pass {
			out.Changes[j] = rows[i]
		}
	} else {
		out = &row.Batch{Changes: make([]row.Change, 0, len(pass))}
		w := len(c.Project)
		var slab []row.Value
		for _, i := range pass {
			if len(slab) < w {
				slab = make([]row.Value, max(w, slabValues/max(w, 1)*w))
			}
			r := slab[:w:w]
			slab = slab[w:]
			if err := c.projectInto(rows[i].Row, r); err != nil {
				return nil
			}
			out.Append(rows[i].Kind, r)
		}
	}
	// from maps out's changes to b's, for their positions.
	from := pass
	if srcFrom != nil {
		for j, i := range pass {
			from[j] = srcFrom[i]
		}
	}
	out.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{parent: b.Origin, from: from}, read: b.Len(), kept: kept, wm: wm}
	return out
}

// Position implements row.Origin.
func (fo *fusedOrigin) Position(i int) string {
	if fo.parent == nil {
		return ""
	}
	return fo.derivedOrigin.Position(i)
}

// Record implements row.RecordOrigin.
func (fo *fusedOrigin) Record(i int) (string, int64, bool) {
	if fo.parent == nil {
		return "", 0, false
	}
	return fo.derivedOrigin.Record(i)
}

// slabValues is how many values the rows of a mapped batch are carved
// from at a time: 32 KiB, the largest allocation Go makes without taking
// the heap lock (a batch's arena in one piece cost more than the rest of
// the Calc).
const slabValues = 1024

// fusedOf returns the mark of a batch a fusion mapped, or nil.
func fusedOf(b *row.Batch) *fusedOrigin {
	if b == nil {
		return nil
	}
	fo, _ := b.Origin.(*fusedOrigin)
	return fo
}
