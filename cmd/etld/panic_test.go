package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// panicky is a test source that panics where its option says: new (while
// the file is planned) or read.
type panicky struct{ at string }

func (p *panicky) Bounded() bool               { return true }
func (p *panicky) Open(context.Context) error  { return nil }
func (p *panicky) Close(context.Context) error { return nil }
func (p *panicky) Read(context.Context, int) (*row.Batch, error) {
	panic("panicky: read bug")
}

// withPanickySource makes the commands' registry the built-in one plus
// the panicky source, for the test.
func withPanickySource(t *testing.T) {
	old := registry
	registry = func() *connector.Registry {
		r := builtin.Registry()
		connector.RegisterSource(r, "panicky", "test source that panics", func(c struct {
			At string `yaml:"at"`
		}, env connector.SourceEnv) (connector.Source, error) {
			if c.At == "new" {
				panic("panicky: options bug")
			}
			return &panicky{at: c.At}, nil
		})
		return r
	}
	t.Cleanup(func() { registry = old })
}

// A panic in a one-shot command is an error: exit 1, the panic's value
// in the message and its stack on stderr (the log, for run), never a Go
// crash dump with exit 2.
func TestOneShotCommandsTurnAPanicIntoExit1(t *testing.T) {
	withPanickySource(t)
	dir := t.TempDir()
	file := func(name, at string) string {
		path := filepath.Join(dir, name)
		yaml := "version: 1\nname: " + strings.TrimSuffix(name, ".yaml") + "\nsources:\n  - name: src\n    type: panicky\n    at: " + at + "\n    schema: [x INT]\nsinks:\n  - name: out\n    from: src\n    type: blackhole\n"
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plan, read := file("plan.yaml", "new"), file("read.yaml", "read")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"validate", []string{"validate", plan}, "panic: panicky: options bug"},
		{"explain", []string{"explain", plan}, "panic: panicky: options bug"},
		{"run, planning", []string{"run", "--log-format", "json", plan}, "panic: panicky: options bug"},
		{"run, reading", []string{"run", "--quiet", "--log-format", "json", read}, `source "src": panic: panicky: read bug`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr.String(), tt.want)
			}
			if !strings.Contains(stderr.String(), "goroutine ") || !strings.Contains(stderr.String(), "panic_test.go") {
				t.Errorf("no stack of the panic on stderr:\n%s", stderr.String())
			}
		})
	}
}
