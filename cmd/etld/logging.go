package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/etld/etld/internal/builtin"
	"github.com/etld/etld/internal/daemon"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline"
)

// newLogger makes the logger: text on a terminal, JSON otherwise, with
// secrets scrubbed from every line.
func newLogger(w io.Writer, level, format string, secrets *daemon.Secrets) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "":
		if isTerminal(w) {
			h = slog.NewTextHandler(w, opts)
		} else {
			h = slog.NewJSONHandler(w, opts)
		}
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	return slog.New(secrets.Handler(h)), nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// secretsOf records the ${VAR} values the pipeline files reference, so
// that errors about them can be printed without them.
func secretsOf(paths []string) *daemon.Secrets {
	s := daemon.NewSecrets()
	files, err := pipeline.Files(paths)
	if err != nil {
		return s
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			s.AddFrom(data, os.LookupEnv)
		}
	}
	return s
}

// registry returns the connectors and formats the commands build
// pipelines from; tests add their own to it.
var registry = builtin.Registry

// load loads the pipelines of paths. A panic while one is planned (a
// connector's constructor meeting options it did not expect) is an error
// like the others: the command exits 1 and reportPanic shows the stack.
func load(paths []string, logger *slog.Logger) (ps []*pipeline.Pipeline, err error) {
	defer panics.Recover(&err)
	files, err := pipeline.Files(paths)
	if err != nil {
		return nil, err
	}
	return pipeline.LoadAll(files, pipeline.Env{Registry: registry(), Logger: logger})
}

// reportPanic writes the stack of the panic in err's chain, if any, to
// w: a panic is a bug in etld, and its report needs the stack. It goes
// to stderr after the error, never to stdout.
func reportPanic(w io.Writer, err error, secrets *daemon.Secrets) {
	if stack, ok := panics.Stack(err); ok {
		fmt.Fprintf(w, "stack of the panic (a bug in etld; please report it):\n%s", secrets.Redact(stack))
	}
}
