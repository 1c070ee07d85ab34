// Package daemon supervises the pipelines of a directory: each runs on
// its own goroutine, so one failing stops none of the others, and a panic
// while one is loaded, planned or run is that pipeline's error; a run that
// fails with a transient error is restarted with backoff, one that would
// fail the same way again (a bad record under on_error: fail, a panic, a
// permanent error) stays failed until its file changes; Reload applies
// the directory's changes (added files start, removed ones stop, changed
// ones restart, unchanged ones are not touched, an edited file that does
// not load leaves its old version running, with the error shown, and an
// entry that cannot be read or claims a name another file runs under
// fails alone). Status is what the admin server shows.
package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline"
)

// Loader builds a pipeline from a file's content. The daemon reads the
// file itself so that a restart after a failure runs the version it
// validated, not whatever the file holds by then.
type Loader func(file string, data []byte) (*pipeline.Pipeline, error)

// NewLoader returns the loader etld uses: pipeline.Load's steps over
// bytes instead of a path.
func NewLoader(env pipeline.Env, lookup func(string) (string, bool)) Loader {
	return func(file string, data []byte) (*pipeline.Pipeline, error) {
		return pipeline.Parse(file, data, lookup, env)
	}
}

// Options configure a Supervisor.
type Options struct {
	// Dir is the pipelines directory; its *.yaml and *.yml files are
	// pipelines.
	Dir  string
	Load Loader
	// Logger gets the daemon's own lines, with component=daemon.
	Logger *slog.Logger
	// Backoff schedules restarts after a failed run (zero: 100ms doubling
	// to 30s, forever). A run that lasted longer than Backoff.Max starts
	// the schedule over.
	Backoff retry.Backoff
	// StateDir keeps each pipeline's checkpoints under StateDir/<name>/;
	// a restart (after a failure, a reload, or of etld) resumes there.
	StateDir string
	// CheckpointInterval is the default for pipelines that set none.
	CheckpointInterval time.Duration
	// StopTimeout bounds the graceful stop of a pipeline that a reload
	// removes or replaces (default DefaultShutdownTimeout, the daemon
	// passes its shutdown_timeout): a sink waiting for a target that is
	// down would otherwise hold the new version back for ever. The run is
	// then cancelled, after a line saying what it leaves; what it had not
	// checkpointed is read again by its successor, so nothing is lost.
	StopTimeout time.Duration
	// Secrets, if set, learns the ${VAR}s of every file loaded and scrubs
	// errors and Status.
	Secrets *redact.Set
	// Lookup resolves ${VAR} for Secrets (os.LookupEnv when nil).
	Lookup func(string) (string, bool)
	// SampleInterval is how often the counters are sampled for the
	// console's rate history (default DefaultSampleInterval); the
	// history keeps HistoryLength samples.
	SampleInterval time.Duration
}

// Supervisor runs the pipelines of a directory.
type Supervisor struct {
	opt    Options
	log    *slog.Logger
	ctx    context.Context // every run's context; cancelling it aborts them
	cancel context.CancelFunc

	// reload runs one Reload at a time. Shutdown does not take it, so as
	// not to wait behind a reload that drains a pipeline: closed, under
	// mu, keeps such a reload from starting anything once Shutdown began.
	reload sync.Mutex
	mu     sync.Mutex
	units  map[string]*unit // by file path
	closed bool
	// hook, in tests, is called at a backfill's phases (backfill.go);
	// errCrash from it stops the backfill as a kill would.
	hook func(phase string) error
}

// New returns a supervisor that has started nothing; call Reload.
func New(opt Options) *Supervisor {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Lookup == nil {
		opt.Lookup = os.LookupEnv
	}
	if opt.StopTimeout <= 0 {
		opt.StopTimeout = DefaultShutdownTimeout
	}
	if opt.SampleInterval <= 0 {
		opt.SampleInterval = DefaultSampleInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Supervisor{
		opt:    opt,
		log:    opt.Logger.With("component", "daemon"),
		ctx:    ctx,
		cancel: cancel,
		units:  map[string]*unit{},
	}
	// The sampler ends with the supervisor's context, at Shutdown.
	go s.sampleLoop(opt.SampleInterval)
	return s
}

// load builds a pipeline from a file's content. A panic there (a
// connector's constructor or the planner meeting options it did not
// expect) is the file's error: one file must not take the daemon and the
// other pipelines down, nor crash-loop it at every start.
func (s *Supervisor) load(file string, data []byte) (p *pipeline.Pipeline, err error) {
	defer panics.Recover(&err)
	return s.opt.Load(file, data)
}

// logError logs msg at error level with args, and with the stack when
// err is a recovered panic: the status shows the panic's value, the log
// where it happened.
func logError(log *slog.Logger, msg string, err error, args ...any) {
	if stack, ok := panics.Stack(err); ok {
		args = append(args, "stack", stack)
	}
	log.Error(msg, args...)
}

// put records u, unless Shutdown has begun.
func (s *Supervisor) put(file string, u *unit) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.units[file] = u
	return true
}

// Shutdown stops every pipeline gracefully (sources stop, in-flight rows
// drain, sinks flush) and waits, and reports whether every one stopped
// so. When ctx ends first (the shutdown_timeout, a second signal: its
// cause says which), each pipeline still running is abandoned: a line
// says what it leaves unflushed and the checkpoint its next start resumes
// from, its run is cancelled, and Shutdown waits at most AbandonGrace
// more for the runs to return, since a connector stuck in a call that
// ignores cancelling must not keep the process alive.
func (s *Supervisor) Shutdown(ctx context.Context) bool {
	s.mu.Lock()
	s.closed = true
	units := make([]*unit, 0, len(s.units))
	for _, u := range s.units {
		units = append(units, u)
	}
	s.mu.Unlock()
	slices.SortFunc(units, func(a, b *unit) int { return strings.Compare(a.file, b.file) })
	var backfills []<-chan struct{}
	for _, u := range units {
		if done := u.cancelBackfill(); done != nil {
			backfills = append(backfills, done)
		}
		u.requestStop()
	}
	all := make(chan struct{})
	go func() {
		for _, u := range units {
			<-u.done
		}
		// A cancelled backfill ends soon, removing its replays' files.
		for _, done := range backfills {
			<-done
		}
		close(all)
	}()
	defer s.cancel()
	select {
	case <-all:
		return true
	case <-ctx.Done():
	}
	why := context.Cause(ctx).Error()
	for _, u := range units {
		if u.live() {
			u.abandon(why)
		}
	}
	s.cancel()
	t := time.NewTimer(AbandonGrace)
	defer t.Stop()
	select {
	case <-all:
	case <-t.C:
		s.log.Warn("pipelines still returning after being cancelled: exiting without them", "waited", AbandonGrace.String())
	}
	return false
}

// AbandonGrace is how long Shutdown waits for cancelled runs to return.
const AbandonGrace = time.Second

// Status lists every pipeline file, in file order.
func (s *Supervisor) Status() []Status {
	s.mu.Lock()
	units := make([]*unit, 0, len(s.units))
	for _, u := range s.units {
		units = append(units, u)
	}
	s.mu.Unlock()
	out := make([]Status, 0, len(units))
	red := s.opt.Secrets.Redactor()
	for _, u := range units {
		out = append(out, redactStatus(red, u.status()))
	}
	slices.SortFunc(out, func(a, b Status) int {
		if a.File < b.File {
			return -1
		}
		if a.File > b.File {
			return 1
		}
		return 0
	})
	return out
}

// Ready reports whether every pipeline is running or finished and every
// file's current content loaded, and the reasons when not: with details,
// each pipeline's file and error, else its name and state only (an error
// may quote a record). Ready means the daemon runs what its files say,
// or is handing over to it as planned: a pipeline backfilling an edit is
// ready while its previous version serves and during the take-over (the
// previous version stopped for the catch-up, a fraction of a second),
// as through a reload's stop and start, so that a load balancer or a
// rollout does not drop a daemon whose admin server goes on serving the
// console and the metrics throughout. A backfill with no version
// serving (at the daemon's start) is not ready, nor is a pipeline that
// failed, retries or whose file does not load.
func (s *Supervisor) Ready(details bool) (bool, []string) {
	var reasons []string
	for _, st := range s.Status() {
		serving := st.State == Backfilling && st.Backfill != nil && (st.Backfill.Serving || st.Backfill.TakingOver)
		handOver := st.State == Stopped && st.Replacing
		if st.State != Running && st.State != Finished && !serving && !handOver {
			r := fmt.Sprintf("pipeline %s is %s", st.Name, st.State)
			if details {
				r = fmt.Sprintf("pipeline %s (%s) is %s", st.Name, st.File, st.State)
				if st.Error != "" {
					r += ": " + st.Error
				}
			}
			reasons = append(reasons, r)
		}
		if st.ReloadError != "" {
			// What runs is not what the file says: the operator's change
			// has not taken effect.
			r := fmt.Sprintf("pipeline %s: the changed file does not load, the previous version is %s", st.Name, st.State)
			if details {
				r = fmt.Sprintf("pipeline %s (%s): the changed file does not load, the previous version is %s: %s", st.Name, st.File, st.State, st.ReloadError)
			}
			reasons = append(reasons, r)
		}
	}
	return len(reasons) == 0, reasons
}

// waitOrStop waits d, and reports false when stop or ctx ended first.
func waitOrStop(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}
