package pipeline_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline"
)

// A panic in Run's progress reporter, the one goroutine Run starts
// itself, ends the run with the panic as its error instead of ending the
// process.
func TestRunTurnsAProgressPanicIntoItsError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	yaml := "version: 1\nname: p\nsources:\n  - name: g\n    type: datagen\n    rate: 100\n    schema: [x BIGINT]\nsinks:\n  - name: out\n    from: g\n    type: blackhole\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), pipeline.RunOptions{Progress: func(pipeline.Summary) { panic("progress bug") }})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "panic: progress bug") {
			t.Fatalf("Run = %v, want the progress panic", err)
		}
		if _, ok := panics.Stack(err); !ok {
			t.Errorf("the error carries no stack: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end after its reporter panicked")
	}
}
