package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/etld/etld/internal/app/admin"
	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/app/metrics"
	"github.com/etld/etld/internal/app/sdnotify"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/pipeline"
)

// daemonConfig assembles the configuration: defaults, then the file, then
// ETLD_* variables, then flags.
func daemonConfig(path string, flags [][2]string, secrets *redact.Set) (daemon.Config, error) {
	cfg := daemon.Defaults()
	if path != "" {
		if data, err := os.ReadFile(path); err == nil {
			secrets.AddFrom(data, os.LookupEnv)
		}
		if err := cfg.LoadFile(path, os.LookupEnv); err != nil {
			return cfg, err
		}
	}
	if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
		return cfg, err
	}
	for _, f := range flags {
		if err := cfg.Set(f[0], f[1]); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// runDaemon runs every pipeline of the pipelines directory until SIGTERM
// or SIGINT. Bounded pipelines finish and stay listed as finished: the
// daemon keeps serving the admin endpoints (their final counters) until it
// is told to stop. SIGHUP reloads the directory.
func runDaemon(configPath string, flags [][2]string, stderr io.Writer) int {
	secrets := redact.NewSet()
	cfg, err := daemonConfig(configPath, flags, secrets)
	if err != nil {
		fmt.Fprintln(stderr, "etld run:", secrets.Redact(err.Error()))
		return 2
	}
	logger, err := newLogger(stderr, cfg.Log.Level, cfg.Log.Format, secrets)
	if err != nil {
		fmt.Fprintln(stderr, "etld run:", err)
		return 2
	}
	log := logger.With("component", "daemon")
	if cfg.StateDir != "" {
		release, err := daemon.LockStateDir(cfg.StateDir)
		if err != nil {
			log.Error("cannot start", "error", err)
			return 1
		}
		defer release()
	}

	// Signals are caught before anything starts, so that none is lost.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	sup := daemon.New(daemon.Options{
		Dir:     cfg.Pipelines,
		Load:    daemon.NewLoader(pipeline.Env{Registry: registry(), Logger: logger.With("component", "connector")}, os.LookupEnv),
		Logger:  logger,
		Secrets: secrets,

		StateDir:           cfg.StateDir,
		CheckpointInterval: cfg.CheckpointInterval,
		StopTimeout:        cfg.ShutdownTimeout,
	})
	build := buildVersion()
	reg := metrics.NewRegistry(sup.Status, build.Version)
	var loaded atomic.Bool

	srv, err := startAdmin(cfg, sup, reg, &loaded, logger, secrets)
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	res, err := sup.Reload()
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	loaded.Store(true)
	log.Info("started", "version", build.Version, "commit", build.Revision, "go", build.GoVersion, "pipelines_dir", cfg.Pipelines, "started", len(res.Started), "not_loaded", len(res.Failed))

	notify := sdnotify.FromEnv(os.Getenv)
	d := &daemonRun{cfg: cfg, log: log, sup: sup, reg: reg, notify: notify}
	d.sdNotify("READY=1\nSTATUS=running the pipelines of " + cfg.Pipelines)
	watchdog := make(<-chan time.Time)
	if every := notify.WatchdogInterval(); every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		watchdog = t.C
	}
	d.serve(sigs, watchdog)
	return d.stop(sigs, srv)
}

// startAdmin starts the admin server when the configuration enables it
// (nil otherwise): health and readiness (not ready until the pipelines
// directory was loaded once), /pipelines, /metrics and the console.
func startAdmin(cfg daemon.Config, sup *daemon.Supervisor, reg *metrics.Registry, loaded *atomic.Bool, logger *slog.Logger, secrets *redact.Set) (*admin.Server, error) {
	if !cfg.Admin.Enabled {
		return nil, nil
	}
	log := logger.With("component", "daemon")
	srv, err := admin.Listen(cfg.Admin.Address, consoleOptions(admin.Options{
		Ready: func(details bool) (bool, []string) {
			if !loaded.Load() {
				return false, []string{"loading the pipelines directory"}
			}
			return sup.Ready(details)
		},
		Pipelines: func() any { return sup.Status() },
		Gatherer:  reg,
		Logger:    logger,
	}, sup, cfg.Admin, secrets))
	if err != nil {
		return nil, err
	}
	if !cfg.Admin.Loopback() {
		log.Warn("the admin server listens beyond loopback: /metrics describes the pipelines to anyone who can reach it; /ui and /pipelines need admin.token", "address", srv.Addr().String())
		if cfg.Admin.Token == "" {
			log.Warn("admin.token is not set: /ui and /pipelines answer 401 to everyone; set ETLD_ADMIN_TOKEN to use them", "address", srv.Addr().String())
		}
	}
	log.Info("admin server listening", "address", srv.Addr().String())
	go func() {
		if err := srv.Serve(); err != nil {
			log.Error("admin server stopped", "error", err)
		}
	}()
	return srv, nil
}

// daemonRun is the daemon after it started: its loop of signals,
// reloads and watchdog, then its stop.
type daemonRun struct {
	cfg    daemon.Config
	log    *slog.Logger
	sup    *daemon.Supervisor
	reg    *metrics.Registry
	notify *sdnotify.Notifier
}

func (d *daemonRun) sdNotify(state string) {
	if err := d.notify.Notify(state); err != nil {
		d.log.Warn("systemd notify failed", "error", err)
	}
}

// serve runs until a signal other than SIGHUP: a SIGHUP reloads the
// pipelines directory.
func (d *daemonRun) serve(sigs <-chan os.Signal, watchdog <-chan time.Time) {
	log, sup, reg, notify, cfg := d.log, d.sup, d.reg, d.notify, d.cfg
	sdNotify := d.sdNotify
	// The watchdog is fed from this loop, which never blocks: a reload
	// runs on its own goroutine (it may wait for a pipeline to drain), and
	// SIGHUPs that arrive meanwhile make one more reload after it.
	type reloaded struct {
		res daemon.ReloadResult
		err error
	}
	var reloadDone chan reloaded // nil when no reload runs
	pending := false
	startReload := func() {
		if err := notify.Reloading(); err != nil {
			log.Warn("systemd notify failed", "error", err)
		}
		reloadDone = make(chan reloaded, 1)
		go func(done chan<- reloaded) {
			res, err := sup.Reload()
			done <- reloaded{res, err}
		}(reloadDone)
	}
loop:
	for {
		select {
		case <-watchdog:
			sdNotify("WATCHDOG=1")
		case r := <-reloadDone:
			reloadDone = nil
			result := "ok"
			if r.err != nil || len(r.res.Failed) > 0 {
				result = "error"
			}
			reg.Reloads.WithLabelValues(result).Inc()
			if r.err != nil {
				// No "reloaded" line with zero counts after it: nothing was.
				log.Error("reload failed: nothing changed", "error", r.err)
			} else {
				res := r.res
				log.Info("reloaded", "started", len(res.Started), "stopped", len(res.Stopped), "restarted", len(res.Restarted), "backfilling", len(res.Backfilling), "unchanged", len(res.Unchanged), "not_loaded", len(res.Failed))
			}
			sdNotify("READY=1")
			if pending {
				pending = false
				startReload()
			}
		case sig := <-sigs:
			if sig != syscall.SIGHUP {
				log.Info("stopping: draining in-flight rows and flushing sinks; signal again to abort", "signal", sig.String(), "shutdown_timeout", cfg.ShutdownTimeout.String())
				break loop
			}
			if reloadDone != nil {
				pending = true
				continue
			}
			startReload()
		}
	}

}

// stop drains the pipelines within the shutdown timeout, which a second
// signal cuts short, and returns the exit status: 1 when a pipeline was
// abandoned before it drained.
func (d *daemonRun) stop(sigs <-chan os.Signal, srv *admin.Server) int {
	log, sup, cfg := d.log, d.sup, d.cfg
	d.sdNotify("STOPPING=1")
	// The stop has a deadline, and a second signal cuts it short: either
	// way each pipeline still running is abandoned with a line saying what
	// it leaves, and etld exits 1.
	abort, abortNow := context.WithCancelCause(context.Background())
	defer abortNow(nil)
	ctx, cancel := context.WithTimeoutCause(abort, cfg.ShutdownTimeout, fmt.Errorf("shutdown_timeout %s passed", cfg.ShutdownTimeout))
	defer cancel()
	go func() {
		for sig := range sigs {
			if sig != syscall.SIGHUP {
				abortNow(fmt.Errorf("second signal (%s)", sig))
				return
			}
		}
	}()
	clean := sup.Shutdown(ctx)
	for _, st := range sup.Status() {
		log.Info("final state", "pipeline", st.Name, "state", string(st.State), "error", st.Error, "rows_in", sumIn(st.Sources), "rows_out", sumOut(st.Sinks))
	}
	if srv != nil {
		shutCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		if err := srv.Shutdown(shutCtx); err != nil {
			log.Warn("admin server shutdown", "error", err)
		}
	}
	if !clean {
		log.Error("stopped before every pipeline could drain: exit status 1; the next start resumes from the checkpoints named above")
		return 1
	}
	log.Info("stopped")
	return 0
}

func sumIn(cs []daemon.Counter) int64 {
	var n int64
	for _, c := range cs {
		n += c.In
	}
	return n
}

func sumOut(cs []daemon.Counter) int64 {
	var n int64
	for _, c := range cs {
		n += c.Out
	}
	return n
}
