package aggop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// GroupAggOptions tunes a GroupAgg.
type GroupAggOptions struct {
	// Batch: the input is bounded and the result is final: emit one +I
	// per group at Finish and nothing before (Flink's BATCH mode;
	// execution: batch). A global aggregate (no keys) over an empty input
	// then emits one row, as SQL does: COUNT 0, the others NULL.
	Batch bool
	// InsertOnly: the planner knows the input carries only +I, so MIN and
	// MAX keep just the extreme instead of every value (Flink's
	// needRetraction = false). A retraction is then an error.
	InsertOnly bool
	// MiniBatch: streaming mode emits, per input batch, one net change
	// per key the batch touched instead of one per input change
	// (groupagg_minibatch.go; the pipeline's mini_batch option).
	MiniBatch bool
	// MiniBatchSize: with MiniBatch, flush once this many input changes
	// were applied (0: after every input batch); the node also flushes
	// at barriers, at the end and every MiniBatchLatency (Flink's
	// table.exec.mini-batch.size and allow-latency).
	MiniBatchSize    int
	MiniBatchLatency time.Duration
	// StateCols, when not nil, is for each input column of the state's
	// schema (its fingerprint's: one argument per aggregate, where the
	// planner reads an argument several aggregates share into one input
	// column) the input column it is read from: WidenColumns names the
	// state's columns.
	StateCols []int
	// LocalPhase lets the engine fold the input's batches into partials
	// per key ahead of the operator, where it can (LocalAggOf,
	// groupagg_local.go): the pipeline's two_phase_aggregate.
	LocalPhase bool
}

// GroupAgg is GROUP BY without a window (Flink's GroupAggFunction). It
// consumes +I/+U as accumulate and -U/-D as retract, and emits per key:
//
//   - the key's first row: +I[new];
//   - a changed result: -U[old] then +U[new], adjacent;
//   - an unchanged result: nothing;
//   - the key's row count reaching 0: -D[old], and its state is dropped.
//
// A retraction for a key without state is ignored, as Flink does, and
// counted (Dropped). With no keys it is the global aggregate: one group,
// which Flink's streaming mode also deletes with -D when its last row is
// retracted. With no aggregates it is DISTINCT over an updating input.
//
// Output rows are [key columns in order..., aggregate results in order...].
type GroupAgg struct {
	keys  []int
	opt   GroupAggOptions
	store *Store
	index *state.KeyTable // encoded group key -> store slot
	width int             // input columns the operator reads
	kbuf  []byte
	// packed: the index holds keys packed (groupagg_packed.go), not in
	// row.KeyOf's encoding, which the keyed split's hashes are of
	// (UseKeyHash turns it off); cbuf is a key unpacked.
	packed bool
	cbuf   []byte
	keyErr error // a key the index holds that did not unpack: a bug
	prev   []row.Value
	next   []row.Value
	// nextOf is the slot whose results next holds, unchanged since the
	// change that computed them, -1 for none (change).
	nextOf  int32
	kvals   []row.Value // keyValues' result
	arena   RowArena
	dropped int64
	// widen is the retagging of the next restore (WidenRestore).
	widen map[row.TypeID]row.TypeID
	// widenIn, when not nil, retags by input column instead
	// (WidenColumns).
	widenIn []row.TypeID
	mb      miniBatch
	batch   batchScratch // groupagg_batch.go
	// ints caches the slots of a one-column integer key for the passes
	// (groupagg_intkey.go); nil for other keys.
	ints *intKeys
	// mem holds ints', lazyKeys' and mb's arrays.
	mem *state.OffHeap
	// lazy: the keys are in ints and lazyKeys (slot to key), not in
	// index (groupagg_lazy.go).
	lazy     bool
	lazyKeys []int64
	// RowByRow turns the batch-mode passes off: tests compare the two.
	RowByRow bool
	// fixedHash: the index hashes with operator.KeyHash (UseKeyHash);
	// pre is then, during ProcessKeys, the batch's keys as the keyed
	// split encoded and hashed them.
	fixedHash bool
	pre       *operator.EncodedKeys
	ttl       state.TTLList // state TTL by slot (groupagg_ttl.go)
	operator.Expiry
}

// NewGroupAgg builds the operator. keys and aggregate arguments are input
// column indices; an invalid call (see AggCall.Validate) is an error.
func NewGroupAgg(keys []int, aggs []AggCall, opt GroupAggOptions) (*GroupAgg, error) {
	width, err := InputWidth(keys, aggs)
	if err != nil {
		return nil, fmt.Errorf("group aggregate: %w", err)
	}
	g := &GroupAgg{
		keys:  keys,
		opt:   opt,
		width: width,
		// The index keeps the keys that batch mode emits at Finish.
		store:  NewStore(aggs, opt.InsertOnly, false),
		index:  state.NewOffHeapKeyTable(),
		prev:   make([]row.Value, len(aggs)),
		nextOf: -1,
		next:   make([]row.Value, len(aggs)),
		kvals:  make([]row.Value, len(keys)),
		packed: true,
	}
	if opt.MiniBatch || opt.InsertOnly && opt.Batch {
		// The arrays of the integer-key cache, the lazy keys and the
		// mini-batch: off the Go heap, whose live bytes set how far it
		// grows (GOGC) before a collection, so that at millions of
		// keys the garbage of each batch, which reuses the heap's
		// pages, would take hundreds of megabytes of fresh ones.
		g.mem = state.NewOffHeap(g)
		g.mb.mem = g.mem
	}
	if opt.InsertOnly && (opt.Batch || opt.MiniBatch) {
		g.ints = intKeysOf(keys, g.mem) // for the passes (vectorized)
		// Streaming too: an insert-only input with mini-batch frees no
		// slot (no retraction; a state TTL settles at its first batch).
		g.lazy = g.ints != nil
	}
	if opt.InsertOnly && opt.Batch {
		// Nothing reads the sets before Finish.
		g.store.DeferSets()
	}
	g.InitExpiry(g.ttl.Set, g.ttl.Tick, g.sweep)
	return g, nil
}

// InputWidth validates keys and aggs and returns how many input columns
// they need.
func InputWidth(keys []int, aggs []AggCall) (int, error) {
	w := 0
	for _, k := range keys {
		if k < 0 {
			return 0, fmt.Errorf("key column %d is negative", k)
		}
		w = max(w, k+1)
	}
	for _, c := range aggs {
		if err := c.Validate(); err != nil {
			return 0, err
		}
		w = max(w, c.Arg+1)
	}
	return w, nil
}

// Dropped counts retractions of keys that had no state.
func (g *GroupAgg) Dropped() (int64, string) {
	return g.dropped, "retraction of a key without state"
}

// Groups is the number of keys with state.
func (g *GroupAgg) Groups() int { return g.index.Len() + len(g.lazyKeys) }

// StateEntries implements StateSizer: the keys with state.
func (g *GroupAgg) StateEntries() int64 { return int64(g.Groups()) }

// StateBytes implements StateMemory: the key table's and the
// accumulators' memory.
func (g *GroupAgg) StateBytes() int64 {
	return g.index.MemBytes() + g.store.MemBytes() + int64(cap(g.lazyKeys))*8
}

// UseKeyHash implements operator.PreKeyed.
func (g *GroupAgg) UseKeyHash() {
	g.fixedHash = true
	g.packed = false
	g.index.UseKeyHash()
}

// newIndex is an empty index that hashes as g's does.
func (g *GroupAgg) newIndex() *state.KeyTable {
	t := state.NewOffHeapKeyTable()
	if g.fixedHash {
		t.UseKeyHash()
	}
	return t
}

// EmitsOnlyAtFinish implements operator.OutputAtFinish: batch mode
// emits the result at Finish and nothing before.
func (g *GroupAgg) EmitsOnlyAtFinish() bool { return g.opt.Batch }

// ProcessKeys implements operator.PreKeyed: the passes (slotsOf) take
// the keys as given; row by row, Process encodes each again, as it
// emits per change and the key's encoding is not what costs there.
func (g *GroupAgg) ProcessKeys(in *row.Batch, keys *operator.EncodedKeys, out operator.Emitter) error {
	if g.fixedHash && g.Vectorized() && len(keys.Ends) == len(in.Changes) {
		g.pre = keys
		defer func() { g.pre = nil }()
	}
	return g.Process(in, out)
}

func (g *GroupAgg) Process(in *row.Batch, out operator.Emitter) error {
	defer g.Begin(len(in.Changes))()
	if p := partialOf(in); p != nil {
		return errors.Join(g.mergePartial(in, p, out), g.store.Err())
	}
	if g.opt.MiniBatch && !g.opt.Batch {
		return errors.Join(g.processMiniBatch(in, out), g.store.Err())
	}
	if g.Vectorized() {
		return errors.Join(g.processBatch(in), g.store.Err())
	}
	g.settle()
	g.nextOf = -1 // whatever ran since the last batch (a restore, an expiry)
	return operator.EachChange("group aggregate", in, out, func(_ int, c *row.Change) error {
		if err := g.change(c.Kind, c.Row, out); err != nil {
			return err
		}
		// A user aggregate's failure, with the change it came from.
		return g.store.Err()
	})
}

// slotOf checks the change of kind k to r and finds its group's slot,
// allocating one for a new group (isNew). A retraction of a group the
// state does not hold is counted as dropped and gives id -1.
func (g *GroupAgg) slotOf(k row.Kind, r row.Row) (id int32, isNew, add bool, err error) {
	if len(r) < g.width {
		return -1, false, false, errWidth(len(r), g.width)
	}
	add = k.IsAdd()
	if !add && g.opt.InsertOnly {
		return -1, false, false, errInsertOnly(k)
	}
	if err := g.store.Check(r); err != nil {
		return -1, false, false, err
	}
	g.kbuf = g.appendKey(g.kbuf[:0], r)
	if id, ok := g.index.Find(g.kbuf); ok && !g.expireAt(id) {
		return id, false, add, nil
	}
	if !add {
		g.dropped++
		return -1, false, false, nil
	}
	id = g.store.Alloc("")
	g.index.Insert(g.kbuf, id)
	return id, true, true, nil
}

func (g *GroupAgg) change(k row.Kind, r row.Row, out operator.Emitter) error {
	id, isNew, add, err := g.slotOf(k, r)
	if err != nil || id < 0 {
		return err
	}
	g.ttl.Touch(id)
	c := operator.CarverOf(out)
	// A group changed by the change before, with nothing between, has
	// the results that change emitted as +U: its -U now, as Flink's
	// prevAggValue (rows of one group in a row, a GROUP BY day's).
	// Every path below changes next or the state, so it is claimed here.
	reuse := g.nextOf == id
	g.nextOf = -1
	if isNew {
		g.store.Update(id, r, true)
		if !g.opt.Batch {
			g.store.Results(id, g.next)
			g.keepNext(id)
			out.Emit(row.Insert, g.output(c, r, g.next))
		}
		return nil
	}
	if g.opt.Batch {
		g.store.Update(id, r, add)
		if g.store.rows(id) == 0 {
			g.drop(id)
		}
		return nil
	}
	if reuse {
		g.prev, g.next = g.next, g.prev
	} else {
		g.store.Results(id, g.prev)
	}
	g.store.Update(id, r, add)
	if g.store.rows(id) == 0 {
		out.Emit(row.Delete, g.output(c, r, g.prev))
		g.drop(id)
		return nil
	}
	g.store.Results(id, g.next)
	g.keepNext(id)
	if sameValues(g.prev, g.next) && !g.ttl.On() {
		return nil
	}
	out.Emit(row.UpdateBefore, g.output(c, r, g.prev))
	out.Emit(row.UpdateAfter, g.output(c, r, g.next))
	return nil
}

// keepNext notes that next holds slot id's results, for the next change
// (change). Not with a user aggregate: its value is asked of its
// function each time, as Flink asks getValue before and after a change.
func (g *GroupAgg) keepNext(id int32) {
	if !g.store.hasUser() {
		g.nextOf = id
	}
}

func errWidth(have, want int) error {
	return fmt.Errorf("row has %d columns, want at least %d", have, want)
}

func errInsertOnly(k row.Kind) error {
	return fmt.Errorf("input planned as insert-only carries a %s change", k)
}

func (g *GroupAgg) drop(id int32) {
	g.nextOf = -1
	g.settle()
	g.ints.reset()
	g.index.Remove(g.kbuf)
	g.store.Release(id)
	g.ttl.Drop(id)
}

// appendKey appends the index's encoding of r's key.
func (g *GroupAgg) appendKey(dst []byte, r row.Row) []byte {
	if g.packed {
		return appendPacked(dst, r, g.keys)
	}
	return row.KeyOf(dst, r, g.keys)
}

// canonical is slot id's key in row.KeyOf's encoding, a view valid
// until the next call or change of the index; a key that does not
// unpack sets g.keyErr.
func (g *GroupAgg) canonical(id int32) []byte {
	b := g.index.Bytes(id)
	if !g.packed {
		return b
	}
	var err error
	if g.cbuf, err = canonicalKey(g.cbuf[:0], b); err != nil && g.keyErr == nil {
		g.keyErr = err
	}
	return g.cbuf
}

// sameValues is Flink's equaliser over two results: NULL equals NULL.
func sameValues(a, b []row.Value) bool {
	for i := range a {
		if !row.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Watermark does nothing: a group aggregate has no event-time state.
func (g *GroupAgg) Watermark(int64, operator.Emitter) error { return nil }

// Finish emits the batch-mode result: one +I per group, in slot order
// (the order groups were first seen, when nothing was retracted).
func (g *GroupAgg) Finish(out operator.Emitter) (err error) {
	if !g.opt.Batch {
		return errors.Join(g.flushMiniBatch(nil, out), g.store.Err())
	}
	defer func() {
		if err == nil {
			err = g.store.Err()
		}
	}()
	c := operator.CarverOf(out)
	if g.Groups() == 0 && len(g.keys) == 0 {
		id := g.store.Alloc("")
		g.store.Results(id, g.next)
		g.store.Release(id)
		g.emitKeyed(out, c, row.Insert, nil, g.next)
		return nil
	}
	for id := range g.store.Slots {
		if g.store.rows(id) == 0 {
			continue // a free slot
		}
		kv, err := g.keyValues(id)
		if err != nil {
			return err
		}
		r := g.arena.RowFrom(c, len(kv)+len(g.next))
		copy(r, kv)
		g.store.Results(id, r[len(kv):])
		out.Emit(row.Insert, r)
	}
	return nil
}

// GroupAggStateVersion starts a GroupAgg snapshot, for a later change of
// the layout.
const GroupAggStateVersion = 1

// Snapshot encodes the groups and counters: a version byte, the dropped
// count, then the aggregate store (Store.AppendState).
func (g *GroupAgg) Snapshot() ([]byte, error) {
	v := byte(GroupAggStateVersion)
	if g.ttl.On() {
		v = groupAggTTLStateVersion
	}
	buf := []byte{v}
	buf = binary.AppendVarint(buf, g.dropped)
	buf = g.store.AppendState(buf, g.slotKey)
	if err := errors.Join(g.store.Err(), g.keyErr); err != nil {
		return nil, err
	}
	if g.ttl.On() {
		buf = g.appendTTL(buf)
	}
	return buf, nil
}

// Restore replaces the operator's state with a snapshot's.
func (g *GroupAgg) Restore(snap []byte) error { return g.restore(row.NewDecoder(snap)) }

// restore reads a snapshot from d, the bytes of one or a stream of them.
func (g *GroupAgg) restore(d *row.Decoder) error {
	switch {
	case g.widenIn != nil:
		g.store.widenIn = g.widenIn
		g.store.widenKey = make([]row.TypeID, len(g.keys))
		for i, c := range g.keys {
			if c < len(g.widenIn) {
				g.store.widenKey[i] = g.widenIn[c]
			}
		}
	case g.widen != nil:
		d.SetWiden(g.widen)
	}
	v := d.Byte()
	if v != GroupAggStateVersion && v != groupAggTTLStateVersion {
		return fmt.Errorf("group aggregate: state version %d, want %d or %d", v, GroupAggStateVersion, groupAggTTLStateVersion)
	}
	g.dropped = d.Varint()
	// The index is built as the keys are read (RestoreState reads the
	// slots and the free ones before the first key).
	index := g.newIndex()
	var free []bool
	g.store.RestoreState(d, func(id int32, key []byte) {
		if free == nil {
			free = make([]bool, g.store.Slots)
			for _, f := range g.store.Free {
				free[f] = true
			}
			index.Reset(int(g.store.Slots))
		}
		if free[id] {
			return
		}
		if g.packed {
			var err error
			if g.cbuf, err = packCanonical(g.cbuf[:0], key); err != nil {
				d.Fail("slot %d: %v", id, err)
				return
			}
			key = g.cbuf
		}
		if _, dup := index.Find(key); dup {
			d.Fail("slot %d repeats a group key", id)
			return
		}
		index.Insert(key, id)
	})
	if free == nil {
		index.Reset(0)
	}
	g.readTTL(d, v == groupAggTTLStateVersion, int(g.store.Slots))
	err := d.End()
	if err == nil && index.Len()+len(g.store.Free) != int(g.store.Slots) {
		err = fmt.Errorf("%d groups and %d free slots in %d slots", index.Len(), len(g.store.Free), g.store.Slots)
	}
	if err != nil {
		index.Release()
		return fmt.Errorf("group aggregate: restore: %w", err)
	}
	g.index.Release()
	g.index = index
	g.lazy = false
	g.dropLazyKeys()
	g.ints.reset()
	if err := g.touchRestored(); err != nil {
		return err
	}
	g.unsettle()
	return nil
}

// WidenRestore makes the next restore read INT as BIGINT and FLOAT as
// DOUBLE (operator.Widener): the group keys, MIN/MAX values and their
// multisets are retagged; sums and counts are held as int64 or float64
// for every width already.
func (g *GroupAgg) WidenRestore(w map[row.TypeID]row.TypeID) { g.widen = w }

// CanWiden implements operator.Widener.
func (g *GroupAgg) CanWiden() bool { return true }

// WidenColumns implements operator.ColumnWidener: the next restore
// retags the key positions of the widened input columns and the values
// of the aggregates over them (MIN/MAX, their multisets, DISTINCT sets),
// and leaves those of the other columns as saved. in is by the state's
// input columns (GroupAggOptions.StateCols), which the retagging reads
// by input column.
func (g *GroupAgg) WidenColumns(in []row.TypeID) {
	if len(g.opt.StateCols) == 0 || in == nil {
		g.widenIn = in
		return
	}
	g.widenIn = make([]row.TypeID, slices.Max(g.opt.StateCols)+1)
	for i, t := range in {
		if i < len(g.opt.StateCols) && t != row.Null {
			g.widenIn[g.opt.StateCols[i]] = t
		}
	}
}

// CanWidenColumns implements operator.ColumnWidener.
func (g *GroupAgg) CanWidenColumns() bool { return true }

var (
	_ operator.Widener       = (*GroupAgg)(nil)
	_ operator.ColumnWidener = (*GroupAgg)(nil)
	_ operator.Operator      = (*GroupAgg)(nil)
	_ operator.Counters      = (*GroupAgg)(nil)
	_ operator.Snapshotter   = (*GroupAgg)(nil)
)

// CarvesRows implements operator.Carving: the rows emitted are cut
// from the output batch's memory (RowArena.RowFrom).
func (g *GroupAgg) CarvesRows() bool { return true }

var (
	_ operator.Carving        = (*GroupAgg)(nil)
	_ operator.StateSizer     = (*GroupAgg)(nil)
	_ operator.PreKeyed       = (*GroupAgg)(nil)
	_ operator.OutputAtFinish = (*GroupAgg)(nil)
)
