package file

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	filesink "github.com/etld/etld/sinks/file"
)

// checkpointed is what a stored checkpoint holds for this test: the
// source's position, the sink's state and how many lines were read.
type checkpointed struct {
	pos, state []byte
	lines      int
}

// TestFollowToFileExactlyOnce drives a followed log into the file sink
// the way the checkpoint runtime will (Read, Write; at a barrier Position,
// Flush, Snapshot; store; Commit), crashes at random points (no Close, no
// publishing), restores the last stored checkpoint into new connectors and
// goes on. The log grows, and is rotated midway. The output must be
// byte-identical to the log's lines in order. Seeds are logged so that a
// failure can be replayed.
func TestFollowToFileExactlyOnce(t *testing.T) {
	const steps, perStep = 10, 7
	totalCrashes := 0
	defer func() {
		// The seeds must exercise the crashes they are there for.
		if totalCrashes < 40 {
			t.Errorf("only %d crashes over all seeds", totalCrashes)
		}
	}()
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			h := newHarness(t)
			log := filepath.Join(h.dir, "app.log")
			out := filepath.Join(h.dir, "out", "lines.txt")
			opts := "path: " + log + "*\nformat: raw\nfollow: true\nmonitor_interval: 5ms"
			r := connector.NewRegistry()
			formats.Register(r)

			var want strings.Builder
			var stored checkpointed
			var src *Source
			var sink *filesink.Sink
			read := 0 // lines read and written since the stored checkpoint's
			crashes := 0
			start := func() {
				var err error
				if src, err = h.build(opts, lineSchema); err != nil {
					t.Fatal(err)
				}
				if sink, err = filesink.New(filesink.Config{Path: out, Format: connector.FormatSpec{Type: "raw"}}, connector.SinkEnv{Name: "out", Formats: r}); err != nil {
					t.Fatal(err)
				}
				if err := sink.Bind(connector.SinkInput{Schema: row.NewSchema(row.Field{Name: "line", Type: row.Of(row.String)}), Mode: connector.Append}); err != nil {
					t.Fatal(err)
				}
				if stored.pos != nil {
					if err := src.Restore(stored.pos); err != nil {
						t.Fatal(err)
					}
					if err := sink.Restore(stored.state); err != nil {
						t.Fatal(err)
					}
				}
				if err := src.Open(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := sink.Open(context.Background()); err != nil {
					t.Fatal(err)
				}
				read = 0
			}
			crash := func() {
				// A killed process closes its files without writing
				// anything more.
				src.Close(context.Background())
				crashes++
				start()
			}
			ctx := context.Background()
			start()
			for step := range steps {
				if step == steps/2 {
					if err := os.Rename(log, log+".1"); err != nil {
						t.Fatal(err)
					}
				}
				for i := range perStep {
					line := fmt.Sprintf("step %d line %d %s", step, i, strings.Repeat("x", rng.IntN(40)))
					appendTo(t, log, line+"\n")
					want.WriteString(line + "\n")
				}
				total := (step + 1) * perStep
			readAll:
				for stored.lines+read < total {
					rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					b, err := src.Read(rctx, 1+rng.IntN(5))
					cancel()
					if err != nil {
						t.Fatalf("step %d: read: %v", step, err)
					}
					read += b.Len()
					if err := sink.Write(ctx, b); err != nil {
						t.Fatal(err)
					}
					if rng.IntN(8) == 0 {
						crash()
						break readAll
					}
				}
				if stored.lines+read < total {
					continue // crashed: the next step reads the rest
				}
				// A barrier.
				pos, err := src.Position()
				if err != nil {
					t.Fatal(err)
				}
				if err := sink.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				state, err := sink.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if rng.IntN(6) == 0 {
					crash() // before the checkpoint was stored
					continue
				}
				stored = checkpointed{pos: pos, state: state, lines: stored.lines + read}
				read = 0
				if rng.IntN(6) == 0 {
					crash() // stored, not committed
					continue
				}
				if err := sink.Commit(ctx, state); err != nil {
					t.Fatal(err)
				}
			}
			// The end of the run: read the rest, a final barrier, Close.
			for stored.lines+read < steps*perStep {
				b, err := src.Read(ctx, 100)
				if err != nil {
					t.Fatal(err)
				}
				read += b.Len()
				if err := sink.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			if err := sink.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			state, err := sink.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := sink.Commit(ctx, state); err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(ctx); err != nil {
				t.Fatal(err)
			}
			src.Close(ctx)
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			totalCrashes += crashes
			if string(data) != want.String() {
				t.Errorf("after %d crashes the output differs from the log:\n%s\nwant:\n%s", crashes, data, want.String())
			}
			parts, _ := filepath.Glob(filepath.Join(h.dir, "out", ".*.inprogress"))
			if len(parts) != 0 {
				t.Errorf("in-progress files left: %v", parts)
			}
		})
	}
}
