package aggop

import (
	"errors"
	"sync/atomic"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Local/global (two-phase) aggregation, as Flink's LocalGroupAggregate
// and GlobalGroupAggregate: where a GroupAgg's input is mapped on the
// source's decode goroutines (the runtime's fusion), each of them folds
// a mapped batch's rows into partial accumulators, one per key the batch
// holds (LocalAgg.Fold), and the batch goes on holding one row per key
// (its first row of that key, for the key's columns) and the partial;
// the GroupAgg merges the partials into its state (mergePartial) instead
// of folding the rows. Each row then crosses from the decoding core to
// the aggregate's once per key and batch instead of once: on a host
// whose two vCPUs are far apart, that crossing was most of what a 1k-key
// GROUP BY cost beyond one core's work.
//
// A batch's partial is merged whole, as the batch's rows were folded
// whole: barriers and watermarks travel between batches, so a snapshot
// never holds half a partial and no local state outlives a batch. The
// GroupAgg's state is the one it would hold without the local phase
// (the same slots, allocated in the order the keys were first seen, and
// the same accumulators), so are batch mode's result and a mini-batch's
// net changes per key. Only exact merges qualify (LocalAggOf): COUNT,
// SUM and AVG over integers (wrapping int64 sums, whose addition is
// associative) and DECIMALs (128-bit sums), MIN and MAX; not a DOUBLE
// or FLOAT sum, whose rounding depends on the order of the additions,
// nor DISTINCT, FILTER, user aggregates, a retracting input or a state
// TTL.

// LocalAgg is the local phase of a GroupAgg: what its decode goroutines
// share. Safe for concurrent use.
type LocalAgg struct {
	keys  []int
	aggs  []AggCall
	width int
	// dicts are the key dictionaries not in use, one per goroutine
	// folding at a time; parts the partial stores the GroupAgg merged.
	dicts chan *localDict
	parts chan *Store
}

// localDict maps a goroutine's keys to dense ids across batches: a
// GroupAgg without aggregates, whose key lookups (the integer-key cache,
// the packed index) the local phase reuses. stamp and at say, by id,
// whether the current batch saw the key and its partial's index.
type localDict struct {
	g     *GroupAgg
	stamp []uint32
	at    []int32
	epoch uint32
	// skip is how many batches to pass on unfolded, backoff the
	// length of the last skip (Fold).
	skip, backoff int
	ids, first    []int32
}

// localKeysMax bounds a dictionary's keys: past it, it starts empty
// again (a high-cardinality input would grow one per goroutine as large
// as the GroupAgg's own index).
const localKeysMax = 1 << 16

// localPool bounds the dictionaries and partial stores kept.
const localPool = 64

// Partial is the local phase's result for one batch: slot j of store
// holds the accumulators of the batch's j-th key, rows the rows folded.
type Partial struct {
	store *Store
	rows  int
	la    *LocalAgg
}

// Rows is how many input rows the partial folded.
func (p *Partial) Rows() int { return p.rows }

// partialOf returns the partial a batch carries (operator.PartialOrigin),
// nil for rows.
func partialOf(in *row.Batch) *Partial {
	if po, ok := in.Origin.(operator.PartialOrigin); ok {
		p, _ := po.LocalPartial().(*Partial)
		return p
	}
	return nil
}

// LocalPhase implements operator.LocalPhaser.
func (g *GroupAgg) LocalPhase() operator.LocalFolder {
	if la := g.LocalAggOf(); la != nil {
		return la
	}
	return nil
}

var (
	_ operator.LocalPhaser = (*GroupAgg)(nil)
	_ operator.LocalFolder = (*LocalAgg)(nil)
)

// partialsMerged counts the partials GroupAggs merged, for tests.
var partialsMerged atomic.Int64

// PartialsMerged is how many partials GroupAggs merged (tests see that
// the local phase ran).
func PartialsMerged() int64 { return partialsMerged.Load() }

// LocalAggOf returns the local phase of g, nil when g does not qualify:
// asked for (GroupAggOptions.LocalPhase), an insert-only input folded in passes (batch mode, or mini-batch
// without a state TTL), not keyed by another node's hashes, and only
// aggregates whose partials merge exactly.
func (g *GroupAgg) LocalAggOf() *LocalAgg {
	if !g.opt.LocalPhase || !g.Vectorized() || g.fixedHash || g.ttl.On() || g.store.hasUser() || len(g.store.sets) > 0 {
		return nil
	}
	for i := range g.store.Aggs {
		a := &g.store.Aggs[i]
		if a.call.HasFilter || a.dist >= 0 || a.set >= 0 {
			return nil
		}
		switch a.kind {
		case accRows, accCount, accInt, accDec:
		case accWord, accExtreme:
			if a.call.Func != Min && a.call.Func != Max || a.ext >= 0 {
				return nil
			}
		default:
			return nil
		}
	}
	aggs := make([]AggCall, len(g.store.Aggs))
	for i := range aggs {
		aggs[i] = g.store.Aggs[i].call
	}
	return &LocalAgg{keys: g.keys, aggs: aggs, width: g.width,
		dicts: make(chan *localDict, localPool), parts: make(chan *Store, localPool)}
}

// Fold folds the rows of b, inserts, into a partial per key, when that
// pays: b's changes are then cut to the first of each key, in the order
// the keys were first seen, and last[j] is the index (before the cut)
// of key j's last row, for its position. nil when b is left as it was:
// a row the GroupAgg's checks refuse (it then fails on it, in order, as
// without the local phase), or the dictionary's goroutine found that
// the partials of its last batches were nearly as many as their rows
// (many keys, each in few rows: the fold would cost and save nothing).
// It then skips 1, 2, 4, ... 64 batches before it tries again.
func (la *LocalAgg) Fold(b *row.Batch) (p operator.Partial, last []int32) {
	changes := b.Changes
	if len(changes) == 0 {
		return nil, nil
	}
	d := la.dict()
	defer la.putDict(d)
	if d.skip > 0 {
		d.skip--
		return nil, nil
	}
	for i := range changes {
		if c := &changes[i]; len(c.Row) < la.width || c.Kind != row.Insert {
			return nil, nil
		}
	}
	st := la.store()
	if st.FirstBad(changes) < len(changes) {
		la.putStore(st)
		return nil, nil
	}
	ids := d.g.slotsOf(changes)
	d.grow(int(d.g.store.Slots))
	d.epoch++
	// The partial's slot of each row: a key's first row takes the next.
	n := len(changes)
	d.ids, d.first = growTo(d.ids, n), d.first[:0]
	for i, id := range ids {
		if d.stamp[id] != d.epoch {
			d.stamp[id], d.at[id] = d.epoch, int32(len(d.first))
			d.first = append(d.first, int32(i))
			st.Alloc("")
		}
		d.ids[i] = d.at[id]
	}
	st.foldInserts(d.ids[:n], changes)
	keys := len(d.first)
	last = make([]int32, keys)
	for i, j := range d.ids[:n] {
		last[j] = int32(i)
	}
	// Cut to the keys' first rows: first[j] >= j, rising.
	for j, i := range d.first {
		changes[j] = changes[i]
	}
	clear(changes[keys:]) // no row kept alive past the cut
	b.Changes = changes[:keys]
	if keys*4 > n*3 {
		d.backoff = min(max(2*d.backoff, 1), 64)
		d.skip = d.backoff
	} else {
		d.backoff = 0
	}
	if d.g.Groups() > localKeysMax {
		d.g = la.newDictAgg()
		d.stamp, d.at = d.stamp[:0], d.at[:0]
	}
	return &Partial{store: st, rows: n, la: la}, last
}

// Keys implements operator.LocalFolder.
func (la *LocalAgg) Keys() []int { return la.keys }

// grow gives the dictionary's ids up to n their stamps.
func (d *localDict) grow(n int) {
	for len(d.stamp) < n {
		d.stamp = append(d.stamp, 0)
		d.at = append(d.at, 0)
	}
}

func (la *LocalAgg) newDictAgg() *GroupAgg {
	g, _ := NewGroupAgg(la.keys, nil, GroupAggOptions{Batch: true, InsertOnly: true}) // keys valid: the GroupAgg's own
	return g
}

func (la *LocalAgg) dict() *localDict {
	select {
	case d := <-la.dicts:
		return d
	default:
	}
	return &localDict{g: la.newDictAgg()}
}

func (la *LocalAgg) putDict(d *localDict) {
	select {
	case la.dicts <- d:
	default:
	}
}

// store returns an empty partial store.
func (la *LocalAgg) store() *Store {
	select {
	case s := <-la.parts:
		return s
	default:
	}
	return NewStore(la.aggs, true, false)
}

// putStore empties s (the kinds LocalAggOf takes keep int64s, words and
// Values only) and keeps it for the next batch.
func (la *LocalAgg) putStore(s *Store) {
	clear(s.vals)
	s.nums, s.vals, s.present = s.nums[:0], s.vals[:0], s.present[:0]
	s.exts, s.strs = s.exts[:0], s.strs[:0]
	s.Slots, s.Free = 0, s.Free[:0]
	select {
	case la.parts <- s:
	default:
	}
}

// release gives the partial's store back, once merged.
func (p *Partial) release() {
	if p.la != nil {
		p.la.putStore(p.store)
		p.la, p.store = nil, nil
	}
}

// mergePartial is Process for a batch whose rows are the keys of a
// partial: each key's slot found (or added, in the keys' order, as the
// rows' fold would), then the partial's accumulators merged into it; in
// a mini-batch, each key's result before the batch noted first.
func (g *GroupAgg) mergePartial(in *row.Batch, p *Partial, out operator.Emitter) error {
	defer p.release()
	partialsMerged.Add(1)
	if p.store == nil || len(in.Changes) != int(p.store.Slots) {
		return errors.New("group aggregate: a partial whose keys are not its batch's rows")
	}
	ids := g.slotsOf(in.Changes)
	if !g.opt.Batch {
		g.mb.seq++
		g.mb.pending += p.rows
		g.mb.last = ids
		g.growMarks()
		marks, fresh := g.mb.mark, g.batch.fresh
		for i, id := range ids {
			if marks[id] == 0 {
				g.enter(id, !fresh[i])
			}
		}
	}
	for j, id := range ids {
		g.store.mergeFrom(id, p.store, int32(j))
	}
	if !g.opt.Batch && g.mb.pending >= g.opt.MiniBatchSize {
		return g.flushMiniBatch(in, out)
	}
	return nil
}

// mergeFrom adds slot sid of src, a store of the same aggregates laid
// out alike, into slot dst: the kinds LocalAggOf takes.
func (s *Store) mergeFrom(dst int32, src *Store, sid int32) {
	dn := s.nums[int(dst)*s.numW : int(dst+1)*s.numW]
	sn := src.nums[int(sid)*src.numW : int(sid+1)*src.numW]
	dn[0] += sn[0]
	for i := range s.Aggs {
		a := &s.Aggs[i]
		switch a.kind {
		case accRows:
		case accWord:
			if src.hasWord(sid, a) {
				s.setWord(dst, a, dn, sn[a.word])
			}
		case accExtreme:
			v := src.vals[int(sid)*src.valW+a.val]
			p := &s.vals[int(dst)*s.valW+a.val]
			if !v.IsNull() && (p.IsNull() || a.better(v, *p)) {
				*p = v // detached when the partial took it
			}
		case accDec:
			dn[a.num], dn[a.num+1] = add128x(dn[a.num], dn[a.num+1], sn[a.num], sn[a.num+1])
			dn[a.num+2] += sn[a.num+2]
		default: // accCount, accInt: plain (wrapping) sums
			for j := range numSlots[a.kind] {
				dn[a.num+j] += sn[a.num+j]
			}
		}
	}
}
