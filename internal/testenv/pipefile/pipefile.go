// Package pipefile loads and runs pipeline files in tests: the file
// written to a directory, loaded through the registry a test gives, run
// to its end. It lives apart from internal/testenv because it imports the
// pipeline facade, and the runtime's own tests import testenv.
package pipefile

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/etld/etld/pipeline"
)

// Write writes text as dir/p.yaml (dir "": a directory of the test's
// own) and returns its path.
func Write(t testing.TB, dir, text string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Load writes text as Write does and loads it with env, whose Logger
// defaults to one that discards. An error fails t with the file's text.
func Load(t testing.TB, env pipeline.Env, dir, text string) *pipeline.Pipeline {
	t.Helper()
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := pipeline.Load(Write(t, dir, text), env)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, text)
	}
	return p
}

// Run loads text as Load does and runs it to its end within ctx; an
// error fails t. It returns the run's summary.
func Run(t testing.TB, ctx context.Context, env pipeline.Env, dir, text string) pipeline.Summary {
	t.Helper()
	sum, err := Load(t, env, dir, text).Run(ctx, pipeline.RunOptions{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}
