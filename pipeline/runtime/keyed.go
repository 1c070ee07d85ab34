package runtime

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Keyed runs a keyed operator (a GROUP BY, a window aggregate, a Top-N,
// a deduplication; a join through KeyedTwo) as several workers, each an
// instance of the operator with its own state, owning the keys of its
// key groups (operator.KeyGroupOf, operator.WorkerOf). It is one
// operator to the node that runs it: every call (a batch, a watermark,
// a flush, the end of the input) is cut by key and run by all workers
// at once, and returns when all are done, with what they emitted in
// worker order. So the node's contract holds unchanged: barriers need
// no alignment among the workers (a snapshot is taken between two
// calls, when none runs), the changes of one key keep their order (one
// worker has them all, in input order), and a checkpoint is the
// workers' state cut in key groups, which a run with another number of
// workers restores (keyed_state.go). With one worker, every call goes
// straight to it.
//
// Changes across keys come out in another order than one instance
// would emit them; each key's changes, and so the table they make, are
// the same.
type Keyed struct {
	keys    []int
	width   int // the row width the keys need
	workers []*keyedWorker
	build   func() (operator.KeyGrouped, error)
	kbuf    []byte
	shares  []*keyedShare // split's scratch
	counts  []int         // processAsync's scratch
	// pre: the operator takes its keys from the split (operator.PreKeyed),
	// which encodes and hashes each key once for both.
	pre bool
	// async: the workers fold their shares behind Process
	// (keyed_async.go).
	async asyncState
	// widen is the retagging of the next restore (WidenRestore).
	widen map[row.TypeID]row.TypeID
	// widenIn, with widen, retags by input column (WidenColumns).
	widenIn []row.TypeID
	// lateReport is the node's LateReporter function, lateAll its
	// scratch (keyed_late.go).
	lateReport func(i int)
	lateAll    []int
	// synced: the operator's shared state moves with every key's rows
	// (operator.SyncedState, keyed_sync.go).
	synced bool
}

// keyedWorker is one instance of the operator, the share of the current
// batch it gets, and what it emitted.
type keyedWorker struct {
	i  int // its index in Keyed.workers
	op operator.KeyGrouped
	// keyedShare is the worker's share of the batch being processed.
	keyedShare
	// reuse: the operator kept nothing of the last share, whose slices
	// may then be filled again.
	reuse bool
	out   keyedEmits
	err   error
	aw    asyncWorker // keyed_async.go
	late  keyedLate   // keyed_late.go
}

// keyedShare is a worker's share of a batch: sub, whose change i is
// change from[i] of the batch, and with Keyed.pre their keys.
type keyedShare struct {
	sub  row.Batch
	from []int32
	keys operator.EncodedKeys
	// batches are, behind Process, the input batches the share holds
	// changes of, and segs where each one's start (asyncOrigin).
	batches []*asyncBatch
	segs    []int32
}

// NewKeyed builds n instances of the operator with build, keyed by the
// input columns keys. n < 1 means one.
func NewKeyed(keys []int, n int, build func() (operator.KeyGrouped, error)) (*Keyed, error) {
	n = max(1, min(n, operator.KeyGroups))
	k := &Keyed{keys: keys, build: build}
	for _, c := range keys {
		k.width = max(k.width, c+1)
	}
	for range n {
		op, err := build()
		if err != nil {
			return nil, err
		}
		k.workers = append(k.workers, &keyedWorker{i: len(k.workers), op: op, out: keyedEmits{cur: -1}})
	}
	if _, ok := k.workers[0].op.(operator.PreKeyed); ok && n > 1 {
		// One worker takes its batches straight, hashing with its own
		// seeded hash; several take the split's.
		k.pre = true
		for _, w := range k.workers {
			w.op.(operator.PreKeyed).UseKeyHash()
		}
	}
	_, k.synced = k.workers[0].op.(operator.SyncedState)
	if d, ok := k.workers[0].op.(operator.OutputAtFinish); ok && n > 1 && d.EmitsOnlyAtFinish() {
		k.startAsync()
	}
	return k, nil
}

// Op is k as the node runs it: with the operator's TTL methods when its
// operator takes a TTL (keyedTTL), so that the node and the planner see
// the interfaces the operator has.
func (k *Keyed) Op() operator.Operator {
	if _, ok := k.workers[0].op.(operator.TTLSetter); ok {
		return &KeyedTTL{k}
	}
	return k
}

// Workers is the number of workers.
func (k *Keyed) Workers() int { return len(k.workers) }

// Worker returns worker i's operator (tests, and `etld state dump`).
// Behind Process, once the queued shares are folded.
func (k *Keyed) Worker(i int) operator.KeyGrouped {
	_ = k.sync() // the error is the next call's
	return k.workers[i].op
}

// Process implements operator.Operator: each change goes to the worker
// of its key. Its key is encoded and hashed once, here, and handed with
// the change to an operator that takes it (operator.PreKeyed).
func (k *Keyed) Process(in *row.Batch, out operator.Emitter) error {
	if len(k.workers) == 1 {
		return k.workers[0].op.(operator.Operator).Process(in, out)
	}
	if k.async.on {
		return k.processAsync(in)
	}
	for _, w := range k.workers {
		if !w.reuse {
			w.sub.Changes, w.from = nil, nil
		}
	}
	k.split(in, k.workers, func(w *keyedWorker) *keyedShare { return &w.keyedShare }, false)
	err := k.run(out, func(w *keyedWorker) error {
		k.see(w, 0, in)
		if len(w.sub.Changes) == 0 {
			w.reuse = true
			return nil
		}
		err := k.processShare(w, &w.keyedShare, &w.out)
		rel, ok := w.op.(operator.InputReleaser)
		w.reuse = err == nil && ok && rel.ReleasesInput()
		return err
	})
	k.reportLate()
	return err
}

// split cuts in in shares by key, worker w's into share(w), which it
// empties first unless appending.
func (k *Keyed) split(in *row.Batch, workers []*keyedWorker, share func(w *keyedWorker) *keyedShare, appending bool) {
	shares := k.shares[:0]
	for _, w := range workers {
		sh := share(w)
		if !appending {
			sh.sub.Changes, sh.from = sh.sub.Changes[:0], sh.from[:0]
			sh.keys.Reset()
		}
		shares = append(shares, sh)
	}
	k.shares = shares
	n := len(shares)
	for i := range in.Changes {
		r := in.Changes[i].Row
		wi := 0 // a row too narrow for the keys: the first, whose operator reports it
		var h uint64
		if len(r) >= k.width {
			k.kbuf = row.KeyOf(k.kbuf[:0], r, k.keys)
			h = operator.KeyHash(k.kbuf)
			wi = operator.WorkerOf(int(h%operator.KeyGroups), n)
		} else {
			k.kbuf = k.kbuf[:0]
		}
		sh := shares[wi]
		sh.sub.Changes = append(sh.sub.Changes, in.Changes[i])
		sh.from = append(sh.from, int32(i))
		if k.pre {
			sh.keys.Bytes = append(sh.keys.Bytes, k.kbuf...)
			sh.keys.Ends = append(sh.keys.Ends, int32(len(sh.keys.Bytes)))
			sh.keys.Hashes = append(sh.keys.Hashes, operator.TableHash(h))
		}
	}
	for _, sh := range shares {
		if !appending {
			sh.sub.Origin = &shareOrigin{parent: in.Origin, from: sh.from}
		}
		if k.pre {
			// Room after the last key (operator.EncodedKeys).
			sh.keys.Bytes = slices.Grow(sh.keys.Bytes, 16)
		}
	}
}

// processShare hands a share to w's operator, with its keys when it
// takes them.
func (k *Keyed) processShare(w *keyedWorker, sh *keyedShare, out operator.Emitter) error {
	if k.pre {
		return w.op.(operator.PreKeyed).ProcessKeys(&sh.sub, &sh.keys, out)
	}
	return w.op.(operator.Operator).Process(&sh.sub, out)
}

// ReleasesInput implements operator.InputReleaser: when every worker
// kept nothing of its share. Behind Process, never: the workers give
// each batch back themselves once they are done with it.
func (k *Keyed) ReleasesInput() bool {
	if k.async.on {
		return false
	}
	if len(k.workers) == 1 {
		rel, ok := k.workers[0].op.(operator.InputReleaser)
		return ok && rel.ReleasesInput()
	}
	for _, w := range k.workers {
		if !w.reuse {
			return false
		}
	}
	return true
}

// Watermark implements operator.Lifecycle.
func (k *Keyed) Watermark(wm int64, out operator.Emitter) error {
	err := k.all(out, func(op operator.KeyGrouped, em operator.Emitter) error { return op.Watermark(wm, em) })
	if err != nil {
		return err
	}
	return k.syncShared()
}

// Finish implements operator.Lifecycle.
func (k *Keyed) Finish(out operator.Emitter) error {
	return k.all(out, func(op operator.KeyGrouped, em operator.Emitter) error { return op.Finish(em) })
}

// Flush implements operator.Flusher when the operator does.
func (k *Keyed) Flush(out operator.Emitter) error {
	return k.all(out, func(op operator.KeyGrouped, em operator.Emitter) error {
		if f, ok := op.(operator.Flusher); ok {
			return f.Flush(em)
		}
		return nil
	})
}

// FlushEvery implements operator.Flusher: the operator's, 0 (never)
// when it is no Flusher.
func (k *Keyed) FlushEvery() time.Duration {
	if f, ok := k.workers[0].op.(operator.Flusher); ok {
		return f.FlushEvery()
	}
	return 0
}

// Dropped implements operator.Counters: the workers' sum.
func (k *Keyed) Dropped() (int64, string) {
	if k.async.on {
		var n int64
		why := ""
		for _, w := range k.workers {
			n += w.aw.dropped.Load()
			if p := w.aw.why.Load(); p != nil {
				why = *p
			}
		}
		return n, why
	}
	var n int64
	var why string
	for _, w := range k.workers {
		if c, ok := w.op.(operator.Counters); ok {
			d, r := c.Dropped()
			n, why = n+d, r
		}
	}
	return n, why
}

// StateEntries implements operator.StateSizer: the workers' sum.
func (k *Keyed) StateEntries() int64 {
	var n int64
	if k.async.on {
		for _, w := range k.workers {
			n += w.aw.entries.Load()
		}
		return n
	}
	for _, w := range k.workers {
		if s, ok := w.op.(operator.StateSizer); ok {
			n += s.StateEntries()
		}
	}
	return n
}

// StateBytes implements operator.StateMemory: the workers' sum, which
// the pipeline's max_state_bytes bounds as it bounds one instance's.
func (k *Keyed) StateBytes() int64 {
	var n int64
	if k.async.on {
		for _, w := range k.workers {
			n += w.aw.bytes.Load()
		}
		return n
	}
	for _, w := range k.workers {
		if s, ok := w.op.(operator.StateMemory); ok {
			n += s.StateBytes()
		}
	}
	return n
}

// DumpState implements operator.StateDumper: each of the operator's
// tables once, in the order the workers name them, with every worker's
// rows of it. A consumer takes the rows after a table as that table's,
// so the workers' dumps are read once for the tables' names, then once
// per table, keeping only its rows: no copy of the state is held.
func (k *Keyed) DumpState(d *operator.StateDump) error {
	if err := k.sync(); err != nil {
		return err
	}
	var names []string
	schemas := map[string]row.Schema{}
	list := *d
	list.Table = func(name string, cols row.Schema) error {
		if _, ok := schemas[name]; !ok {
			names = append(names, name)
			schemas[name] = cols
		}
		return nil
	}
	list.Row = func(row.Row) error { return nil }
	if err := k.dumpWorkers(&list); err != nil {
		return err
	}
	for _, name := range names {
		if err := d.Table(name, schemas[name]); err != nil {
			return err
		}
		cur := ""
		one := *d
		one.Table = func(n string, _ row.Schema) error {
			cur = n
			return nil
		}
		one.Row = func(r row.Row) error {
			if cur != name {
				return nil
			}
			return d.Row(r)
		}
		if err := k.dumpWorkers(&one); err != nil {
			return err
		}
	}
	return nil
}

// dumpWorkers runs every worker's DumpState into d.
func (k *Keyed) dumpWorkers(d *operator.StateDump) error {
	for i, w := range k.workers {
		dd, ok := w.op.(operator.StateDumper)
		if !ok {
			return fmt.Errorf("keyed operator: %T lists no state", w.op)
		}
		if err := dd.DumpState(d); err != nil {
			return fmt.Errorf("worker %d: %w", i, err)
		}
	}
	return nil
}

// all runs f on every worker's operator, with its emits gathered, then
// emits them on out in worker order.
func (k *Keyed) all(out operator.Emitter, f func(op operator.KeyGrouped, em operator.Emitter) error) error {
	if len(k.workers) == 1 {
		return f(k.workers[0].op, out)
	}
	for _, w := range k.workers {
		w.from = nil // emits outside a batch come from no input change
	}
	if out == nil {
		return k.run(nil, func(w *keyedWorker) error { return f(w.op, &w.out) })
	}
	return k.inTurn(out, f)
}

// run runs f on every worker at once (the first on the calling
// goroutine), waits for all, emits what they emitted on out (nil: they
// emit nothing) in worker order, and returns the first worker's error.
// A panic of a worker is its error, as the node's own would be.
func (k *Keyed) run(out operator.Emitter, f func(w *keyedWorker) error) error {
	if err := k.sync(); err != nil {
		return err
	}
	defer k.refresh()
	var wg sync.WaitGroup
	for _, w := range k.workers[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.err = panics.Call(func() error { return f(w) })
		}()
	}
	w0 := k.workers[0]
	w0.err = panics.Call(func() error { return f(w0) })
	wg.Wait()
	var first error
	for _, w := range k.workers {
		if first == nil && w.err != nil {
			first = w.err
		}
	}
	if out != nil && first == nil {
		k.replay(out)
	}
	for _, w := range k.workers {
		w.out.reset()
	}
	return first
}

// replay emits the workers' changes on out. Within a batch they are
// merged by the input change each came from, so that an operator that
// emits as it reads (a streaming GROUP BY) gives the very sequence one
// instance gives, however the input was cut in batches (and a run that
// restarts from a checkpoint writes what an uninterrupted one wrote);
// a change that names no input change goes with the one before it.
// Outside a batch (a watermark, the end), worker after worker.
func (k *Keyed) replay(out operator.Emitter) {
	tr, _ := out.(operator.Tracker)
	type head struct {
		w    *keyedWorker
		next int
		at   int32 // the input change of the change at next, or the last one's
	}
	heads := make([]head, 0, len(k.workers))
	for _, w := range k.workers {
		if len(w.out.kinds) > 0 {
			heads = append(heads, head{w: w, at: -1})
		}
	}
	for len(heads) > 0 {
		best := -1
		for i := range heads {
			h := &heads[i]
			if c := h.w.out.at[h.next]; c >= 0 && int(c) < len(h.w.from) {
				h.at = h.w.from[c]
			}
			if best < 0 || h.at < heads[best].at {
				best = i
			}
		}
		h := &heads[best]
		e, i := &h.w.out, h.next
		if tr != nil {
			at := -1
			if c := e.at[i]; c >= 0 && int(c) < len(h.w.from) {
				at = int(h.w.from[c])
			}
			tr.At(at)
		}
		out.Emit(e.kinds[i], e.rows[i])
		if h.next++; h.next == len(e.kinds) {
			heads = slices.Delete(heads, best, best+1)
		}
	}
}

// shareOrigin is the Origin of a worker's share of a batch: change i is
// change from[i] of the batch, whose origin is parent (nil for none).
type shareOrigin struct {
	parent row.Origin
	from   []int32
}

// Position implements row.Origin.
func (s *shareOrigin) Position(i int) string {
	if s.parent == nil || i < 0 || i >= len(s.from) {
		return ""
	}
	return s.parent.Position(int(s.from[i]))
}

// InputChange implements operator.ShareOrigin.
func (s *shareOrigin) InputChange(i int) int {
	if i < 0 || i >= len(s.from) {
		return i
	}
	return int(s.from[i])
}

// keyedEmits is a worker's emitter: it keeps the changes and the input
// change each came from (operator.Tracker) until the node's emitter
// gets them.
type keyedEmits struct {
	kinds []row.Kind
	rows  []row.Row
	at    []int32
	cur   int32
}

// At implements operator.Tracker.
func (e *keyedEmits) At(i int) { e.cur = int32(i) }

// Emit implements operator.Emitter.
func (e *keyedEmits) Emit(k row.Kind, r row.Row) {
	e.kinds = append(e.kinds, k)
	e.rows = append(e.rows, r)
	e.at = append(e.at, e.cur)
}

func (e *keyedEmits) reset() {
	clear(e.rows) // no rows kept alive past the call
	e.kinds, e.rows, e.at, e.cur = e.kinds[:0], e.rows[:0], e.at[:0], -1
}

// CarvesRows implements operator.Carving: one worker emits into the
// node's emitter itself; several each into their own.
func (k *Keyed) CarvesRows() bool {
	if len(k.workers) != 1 {
		return false
	}
	cv, ok := k.workers[0].op.(operator.Carving)
	return ok && cv.CarvesRows()
}

var (
	_ operator.Carving           = (*Keyed)(nil)
	_ operator.Operator          = (*Keyed)(nil)
	_ operator.StreamSnapshotter = (*Keyed)(nil)
	_ operator.Flusher           = (*Keyed)(nil)
	_ operator.InputReleaser     = (*Keyed)(nil)
	_ operator.Counters          = (*Keyed)(nil)
	_ operator.StateMemory       = (*Keyed)(nil)
	_ operator.StateDumper       = (*Keyed)(nil)
	_ operator.ShareOrigin       = (*shareOrigin)(nil)
)
