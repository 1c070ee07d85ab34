package file_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/sources/file"
)

// TestCalcTextGivesBuffersBack: a fused Calc whose rows hold STRING
// values of the record (a column as it is, a SUBSTRING of one) makes
// batches of its own; when every node after it keeps nothing of its
// input (Calcs, a function's call) up to a sink that copies text, those batches go back
// once written and the source reads into its buffers again (runtime's
// text holds). What comes out is what a serial read gives, which reuses
// no buffer. A Calc that sends some rows to on_error keeps only their
// buffers. Behind a sink that keeps the values it is given (parquet,
// until its row group is full), a GROUP BY, a Top-N or a join, the
// buffers are not read into again: a reuse behind the parquet sink
// changes the strings it writes, which the comparison with the serial
// run catches (it did, with the chain's checks taken out). Reads of
// small buffers (many reuses), csv and json, past the first buffer of
// 256 KiB, which the serial start reads into.
func TestCalcTextGivesBuffersBack(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var csvIn, jsonIn, labels strings.Builder
	for i := range 12000 {
		name := fmt.Sprintf("n%03d", r.IntN(300))
		note := fmt.Sprintf("note-%d-%x", i, r.Uint64())
		amount := r.IntN(1000)
		code := fmt.Sprint(r.IntN(100))
		if i%397 == 0 {
			code = "x" // CAST fails: on_error skips the row
		}
		fmt.Fprintf(&csvIn, "%d,%s,%s,%d,%s\n", i, name, note, amount, code)
		fmt.Fprintf(&jsonIn, `{"id":%d,"name":%q,"note":%q,"amount":%d,"code":%q}`+"\n", i, name, note, amount, code)
	}
	for i := range 300 {
		fmt.Fprintf(&labels, "n%03d,label-%d\n", i, i*7)
	}
	countChar := wasmbuild.Go(t, filepath.Join("..", "..", "sdk", "go", "examples", "count_char"))
	const view = "SELECT id, name, SUBSTRING(note, 3, 12) AS part, amount * 2 AS amount, code FROM s WHERE amount > 100"
	for _, in := range []struct{ name, data, format string }{
		{"csv", csvIn.String(), "csv"},
		{"json", jsonIn.String(), "json"},
	} {
		for _, q := range []struct {
			name, exec string
			sqls       []string // transforms v (view) and q, and more after
			reuse      bool
			// parquet: the sink writes parquet, whose writer keeps the
			// values until its row group is full (no TextCopier).
			parquet bool
		}{
			{"calcs", "streaming", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0"}, true, false},
			{"three calcs", "streaming", []string{view, "SELECT name, part, id, amount FROM v WHERE id % 3 <> 0", "SELECT part, name, amount + id AS x FROM q WHERE id % 5 <> 0"}, true, false},
			{"calc to on_error", "streaming", []string{view, "SELECT name, part, id, code FROM v WHERE id % 3 <> 0", "SELECT part, name, CAST(code AS INT) AS c FROM q"}, true, false},
			{"group by string", "batch", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0", "SELECT name, COUNT(*) AS n, MAX(part) AS m, MIN(part) AS mi FROM q GROUP BY name"}, false, false},
			{"top-n", "batch", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0", "SELECT name, part, id FROM q ORDER BY id DESC LIMIT 100000"}, false, false},
			{"parquet sink", "streaming", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0"}, false, true},
			{"function call", "streaming", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0", "SELECT part, name, count_char(part, '1') AS c FROM q"}, true, false},
			{"function call to parquet", "streaming", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0", "SELECT name, part, count_char(part, '1') AS id FROM q"}, false, true},
			{"join", "streaming", []string{view, "SELECT name, part, id FROM v WHERE id % 3 <> 0", "SELECT q.part, q.name, l.label FROM q JOIN l ON q.name = l.name"}, false, false},
		} {
			t.Run(in.name+"/"+q.name, func(t *testing.T) {
				dir := t.TempDir()
				src, lab := filepath.Join(dir, "in"), filepath.Join(dir, "labels.csv")
				if err := os.WriteFile(src, []byte(in.data), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(lab, []byte(labels.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				var transforms strings.Builder
				names := []string{"v", "q", "w"}
				for k, sql := range q.sqls {
					fmt.Fprintf(&transforms, "  - {name: %s, sql: %q}\n", names[k], sql)
				}
				last := names[len(q.sqls)-1]
				run := func() string {
					t.Helper()
					out := filepath.Join(dir, "out.csv")
					os.Remove(out)
					sink := fmt.Sprintf("{name: out, from: %s, type: file, path: %q, overwrite: true}", last, out)
					pq := filepath.Join(dir, "pq")
					if q.parquet {
						os.RemoveAll(pq)
						sink = fmt.Sprintf("{name: out, from: %s, type: file, path: %q, format: parquet}", last, pq)
					}
					yaml := fmt.Sprintf(`version: 1
name: recycle
execution: %s
functions:
  - {name: count_char, wasm: %q, params: [s STRING, c STRING], returns: BIGINT}
sources:
  - name: s
    type: file
    path: %q
    format: %s
    schema: [id BIGINT, name STRING, note STRING, amount BIGINT, code STRING]
    on_error: skip
  - name: l
    type: file
    path: %q
    format: csv
    schema: [name STRING, label STRING]
transforms:
%ssinks:
  - %s
`, q.exec, countChar, src, in.format, lab, transforms.String(), sink)
					p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
					if _, err := p.Run(testenv.Context(t, 60*time.Second), pipeline.RunOptions{}); err != nil {
						t.Fatal(err)
					}
					if q.parquet {
						// Read back as csv (parquet's reads reuse no text).
						yaml = fmt.Sprintf(`version: 1
name: back
execution: batch
sources:
  - {name: p, type: file, path: %q, format: parquet, schema: [name STRING, part STRING, id BIGINT]}
sinks:
  - {name: out, from: p, type: file, path: %q, overwrite: true}
`, filepath.Join(pq, "*.parquet"), out)
						p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
						if _, err := p.Run(testenv.Context(t, 60*time.Second), pipeline.RunOptions{}); err != nil {
							t.Fatal(err)
						}
					}
					data, _ := os.ReadFile(out)
					// A join's rows come in the order its inputs meet.
					lines := strings.Split(string(data), "\n")
					slices.Sort(lines)
					return strings.Join(lines, "\n")
				}
				file.SetReader(t, -1, 0, 0)
				want := run()
				if strings.Count(want, "\n") < 100 {
					t.Fatalf("the serial run wrote %d rows", strings.Count(want, "\n"))
				}
				file.SetReader(t, 2, 97, 512)
				bufs := file.ReusedBuffers()
				if got := run(); got != want {
					t.Fatalf("parallel run:\n%.1000s\nserial:\n%.1000s", got, want)
				}
				if reused := file.ReusedBuffers() != bufs; reused != q.reuse {
					t.Errorf("read buffers used again: %v, want %v", reused, q.reuse)
				}
			})
		}
	}
}
