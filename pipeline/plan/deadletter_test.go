package plan_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
)

// deadLetterSinks is a pipeline whose source and sink put their dead
// letters in sinks of the file, one declared before the sink naming it.
const deadLetterSinks = `version: 1
name: t
sources:
  - name: gen
    type: datagen
    rows: 5
    schema: [n BIGINT]
    on_error: {policy: dead-letter, sink: errors}
sinks:
  - name: refused
    type: file
    path: refused.jsonl
    format: json
    MODE
  - name: out
    from: gen
    type: print
    on_error: {policy: dead-letter, sink: refused}
  - name: errors
    type: elasticsearch
    hosts: http://localhost:9200
    index: etl-errors
    KEY
`

// A sink taking dead letters is planned over the dead letters' columns:
// by their id where it can upsert (an index), appended where it cannot
// (a file); a mode or key it cannot take is an error at its position.
func TestDeadLetterSinks(t *testing.T) {
	build := func(mode, key string) (*plan.Plan, error) {
		src := strings.Replace(strings.Replace(deadLetterSinks, "MODE", mode, 1), "KEY", key, 1)
		return plan.Build(parse(t, src), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	}
	p, err := build("", "")
	if err != nil {
		t.Fatal(err)
	}
	explain := p.Explain()
	for _, want := range []string{"refused: file <- dead letters, mode=append", "errors: elasticsearch <- dead letters, mode=upsert on [id]"} {
		if !strings.Contains(explain, want) {
			t.Errorf("explain lacks %q:\n%s", want, explain)
		}
	}
	if _, err := p.Graph(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, key, want string }{
		{"mode: retract", "", `p.yaml:14:11: sinks[0].mode: sink "refused" (file) takes dead letters, which it appends or upserts by id; it cannot run in retract mode`},
		{"", "key: [position]", `p.yaml:23:10: sinks[2].key: sink "errors" takes dead letters, whose key is id; the key cannot be position`},
	} {
		if _, err := build(tc.mode, tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: err = %v, want %q", tc.mode, tc.key, err, tc.want)
		}
	}
}
