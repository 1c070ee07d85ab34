// Command etld runs declarative ETL pipelines.
//
//	etld run FILE|DIR...       run pipelines; bounded ones end with a summary
//	etld validate FILE|DIR...  check pipelines without starting anything
//	etld explain FILE          print a pipeline's plan and changelog modes
//	etld version               print the version
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
	"strings"
	"sync"
	"syscall"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks"
	"github.com/etld/etld/sources"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `etld runs declarative ETL pipelines: sources, SQL transforms, sinks.

Usage:
  etld run [flags] FILE|DIR...       run pipelines (bounded ones end with a summary)
  etld validate FILE|DIR...          check pipelines; exit 1 and list every error
  etld explain FILE                  print the plan with changelog modes and sink modes
  etld version                       print the version

Run flags:
  --log-level debug|info|warn|error  (default info)
  --log-format text|json             (default: text on a terminal, json otherwise)
  --quiet                            no summary and no progress line
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func registry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	sources.Register(r)
	sinks.Register(r)
	return r
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "etld %s\n", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "etld: unknown command %q\n\n%s", args[0], usage)
	return 2
}

type logFlags struct {
	level, format string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&l.format, "log-format", "", "log format: text or json (default: text on a terminal)")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch l.format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "":
		if isTerminal(w) {
			return slog.New(slog.NewTextHandler(w, opts)), nil
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", l.format)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func load(paths []string, logger *slog.Logger) ([]*pipeline.Pipeline, error) {
	files, err := pipeline.Files(paths)
	if err != nil {
		return nil, err
	}
	return pipeline.LoadAll(files, pipeline.Env{Registry: registry(), Logger: logger})
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "etld validate: name at least one pipeline file or directory")
		return 2
	}
	ps, err := load(args, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, p := range ps {
		fmt.Fprintf(stdout, "%s: pipeline %s is valid\n", p.Spec.File, p.Name())
	}
	return 0
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "etld explain: name one pipeline file")
		return 2
	}
	ps, err := load(args, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, p := range ps {
		fmt.Fprint(stdout, p.Explain())
	}
	return 0
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lf logFlags
	lf.register(fs)
	quiet := fs.Bool("quiet", false, "print no summary and no progress line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "etld run: name at least one pipeline file or directory")
		return 2
	}
	logger, err := lf.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "etld run:", err)
		return 2
	}
	ps, err := load(fs.Args(), logger)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}

	// The first SIGINT or SIGTERM stops gracefully (drain, flush); a
	// second one cancels.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				logger.Info("stopping: draining in-flight rows and flushing sinks; signal again to abort")
				close(stop)
				continue
			}
			cancel()
			return
		}
	}()

	progress := newProgress(stderr, !*quiet && isTerminal(stderr))
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := false
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			summary, err := p.Run(ctx, pipeline.RunOptions{Stop: stop, Progress: func(s pipeline.Summary) { progress.update(i, s) }})
			progress.done(i)
			mu.Lock()
			defer mu.Unlock()
			if !*quiet {
				progress.clear()
				fmt.Fprint(stderr, summary)
			}
			if err != nil {
				failed = true
				if !errors.Is(err, context.Canceled) {
					fmt.Fprintf(stderr, "error: %v\n", err)
				}
			}
		}()
	}
	wg.Wait()
	if failed {
		return 1
	}
	return 0
}

// progress keeps one live status line on a terminal.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	lines   map[int]pipeline.Summary
	shown   bool
}

func newProgress(w io.Writer, enabled bool) *progress {
	return &progress{w: w, enabled: enabled, lines: map[int]pipeline.Summary{}}
}

func (p *progress) update(i int, s pipeline.Summary) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines[i] = s
	var parts []string
	for _, s := range p.lines {
		var in, out int64
		for _, c := range s.Sources {
			in += c.In
		}
		for _, c := range s.Sinks {
			out += c.Out
		}
		parts = append(parts, fmt.Sprintf("%s: %d in, %d out, %.0f rows/s", s.Pipeline, in, out, s.RowsPerSecond()))
	}
	fmt.Fprintf(p.w, "\r\033[K%s", strings.Join(parts, " | "))
	p.shown = true
}

func (p *progress) done(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.lines, i)
}

func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
