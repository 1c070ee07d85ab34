// Package pipeline is etld's facade: Load pipeline files into checked
// plans, then Explain or Run them. Loading builds every connector and
// starts none, so `etld validate` is Load.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/spec"
)

// Env is what loading needs: the connectors and formats to build from, and
// where to log.
type Env struct {
	Registry *connector.Registry
	Logger   *slog.Logger
	// WholeJoinRows plans each batch join over its inputs' whole rows
	// (plan.Env.WholeJoinRows), for tests.
	WholeJoinRows bool
}

// Pipeline is a loaded, checked pipeline file.
type Pipeline struct {
	Spec *spec.Pipeline
	Plan *plan.Plan
	// text, lookup and env are what the pipeline was parsed from, for a
	// backfill, which plans it again (a plan runs once), and for the copy
	// of the file its state is built with (backfill.go).
	text   []byte
	lookup func(string) (string, bool)
	env    Env
	// live gives the counters of the run in progress (or of the last).
	live atomic.Pointer[func() Summary]
}

// Live returns the counters of the run in progress, or of the last run,
// read now (Progress reports lag by up to half a second); false before
// any run began. A caller abandoning a stuck run uses it to say what the
// run leaves.
func (p *Pipeline) Live() (Summary, bool) {
	f := p.live.Load()
	if f == nil {
		return Summary{Pipeline: p.Name()}, false
	}
	return (*f)(), true
}

// Name is the pipeline's name.
func (p *Pipeline) Name() string { return p.Spec.Name }

// Files expands paths: a directory stands for the *.yaml and *.yml files
// in it, in name order, without the tests files (NAME_test.yaml).
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			// NAME_test.yaml holds the tests of NAME.yaml (etld test),
			// not a pipeline.
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml") && !spec.IsTestFile(e.Name()) {
				names = append(names, filepath.Join(p, e.Name()))
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("%s: no pipeline files (*.yaml, *.yml) in this directory", p)
		}
		out = append(out, names...)
	}
	return out, nil
}

// Load reads and plans one pipeline file.
func Load(path string, env Env) (*Pipeline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, os.LookupEnv, env)
}

// Parse reads and plans a pipeline file's content; lookup resolves
// ${VAR}. The errors of the file and of its connectors and SQL come
// together, in file order: a problem in one place hides none elsewhere.
func Parse(file string, data []byte, lookup func(string) (string, bool), env Env) (*Pipeline, error) {
	sp, err := spec.Parse(file, data, lookup)
	if sp == nil {
		return nil, err
	}
	// With spec errors, plan what can be planned: Build returns the spec's
	// errors with its own.
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pl, err := plan.Build(sp, plan.Env{Registry: env.Registry, Logger: logger.With("pipeline", sp.Name), WholeJoinRows: env.WholeJoinRows})
	if err != nil {
		return nil, err
	}
	return &Pipeline{Spec: sp, Plan: pl, text: data, lookup: lookup, env: env}, nil
}

// LoadAll loads every file and reports the errors of all of them, plus
// pipelines that share a name (their state would collide).
func LoadAll(paths []string, env Env) ([]*Pipeline, error) {
	var out []*Pipeline
	var errs []error
	names := map[string]string{}
	for _, path := range paths {
		p, err := Load(path, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := names[p.Name()]; dup {
			errs = append(errs, spec.Errorf(p.Spec.NamePos, "name", "pipeline name %q is already used by %s; names must be unique (they name checkpoint state)", p.Name(), prev))
			continue
		}
		names[p.Name()] = path
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// Explain renders the pipeline's plan.
func (p *Pipeline) Explain() string { return p.Plan.Explain() }

// Describe is the pipeline's plan as data (explain --format json, the web
// console's picture).
func (p *Pipeline) Describe() plan.Description { return p.Plan.Describe() }

// RunOptions tune a run.
type RunOptions struct {
	// Stop, when closed, ends the run gracefully (drain and flush).
	Stop <-chan struct{}
	// Progress, if set, is called about twice a second with the counters
	// so far.
	Progress func(Summary)
	// StateDir, if set, keeps checkpoints under StateDir/<pipeline>/ and
	// makes Run resume from the newest one. Without it checkpoints still
	// run (offsets are committed after delivery, two-phase sinks publish)
	// but nothing is kept.
	StateDir string
	// CheckpointInterval is the default interval between checkpoints;
	// the pipeline file's checkpoint_interval wins over it, and
	// runtime.DefaultCheckpointInterval (10 s) applies if neither is set.
	CheckpointInterval time.Duration
	// Logger receives the run's log lines (restores); nil discards them.
	Logger *slog.Logger
	// Tap, if set, sees every batch of changes a sink is about to be
	// given, with the sink's name (see runtime.SinkNode.Tap: it must
	// return quickly and must not keep the batch).
	Tap func(sink string, b *row.Batch)
	// BatchSize, if above 0, caps the changes a source reads at a time
	// (runtime.Graph.BatchSize); a result does not depend on it.
	BatchSize int
	// ResetState names the operators (state IDs, operator ids, transform
	// names, source/NAME, sink/NAME) that start empty although the
	// restored checkpoint holds state for them: `etld run --reset-state`.
	ResetState []string
	// Backfill rebuilds, before the run, the operators the restored
	// checkpoint refuses, from the sources' start (Backfill): `etld run
	// --backfill`. Backfilled, if set, is told what it did.
	Backfill   bool
	Backfilled func(*BackfillReport)
	// Backfilling, if set, is given, as such a backfill begins, a
	// function that tells how far it has come, and nil once it ended.
	Backfilling func(func() BackfillProgress)
	// checkpointEvery, if set, wins over every other checkpoint
	// interval: a backfill's run of the old version (serveOld).
	checkpointEvery time.Duration
}

// CheckpointInterval is the interval the pipeline's checkpoints run at:
// the file's checkpoint_interval, else def, else
// runtime.DefaultCheckpointInterval.
func (p *Pipeline) CheckpointInterval(def time.Duration) time.Duration {
	switch {
	case p.Spec.CheckpointInterval > 0:
		return p.Spec.CheckpointInterval
	case def > 0:
		return def
	}
	return runtime.DefaultCheckpointInterval
}

// Run executes the pipeline until its bounded input ends, Stop is closed
// or an error stops it. It returns the summary in every case.
func (p *Pipeline) Run(ctx context.Context, opt RunOptions) (Summary, error) {
	g, err := p.Plan.Graph()
	if err != nil {
		return Summary{Pipeline: p.Name()}, err
	}
	start := time.Now()
	reasons := dropReasons(g)
	summarize := func() Summary { return p.summary(g, start, reasons) }
	p.live.Store(&summarize)
	if opt.Tap != nil {
		for _, n := range g.Sinks {
			name := n.Name
			n.Tap = func(b *row.Batch) { opt.Tap(name, b) }
		}
	}
	cpo := runtime.CheckpointOptions{Interval: p.CheckpointInterval(opt.CheckpointInterval), Logger: opt.Logger, ResetState: opt.ResetState}
	if opt.checkpointEvery > 0 {
		cpo.Interval = opt.checkpointEvery
	}
	if opt.StateDir != "" {
		if cpo.Store, err = checkpoint.Open(opt.StateDir, p.Name()); err != nil {
			_ = p.Plan.Close()
			return summarize(), fmt.Errorf("pipeline %s: %w", p.Name(), err)
		}
		if err := p.prepareState(ctx, cpo.Store, g, opt); err != nil {
			_ = p.Plan.Close()
			return summarize(), fmt.Errorf("pipeline %s: %w", p.Name(), err)
		}
	}
	// The progress reporter ends before Run returns: a caller's Progress
	// is never called after the run's summary. A panic in it ends the run
	// with the panic as its error, as one in a node does.
	done := make(chan struct{})
	var reporter sync.WaitGroup
	var reporterErr error
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	if opt.Progress != nil {
		reporter.Go(func() {
			reporterErr = panics.Call(func() error {
				t := time.NewTicker(500 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-done:
						return nil
					case <-t.C:
						opt.Progress(summarize())
					}
				}
			})
			if reporterErr != nil {
				cancelRun(reporterErr)
			}
		})
	}
	if opt.BatchSize > 0 {
		g.BatchSize = opt.BatchSize
	}
	err = runtime.Run(runCtx, g, runtime.Options{Stop: opt.Stop, Checkpoint: cpo, MaxStateBytes: p.Spec.MaxStateBytes})
	close(done)
	reporter.Wait()
	if reporterErr != nil {
		err = fmt.Errorf("progress: %w", reporterErr)
	}
	if cerr := p.Plan.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = fmt.Errorf("pipeline %s: %w", p.Name(), err)
	}
	return summarize(), err
}

// dropReasons is why each of g's operators drops rows, asked before it
// runs.
func dropReasons(g *runtime.Graph) []string {
	reasons := make([]string, len(g.Ops))
	for i, n := range g.Ops {
		if c, ok := n.Op.(operator.Counters); ok {
			_, reasons[i] = c.Dropped()
		}
	}
	return reasons
}

// summary reads the counters of a run of g started at start, while it
// runs or after; reasons are dropReasons(g).
func (p *Pipeline) summary(g *runtime.Graph, start time.Time, reasons []string) Summary {
	s := Summary{Pipeline: p.Name(), Elapsed: time.Since(start)}
	for i, n := range g.Sources {
		if i == len(p.Plan.Sources) {
			break // the constant tables a query reads (plan/values.go)
		}
		skipped := n.Stats.Skipped.Load() + p.Plan.Sources[i].Skipped()
		c := Count{Name: n.Name, In: n.Stats.RowsIn.Load(), Out: n.Stats.RowsOut.Load(), Skipped: skipped, Time: timeOf(&n.Stats)}
		if sz, ok := p.Plan.Sources[i].Conn.(connector.Sizer); ok {
			c.Read, c.Size = sz.Size()
		}
		s.Sources = append(s.Sources, c)
	}
	for i, n := range g.Ops {
		// Every operator that may drop rows is listed, 0 included: an
		// alert on late rows needs the series before the first one.
		if _, ok := n.Op.(operator.Counters); ok {
			s.Dropped = append(s.Dropped, Count{Name: shortName(&n.Node), Skipped: n.Stats.Skipped.Load(), Reason: reasons[i]})
		}
		if _, ok := n.Op.(operator.StateSizer); ok {
			s.State = append(s.State, StateSize{Operator: shortName(&n.Node), Plan: n.Name, Transform: n.Transform, ID: n.ID, Entries: n.Stats.StateEntries.Load(), Bytes: n.Stats.StateBytes.Load(), TTL: n.StateTTL})
		}
	}
	s.Operators = operators(g)
	now := time.Now()
	for i, n := range g.Sinks {
		in := n.Stats.RowsIn.Load()
		c := Count{Name: n.Name, Mode: p.Plan.Sinks[i].Mode.String(), In: in, Out: n.Stats.RowsOut.Load(), Skipped: p.Plan.Sinks[i].Skipped(), Pending: max(in-n.Stats.Checkpointed.Load(), 0), Time: timeOf(&n.Stats)}
		sinkCalls(&c, n, now)
		s.Sinks = append(s.Sinks, c)
	}
	c := &g.Checkpoints
	s.Checkpoints = Checkpoints{
		Count: c.Count.Load(), Failures: c.Failures.Load(), LastID: c.LastID.Load(),
		LastDuration: time.Duration(c.LastDuration.Load()), LastSize: c.LastSize.Load(), Restored: c.Restored.Load(),
	}
	s.Checkpoints.Recent = g.CheckpointLog.Recent()
	if at := c.LastAt.Load(); at != 0 {
		s.Checkpoints.LastAt = time.Unix(0, at)
	}
	return s
}
