package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline"
)

// cmdRun is `etld run`: one-shot over the named files, or the daemon with
// --config, --daemon, or ETLD_CONFIG and no files named.
func cmdRun(args []string, stdout, stderr io.Writer) int {
	rf := newRunFlags()
	if code := parseFlags(rf.fs, args, runUsage, stdout, stderr); code >= 0 {
		return code
	}
	if err := rf.profiles.start(); err != nil {
		fmt.Fprintln(stderr, "etld run:", err)
		return 2
	}
	code := runCommand(rf, stderr)
	if err := rf.profiles.stop(); err != nil {
		fmt.Fprintln(stderr, "etld run:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// runCommand is etld run after its flags, between the profiles' start
// and stop.
func runCommand(rf *runFlags, stderr io.Writer) int {
	fs := rf.fs
	if rf.config == "" && fs.NArg() == 0 {
		rf.config = os.Getenv(daemon.EnvConfig)
	}
	if rf.config != "" || rf.daemon {
		if fs.NArg() > 0 {
			fmt.Fprintln(stderr, "etld run: the daemon runs the pipelines directory (--pipelines or pipelines: in etld.yaml); name no files with --config or --daemon")
			return 2
		}
		return runDaemon(rf.config, rf.settings, stderr)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "etld run: name at least one pipeline file or directory, or give --config etld.yaml to run the daemon")
		return 2
	}
	// One-shot runs take the logging and checkpoint flags; the others
	// (pipelines dir, admin server) only mean something to the daemon.
	cfg := daemon.Config{Log: daemon.LogConfig{Level: "info"}, ShutdownTimeout: daemon.DefaultShutdownTimeout}
	for _, f := range rf.settings {
		switch f[0] {
		case "log-level", "log-format", "state-dir", "checkpoint-interval", "shutdown-timeout":
			if err := cfg.Set(f[0], f[1]); err != nil {
				fmt.Fprintln(stderr, "etld run:", err)
				return 2
			}
		default:
			fmt.Fprintf(stderr, "etld run: --%s is a daemon setting: add --config FILE or --daemon\n", f[0])
			return 2
		}
	}
	if cfg.ShutdownTimeout <= 0 {
		fmt.Fprintln(stderr, "etld run: --shutdown-timeout: want a duration above 0")
		return 2
	}
	if len(rf.reset) > 0 && cfg.StateDir == "" {
		fmt.Fprintln(stderr, "etld run: --reset-state needs --state-dir: without one nothing is restored")
		return 2
	}
	if rf.backfill && cfg.StateDir == "" {
		fmt.Fprintln(stderr, "etld run: --backfill needs --state-dir: without one there is no state to rebuild")
		return 2
	}
	return runOnce(fs.Args(), cfg, rf.quiet, rf.reset, rf.backfill, stderr)
}

// runFlags are etld run's flags.
type runFlags struct {
	fs *flag.FlagSet
	// settings are the daemon settings given as flags, in the order
	// given: they are applied after etld.yaml and the environment.
	settings      [][2]string
	quiet, daemon bool
	config        string
	profiles      profiles
	// reset is --reset-state, each time it is given.
	reset []string
	// backfill is --backfill.
	backfill bool
}

func newRunFlags() *runFlags {
	rf := &runFlags{fs: flag.NewFlagSet("run", flag.ContinueOnError)}
	for _, s := range daemon.Settings {
		rf.fs.Func(s.Flag, s.Help, func(v string) error {
			rf.settings = append(rf.settings, [2]string{s.Flag, v})
			return nil
		})
	}
	rf.fs.Func("reset-state", "start OPERATOR empty although the state directory holds state for it (repeatable)", func(v string) error {
		rf.reset = append(rf.reset, v)
		return nil
	})
	rf.fs.BoolVar(&rf.backfill, "backfill", false, "rebuild the operators an edit changed from the sources' start, then run")
	rf.fs.BoolVar(&rf.quiet, "quiet", false, "print no summary and no progress line (one-shot runs)")
	rf.fs.StringVar(&rf.config, "config", "", "daemon config file (etld.yaml); runs the daemon")
	rf.fs.BoolVar(&rf.daemon, "daemon", false, "run the daemon without a config file")
	rf.fs.StringVar(&rf.profiles.cpu, "cpuprofile", "", "write a CPU profile of the whole run to FILE (go tool pprof reads it)")
	rf.fs.StringVar(&rf.profiles.mem, "memprofile", "", "write a heap profile to FILE at exit, after a GC")
	return rf
}

// runOnce runs the named pipelines to their end: bounded ones finish,
// the others run until SIGINT or SIGTERM.
func runOnce(paths []string, cfg daemon.Config, quiet bool, reset []string, backfill bool, stderr io.Writer) int {
	secrets := secretsOf(paths)
	// Log lines, summaries and errors go through progress, which writes
	// them above its lines; the log format is chosen by stderr itself.
	progress := newProgress(stderr, !quiet && isTerminal(stderr), termWidth(stderr), secrets)
	format := cfg.Log.Format
	if format == "" && isTerminal(stderr) {
		format = "text"
	}
	logger, err := newLogger(progress, cfg.Log.Level, format, secrets)
	if err != nil {
		fmt.Fprintln(stderr, "etld run:", err)
		return 2
	}
	ps, err := load(paths, logger)
	if err != nil {
		fmt.Fprintln(stderr, secrets.Redact(err.Error()))
		logPanic(logger, "", err)
		return 1
	}
	if cfg.StateDir != "" {
		// The daemon's lock: a daemon, another run or `etld state reset`
		// on the same state directory would write checkpoints over this
		// run's, or reset what it goes on from.
		release, err := daemon.LockStateDir(cfg.StateDir)
		if err != nil {
			fmt.Fprintln(stderr, "etld run:", err)
			return 1
		}
		defer release()
	}

	// The first SIGINT or SIGTERM stops gracefully (drain, flush) within
	// the shutdown_timeout; the deadline or a second signal abandons the
	// runs still going, each with a line saying what it leaves.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, abandoned, release := stopOnSignals(ctx, logger, cfg.ShutdownTimeout)
	defer release()

	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := false
	ended := make([]atomic.Bool, len(ps))
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ended[i].Store(true)
			var summary pipeline.Summary
			// A panic on Run's own goroutine is its error, as the runtime
			// makes one on a node's.
			err := panics.Call(func() (err error) {
				summary, err = p.Run(ctx, pipeline.RunOptions{
					Stop:               stop,
					Progress:           func(s pipeline.Summary) { progress.update(i, s) },
					StateDir:           cfg.StateDir,
					CheckpointInterval: cfg.CheckpointInterval,
					ResetState:         reset,
					Backfill:           backfill,
					Backfilled: func(r *pipeline.BackfillReport) {
						if !quiet {
							fmt.Fprint(progress, secrets.Redact(r.String()))
						}
					},
					Logger: logger.With("component", "runtime", "pipeline", p.Name()),
				})
				return err
			})
			progress.done(i)
			mu.Lock()
			defer mu.Unlock()
			if !quiet {
				fmt.Fprint(progress, secrets.Redact(summary.String()))
			}
			if err != nil {
				failed = true
				if !errors.Is(err, context.Canceled) {
					fmt.Fprintf(progress, "error: %s\n", secrets.Redact(err.Error()))
					logPanic(logger, p.Name(), err)
				}
			}
		}()
	}
	all := make(chan struct{})
	go func() {
		wg.Wait()
		close(all)
	}()
	select {
	case <-all:
	case why := <-abandoned:
		for i, p := range ps {
			if !ended[i].Load() {
				s, _ := p.Live()
				daemon.LogAbandoned(logger, s, cfg.StateDir != "", why)
			}
		}
		cancel()
		// A connector stuck in a call that ignores cancelling must not
		// keep the process alive.
		t := time.NewTimer(daemon.AbandonGrace)
		defer t.Stop()
		select {
		case <-all:
		case <-t.C:
		}
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

// logPanic logs, at error level, the stack of the panic in err's chain,
// if any: a panic is a bug in etld, and its report needs the stack. The
// error itself is printed apart, as every run error is.
func logPanic(logger *slog.Logger, pipelineName string, err error) {
	stack, ok := panics.Stack(err)
	if !ok {
		return
	}
	args := []any{"stack", stack}
	if pipelineName != "" {
		args = append(args, "pipeline", pipelineName)
	}
	logger.Error("a panic ended the command: a bug in etld; please report it with this stack", args...)
}

// stopOnSignals closes stop at the first SIGINT or SIGTERM, so that the
// runs drain and flush, and then says on abandoned why the runs still
// going must be given up: a second signal, or the shutdown timeout
// passed. release stops listening.
func stopOnSignals(ctx context.Context, logger *slog.Logger, timeout time.Duration) (stop <-chan struct{}, abandoned <-chan string, release func()) {
	stopped := make(chan struct{})
	why := make(chan string, 1)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case <-sigs:
		case <-ctx.Done():
			return
		}
		logger.Info("stopping: draining in-flight rows and flushing sinks; signal again to abort", "shutdown_timeout", timeout.String())
		close(stopped)
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		select {
		case sig := <-sigs:
			why <- fmt.Sprintf("second signal (%s)", sig)
		case <-deadline.C:
			why <- fmt.Sprintf("shutdown_timeout %s passed", timeout)
		case <-ctx.Done():
		}
	}()
	return stopped, why, func() { signal.Stop(sigs) }
}
