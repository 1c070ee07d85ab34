package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/etld/etld/internal/builtin"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/pipeline"
)

// newLogger makes the logger: text on a terminal, JSON otherwise, with
// secrets scrubbed from every line.
func newLogger(w io.Writer, level, format string, secrets *redact.Set) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		// The level may come from ${VAR} in etld.yaml.
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", secrets.Redact(level))
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
		return nil, fmt.Errorf("--log-format %q: want text or json", secrets.Redact(format))
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
func secretsOf(paths []string) *redact.Set {
	s := redact.NewSet()
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

func load(paths []string, logger *slog.Logger) ([]*pipeline.Pipeline, error) {
	files, err := pipeline.Files(paths)
	if err != nil {
		return nil, err
	}
	return pipeline.LoadAll(files, pipeline.Env{Registry: builtin.Registry(), Logger: logger})
}
