package pipeline_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline"
)

// A GROUP BY over a unique key without state_ttl grows without end: the
// run fails once its state passes max_state_bytes, with an error naming
// the pipeline, the transform and the sizes, instead of the process
// running out of memory.
func TestMaxStateBytesFailsTheRunaway(t *testing.T) {
	const file = `version: 1
name: runaway
max_state_bytes: 4MiB
sources:
  - name: gen
    type: datagen
    schema:
      - id BIGINT
    fields:
      id: { kind: sequence, start: 1, end: 9223372036854775807 }
transforms:
  - name: per_id
    sql: SELECT id, COUNT(*) AS n FROM gen GROUP BY id
sinks:
  - name: out
    from: per_id
    type: blackhole
`
	p, err := pipeline.Parse("runaway.yaml", []byte(file), func(string) (string, bool) { return "", false }, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = p.Run(ctx, pipeline.RunOptions{StateDir: t.TempDir()})
	for _, want := range []string{"pipeline runaway:", `transform "per_id"`, "over the pipeline's max_state_bytes of 4.0 MiB"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to say %q", err, want)
		}
	}
	if !retry.IsPermanent(err) {
		t.Errorf("err = %v is not permanent", err)
	}
}
