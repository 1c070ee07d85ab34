package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Behind Process: an operator that emits nothing before Finish (a
// batch-mode GROUP BY, operator.OutputAtFinish) needs no answer from a
// batch, so Keyed hands each worker its share of the batch and returns
// while the workers fold it: the node's goroutine splits the next batch
// as they fold this one, and no worker waits for the slowest at every
// batch. A worker's share gathers the changes of its keys over input
// batches until it holds asyncChunk of them, so that a worker is handed
// work (and woken) once per some thousand rows per worker, not per
// batch. Each worker folds its shares in order on a goroutine of its
// own, started when a share comes and ended when it has none (so an
// abandoned run leaves no goroutine behind); at most asyncQueue shares
// wait a worker, beyond which Process waits. Every other call (a
// watermark, Finish, a snapshot, a restore, a sweep) first waits for
// all shares to be folded, so it meets the state the batches before it
// made, as without workers. A worker's error is returned by the next
// call. The batch's rows are given back (the fusion's release) by the
// worker that folds its last share, when no worker kept them. The
// state's size and counters are read from what each worker stored
// after its last share, as the node asks for them after every batch.

// asyncQueue is the most shares that wait a worker; asyncChunk the
// changes a share gathers before it is handed over.
const (
	asyncQueue = 4
	asyncChunk = 2048
)

// asyncState is Keyed's part of it.
type asyncState struct {
	on bool
	// inflight counts the shares handed and not yet folded.
	inflight sync.WaitGroup
	mu       sync.Mutex
	err      error // the first worker error, under mu
	// release gives a batch back to whoever mapped it (the node sets
	// it, setRelease); nil: nobody takes batches back.
	release func(*row.Batch)
	// pending is each worker's share being gathered.
	pending []*keyedShare
}

// asyncWorker is a worker's part of it.
type asyncWorker struct {
	q       chan *keyedShare
	free    chan *keyedShare
	running atomic.Bool
	failed  bool // a share failed: skip the others (the worker goroutine's)
	// The operator's size and counters after its last share.
	bytes, entries, dropped atomic.Int64
	why                     atomic.Pointer[string]
	emitted                 countEmits
}

// asyncBatch is an input batch handed to the workers: left counts its
// shares not yet folded, kept says a worker kept its rows.
type asyncBatch struct {
	b    *row.Batch
	left atomic.Int32
	kept atomic.Bool
}

func (k *Keyed) startAsync() {
	k.async.on = true
	for _, w := range k.workers {
		w.aw.q = make(chan *keyedShare, asyncQueue)
		w.aw.free = make(chan *keyedShare, asyncQueue+2)
		k.async.pending = append(k.async.pending, newShare(w))
	}
	k.refresh()
}

// newShare is an empty share for w, a kept one if it has one.
func newShare(w *keyedWorker) *keyedShare {
	select {
	case sh := <-w.aw.free:
		return sh
	default:
		return &keyedShare{}
	}
}

// setRelease implements batchReleaser.
func (k *Keyed) setRelease(f func(*row.Batch)) { k.async.release = f }

// processAsync splits in into the pending shares and hands over those
// that gathered enough.
func (k *Keyed) processAsync(in *row.Batch) error {
	if err := k.asyncErr(); err != nil {
		return err
	}
	pending := k.async.pending
	before := k.counts[:0]
	for _, sh := range pending {
		before = append(before, len(sh.sub.Changes))
	}
	k.counts = before
	k.split(in, k.workers, func(w *keyedWorker) *keyedShare { return pending[w.i] }, true)
	ab := &asyncBatch{b: in}
	for i, sh := range pending {
		if len(sh.sub.Changes) > before[i] {
			ab.left.Add(1)
			sh.batches = append(sh.batches, ab)
			sh.segs = append(sh.segs, int32(before[i]))
		}
	}
	if ab.left.Load() == 0 {
		k.giveBack(in)
		return nil
	}
	for i, sh := range pending {
		if len(sh.sub.Changes) >= asyncChunk {
			k.handOver(i)
		}
	}
	return nil
}

// handOver queues worker i's pending share, if it has changes, and
// starts a new one.
func (k *Keyed) handOver(i int) {
	sh, w := k.async.pending[i], k.workers[i]
	if len(sh.sub.Changes) == 0 {
		return
	}
	sh.sub.Origin = &asyncOrigin{sh: sh}
	k.async.pending[i] = newShare(w)
	k.async.inflight.Add(1)
	w.aw.q <- sh
	if w.aw.running.CompareAndSwap(false, true) {
		go k.drainQueue(w)
	}
}

// drainQueue folds w's queued shares, and ends when there are none:
// the next share starts it again. A share queued as it ends is seen by
// the recheck or by the queuer's CompareAndSwap.
func (k *Keyed) drainQueue(w *keyedWorker) {
	for {
		select {
		case sh := <-w.aw.q:
			k.fold(w, sh)
		default:
			w.aw.running.Store(false)
			if len(w.aw.q) == 0 || !w.aw.running.CompareAndSwap(false, true) {
				return
			}
		}
	}
}

// fold folds one share on w's goroutine.
func (k *Keyed) fold(w *keyedWorker, sh *keyedShare) {
	defer k.async.inflight.Done()
	if !w.aw.failed {
		w.aw.emitted = 0
		err := panics.Call(func() error { return k.processShare(w, sh, &w.aw.emitted) })
		if err == nil && w.aw.emitted > 0 {
			err = fmt.Errorf("keyed operator: %T emitted %d changes before Finish, though it said it would not", w.op, w.aw.emitted)
		}
		if err != nil {
			w.aw.failed = true
			k.async.mu.Lock()
			k.async.err = errors.Join(k.async.err, err)
			k.async.mu.Unlock()
		}
		if rel, ok := w.op.(operator.InputReleaser); err != nil || !ok || !rel.ReleasesInput() {
			for _, ab := range sh.batches {
				ab.kept.Store(true)
			}
		}
		k.store(w)
	}
	for _, ab := range sh.batches {
		if ab.left.Add(-1) == 0 && !ab.kept.Load() {
			k.giveBack(ab.b)
		}
	}
	putShare(w, sh)
}

// putShare keeps sh for w's next share, its rows dropped.
func putShare(w *keyedWorker, sh *keyedShare) {
	clear(sh.sub.Changes)
	clear(sh.batches)
	sh.sub.Changes, sh.from, sh.batches, sh.segs = sh.sub.Changes[:0], sh.from[:0], sh.batches[:0], sh.segs[:0]
	sh.keys.Reset()
	sh.sub.Origin = nil
	select {
	case w.aw.free <- sh:
	default:
	}
}

func (k *Keyed) giveBack(b *row.Batch) {
	if k.async.release != nil {
		k.async.release(b)
	}
}

// asyncErr is the first error a worker met, if any.
func (k *Keyed) asyncErr() error {
	k.async.mu.Lock()
	defer k.async.mu.Unlock()
	return k.async.err
}

// sync waits until every queued share is folded, and returns the
// first error of a worker.
func (k *Keyed) sync() error {
	if !k.async.on {
		return nil
	}
	for i := range k.async.pending {
		k.handOver(i)
	}
	k.async.inflight.Wait()
	return k.asyncErr()
}

// store notes w's operator's size and counters.
func (k *Keyed) store(w *keyedWorker) {
	if s, ok := w.op.(operator.StateMemory); ok {
		w.aw.bytes.Store(s.StateBytes())
	}
	if s, ok := w.op.(operator.StateSizer); ok {
		w.aw.entries.Store(s.StateEntries())
	}
	if c, ok := w.op.(operator.Counters); ok {
		d, why := c.Dropped()
		w.aw.dropped.Store(d)
		w.aw.why.Store(&why)
	}
}

// refresh notes every worker's size and counters, with no share in
// flight.
func (k *Keyed) refresh() {
	if k.async.on {
		for _, w := range k.workers {
			k.store(w)
		}
	}
}

// asyncOrigin is the Origin of a share that holds changes of several
// input batches: change i is change from[i] of the batch whose segment
// holds it.
type asyncOrigin struct{ sh *keyedShare }

// batchOf is the input batch change i of the share is of.
func (o *asyncOrigin) batchOf(i int) *row.Batch {
	segs := o.sh.segs
	j, found := slices.BinarySearch(segs, int32(i))
	if !found {
		j--
	}
	return o.sh.batches[j].b
}

// Position implements row.Origin.
func (o *asyncOrigin) Position(i int) string {
	if i < 0 || i >= len(o.sh.from) {
		return ""
	}
	b := o.batchOf(i)
	if b.Origin == nil {
		return ""
	}
	return b.Origin.Position(int(o.sh.from[i]))
}

// InputChange implements operator.ShareOrigin.
func (o *asyncOrigin) InputChange(i int) int {
	if i < 0 || i >= len(o.sh.from) {
		return i
	}
	return int(o.sh.from[i])
}

// countEmits counts what an operator emits where it should not.
type countEmits int

// Emit implements operator.Emitter.
func (c *countEmits) Emit(row.Kind, row.Row) { *c++ }

// batchReleaser is an operator that gives its input batches back
// itself, later than Process returns (Keyed behind Process).
type batchReleaser interface {
	setRelease(func(*row.Batch))
}

var (
	_ batchReleaser        = (*Keyed)(nil)
	_ operator.ShareOrigin = (*asyncOrigin)(nil)
)
