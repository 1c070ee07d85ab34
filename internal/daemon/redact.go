package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Secrets scrubs the values of environment variables that configuration
// files reference as ${VAR} from logs, errors and status. Connector options
// are decoded before anyone sees them, but a value can still come back in
// a message: a type error quotes it ("want an integer, got ..."), a driver
// puts its DSN in a connection error. Scrubbing at the daemon's edges
// catches all of those without every connector having to be careful.
//
// Which values count: those of variables whose name says secret (PASSWORD,
// SECRET, TOKEN, KEY, CREDENTIAL, AUTH, PWD) from 2 characters, and any
// other referenced value from 8 characters (URLs and DSNs that embed a
// password). Short values of plain variables (a port, a count) stay, so
// that logs keep their numbers. A value is replaced by ${NAME}.
type Secrets struct {
	mu       sync.RWMutex
	names    map[string]string // value -> variable name
	replacer *strings.Replacer
}

var (
	refRE        = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	secretNameRE = regexp.MustCompile(`(?i)pass|secret|token|key|cred|auth|pwd`)
)

// NewSecrets returns an empty set.
func NewSecrets() *Secrets { return &Secrets{names: map[string]string{}} }

// AddFrom records the values of the variables that data references.
func (s *Secrets) AddFrom(data []byte, lookup func(string) (string, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, m := range refRE.FindAllSubmatch(data, -1) {
		name := string(m[1])
		v, ok := lookup(name)
		if !ok || !secretValue(name, v) {
			continue
		}
		if _, seen := s.names[v]; !seen {
			s.names[v] = name
			added = true
		}
	}
	if added {
		// Longest first, so a value that contains another is replaced whole.
		vals := make([]string, 0, len(s.names))
		for v := range s.names {
			vals = append(vals, v)
		}
		slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, "${"+s.names[v]+"}")
		}
		s.replacer = strings.NewReplacer(pairs...)
	}
}

func secretValue(name, v string) bool {
	if secretNameRE.MatchString(name) {
		return len(v) >= 2
	}
	return len(v) >= 8
}

// Redact returns text with every recorded value replaced.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	r := s.replacer
	s.mu.RUnlock()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Handler wraps h so that messages and attribute values are redacted.
func (s *Secrets) Handler(h slog.Handler) slog.Handler { return &redactHandler{h: h, s: s} }

type redactHandler struct {
	h slog.Handler
	s *Secrets
}

func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.s.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = r.attr(a)
	}
	return &redactHandler{h: r.h.WithAttrs(clean), s: r.s}
}

func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: r.h.WithGroup(name), s: r.s}
}

func (r *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.s.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = r.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		// Errors and other values print through fmt: redact what they print.
		return slog.String(a.Key, r.s.Redact(fmt.Sprint(v.Any())))
	}
	return a
}
