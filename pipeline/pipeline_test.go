package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// runFile writes a pipeline file into dir, loads and runs it.
func runFile(t testing.TB, dir, yaml string) pipeline.Summary {
	t.Helper()
	return pipefile.Run(t, context.Background(), pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
}

// fold applies a retract-mode CSV (op column first) to a table keyed by
// the first data column, and returns the final rows sorted.
func fold(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		op, rest, _ := strings.Cut(sc.Text(), ",")
		key, _, _ := strings.Cut(rest, ",")
		switch op {
		case "+I", "+U":
			table[key] = rest
		case "-U", "-D":
			if table[key] != rest {
				t.Fatalf("%s retracts %q, but the table holds %q", op, rest, table[key])
			}
			delete(table, key)
		default:
			t.Fatalf("bad op %q", op)
		}
	}
	return sortedValues(table)
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	sort.Strings(lines)
	return lines
}

// TestStreamingAndBatchGiveTheSameTable runs one GROUP BY ... HAVING over
// the same file in streaming execution (a changelog folded by key) and in
// batch execution (final rows), and checks both against a table computed
// here directly.
func TestStreamingAndBatchGiveTheSameTable(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var csv strings.Builder
	type acc struct{ n, sum, max int64 }
	want := map[string]*acc{}
	for i := 0; i < 5000; i++ {
		k := fmt.Sprintf("k%d", rng.IntN(60))
		v := rng.Int64N(1000) - 200
		fmt.Fprintf(&csv, "%s,%d\n", k, v)
		a := want[k]
		if a == nil {
			a = &acc{max: v}
			want[k] = a
		}
		a.n++
		a.sum += v
		a.max = max(a.max, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	expected := map[string]string{}
	for k, a := range want {
		// HAVING COUNT(*) BETWEEN 70 AND 90: groups enter and then leave
		// the result as rows arrive, so the streaming run must delete them.
		if a.n >= 70 && a.n <= 90 {
			expected[k] = fmt.Sprintf("%s,%d,%d,%d", k, a.n, a.sum, a.max)
		}
	}
	query := `
transforms:
  - name: agg
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS hi
      FROM src GROUP BY k HAVING COUNT(*) BETWEEN 70 AND 90
`
	source := fmt.Sprintf(`version: 1
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING, v BIGINT]
`, filepath.Join(dir, "in.csv"))

	runFile(t, dir, source+"name: streaming\n"+query+fmt.Sprintf(`sinks:
  - name: out
    from: agg
    type: file
    path: %s
    mode: retract
`, filepath.Join(dir, "stream.csv")))
	runFile(t, dir, source+"name: batch\nexecution: batch\n"+query+fmt.Sprintf(`sinks:
  - name: out
    from: agg
    type: file
    path: %s
`, filepath.Join(dir, "batch.csv")))

	exp := sortedValues(expected)
	if len(exp) == 0 {
		t.Fatal("test data gives no qualifying group: the test would prove nothing")
	}
	streamed := fold(t, filepath.Join(dir, "stream.csv"))
	batched := readLines(t, filepath.Join(dir, "batch.csv"))
	if strings.Join(streamed, "\n") != strings.Join(exp, "\n") {
		t.Errorf("streaming result:\n%s\nwant:\n%s", strings.Join(streamed, "\n"), strings.Join(exp, "\n"))
	}
	if strings.Join(batched, "\n") != strings.Join(exp, "\n") {
		t.Errorf("batch result:\n%s\nwant:\n%s", strings.Join(batched, "\n"), strings.Join(exp, "\n"))
	}
	// The streaming changelog must actually have deleted groups that left
	// the HAVING range, or this test did not exercise it.
	data, _ := os.ReadFile(filepath.Join(dir, "stream.csv"))
	if !strings.Contains(string(data), "-D,") {
		t.Error("no -D in the streaming changelog: HAVING never removed a group")
	}
}

func TestBadRecordsFollowOnError(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,a\nx,b\n3,c\n4\n5,e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf(`version: 1
name: p
sources:
  - name: src
    type: file
    path: %s
    schema: [n INT, s STRING]
%%s
sinks:
  - name: out
    from: src
    type: file
    path: %s
`, in, filepath.Join(dir, "out.csv"))

	// skip: bad lines are counted, good ones all arrive.
	s := runFile(t, dir, fmt.Sprintf(base, "    on_error: skip"))
	if got := readLines(t, filepath.Join(dir, "out.csv")); strings.Join(got, " ") != "1,a 3,c 5,e" {
		t.Errorf("skip wrote %q", got)
	}
	if s.Sources[0].Skipped != 2 {
		t.Errorf("skipped = %d, want 2", s.Sources[0].Skipped)
	}

	// dead-letter: the raw records and reasons land in the file.
	dlq := filepath.Join(dir, "dlq.jsonl")
	runFile(t, dir, fmt.Sprintf(base, "    on_error: dead-letter\n    dead_letter: "+dlq))
	data, err := os.ReadFile(dlq)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 2 || !strings.Contains(string(data), `"record":"x,b"`) || !strings.Contains(string(data), "in.csv:2") {
		t.Errorf("dead letters:\n%s", data)
	}

	// fail (the default): the run stops with file:line and the column.
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(base, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(context.Background(), pipeline.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "in.csv:2") || !strings.Contains(err.Error(), "column n") || !strings.Contains(err.Error(), "on_error: fail") {
		t.Errorf("fail policy error = %v", err)
	}
}

// sensorCSV writes n sensor rows (id STRING, ts BIGINT, temperature DOUBLE).
func sensorCSV(tb testing.TB, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "sensor_%d,%d,%.1f\n", rng.IntN(1000), 1547718199000+int64(i), rng.Float64()*50-10)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// BenchmarkFileCSVPassThrough measures what the engine costs on the simplest
// pipeline: a CSV file of sensor rows through etld (file source -> file sink)
// against a plain Go read-parse-write loop over the same file, in the same
// run. Compare the rows/s of the two sub-benchmarks: etld/plain is the ratio.
//
//	go test -run XXX -bench FileCSVPassThrough -benchtime 3x ./pipeline/
func BenchmarkFileCSVPassThrough(b *testing.B) {
	const rows = 1_000_000
	dir := b.TempDir()
	in := filepath.Join(dir, "sensor.csv")
	sensorCSV(b, in, rows)

	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			plainLoop(b, in, filepath.Join(dir, "plain.csv"))
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("etld", func(b *testing.B) {
		yaml := fmt.Sprintf(`version: 1
name: bench
sources:
  - name: sensor
    type: file
    path: %s
    schema: [id STRING, ts BIGINT, temperature DOUBLE]
sinks:
  - name: out
    from: sensor
    type: file
    path: %s
`, in, filepath.Join(dir, "etld.csv"))
		b.ReportAllocs()
		for b.Loop() {
			runFile(b, dir, yaml)
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// plainLoop is the baseline: read lines, split, parse the numbers, format
// them again and write, with no framework at all.
func plainLoop(b *testing.B, in, out string) {
	f, err := os.Open(in)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	o, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(o, 256<<10)
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 256<<10))
	var buf []byte
	for sc.Scan() {
		line := sc.Text()
		id, rest, _ := strings.Cut(line, ",")
		tsText, tempText, _ := strings.Cut(rest, ",")
		ts, err1 := strconv.ParseInt(tsText, 10, 64)
		temp, err2 := strconv.ParseFloat(tempText, 64)
		if err1 != nil || err2 != nil {
			b.Fatal("bad line", line)
		}
		buf = append(buf[:0], id...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, ts, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, temp, 'f', -1, 64)
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	o.Sync()
	o.Close()
}

// A value that fails in a transform at run time (CAST('12x' AS INT))
// follows the on_error policy of the source the transform reads.
func TestRuntimeCastFailureFollowsSourcePolicy(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("a,1\nb,12x\nc,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := func(policy string) string {
		return fmt.Sprintf(`version: 1
name: p
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING, s STRING]
    on_error: %s
transforms:
  - name: q
    sql: SELECT k, CAST(s AS INT) + 1 AS n FROM src
sinks:
  - name: out
    from: q
    type: file
    path: %s
`, in, policy, filepath.Join(dir, "out.csv"))
	}
	s := runFile(t, dir, yaml("skip"))
	if got := readLines(t, filepath.Join(dir, "out.csv")); strings.Join(got, " ") != "a,2 c,4" {
		t.Errorf("skip wrote %q", got)
	}
	if s.Sources[0].Skipped != 1 {
		t.Errorf("skipped = %d, want 1", s.Sources[0].Skipped)
	}
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml("fail")), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err == nil || !strings.Contains(err.Error(), "12x") {
		t.Errorf("fail policy: err = %v, want the bad value named", err)
	}
}

// TestPendingIsWhatNoCheckpointCovers: a sink's Pending counts the rows
// it took in after the last completed checkpoint. A run that ends at the
// end of its input takes a final checkpoint after everything, so nothing
// is pending, and the checkpoint names every row.
func TestPendingIsWhatNoCheckpointCovers(t *testing.T) {
	sum := runFile(t, t.TempDir(), `version: 1
name: pending
sources:
  - name: gen
    type: datagen
    rows: 5000
    schema: [id BIGINT]
sinks:
  - name: out
    from: gen
    type: blackhole
`)
	if len(sum.Sinks) != 1 {
		t.Fatalf("sinks = %+v", sum.Sinks)
	}
	if c := sum.Sinks[0]; c.In != 5000 || c.Pending != 0 {
		t.Errorf("sink after the end of input: in %d, pending %d; want 5000 in, 0 pending", c.In, c.Pending)
	}
	if sum.Checkpoints.Count == 0 {
		t.Error("no checkpoint: the final one is missing")
	}
}
