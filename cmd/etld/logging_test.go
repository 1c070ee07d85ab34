package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/redact"
)

// duplicateKeys returns the keys a JSON object repeats, at any depth.
func duplicateKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var dups []string
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					dups = append(dups, key)
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return dups, walk()
}

// assertUniqueKeys fails for every JSON log line that repeats a key.
func assertUniqueKeys(t *testing.T, logs string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		dups, err := duplicateKeys([]byte(line))
		if err != nil {
			t.Errorf("not JSON: %v: %s", err, line)
		}
		if len(dups) > 0 {
			t.Errorf("log line repeats %q: %s", dups, line)
		}
	}
}

// A key that a logger's context holds already (a pipeline's name added by
// the caller and by the callee) appears once per line; the first value
// wins, because the context is what the caller scoped the logger to.
func TestLoggerWritesEveryKeyOnce(t *testing.T) {
	tests := []struct {
		name string
		log  func(w io.Writer) error
		want string // a fragment of the line
	}{
		{"With twice", func(w io.Writer) error {
			l, err := newLogger(w, "info", "json", redact.NewSet())
			if err == nil {
				l.With("pipeline", "x").With("component", "runtime", "pipeline", "x").Info("m")
			}
			return err
		}, `"msg":"m","pipeline":"x","component":"runtime"}`},
		{"With and the record", func(w io.Writer) error {
			l, err := newLogger(w, "info", "json", redact.NewSet())
			if err == nil {
				l.With("pipeline", "x").Info("restored checkpoint", "pipeline", "y", "checkpoint", 3)
			}
			return err
		}, `"msg":"restored checkpoint","pipeline":"x","checkpoint":3}`},
		{"twice in the record", func(w io.Writer) error {
			l, err := newLogger(w, "info", "json", redact.NewSet())
			if err == nil {
				l.Info("m", "source", "a", "source", "a", "n", 1)
			}
			return err
		}, `"source":"a","n":1`},
		{"a group keeps its own keys", func(w io.Writer) error {
			l, err := newLogger(w, "info", "json", redact.NewSet())
			if err == nil {
				l.With("pipeline", "x").WithGroup("g").Info("m", "pipeline", "y")
			}
			return err
		}, `"msg":"m","pipeline":"x","g":{"pipeline":"y"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.log(&buf); err != nil {
				t.Fatal(err)
			}
			assertUniqueKeys(t, buf.String())
			if !strings.Contains(buf.String(), tt.want) {
				t.Errorf("line %s lacks %s", buf.String(), tt.want)
			}
		})
	}
}

func TestDuplicateKeys(t *testing.T) {
	for line, want := range map[string]string{
		`{"a":1,"b":{"a":2}}`:       "[]",
		`{"a":1,"a":2}`:             "[a]",
		`{"a":[{"b":1,"b":2}]}`:     "[b]",
		`{"x":"\"a\":1","a":1}`:     "[]",
		`{"p":"x","q":1,"p":"x"}`:   "[p]",
		`{"g":{"k":1},"g":{"k":1}}`: "[g]",
	} {
		dups, err := duplicateKeys([]byte(line))
		if err != nil || fmt.Sprint(dups) != want && !(want == "[]" && dups == nil) {
			t.Errorf("duplicateKeys(%s) = %v, %v; want %s", line, dups, err, want)
		}
	}
}

// Durations read as Go duration strings in JSON lines too, not as raw
// nanoseconds that a reader must divide; inside groups as well.
func TestLoggerWritesDurationsAsStrings(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			l, err := newLogger(&buf, "info", format, redact.NewSet())
			if err != nil {
				t.Fatal(err)
			}
			l.With("every", 30*time.Second).Info("will retry", "in", 4675*time.Millisecond, slog.Group("g", "took", time.Millisecond))
			line := buf.String()
			want := []string{`"every":"30s"`, `"in":"4.675s"`, `"took":"1ms"`}
			if format == "text" {
				want = []string{"every=30s", "in=4.675s", "g.took=1ms"}
			}
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("line lacks %s: %s", w, line)
				}
			}
			if strings.Contains(line, "4675000000") {
				t.Errorf("a duration in nanoseconds: %s", line)
			}
		})
	}
}
