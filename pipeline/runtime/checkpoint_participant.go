package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
)

// commitReq asks a committer to commit its state of a checkpoint.
type commitReq struct {
	id    int64
	state []byte
}

// participant is the coordinator's view of one node and the node's
// channels to it.
type participant struct {
	node     *Node
	stateful bool // its state goes into checkpoints
	counts   bool // an operator.StateSizer: its reports count entries
	// optional: a checkpoint without the node's state fits the graph,
	// and one with the state of a node the graph lacks too (dead letters
	// added to a pipeline, or taken from it).
	optional bool
	// trigger carries barrier requests to a source.
	trigger chan int64
	// interrupt cuts short an unbounded source's Read so that it sees a
	// trigger or a commit without waiting for data (see nudge).
	interrupt *readInterrupt
	// committer is the node's connector if it commits; queue holds its
	// commit requests, in order, so that the coordinator never waits for
	// the node to take them; notify wakes a node waiting for one.
	committer connector.Committer
	mu        sync.Mutex
	queue     []commitReq
	notify    chan struct{}
	// restored is the node's part of the checkpoint the run started from.
	restored *checkpoint.Component
	// final state, once ended.
	final *report
}

// enqueue adds a commit request and wakes the node.
func (p *participant) enqueue(r commitReq) {
	p.mu.Lock()
	p.queue = append(p.queue, r)
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
	p.nudge()
}

// nudge interrupts an unbounded source's Read if a request is still
// waiting after interruptGrace.
func (p *participant) nudge() {
	if p.interrupt == nil {
		return
	}
	time.AfterFunc(interruptGrace, func() {
		p.mu.Lock()
		waiting := len(p.queue) > 0 || len(p.trigger) > 0
		p.mu.Unlock()
		if waiting {
			p.interrupt.interrupt()
		}
	})
}

// commitPending runs the queued commits, oldest first, in the node's
// goroutine.
func (p *participant) commitPending(ctx context.Context) error {
	if p == nil || p.committer == nil {
		return nil
	}
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.mu.Unlock()
			return nil
		}
		r := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		if err := p.committer.Commit(ctx, r.state); err != nil {
			return fmt.Errorf("commit of checkpoint %d: %w", r.id, err)
		}
	}
}

// waitFinal runs commits until the coordinator has sent the final
// checkpoint's (done closed), then returns.
func (p *participant) waitFinal(ctx context.Context, done <-chan struct{}) error {
	if p == nil || p.committer == nil {
		return nil
	}
	for {
		if err := p.commitPending(ctx); err != nil {
			return err
		}
		select {
		case <-p.notify:
		case <-done:
			return p.commitPending(ctx)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// readInterrupt lets the coordinator cut short an unbounded source's Read
// (a Kafka source waiting for messages), so that barriers and commits do
// not wait for data to arrive. The connector contract makes that safe: a
// Read whose context ends returns without losing what it did not return.
type readInterrupt struct {
	mu      sync.Mutex
	cancel  context.CancelCauseFunc
	pending bool
}

// begin returns the context for one Read, or nil when an interrupt is
// already pending: the caller handles it first.
func (r *readInterrupt) begin(parent context.Context) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		r.pending = false
		return nil
	}
	ctx, cancel := context.WithCancelCause(parent)
	r.cancel = cancel
	return ctx
}

// end releases the Read's context and reports whether it was interrupted.
func (r *readInterrupt) end(ctx context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	interrupted := errors.Is(context.Cause(ctx), errInterrupted)
	r.cancel(nil)
	r.cancel = nil
	r.pending = false
	return interrupted
}

func (r *readInterrupt) interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel(errInterrupted)
		return
	}
	r.pending = true
}
