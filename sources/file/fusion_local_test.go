package file_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/sources/file"
)

// TestLocalAggregateSameAsSerial: a GROUP BY whose input the parallel
// decoders fold into partials per key (the local phase, aggop's
// groupagg_local.go) gives the table of a serial read, which has no
// local phase, in batch mode and in streaming with mini-batch: integer,
// string and two-column keys, NULL keys and values, sums that overflow
// and wrap, DECIMAL sums, AVG, MIN and MAX of strings, random block
// sizes and 1 to 4 workers; with records the decoder refuses and rows
// whose CAST fails in the middle of blocks, whose batches take the rows'
// way and go to on_error in order.
func TestLocalAggregateSameAsSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 35))
	var in strings.Builder
	bigs := []int64{math.MaxInt64, math.MaxInt64 - 3, math.MinInt64 + 1, -5, 7}
	field := func(p float64, s string) string {
		if r.Float64() < p {
			return "" // NULL (null_literal: "")
		}
		return s
	}
	for i := range 6000 {
		if i%1201 == 1200 {
			fmt.Fprintf(&in, "%d,bad\n", i) // a bad record: too few fields
			continue
		}
		k := field(0.03, fmt.Sprint(r.IntN(40)-10))
		name := field(0.03, fmt.Sprintf("n%d", r.IntN(30)))
		amount := fmt.Sprint(r.IntN(2000) - 1000)
		if r.IntN(10) == 0 {
			amount = fmt.Sprint(bigs[r.IntN(len(bigs))])
		}
		num := fmt.Sprint(r.IntN(50))
		if i%977 == 500 {
			num = "x" // CAST fails: the batch is not mapped
		}
		fmt.Fprintf(&in, "%d,%s,%s,%s,%d.%02d,%s\n", i, k, name, field(0.05, amount), r.IntN(100)-50, r.IntN(100), num)
	}
	schema := `[id BIGINT, k INT, name STRING, amount BIGINT, "d DECIMAL(10, 2)", num STRING]`
	options := "    format: {type: csv, null_literal: \"\"}\n    on_error: dead-letter\n    dead_letter: $DEAD"
	batch, stream := "execution: batch\ntwo_phase_aggregate: true", "execution: streaming\nmini_batch_aggregate: true\ntwo_phase_aggregate: true"
	aggs := "COUNT(*) AS c, COUNT(amount) AS ca, SUM(amount) AS s, AVG(amount) AS a, MAX(amount) AS mx, MIN(name) AS mn, SUM(d) AS sd, MIN(d) AS md"
	queries := map[string]string{
		"int key":    "SELECT k, " + aggs + " FROM s GROUP BY k",
		"string key": "SELECT name, " + aggs + " FROM s GROUP BY name",
		"two keys":   "SELECT k, name, " + aggs + " FROM s GROUP BY k, name",
		"computed":   "SELECT MOD(id, 13) AS m, COUNT(*) AS c, SUM(amount * 3) AS s, MAX(name) AS mx FROM s WHERE amount IS NULL OR amount < 900 GROUP BY MOD(id, 13)",
		"cast fails": "SELECT k, COUNT(*) AS c, SUM(CAST(num AS BIGINT)) AS s FROM s GROUP BY k",
	}
	for name, sql := range queries {
		for _, top := range []string{batch, stream} {
			sink, mode := "", "batch"
			if top == stream {
				sink, mode = "mode: retract", "stream"
			}
			t.Run(name+" "+mode, func(t *testing.T) {
				dir := t.TempDir()
				file.SetReader(t, -1, 0, 0)
				out, dead, err := runFusedIn(t, dir, in.String(), top, schema, options, sql, sink)
				if out == "" || err != "" {
					t.Fatalf("the serial run wrote %d bytes, error %q", len(out), err)
				}
				want := folded(t, out, sink != "")
				for range 3 {
					workers, block := 1+r.IntN(4), 64+r.IntN(8192)
					file.SetReader(t, workers, block, 512+r.IntN(4096))
					merged := aggop.PartialsMerged()
					fOut, fDead, fErr := runFusedIn(t, dir, in.String(), top, schema, options, sql, sink)
					if fErr != "" {
						t.Fatalf("%d workers, %d-byte blocks: %s", workers, block, fErr)
					}
					if aggop.PartialsMerged() == merged {
						t.Fatalf("%d workers, %d-byte blocks: no partial merged", workers, block)
					}
					if byWriter(fDead) != byWriter(dead) {
						t.Fatalf("%d workers, %d-byte blocks: dead letters\n%.2000s\nserial:\n%.2000s", workers, block, fDead, dead)
					}
					if got := folded(t, fOut, sink != ""); got != want {
						t.Fatalf("%d workers, %d-byte blocks: result\n%.3000s\nserial:\n%.3000s", workers, block, got, want)
					}
				}
			})
		}
	}
}

// TestLocalAggregateAcrossRestore: a streaming GROUP BY with the local
// phase, stopped mid-input with a checkpoint (at the sink's first rows,
// which a barrier's flush of the mini-batch sends) and resumed from it,
// leaves the table of a serial read that ran through.
func TestLocalAggregateAcrossRestore(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 36))
	var in strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&in, "%d,%d,n%d,%d\n", i, r.IntN(300), r.IntN(50), r.IntN(2000)-1000)
	}
	dir := t.TempDir()
	src, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv")
	if err := os.WriteFile(src, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `version: 1
name: local
execution: streaming
mini_batch_aggregate: true
two_phase_aggregate: %s
sources:
  - {name: s, type: file, path: %s, schema: [id BIGINT, k INT, name STRING, amount BIGINT]}
transforms:
  - name: q
    sql: "SELECT k, name, COUNT(*) AS c, SUM(amount) AS s, MIN(amount) AS mn, MAX(name) AS mx FROM s GROUP BY k, name"
sinks:
  - {name: out, from: q, type: file, path: %s, mode: retract}
`
	run := func(local string, state string, stopEarly bool) {
		t.Helper()
		p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, fmt.Sprintf(yaml, local, src, out))
		opt := pipeline.RunOptions{StateDir: state}
		if state != "" {
			// Each barrier flushes the mini-batch, which the sink is
			// then given (the Tap): the stop comes at the first.
			opt.CheckpointInterval = 5 * time.Millisecond
		}
		if stopEarly {
			stop := make(chan struct{})
			var once sync.Once
			opt.Stop, opt.Tap = stop, func(string, *row.Batch) { once.Do(func() { close(stop) }) }
		}
		if _, err := p.Run(testenv.Context(t, 60*time.Second), opt); err != nil {
			t.Fatal(err)
		}
	}
	file.SetReader(t, -1, 0, 0)
	run("false", "", false)
	data, _ := os.ReadFile(out)
	want := folded(t, string(data), true)
	os.Remove(out)

	file.SetReader(t, 2, 2048, 4096)
	merged := aggop.PartialsMerged()
	state := filepath.Join(dir, "state")
	run("true", state, true)
	first, _ := os.ReadFile(out)
	t.Logf("the first run wrote %d bytes", len(first))
	if folded(t, string(first), true) == want {
		t.Fatal("the first run read the whole input: no restore mid-input")
	}
	run("true", state, false)
	data, _ = os.ReadFile(out)
	if got := folded(t, string(data), true); got != want {
		t.Fatalf("stopped and resumed:\n%.2000s\nran through:\n%.2000s", got, want)
	}
	if aggop.PartialsMerged() == merged {
		t.Fatal("no partial merged")
	}
}
