package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps h so that the message and every attribute value are
// redacted before h formats them (quoting or JSON escaping comes after, so
// the raw form is what has to be caught).
func (s *Set) Handler(h slog.Handler) slog.Handler { return &handler{h: h, s: s} }

type handler struct {
	h slog.Handler
	s *Set
}

func (r *handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *handler) Handle(ctx context.Context, rec slog.Record) error {
	red := r.s.Redactor()
	out := slog.NewRecord(rec.Time, rec.Level, red.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(red, a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	// Attributes given to With are redacted now, with the secrets known
	// now: a logger made before a reload adds secrets keeps its prefix.
	red := r.s.Redactor()
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = attr(red, a)
	}
	return &handler{h: r.h.WithAttrs(clean), s: r.s}
}

func (r *handler) WithGroup(name string) slog.Handler {
	return &handler{h: r.h.WithGroup(name), s: r.s}
}

func attr(red *Redactor, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, red.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = attr(red, g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		// Errors and other values print through fmt: redact what they print.
		return slog.String(a.Key, red.String(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
