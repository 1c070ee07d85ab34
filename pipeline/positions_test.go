package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
)

// TestTransformErrorsNameTheRecord: an expression that fails at run time
// names the source record (rt.csv:2) and the transform (its name: in the
// file, the operator in brackets), in the error under on_error: fail and in
// the dead-letter entry, however many operators lie between the source and
// the failing expression.
func TestTransformErrorsNameTheRecord(t *testing.T) {
	tests := []struct {
		name       string
		transforms string
		from       string
		transform  string // the transform the error names
	}{{
		name: "projection over the source",
		transforms: `
  - name: typed
    sql: SELECT id, CAST(v AS INT) AS n FROM rt`,
		from:      "typed",
		transform: "typed",
	}, {
		name: "projection over a filter of another transform",
		transforms: `
  - name: kept
    sql: SELECT id, v FROM rt WHERE id <> 'zz'
  - name: typed
    sql: SELECT id, CAST(v AS INT) AS n FROM kept`,
		from:      "typed",
		transform: "typed",
	}, {
		name: "select list over a GROUP BY",
		transforms: `
  - name: per_id
    sql: SELECT id, CAST(MAX(v) AS INT) AS n FROM rt GROUP BY id`,
		from:      "per_id",
		transform: "per_id",
	}}
	for _, tt := range tests {
		for _, policy := range []string{"fail", "dead-letter"} {
			t.Run(tt.name+"/"+policy, func(t *testing.T) {
				dir := t.TempDir()
				in := filepath.Join(dir, "rt.csv")
				if err := os.WriteFile(in, []byte("a,1\nb,12x\nc,3\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				dlq := filepath.Join(dir, "dlq.jsonl")
				onError := "    on_error: fail"
				if policy == "dead-letter" {
					onError = "    on_error: dead-letter\n    dead_letter: " + dlq
				}
				yaml := fmt.Sprintf(`version: 1
name: p
sources:
  - name: rt
    type: file
    path: %s
    schema: [id STRING, v STRING]
%s
transforms:%s
sinks:
  - name: out
    from: %s
    type: print
`, in, onError, tt.transforms, tt.from)
				path := filepath.Join(dir, "p.yaml")
				if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				_, err = p.Run(context.Background(), pipeline.RunOptions{})
				if policy == "fail" {
					checkFailure(t, err, in+":2", tt.transform)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				checkDeadLetter(t, dlq, in+":2", tt.transform)
			})
		}
	}
}

func checkFailure(t *testing.T, err error, position, transform string) {
	t.Helper()
	if err == nil {
		t.Fatal("the run succeeded over a value that cannot be CAST")
	}
	for _, want := range []string{fmt.Sprintf("transform %q (Calc(", transform), position + `: `, `cannot parse "12x" as INT`, "on_error: fail"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	var bad connector.BadRecord
	if !errors.As(err, &bad) {
		t.Fatalf("error %v does not wrap a connector.BadRecord", err)
	}
	if bad.Position != position || bad.Transform != transform {
		t.Errorf("BadRecord at %q in transform %q, want %q in %q", bad.Position, bad.Transform, position, transform)
	}
}

func checkDeadLetter(t *testing.T, dlq, position, transform string) {
	t.Helper()
	data, err := os.ReadFile(dlq)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 {
		t.Fatalf("dead letters:\n%s\nwant one", data)
	}
	var entry struct{ Source, Transform, Position, Error, Record string }
	if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
		t.Fatal(err)
	}
	if entry.Source != "rt" || entry.Transform != transform || entry.Position != position || !strings.Contains(entry.Error, `cannot parse "12x" as INT`) {
		t.Errorf("dead letter %+v, want source rt, transform %s, position %s", entry, transform, position)
	}
}
