package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
)

// Checkpoints (Flink's aligned barriers, in one process).
//
// Every interval the coordinator picks the next checkpoint id N and asks
// each running source for barrier N. The source answers between two
// Reads (an unbounded source's Read is interrupted: see readInterrupt): it
// records its position, reports it and sends barrier N downstream after
// the batches it already sent. An operator receiving barrier N on all its
// inputs (a union aligns them: see union.go) snapshots its state,
// reports it and forwards the barrier. A sink receiving barrier N flushes,
// so that everything before the barrier is durable, takes its own
// snapshot if it has one, and reports. Checkpoint N is complete when every
// node has reported N, or has ended (then its final state stands in: a
// node that ended has nothing after its end). The coordinator then stores
// it (if the run has a store) and only then asks every Committer (Kafka
// sources, two-phase sinks) to commit its part, in the committer's own
// goroutine, between its Reads or Writes.
//
// At the end of a run every node reports its final state when its input
// ends; when all have, the coordinator takes the final checkpoint and the
// sources and sinks that commit wait for its Commit before they close.
// A bounded input's end marks each node Ended, and a checkpoint whose
// sources all ended is Finished: restoring it reads nothing and finishes
// nothing again, it only repeats the commits. A graceful stop ends the
// sources without that mark: with a store, operators then keep their
// state instead of finishing (open windows wait in the checkpoint for the
// next run); without one they finish as at the end of input, since
// nothing would keep their state.
//
// One checkpoint is in flight at a time: a tick while one is running is
// skipped. A checkpoint waits as long as a sink's Flush does (a target
// that is down holds it back); it never times out into data loss.

// Snapshotter is an operator with state that checkpoints keep: Snapshot
// encodes it at a barrier, Restore replaces it before the run starts.
// Both are called from the operator's goroutine (or before it starts).
type Snapshotter interface {
	Snapshot() ([]byte, error)
	Restore(state []byte) error
}

// DefaultCheckpointInterval is used when neither the pipeline file nor
// the run sets an interval.
const DefaultCheckpointInterval = 10 * time.Second

// CheckpointOptions configure a run's checkpoints.
type CheckpointOptions struct {
	// Interval between checkpoints; DefaultCheckpointInterval if <= 0.
	Interval time.Duration
	// Store keeps the checkpoints and gives the one to restore on start.
	// Without one, barriers and commits still run (Kafka offsets are
	// committed only after delivery, two-phase sinks publish) but nothing
	// is written and nothing is restored.
	Store *checkpoint.Store
	// Logger receives a line per restore and per failure.
	Logger *slog.Logger
}

// CheckpointStats are a run's checkpoint counters, safe to read while it
// runs.
type CheckpointStats struct {
	// Count is the number of completed checkpoints (stored, if there is a
	// store), the final one included.
	Count atomic.Int64
	// Failures counts checkpoints that could not be stored.
	Failures atomic.Int64
	// LastID is the id of the last completed checkpoint, 0 if none.
	LastID atomic.Int64
	// LastDuration is from the trigger to stored, in nanoseconds.
	LastDuration atomic.Int64
	// LastSize is the size of the last checkpoint file in bytes (0
	// without a store).
	LastSize atomic.Int64
	// LastAt is when the last checkpoint completed, in Unix nanoseconds
	// (0 if none): the console shows its age.
	LastAt atomic.Int64
	// Restored is the id of the checkpoint the run started from, 0 if
	// none.
	Restored atomic.Int64
}

// report is what a node tells the coordinator: its state at barrier id,
// or (ended) its final state.
type report struct {
	part      int
	id        int64
	ended     bool
	finished  bool // ended at the end of its input, not by a stop
	runtime   []byte
	connector []byte
	// rows, from a sink, is its RowsIn at the barrier (or at its end).
	rows int64
}

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

// interruptGrace is how long a source may take to reach a barrier request
// or a commit by itself before its Read is interrupted: a busy source
// gets there within a Read; only one waiting for data is cut short.
const interruptGrace = 100 * time.Millisecond

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

// coordinator runs a graph's checkpoints.
type coordinator struct {
	g         *Graph
	opt       CheckpointOptions
	log       *slog.Logger
	parts     []*participant
	reports   chan report
	done      chan struct{} // closed once the final checkpoint's commits are queued
	resumable bool          // a store exists: a stop keeps operator state
	nextID    int64
	cur       *inflight // the checkpoint being taken
	// asked carries a source's request for a checkpoint before the
	// interval is up (connector.CheckpointAsker).
	asked chan struct{}
}

func newCoordinator(g *Graph, opt CheckpointOptions) *coordinator {
	if opt.Interval <= 0 {
		opt.Interval = DefaultCheckpointInterval
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &coordinator{g: g, opt: opt, log: log, done: make(chan struct{}), resumable: opt.Store != nil, nextID: 1, asked: make(chan struct{}, 1)}
	add := func(n *Node, stateful bool, committer any) *participant {
		p := &participant{node: n, stateful: stateful, notify: make(chan struct{}, 1)}
		if cm, ok := committer.(connector.Committer); ok {
			p.committer = cm
		}
		n.cp = p
		n.cpIndex = len(c.parts)
		c.parts = append(c.parts, p)
		return p
	}
	for _, s := range g.Sources {
		if s.ID == "" {
			s.ID = "source/" + s.Name
		}
		p := add(&s.Node, true, s.Source)
		p.trigger = make(chan int64, 1)
		if a, ok := s.Source.(connector.CheckpointAsker); ok {
			a.AskCheckpoints(c.ask)
		}
		if !s.Source.Bounded() {
			p.interrupt = &readInterrupt{}
		}
	}
	for i, o := range g.Ops {
		if o.ID == "" {
			o.ID = fmt.Sprintf("transform/%s/%d", o.Name, i)
		}
		_, stateful := o.Op.(Snapshotter)
		add(&o.Node, stateful, nil)
	}
	for i, u := range g.Unions {
		if u.ID == "" {
			u.ID = fmt.Sprintf("union/%s/%d", u.Name, i)
		}
		add(&u.Node, false, nil)
	}
	for _, s := range g.Sinks {
		if s.ID == "" {
			s.ID = "sink/" + s.Name
		}
		add(&s.Node, true, s.Sink)
	}
	c.reports = make(chan report, 2*len(c.parts))
	return c
}

// report hands r to the coordinator.
func (c *coordinator) report(ctx context.Context, r report) error {
	select {
	case c.reports <- r:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// restore reads the newest checkpoint, checks that it fits the graph and
// hands every node its state. It runs before any node starts.
func (c *coordinator) restore() error {
	if c.opt.Store == nil {
		return nil
	}
	cp, err := c.opt.Store.Latest()
	if err != nil {
		return fmt.Errorf("%w (remove or move away %s to start from scratch)", err, c.opt.Store.Dir())
	}
	if cp == nil {
		return nil
	}
	if err := c.fits(cp); err != nil {
		return err
	}
	for _, p := range c.parts {
		p.restored = cp.Find(p.node.ID)
	}
	for _, s := range c.g.Sources {
		comp := s.cp.restored
		if comp.Connector == nil {
			continue
		}
		pos, ok := s.Source.(connector.Positioner)
		if !ok {
			c.log.Warn("source cannot resume from a position: it starts from its beginning", "source", s.Name, "checkpoint", cp.ID)
			continue
		}
		if err := pos.Restore(comp.Connector); err != nil {
			return fmt.Errorf("source %q: restore from checkpoint %d: %w", s.Name, cp.ID, err)
		}
	}
	for _, o := range c.g.Ops {
		comp := o.cp.restored
		sn, ok := o.Op.(Snapshotter)
		if !ok || comp == nil {
			continue
		}
		if err := sn.Restore(comp.Runtime); err != nil {
			return fmt.Errorf("transform %q: restore from checkpoint %d: %w", o.Name, cp.ID, err)
		}
	}
	for _, s := range c.g.Sinks {
		comp := s.cp.restored
		sn, ok := s.Sink.(connector.SinkSnapshotter)
		if !ok || comp.Connector == nil {
			continue
		}
		if err := sn.Restore(comp.Connector); err != nil {
			return fmt.Errorf("sink %q: restore from checkpoint %d: %w", s.Name, cp.ID, err)
		}
	}
	c.nextID = cp.ID + 1
	c.g.Checkpoints.Restored.Store(cp.ID)
	if cp.Finished {
		c.log.Info("pipeline finished in an earlier run: nothing left to read; remove its state directory to run it again",
			"pipeline", c.g.Name, "checkpoint", cp.ID, "state", c.opt.Store.Dir())
	} else {
		c.log.Info("restored checkpoint", "pipeline", c.g.Name, "checkpoint", cp.ID, "taken", cp.Time)
	}
	return nil
}

// tellSinks tells every RunAware sink and source whether the run keeps
// state and whether a checkpoint covering it was restored; it runs after
// restore and before any connector opens.
func (c *coordinator) tellSinks() error {
	info := connector.RunInfo{Resumable: c.resumable, Pipeline: c.g.Name}
	tell := func(conn any, restored *checkpoint.Component) error {
		ra, ok := conn.(connector.RunAware)
		if !ok {
			return nil
		}
		if c.opt.Store != nil && info.Instance == "" {
			// Made before any connector opens, so that whatever a sink
			// writes carries it, also in a run killed before its first
			// checkpoint.
			id, since, err := c.opt.Store.Instance()
			if err != nil {
				return err
			}
			info.Instance, info.Since = id, since
			store := c.opt.Store
			info.Fence = func() (uint64, error) { return store.Fence(time.Now()) }
		}
		info.Restored = restored != nil && restored.Connector != nil
		ra.SetRun(info)
		return nil
	}
	for _, s := range c.g.Sinks {
		if err := tell(s.Sink, s.cp.restored); err != nil {
			return err
		}
	}
	for _, s := range c.g.Sources {
		if err := tell(s.Source, s.cp.restored); err != nil {
			return err
		}
	}
	return nil
}

// fits compares the checkpoint's components with the graph's and names
// every difference.
func (c *coordinator) fits(cp *checkpoint.Checkpoint) error {
	var diffs []string
	if cp.Pipeline != c.g.Name {
		diffs = append(diffs, fmt.Sprintf("it belongs to pipeline %q", cp.Pipeline))
	}
	seen := map[string]bool{}
	for _, p := range c.parts {
		if !p.stateful {
			continue
		}
		id := p.node.ID
		seen[id] = true
		comp := cp.Find(id)
		switch {
		case comp == nil:
			diffs = append(diffs, fmt.Sprintf("%s is new (%s)", describe(p.node), p.node.Fingerprint))
		case comp.Fingerprint != p.node.Fingerprint:
			diffs = append(diffs, fmt.Sprintf("%s changed: was %s, now %s", describe(p.node), comp.Fingerprint, p.node.Fingerprint))
		}
	}
	for _, comp := range cp.Components {
		if !seen[comp.ID] {
			diffs = append(diffs, fmt.Sprintf("%s is gone (was %s)", describeID(comp.ID), comp.Fingerprint))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("the saved state in %s (checkpoint %d, taken %s) no longer fits the pipeline file: %s; remove %s (or move it away) to start from scratch",
		c.opt.Store.Dir(), cp.ID, cp.Time.UTC().Format(time.RFC3339), strings.Join(diffs, "; "), c.opt.Store.Dir())
}

func describe(n *Node) string {
	if n.Kind == "transform" {
		// The ID names the transform the operator belongs to; the name is
		// the operator's plan.
		if parts := strings.SplitN(n.ID, "/", 3); len(parts) == 3 && parts[0] == "transform" {
			return fmt.Sprintf("transform %q (%s)", parts[1], n.Name)
		}
	}
	return fmt.Sprintf("%s %q", n.Kind, n.Name)
}

// describeID names a component of a checkpoint by its ID alone.
func describeID(id string) string {
	parts := strings.SplitN(id, "/", 3)
	if len(parts) < 2 {
		return id
	}
	return fmt.Sprintf("%s %q", parts[0], parts[1])
}

// inflight is the checkpoint being taken.
type inflight struct {
	id    int64
	start time.Time
	got   []*report
}

// run triggers checkpoints every interval and completes them; it returns
// once the final checkpoint's commits are queued, or when ctx ends.
func (c *coordinator) run(ctx context.Context) error {
	tick := time.NewTicker(c.opt.Interval)
	defer tick.Stop()
	ended, sourcesEnded := 0, 0
	var endStart time.Time
	// again: a source asked for a checkpoint while one was in flight,
	// whose barrier may have passed before what it wants covered.
	again := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.asked:
			if c.cur != nil {
				again = true
				continue
			}
			c.log.Debug("checkpoint asked for by a source", "pipeline", c.g.Name)
			if err := c.begin(sourcesEnded); err != nil {
				return err
			}
		case <-tick.C:
			if err := c.begin(sourcesEnded); err != nil {
				return err
			}
		case r := <-c.reports:
			p := c.parts[r.part]
			if r.ended {
				p.final = &r
				ended++
				if p.trigger != nil {
					sourcesEnded++
					if sourcesEnded == len(c.g.Sources) {
						endStart = time.Now()
					}
				}
			} else if c.cur != nil && r.id == c.cur.id {
				c.cur.got[r.part] = &r
			}
			if ended == len(c.parts) {
				// The final checkpoint: every node's final state.
				id := c.nextID
				if c.cur != nil {
					id = c.cur.id
				}
				if err := c.finish(id, endStart, true); err != nil {
					return err
				}
				close(c.done)
				return nil
			}
			if c.cur != nil && c.complete(c.cur) {
				if err := c.finish(c.cur.id, c.cur.start, false); err != nil {
					return err
				}
				c.cur = nil
				if again {
					again = false
					if err := c.begin(sourcesEnded); err != nil {
						return err
					}
				}
			}
		}
	}
}

// ask is connector.CheckpointAsker's function: a checkpoint as soon as
// possible. It never blocks; asks while one is pending are one ask.
func (c *coordinator) ask() {
	select {
	case c.asked <- struct{}{}:
	default:
	}
}

// begin starts the next checkpoint, unless one is in flight or every
// source has ended; one that no node has to report (every one ended)
// finishes at once.
func (c *coordinator) begin(sourcesEnded int) error {
	if c.cur != nil || sourcesEnded == len(c.g.Sources) {
		return nil
	}
	c.cur = &inflight{id: c.nextID, start: time.Now(), got: make([]*report, len(c.parts))}
	c.nextID++
	for _, s := range c.g.Sources {
		p := s.cp
		if p.final != nil {
			continue
		}
		select {
		case p.trigger <- c.cur.id:
		default:
		}
		p.nudge()
	}
	if c.complete(c.cur) {
		if err := c.finish(c.cur.id, c.cur.start, false); err != nil {
			return err
		}
		c.cur = nil
	}
	return nil
}

// complete reports whether every node has reported cur or ended.
func (c *coordinator) complete(cur *inflight) bool {
	for i, p := range c.parts {
		if cur.got[i] == nil && p.final == nil {
			return false
		}
	}
	return true
}

// finish builds checkpoint id from the reports (or final states), stores
// it and queues the commits.
func (c *coordinator) finish(id int64, start time.Time, final bool) error {
	cp := &checkpoint.Checkpoint{ID: id, Pipeline: c.g.Name, Time: time.Now(), Finished: true}
	states := make([]*report, len(c.parts))
	for i, p := range c.parts {
		r := p.final
		if !final && c.curReport(i) != nil {
			r = c.curReport(i)
		}
		states[i] = r
	}
	for i, p := range c.parts {
		r := states[i]
		if p.trigger != nil && !(r.ended && r.finished) {
			cp.Finished = false
		}
		if !p.stateful {
			continue
		}
		cp.Components = append(cp.Components, checkpoint.Component{
			ID: p.node.ID, Fingerprint: p.node.Fingerprint, Ended: r.ended && r.finished,
			Runtime: r.runtime, Connector: r.connector,
		})
	}
	st := &c.g.Checkpoints
	if c.opt.Store != nil {
		size, err := c.opt.Store.Write(cp)
		if err != nil {
			st.Failures.Add(1)
			return err
		}
		st.LastSize.Store(size)
	}
	if start.IsZero() {
		start = cp.Time
	}
	st.LastDuration.Store(int64(time.Since(start)))
	st.LastAt.Store(time.Now().UnixNano())
	st.LastID.Store(id)
	st.Count.Add(1)
	for i, p := range c.parts {
		if r := states[i]; r != nil && r.rows > 0 {
			p.node.Stats.Checkpointed.Store(r.rows)
		}
	}
	for i, p := range c.parts {
		if p.committer != nil {
			p.enqueue(commitReq{id: id, state: states[i].connector})
		}
	}
	return nil
}

// curReport is node i's report for the checkpoint in flight, if any.
func (c *coordinator) curReport(i int) *report {
	if c.cur == nil {
		return nil
	}
	return c.cur.got[i]
}

// errInterrupted is the cause of a Read cut short for a checkpoint.
var errInterrupted = errors.New("interrupted for a checkpoint")

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
