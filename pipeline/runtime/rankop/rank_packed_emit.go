package rankop

import "github.com/etld/etld/pipeline/row"

// The output of a packed Top-N (rank_packed.go): rows decoded from the
// arena into slab rows, the rank number written in place.

// emitPackedWithRank is insertWithRank on the flat list ents, r just
// added at pos: each row below it moves down one rank, up to End. Each
// row moved is decoded once, for its -U; its +U a rank lower is a copy.
func (t *TopN) emitPackedWithRank(ents []packEnt, pos int, r row.Row) {
	end := int(t.spec.End)
	cur := r // ents[j-1]'s row as decoded, nil when it was not
	j := pos + 1
	for ; j < len(ents) && j <= end; j++ {
		rank := int64(j)
		if !t.inRange(rank) {
			cur = nil
			continue
		}
		prev := t.packedOut(&ents[j], nil, rank)
		t.out.Emit(row.UpdateBefore, prev)
		t.out.Emit(row.UpdateAfter, t.packedOut(&ents[j-1], cur, rank))
		cur = prev
	}
	if j <= end && t.inRange(int64(j)) {
		t.out.Emit(row.Insert, t.packedOut(&ents[j-1], cur, int64(j)))
	}
}

// packedOut is the row to emit for e at rank (emitRow's row): a copy of
// have, e's values already decoded (the incoming row, or the row emitted
// a rank higher), else e's row decoded, in one slab row with the rank
// number after it when the output has one. Without the number, have is
// emitted itself: rows are immutable once emitted.
func (t *TopN) packedOut(e *packEnt, have row.Row, rank int64) row.Row {
	pk := t.pack
	if !t.spec.OutputRank {
		if have != nil {
			return have
		}
		return pk.decode(e, 0)
	}
	w := pk.layout.Width()
	var o row.Row
	if have != nil {
		o = pk.outRow(w + 1)
		copy(o, have[:w])
	} else {
		o = pk.decode(e, 1)
	}
	if t.spec.constantNumber() {
		rank = t.spec.Start
	}
	o[w] = row.BigIntValue(rank)
	return o
}
