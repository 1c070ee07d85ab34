package joinop

import "github.com/etld/etld/pipeline/row"

// touchAhead is how far ahead of add (or of a timer firing) touch and
// touchDue read: far enough that a read's miss is over when its row
// comes, near enough that the lines it brings stay in the cache until
// then. They read touchStep items at a time, so that each item is read
// touchAhead-touchStep to touchAhead items before it is used (reading
// whole blocks of touchAhead left the first items of each block read
// just before their use).
const (
	touchAhead = 32
	touchStep  = 8
)

// aheadOf returns the items [a, b) of n to read ahead at item i: at
// item 0 the first touchAhead, then at every touchStep-th item the
// touchStep items touchAhead ahead of it.
func aheadOf(i, n int) (a, b int, ok bool) {
	switch {
	case i == 0:
		a, b = 0, touchAhead
	case i%touchStep == 0:
		a, b = i+touchAhead-touchStep, i+touchAhead
	default:
		return 0, 0, false
	}
	b = min(b, n)
	return a, b, a < b
}

// touch reads, for each change of side s, what add will read first: its
// key's slot in ints, the key's state, the first cached row of the
// other side's time and of its own side's (whose links a cached row
// joins), and the slot in the store and the entry of the row id its
// cache will likely take (the free list's, used from its end: cs[0] is
// the change dist after the one add takes now). add's reads of one row
// depend on each other (slot, then key, then rows), each a likely cache
// miss in a large state; here the rows' reads are independent of each
// other, so the processor has many misses in flight at once, and add
// then finds the lines cached. It changes nothing.
func (j *IntervalJoin) touch(s int, cs []row.Change, dist int) {
	col := j.spec.LeftKeys[0]
	if s == 1 {
		col = j.spec.RightKeys[0]
	}
	o := 1 - s
	ents, own := j.sides[o].ents, &j.sides[s]
	sum := int64(0)
	for i := range cs {
		if f := len(own.free) - 1 - dist - i; f >= 0 {
			if rid := own.free[f]; int(rid) < len(own.ents) {
				sum += own.ents[rid].at
				if own.store.Has(rid) {
					sum++
				}
			}
		}
		r := cs[i].Row
		if len(r) <= col || !plainInt(r[col], j.keyType) {
			continue
		}
		kid, ok := j.ints.Find(uint64(r[col].Int64()))
		if !ok {
			continue
		}
		k := &j.keys[kid]
		if h := k.head[o]; h >= 0 && int(h) < len(ents) {
			sum += ents[h].at
		}
		if h := k.head[s]; h >= 0 && int(h) < len(own.ents) {
			sum += own.ents[h].at
		}
	}
	j.touched += sum // kept, so that the reads are not optimized away
}

// touchDue reads, for each timer of ts, what Watermark will read first
// when it fires: its key's state and each side's first cached row, its
// time and its slot in the store (touch's reasoning: a timer fires
// minutes after its key's rows came, and their lines are long gone from
// the cache). It changes nothing.
func (j *IntervalJoin) touchDue(ts []ijTimer) {
	sum := int64(0)
	for i := range ts {
		kid := ts[i].kid
		if int(kid) >= len(j.keys) {
			continue
		}
		k := &j.keys[kid]
		for s := range 2 {
			side := &j.sides[s]
			if h := k.head[s]; h >= 0 && int(h) < len(side.ents) {
				sum += side.ents[h].at
				if side.store.Has(h) {
					sum++
				}
			}
		}
	}
	j.touched += sum // kept, so that the reads are not optimized away
}
