package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime/operator"
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
// goroutine, between its Reads or Writes. An operator that writes its
// state into a part of the store (checkpoint_snapshot.go) forwards the
// barrier once the part is written; the part is made durable in the
// background, and storing checkpoint N waits for every part it names.
// The parts of a checkpoint that is not stored (the run failed or was
// cancelled first) are removed when the run ends.
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
	// ResetState names the nodes that start empty although the restored
	// checkpoint holds state for them (`etld run --reset-state`), as
	// Compare reads them.
	ResetState []string
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
	part     int
	id       int64
	ended    bool
	finished bool // ended at the end of its input, not by a stop
	runtime  []byte
	// runtimePart names the store's part that holds runtime instead
	// (an operator.StreamSnapshotter's state).
	runtimePart string
	// entries, from an operator that counts them, is how many its
	// state held (operator.StateSizer).
	entries   int64
	connector []byte
	// rows, from a sink, is its RowsIn at the barrier (or at its end).
	rows int64
}

// interruptGrace is how long a source may take to reach a barrier request
// or a commit by itself before its Read is interrupted: a busy source
// gets there within a Read; only one waiting for data is cut short.
const interruptGrace = 100 * time.Millisecond

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
	// verdicts says, by node ID, what the restore did with each node's
	// saved state (compat.go); nil when nothing was restored.
	verdicts map[string]Verdict
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
		_, stateful := o.Op.(operator.Snapshotter)
		_, counts := o.Op.(operator.StateSizer)
		add(&o.Node, stateful, nil).counts = counts
	}
	for i, u := range g.Unions {
		if u.ID == "" {
			u.ID = fmt.Sprintf("union/%s/%d", u.Name, i)
		}
		// A union reading a build input first keeps the rows it holds
		// back (union_build.go); a checkpoint without them fits.
		add(&u.Node, u.BuildFirst, nil).optional = u.BuildFirst
	}
	for _, s := range g.Sinks {
		if s.ID == "" {
			s.ID = "sink/" + s.Name
		}
		add(&s.Node, true, s.Sink)
	}
	for _, d := range g.DeadLetters {
		// A file's length is state; a sink's dead letters are the sink's.
		add(&d.Node, d.File != "", nil).optional = true
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
		entries := int64(-1)
		if p.counts {
			entries = r.entries
		}
		cp.Components = append(cp.Components, checkpoint.Component{
			ID: p.node.ID, Fingerprint: p.node.Fingerprint, Ended: r.ended && r.finished,
			Runtime: r.runtime, RuntimePart: r.runtimePart, Connector: r.connector, Entries: entries, StateTTL: p.node.StateTTL,
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
	c.g.CheckpointLog.add(id, final, st)
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
