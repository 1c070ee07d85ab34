package aggop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/row"
)

// ProjectState reads from d the state a store of the aggregates from
// wrote (AppendState; insertOnly and keepKeys as that store had them)
// and returns it as a store of the aggregates of from at indices keep
// (ascending) writes it: each kept aggregate's accumulators as they
// were, the others' left out. An operator that moves some aggregates
// out of its store (OVER's MIN and MAX of a sliding frame, kept in
// queues) restores a state written before with this: the kept
// aggregates go on exactly from where they were, a float sum with its
// rounding history included, which replaying the rows would not give.
// A snapshot writes every aggregate in call order: its int64 slots
// after the row count, then its Value, then its maps, so each one's
// part is found from the layout of from alone.
func ProjectState(d *row.Decoder, from []AggCall, insertOnly, keepKeys bool, keep []int) []byte {
	src := NewStore(from, insertOnly, keepKeys)
	kept := make([]bool, len(from))
	for _, i := range keep {
		if i >= 0 && i < len(from) {
			kept[i] = true
		}
	}
	// Each aggregate's int64 slots run from its num to the next one's.
	numKept := make([]bool, src.numSnap)
	numKept[0] = true // the rows counter
	for i := range src.Aggs {
		a := &src.Aggs[i]
		if a.num < 1 || a.num >= src.numSnap {
			continue
		}
		end := src.numSnap
		for j := range src.Aggs {
			if b := src.Aggs[j].num; b > a.num && b < end {
				end = b
			}
		}
		for k := a.num; k < end; k++ {
			numKept[k] = kept[i]
		}
	}
	extKept := make([]bool, src.extW)
	for i, a := range src.Aggs {
		if a.ext >= 0 {
			extKept[a.ext] = kept[i]
		}
		if a.dist >= 0 {
			extKept[a.dist] = kept[i]
		}
	}
	var dst []byte
	slots := d.Count(1 + src.numSnap + src.valSnap + src.extW)
	dst = binary.AppendUvarint(dst, uint64(slots))
	free := d.Count(1)
	dst = binary.AppendUvarint(dst, uint64(free))
	for range free {
		dst = binary.AppendUvarint(dst, d.Uvarint())
	}
	for id := 0; id < slots && d.Err() == nil; id++ {
		key := d.BytesView()
		dst = binary.AppendUvarint(dst, uint64(len(key)))
		dst = append(dst, key...)
		for k := range src.numSnap {
			n := d.Varint()
			if numKept[k] {
				dst = binary.AppendVarint(dst, n)
			}
		}
		for i := range src.Aggs {
			if a := &src.Aggs[i]; a.kind == accWord || a.val >= 0 {
				v := d.Value()
				if kept[i] {
					dst = row.AppendValue(dst, v)
				}
			}
		}
		for j := range src.extW {
			start := len(dst)
			dst = copyExt(dst, d)
			if !extKept[j] {
				dst = dst[:start]
			}
		}
	}
	return dst
}

// copyExt copies one map slot of a snapshot (appendSlot's tag and its
// entries) from d to dst.
func copyExt(dst []byte, d *row.Decoder) []byte {
	tag := d.Byte()
	dst = append(dst, tag)
	switch tag {
	case extNone:
	case extUser:
		b := d.BytesView()
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	case extList:
		n := d.Count(1)
		dst = binary.AppendUvarint(dst, uint64(n))
		for range n {
			dst = row.AppendValue(dst, d.Value())
		}
	case extCounts, extExtremes:
		n := d.Count(2)
		dst = binary.AppendUvarint(dst, uint64(n))
		for range n {
			dst = row.AppendValue(dst, d.Value())
			dst = binary.AppendVarint(dst, d.Varint())
		}
	default:
		d.Fail("map tag %d", tag)
	}
	return dst
}
