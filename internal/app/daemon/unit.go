package daemon

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
)

// unit is one pipeline file under supervision.
type unit struct {
	s    *Supervisor
	file string
	data []byte
	hash [32]byte
	name string
	// recheck: a broken unit whose error came from the file system or
	// from another file, which the next reload tries again.
	recheck bool
	// sources and sinks name the components in the file's order;
	// srcDLQ and sinkDLQ say which of them dead-letter.
	sources, sinks  []string
	srcDLQ, sinkDLQ []bool
	sample          *sampler          // nil for a file that did not load
	plan            *plan.Description // likewise
	stop            chan struct{}     // closed to stop gracefully
	ctx             context.Context
	cancel          context.CancelFunc // aborts the run: after a stop timeout
	once            sync.Once
	done            chan struct{} // closed when the run loop has returned

	mu        sync.Mutex
	state     State
	err       string
	reloadErr string
	started   time.Time
	restarts  int
	p         *pipeline.Pipeline // the current run's, for Meter and Lagger
	last      pipeline.Summary   // the current run's latest counters
	prev      pipeline.Summary   // the last finished run's, for its levels
	base      summaryTotals      // finished runs' counters
	opBase    operatorTotals     // finished runs' operator counters
	cps       Checkpoints        // finished runs' checkpoints
	errors    int
	opState   []StateSize  // the latest run's stateful operators
	history   ring         // samples of the totals, for the console
	loadErr   error        // why the file did not load (broken units)
	refused   *refusedFile // a newer content that did not load
	bf        *backfilling // an edit backfilled beside this version
	// replacing: stopped (or stopping) for the file's next version,
	// which starts as soon as it has stopped (stopForReplace).
	replacing bool
	// startBf follows the backfill this version's run makes at its start.
	startBf func() pipeline.BackfillProgress
}

// summaryTotals adds counters per component kind and name.
type summaryTotals map[string]Counter

func newUnit(s *Supervisor, file string, data []byte, hash [32]byte, p *pipeline.Pipeline) *unit {
	u := &unit{s: s, file: file, data: data, hash: hash, name: p.Name(), stop: make(chan struct{}), done: make(chan struct{}), state: Starting, base: summaryTotals{}, opBase: operatorTotals{}}
	u.ctx, u.cancel = context.WithCancel(s.ctx)
	u.sample = &sampler{}
	d := p.Plan.Describe()
	u.plan = &d
	for _, src := range p.Plan.Sources {
		u.sources = append(u.sources, src.Spec.Name)
		u.srcDLQ = append(u.srcDLQ, src.Spec.OnError.Policy == "dead-letter")
	}
	for _, sink := range p.Plan.Sinks {
		u.sinks = append(u.sinks, sink.Spec.Name)
		u.sinkDLQ = append(u.sinkDLQ, sink.Spec.OnError.Policy == "dead-letter")
	}
	return u
}

// brokenUnit stands for a file that does not load, or cannot be read:
// it shows the error (msg, redacted) and runs nothing.
func brokenUnit(c *change, msg string) *unit {
	u := &unit{file: c.file, data: c.data, hash: c.hash, recheck: c.recheck, stop: make(chan struct{}), done: make(chan struct{}), state: Failed, err: msg, cancel: func() {}, loadErr: c.err, errors: 1}
	close(u.done)
	return u
}

// live reports whether the unit has a run loop that has not ended.
func (u *unit) live() bool {
	select {
	case <-u.done:
		return false
	default:
		return true
	}
}

func (u *unit) requestStop() { u.once.Do(func() { close(u.stop) }) }

// stopWithin stops gracefully, cancels the run if that takes longer than
// d, and waits for the run loop to end.
// stopForReplace stops the unit, within d, for the next version of its
// file, which its caller starts next: the pipeline stays ready meanwhile
// (Supervisor.Ready).
func (u *unit) stopForReplace(d time.Duration) {
	u.mu.Lock()
	u.replacing = true
	u.mu.Unlock()
	u.stopWithin(d)
}

func (u *unit) stopWithin(d time.Duration) {
	u.requestStop()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-u.done:
		return
	case <-t.C:
		u.abandon("shutdown_timeout " + d.String() + " passed")
	}
	<-u.done
}

// abandon logs what the run leaves unflushed and cancels it.
func (u *unit) abandon(why string) {
	u.mu.Lock()
	s, p := u.last, u.p
	u.mu.Unlock()
	if p != nil {
		s, _ = p.Live() // fresher than the last progress report
	}
	s.Pipeline = u.name
	LogAbandoned(u.s.log.With("file", u.file), s, u.s.opt.StateDir != "", why)
	u.cancel()
}

func (u *unit) stopping() bool {
	select {
	case <-u.stop:
		return true
	default:
		return false
	}
}

// setReloadError records a newer content that did not load (err nil:
// none) and reports whether one was recorded before.
func (u *unit) setReloadError(msg string, data []byte, err error) (had bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	had = u.refused != nil
	u.reloadErr, u.refused = msg, nil
	if err != nil {
		u.refused = &refusedFile{data: data, err: err}
	}
	return had
}

func (u *unit) set(state State, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state = state
	u.err = ""
	if err != nil {
		u.err = u.s.opt.Secrets.Redact(err.Error())
	}
}

// run is the unit's loop: run, and after a transient failure wait and
// run a fresh build of the same content.
func (u *unit) run(p *pipeline.Pipeline) {
	defer close(u.done)
	defer u.cancel()
	ctx := u.ctx
	log := u.s.log.With("pipeline", u.name, "file", u.file)
	attempt := 0
	for {
		u.mu.Lock()
		u.state, u.err, u.p, u.last = Running, "", p, pipeline.Summary{}
		u.started = time.Now()
		start := u.started
		u.mu.Unlock()

		summary, err := u.runOnce(ctx, p)
		u.mu.Lock()
		u.base.add(summary, p)
		u.opBase.add(summary.Operators)
		u.cps.add(summary.Checkpoints)
		u.last, u.p, u.prev = pipeline.Summary{}, nil, summary
		u.opState = stateSizes(summary.State)
		if err != nil && !u.stopping() {
			u.errors++
		}
		u.mu.Unlock()

		switch {
		case u.stopping():
			u.set(Stopped, ignoreCanceled(err))
			log.Info("pipeline stopped")
			return
		case err == nil:
			u.set(Finished, nil)
			log.Info("pipeline finished: its input ended")
			return
		case permanent(err) || ctx.Err() != nil:
			u.set(Failed, err)
			logError(log, "pipeline failed; it is not restarted until its file changes", err, "error", err)
			return
		}
		// A run that lasted longer than the longest wait was healthy for
		// a while: start the schedule over.
		longest := u.s.opt.Backoff.Max
		if longest <= 0 {
			longest = 30 * time.Second
		}
		if time.Since(start) > longest {
			attempt = 0
		}
		attempt++
		wait := u.s.opt.Backoff.Delay(attempt)
		u.mu.Lock()
		u.restarts++
		u.mu.Unlock()
		u.set(Retrying, err)
		log.Warn("pipeline failed; restarting after a backoff", "error", err, "in", wait.Round(time.Millisecond).String(), "attempt", attempt)
		if !waitOrStop(ctx, u.stop, wait) {
			u.set(Stopped, err)
			return
		}
		u.set(Starting, err)
		next, lerr := u.s.load(u.file, u.data)
		if lerr != nil {
			u.mu.Lock()
			u.errors++
			u.mu.Unlock()
			u.set(Failed, lerr)
			logError(log, "pipeline does not load again", lerr, "error", lerr)
			return
		}
		p = next
	}
}

// runOnce runs p once. A panic on Run's own goroutine (building the
// graph, restoring the checkpoint, closing the connectors) is the run's
// error, as the runtime makes one on a node's goroutine.
func (u *unit) runOnce(ctx context.Context, p *pipeline.Pipeline) (summary pipeline.Summary, err error) {
	defer panics.Recover(&err)
	return p.Run(ctx, pipeline.RunOptions{
		Stop:               u.stop,
		Progress:           u.progress,
		StateDir:           u.s.opt.StateDir,
		CheckpointInterval: u.s.opt.CheckpointInterval,
		Logger:             u.s.opt.Logger.With("component", "runtime", "pipeline", u.name),
		Tap:                u.sample.tap,
		Backfilling:        u.backfillingAtStart,
	})
}

// permanent reports whether a failed run would fail the same way when run
// again from the same file, so that restarting it only repeats the error:
// an error marked permanent, a bad record under on_error: fail (reading
// resumes before it and meets it again), and a panic (a bug, not an
// outage). Anything else may be an outage and is retried with backoff.
func permanent(err error) bool {
	var bad connector.BadRecord
	var p *panics.Error
	return retry.IsPermanent(err) || errors.As(err, &bad) || errors.As(err, &p)
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (u *unit) progress(s pipeline.Summary) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last = s
}

// shownName is the pipeline's name, or for a file that did not load the
// file's name without its extension.
func (u *unit) shownName() string {
	if u.name != "" {
		return u.name
	}
	return strings.TrimSuffix(filepath.Base(u.file), filepath.Ext(u.file))
}

func (u *unit) status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := Status{Name: u.shownName(), File: u.file, State: u.state, Error: u.err, ReloadError: u.reloadErr, Restarts: u.restarts, Errors: u.errors, Replacing: u.replacing}
	if st.Backfill = u.backfillStatus(); st.Backfill != nil && (st.State == Running || st.State == Stopped && st.Backfill.TakingOver) {
		// Stopped for the backfill's take-over: still the backfill.
		st.State = Backfilling
	}
	if !u.started.IsZero() {
		t := u.started.UTC()
		st.StartedAt = &t
	}
	cur := summaryTotals{}
	cur.add(u.last, u.p)
	st.Checkpoints = u.cps
	st.Checkpoints.add(u.last.Checkpoints)
	sum := func(kind, name string) Counter {
		c, b := u.base[key(kind, name)], cur[key(kind, name)]
		out := Counter{Name: name, In: c.In + b.In, Out: c.Out + b.Out, Skipped: c.Skipped + b.Skipped, Reason: cmp.Or(b.Reason, c.Reason),
			TimeStatus: c.TimeStatus, Writes: addLatency(c.Writes, b.Writes), Flushes: addLatency(c.Flushes, b.Flushes)}
		out.addTimes(b.TimeStatus)
		if c.Bytes != nil || b.Bytes != nil {
			n := deref(c.Bytes) + deref(b.Bytes)
			out.Bytes = &n
		}
		return out
	}
	st.Sources = make([]Counter, len(u.sources))
	for i, name := range u.sources {
		st.Sources[i] = sum("source", name)
	}
	for i := range st.Sources {
		if u.srcDLQ[i] {
			st.Sources[i].DeadLettered = st.Sources[i].Skipped
		}
	}
	st.Sinks = make([]Counter, len(u.sinks))
	for i, name := range u.sinks {
		st.Sinks[i] = sum("sink", name)
		if u.sinkDLQ[i] {
			st.Sinks[i].DeadLettered = st.Sinks[i].Skipped
		}
	}
	// Levels (watermarks) are the current run's, or the last run's.
	levels, now := u.last, time.Now()
	if u.p == nil {
		levels = u.prev
	}
	for i := range st.Sources {
		if i < len(levels.Sources) {
			st.Sources[i].setLevels(levels.Sources[i].Time, now)
		}
	}
	for i := range st.Sinks {
		if u.p != nil && i < len(levels.Sinks) {
			p := levels.Sinks[i].PendingCall.Seconds()
			st.Sinks[i].PendingCallSeconds = &p
		}
	}
	st.Operators = u.operators(u.last.Operators, levels.Operators, now)
	st.OperatorState = slices.Clone(u.opState)
	if u.p != nil {
		st.OperatorState = stateSizes(u.last.State)
	}
	if r := recentRate(u.history.ordered(), 10*time.Second); r != nil {
		st.RowsInPerSecond, st.RowsOutPerSecond = &r.In, &r.Out
	}
	for k, c := range u.base {
		if strings.HasPrefix(k, "op\x00") {
			st.Dropped = append(st.Dropped, sum("op", c.Name))
		}
	}
	for k, c := range cur {
		if _, seen := u.base[k]; !seen && strings.HasPrefix(k, "op\x00") {
			st.Dropped = append(st.Dropped, sum("op", c.Name))
		}
	}
	slices.SortFunc(st.Dropped, func(a, b Counter) int { return strings.Compare(a.Name, b.Name) })
	if u.p != nil {
		// Lag is a level, not a count: only the current run's means anything.
		for i, src := range u.p.Plan.Sources {
			if l, ok := src.Conn.(connector.Lagger); ok && i < len(st.Sources) {
				if lag := l.Lag(); lag >= 0 {
					st.Sources[i].Lag = &lag
				}
			}
			if l, ok := src.Conn.(connector.PartitionLagger); ok && i < len(st.Sources) {
				st.Sources[i].Partitions = partitions(l.PartitionLags())
			}
		}
	}
	return st
}

func stateSizes(s []pipeline.StateSize) []StateSize {
	if len(s) == 0 {
		return nil
	}
	out := make([]StateSize, len(s))
	for i, x := range s {
		out[i] = StateSize{Operator: x.Operator, Plan: x.Plan, Transform: x.Transform, StateID: x.ID, Entries: x.Entries, Bytes: x.Bytes}
		if x.TTL > 0 {
			out[i].StateTTL = x.TTL.String()
		}
	}
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func key(kind, name string) string { return kind + "\x00" + name }

// add adds a run's counters; p (may be nil) gives the connectors' byte
// counts.
func (t summaryTotals) add(s pipeline.Summary, p *pipeline.Pipeline) {
	bytes := func(c any) *int64 {
		if m, ok := c.(connector.Meter); ok {
			n := m.Bytes()
			return &n
		}
		return nil
	}
	put := func(kind string, c pipeline.Count, b *int64) {
		k := key(kind, c.Name)
		old, ok := t[k]
		if !ok {
			old.Name = c.Name
		}
		old.In += c.In
		old.Out += c.Out
		old.Skipped += c.Skipped
		old.Reason = cmp.Or(c.Reason, old.Reason)
		old.addTime(c.Time)
		if c.Writes.Count > 0 || c.Flushes.Count > 0 {
			old.Writes = addLatency(old.Writes, latencyStatus(c.Writes))
			old.Flushes = addLatency(old.Flushes, latencyStatus(c.Flushes))
		}
		if b != nil {
			n := *b
			if old.Bytes != nil {
				n += *old.Bytes
			}
			old.Bytes = &n
		}
		t[k] = old
	}
	for i, c := range s.Sources {
		var b *int64
		if p != nil && i < len(p.Plan.Sources) {
			b = bytes(p.Plan.Sources[i].Conn)
		}
		put("source", c, b)
	}
	for i, c := range s.Sinks {
		var b *int64
		if p != nil && i < len(p.Plan.Sinks) {
			b = bytes(p.Plan.Sinks[i].Conn)
		}
		put("sink", c, b)
	}
	for _, c := range s.Dropped {
		put("op", c, nil)
	}
}
