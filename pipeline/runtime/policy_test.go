package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
)

// Under on_error: fail the policy's error keeps the bad record in its
// chain: the daemon tells a data error (running again reads the same
// record again) from a transient one by it.
func TestPolicyFailKeepsTheBadRecord(t *testing.T) {
	for _, kind := range []string{"source", "sink"} {
		t.Run(kind, func(t *testing.T) {
			p, err := NewPolicy(kind, "x", "fail", "", slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			cause := errors.New("column n: not an integer")
			rerr := p.Reject(connector.BadRecord{Position: "data/in.csv:7", Raw: []byte("a,b"), Err: cause})
			if !errors.Is(rerr, cause) {
				t.Errorf("errors.Is(%v, the record's error) = false", rerr)
			}
			wrapped := fmt.Errorf("pipeline p: %s %q: read: %w", kind, "x", rerr)
			var bad connector.BadRecord
			if !errors.As(wrapped, &bad) || bad.Position != "data/in.csv:7" {
				t.Fatalf("errors.As(%v, BadRecord) = false or wrong position %q", wrapped, bad.Position)
			}
			want := "data/in.csv:7: column n: not an integer (on_error: fail; set on_error: skip or dead-letter to go on past bad records)"
			if rerr.Error() != want {
				t.Errorf("error = %q\nwant    %q", rerr, want)
			}
			if strings.Count(rerr.Error(), "data/in.csv:7") != 1 {
				t.Errorf("position repeated: %q", rerr)
			}
		})
	}
}

// The log line says what the policy did with the record: a dead-lettered
// record is not "skipped".
func TestPolicyLogSaysWhatItDid(t *testing.T) {
	for policy, want := range map[string]string{"skip": "skipped a bad record", "dead-letter": "dead-lettered a bad record"} {
		t.Run(policy, func(t *testing.T) {
			var log strings.Builder
			p, err := NewPolicy("source", "x", policy, filepath.Join(t.TempDir(), "dlq.jsonl"), slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for range logFirst + 1 {
				if err := p.Reject(connector.BadRecord{Position: "in.csv:7", Raw: []byte("a,b"), Err: errors.New("not an integer")}); err != nil {
					t.Fatal(err)
				}
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(lines) != logFirst {
				t.Fatalf("%d log lines, want %d:\n%s", len(lines), logFirst, log.String())
			}
			for _, l := range lines {
				if !strings.Contains(l, `msg="`+want) {
					t.Errorf("log line %q does not say %q", l, want)
				}
			}
			if l := lines[logFirst-1]; !strings.Contains(l, "further ones are only counted") {
				t.Errorf("last log line %q does not say that further ones are only counted", l)
			}
		})
	}
}
