package joinop

import "github.com/etld/etld/pipeline/row"

// Reading a batch's state ahead of its changes.
//
// A change of a regular join reads, one after the other, its key's slot
// in the index (and for a key by bytes its entry, to compare), the key's
// entry on either side (runs or lists by key id), the other side's first
// row and its own side's last block, each read needing the one before;
// on a state of a million keys each is a cache miss, and those misses
// were most of a streaming join's CPU. readAhead reads the same places
// for the next aheadRows changes in passes, a pass's reads independent
// of each other, so that the processor has many misses in flight at
// once; the changes then find their lines cached. It changes nothing: a
// change still looks its key up itself (a change before it may have
// added or dropped keys).

// aheadRows is how many changes readAhead reads for at once: few enough
// that the lines it brings (about five a change) stay cached until the
// changes read them.
const aheadRows = 128

// readAhead reads what the changes cs of side will read first.
func (j *Join) readAhead(side int, cs []row.Change) {
	this, other := j.sides[side], j.sides[1-side]
	x := this.index
	if x.len() == 0 || len(this.keys) == 0 {
		return
	}
	var sum uint64
	kids := j.aheadIDs[:0]
	if x.ints != nil {
		col := this.keys[0]
		for i := range cs {
			if r := cs[i].Row; len(r) > col && plainInt(r[col], x.typ) {
				sum += x.ints.Touch(uint64(r[col].Int64()))
			}
		}
		for i := range cs {
			r := cs[i].Row
			if len(r) <= col || !plainInt(r[col], x.typ) {
				continue
			}
			if kid, ok := x.ints.Find(uint64(r[col].Int64())); ok {
				kids = append(kids, kid)
			}
		}
	} else {
		// The key's bytes hashed and its probe run read (Probe: the
		// first key id of that hash, which its entry confirms).
		for i := range cs {
			if this.key(cs[i].Row) {
				continue
			}
			if kid := x.ids.Probe(x.ids.Hash(this.kbuf)); kid >= 0 {
				kids = append(kids, kid)
			}
		}
		for _, kid := range kids {
			if x.ids.Has(kid) { // its entry, which the change compares
				sum++
			}
		}
	}
	for _, kid := range kids {
		sum += other.touchKey(kid) + this.touchKey(kid)
	}
	for _, kid := range kids {
		sum += other.touchRows(kid, false) + this.touchRows(kid, true)
	}
	j.aheadIDs = kids
	j.touched += sum // kept, so that the reads are not optimized away
}

// touchKey reads key kid's entry on the side.
func (s *joinSide) touchKey(kid int32) uint64 {
	switch {
	case s.appendOnly && int(kid) < len(s.runs):
		return uint64(s.runs[kid].used)
	case !s.appendOnly && int(kid) < len(s.lists):
		return uint64(s.lists[kid].n)
	}
	return 0
}

// touchRows reads the first of key kid's rows on the side (last: the end
// of its last block, where an append-only side's next row goes).
func (s *joinSide) touchRows(kid int32, last bool) uint64 {
	if !s.holds(kid) {
		return 0
	}
	if s.appendOnly {
		run := &s.runs[kid]
		if last {
			return uint64(s.runPages.at(run.tail + blockHead + uint64(min(run.used, run.space-1)))[0])
		}
		// The first block's header, and its first row, which may start
		// on the next line.
		b := s.runPages.at(run.head)
		return uint64(b[0]) + uint64(b[min(blockHead+8, len(b)-1)])
	}
	if h := s.lists[kid].head; int(h) < len(s.ents) {
		return uint64(s.ents[h].count)
	}
	return 0
}
