// Command etldrun runs one pipeline file as `etld run --state-dir` does
// (the same pipeline.Load and Run, the builtin connectors) and writes the
// run's summary as JSON, for the bench workloads that need what the
// one-shot summary does not print: the last checkpoint's duration and
// size (W4).
//
// Usage: etldrun -state-dir DIR -summary OUT.json FILE.yaml
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/heapfloor"
	"github.com/etld/etld/pipeline"
)

// summary is the part of pipeline.Summary the bench reads.
type summary struct {
	ElapsedS         float64 `json:"elapsed_s"`
	SourceRows       int64   `json:"source_rows"`
	Checkpoints      int64   `json:"checkpoints"`
	LastCheckpointS  float64 `json:"last_checkpoint_s"`
	LastCheckpointSz int64   `json:"last_checkpoint_bytes"`
}

func main() {
	heapfloor.Start(heapfloor.Default) // as etld's main does
	stateDir := flag.String("state-dir", "", "checkpoint directory (required)")
	out := flag.String("summary", "", "where the JSON summary goes (required)")
	flag.Parse()
	if flag.NArg() != 1 || *stateDir == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: etldrun -state-dir DIR -summary OUT.json FILE.yaml")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *stateDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "etldrun:", err)
		os.Exit(1)
	}
}

func run(file, stateDir, out string) error {
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry()})
	if err != nil {
		return err
	}
	s, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: stateDir})
	if err != nil {
		return fmt.Errorf("run %s: %w", file, err)
	}
	sum := summary{
		ElapsedS:         s.Elapsed.Seconds(),
		Checkpoints:      s.Checkpoints.Count,
		LastCheckpointS:  s.Checkpoints.LastDuration.Seconds(),
		LastCheckpointSz: s.Checkpoints.LastSize,
	}
	for _, c := range s.Sources {
		sum.SourceRows += c.Out
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
