package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/row"
)

// panicSource panics in Read, as a connector bug reached by one record
// would.
type panicSource struct{ seqSource }

func (s *panicSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	panic("source bug")
}

type panicSink struct{ memSink }

func (s *panicSink) Write(context.Context, *row.Batch) error {
	var m map[string]int
	m["x"]++ //lint:ignore SA5000 the panic is what the test is about
	return nil
}

// A panic on any goroutine of a run is that run's error, with the node's
// name and the panicking stack, and the other nodes end: the process, and
// the other pipelines in it, go on.
func TestRunTurnsAPanicIntoTheRunsError(t *testing.T) {
	bad := &Calc{Filter: func(row.Row) (bool, error) { panic("operator bug") }}
	tests := []struct {
		name string
		g    func() *Graph
		want string
	}{
		{"source", func() *Graph { return graph(&panicSource{}, nil, &memSink{}) }, `source "src": panic: source bug`},
		{"operator", func() *Graph { return graph(&seqSource{n: 10, block: true}, bad, &memSink{}) }, `transform "calc": panic: operator bug`},
		{"sink", func() *Graph {
			g := graph(&seqSource{n: 10, block: true}, nil, &memSink{})
			g.Sinks[0].Sink = &panicSink{}
			return g
		}, `sink "sinka": panic: assignment to entry in nil map`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- Run(context.Background(), tt.g(), Options{}) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				if stack, ok := panics.Stack(err); !ok || !strings.Contains(stack, "runtime.") {
					t.Errorf("the error carries no stack: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run hung after a panic")
			}
		})
	}
}
