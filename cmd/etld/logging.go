package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/panics"
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
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationString}
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
	return slog.New(uniqueKeys(secrets.Handler(h))), nil
}

// durationString writes a duration as Go writes it ("4.675s"): slog's JSON
// handler writes raw nanoseconds (4675000000), which a reader has to
// divide and a log processor cannot tell from a count. The text handler
// writes the string already; this keeps both the same.
func durationString(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// uniqueHandler writes each top-level key once per line: slog's handlers
// write every attribute they are given, and a key scoped by a caller
// (logger.With("pipeline", name)) and added again by the callee, in With
// or in the record, repeats in a JSON object, which many log processors
// refuse or resolve at random. The first value wins: the context is what
// the caller scoped the logger to. Keys inside a group are the group's.
type uniqueHandler struct {
	h       slog.Handler
	keys    []string // keys the handler's context holds at the top level
	grouped bool     // WithGroup was called: new keys belong to the group
}

func uniqueKeys(h slog.Handler) slog.Handler { return &uniqueHandler{h: h} }

func (u *uniqueHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return u.h.Enabled(ctx, l)
}

func (u *uniqueHandler) Handle(ctx context.Context, r slog.Record) error {
	if u.grouped {
		return u.h.Handle(ctx, r)
	}
	// Most records repeat nothing: look before copying.
	seen := slices.Clone(u.keys)
	repeats := false
	r.Attrs(func(a slog.Attr) bool {
		if slices.Contains(seen, a.Key) {
			repeats = true
			return false
		}
		seen = append(seen, a.Key)
		return true
	})
	if !repeats {
		return u.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	seen = slices.Clone(u.keys)
	r.Attrs(func(a slog.Attr) bool {
		if !slices.Contains(seen, a.Key) {
			seen = append(seen, a.Key)
			out.AddAttrs(a)
		}
		return true
	})
	return u.h.Handle(ctx, out)
}

func (u *uniqueHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if u.grouped {
		return &uniqueHandler{h: u.h.WithAttrs(attrs), grouped: true}
	}
	keys := slices.Clone(u.keys)
	keep := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if !slices.Contains(keys, a.Key) {
			keys = append(keys, a.Key)
			keep = append(keep, a)
		}
	}
	return &uniqueHandler{h: u.h.WithAttrs(keep), keys: keys}
}

func (u *uniqueHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return u
	}
	return &uniqueHandler{h: u.h.WithGroup(name), grouped: true}
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
func reportPanic(w io.Writer, err error, secrets *redact.Set) {
	if stack, ok := panics.Stack(err); ok {
		fmt.Fprintf(w, "stack of the panic (a bug in etld; please report it):\n%s", secrets.Redact(stack))
	}
}
