package runtime

import (
	"sync"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Outside a batch (a watermark, a flush, the end) the workers' changes
// go out worker after worker. Kept whole until the last worker ended, a
// batch GROUP BY's end held its whole output at once (10M groups on two
// workers: 1.9 GB against one worker's 0.6 GB). So the first worker
// emits straight to the node's emitter and each other hands its changes
// over in chunks through a short queue, which it waits on when full:
// every worker runs at once, and what is held is a few chunks a worker.

const (
	turnChunk = 1024 // changes a chunk
	turnDepth = 4    // chunks a worker has in the queue before it waits
)

// turnChange is one change a worker emitted.
type turnChange struct {
	kind row.Kind
	row  row.Row
}

// turnEmitter is a worker's emitter behind the first: full chunks go
// to queue; the node gives emptied ones back on free.
type turnEmitter struct {
	cur   []turnChange
	queue chan []turnChange
	free  chan []turnChange
}

// At implements operator.Tracker: outside a batch no change comes from
// an input change.
func (e *turnEmitter) At(int) {}

// Emit implements operator.Emitter.
func (e *turnEmitter) Emit(k row.Kind, r row.Row) {
	if e.cur == nil {
		select {
		case e.cur = <-e.free:
		default:
			e.cur = make([]turnChange, 0, turnChunk)
		}
	}
	e.cur = append(e.cur, turnChange{k, r})
	if len(e.cur) == turnChunk {
		e.queue <- e.cur
		e.cur = nil
	}
}

// untracked passes the first worker's changes to the node's emitter as
// coming from no input change.
type untracked struct{ out operator.Emitter }

func (u untracked) At(int)                     {}
func (u untracked) Emit(k row.Kind, r row.Row) { u.out.Emit(k, r) }

// inTurn runs f on every worker at once and emits their changes on out
// worker after worker, as they make them; it returns the first worker's
// error, after which nothing more is emitted (the run fails, as a
// single instance's error would fail it midway too).
func (k *Keyed) inTurn(out operator.Emitter, f func(op operator.KeyGrouped, em operator.Emitter) error) error {
	if err := k.sync(); err != nil {
		return err
	}
	defer k.refresh()
	if tr, ok := out.(operator.Tracker); ok {
		tr.At(-1)
	}
	rest := k.workers[1:]
	ems := make([]*turnEmitter, len(rest))
	var wg sync.WaitGroup
	for i, w := range rest {
		em := &turnEmitter{queue: make(chan []turnChange, turnDepth), free: make(chan []turnChange, turnDepth+1)}
		ems[i] = em
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(em.queue)
			w.err = panics.Call(func() error { return f(w.op, em) })
			if len(em.cur) > 0 {
				em.queue <- em.cur
			}
		}()
	}
	w0 := k.workers[0]
	w0.err = panics.Call(func() error { return f(w0.op, untracked{out}) })
	first := w0.err
	for i, em := range ems {
		for chunk := range em.queue {
			if first == nil {
				for _, c := range chunk {
					out.Emit(c.kind, c.row)
				}
			}
			clear(chunk) // no rows kept alive past their emit
			select {
			case em.free <- chunk[:0]:
			default:
			}
		}
		if first == nil {
			first = rest[i].err // written before its queue closed
		}
	}
	wg.Wait()
	return first
}
