package aggop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The rows a GroupAgg emits: their memory (carved from the output batch
// when the emitter lends it) and their key columns (decoded from the
// index or the lazy keys).

// output builds [key values of in..., aggs...], for the next change
// emitted.
func (g *GroupAgg) output(c operator.RowCarver, in row.Row, aggs []row.Value) row.Row {
	r := g.arena.RowFrom(c, len(g.keys)+len(aggs))
	for i, k := range g.keys {
		r[i] = in[k]
	}
	copy(r[len(g.keys):], aggs)
	return r
}

// emitKeyed emits [kv..., aggs...] as a change of kind k.
func (g *GroupAgg) emitKeyed(out operator.Emitter, c operator.RowCarver, k row.Kind, kv, aggs []row.Value) {
	r := g.arena.RowFrom(c, len(kv)+len(aggs))
	copy(r, kv)
	copy(r[len(kv):], aggs)
	out.Emit(k, r)
}

// keyValues returns slot id's key columns, decoded from the index (or
// the lazy keys), in g.kvals: valid until the next call.
func (g *GroupAgg) keyValues(id int32) ([]row.Value, error) {
	kv := g.kvals
	if g.lazy {
		kv[0] = g.ints.value(g.lazyKeys[id])
		return kv, nil
	}
	if g.packed {
		if err := decodePacked(kv, g.index.Bytes(id)); err != nil {
			return nil, fmt.Errorf("group aggregate: %w", err)
		}
		return kv, nil
	}
	b := g.canonical(id)
	if g.keyErr != nil {
		return nil, fmt.Errorf("group aggregate: %w", g.keyErr)
	}
	if err := DecodeKeyView(kv, b); err != nil {
		return nil, fmt.Errorf("group aggregate: %w", err)
	}
	return kv, nil
}

// keyedRow returns a new row with slot id's key columns and room for
// the aggregates after them.
func (g *GroupAgg) keyedRow(id int32) (row.Row, error) {
	kv, err := g.keyValues(id)
	if err != nil {
		return nil, err
	}
	r := g.arena.Row(len(g.keys) + len(g.next))
	copy(r, kv)
	return r, nil
}
