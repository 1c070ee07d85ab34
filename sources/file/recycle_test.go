package file_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/sources/file"
)

// TestSinkGivesBatchesBack: a sink that reads a source with nothing
// between them, and copies its rows (a csv file; a directory of Parquet
// files without checkpoints), gives each batch back to the source, whose
// decode workers write their next rows into it (many small blocks, two
// workers): what comes out is what a serial read gives, csv and json,
// and the Parquet files read back the same. The csv sink copies the
// text too: the source reads into its buffers again (TextRecycle); the
// Parquet writer keeps values: it does not.
func TestSinkGivesBatchesBack(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var csvIn, jsonIn strings.Builder
	for i := range 6000 {
		price, note := fmt.Sprintf("%d.%02d", r.IntN(100000), r.IntN(100)), fmt.Sprintf("note %d", r.IntN(50))
		if i%7 == 0 {
			price = ""
		}
		if i%5 == 0 {
			note = ""
		}
		day := fmt.Sprintf("2026-%02d-%02d", 1+i/500%12, 1+i%28)
		fmt.Fprintf(&csvIn, "%d,%s,%s,%s 10:00:%02d.%03d,%s\n", i, price, day, day, i%60, i%1000, note)
		jprice, jnote := price, `"`+note+`"`
		if price == "" {
			jprice = "null"
		}
		if note == "" {
			jnote = "null"
		}
		fmt.Fprintf(&jsonIn, `{"id":%d,"note":%s,"price":%s,"day":"%s","ts":"%s 10:00:%02d.%03d"}`+"\n", i, jnote, jprice, day, day, i%60, i%1000)
	}
	schema := `[id BIGINT, "price DECIMAL(10,2)", day DATE, ts TIMESTAMP(3), note STRING]`
	for _, in := range []struct{ name, data, format string }{
		{"csv", csvIn.String(), `{type: csv, null_literal: ""}`},
		{"json", jsonIn.String(), "json"},
	} {
		t.Run(in.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "in")
			if err := os.WriteFile(src, []byte(in.data), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(from, format, sink string) string {
				t.Helper()
				out := filepath.Join(dir, "out.csv")
				os.Remove(out)
				yaml := fmt.Sprintf(`version: 1
name: recycle
sources:
  - {name: s, type: file, path: %q, schema: %s, format: %s}
sinks:
  - {name: out, from: s, type: file, path: %q, overwrite: true%s}
`, from, schema, format, out, sink)
				if sink != "" {
					yaml = strings.Replace(yaml, "path: \""+out, "path: \""+filepath.Join(dir, "pq"), 1)
				}
				p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
				if _, err := p.Run(testenv.Context(t, 60*time.Second), pipeline.RunOptions{}); err != nil {
					t.Fatal(err)
				}
				data, _ := os.ReadFile(out)
				return string(data)
			}
			file.SetReader(t, -1, 0, 0)
			want := run(src, in.format, "")
			if strings.Count(want, "\n") != 6000 {
				t.Fatalf("the serial run wrote %d rows", strings.Count(want, "\n"))
			}
			file.SetReader(t, 2, 97, 512)
			before, bufs := file.Recycled(), file.ReusedBuffers()
			if got := run(src, in.format, ""); got != want {
				t.Fatalf("parallel run into csv:\n%.1000s\nserial:\n%.1000s", got, want)
			}
			if file.Recycled() == before {
				t.Error("no batch given back by the csv sink")
			}
			if file.ReusedBuffers() == bufs {
				t.Error("no read buffer used again after the csv sink, which copies the text")
			}
			before, bufs = file.Recycled(), file.ReusedBuffers()
			run(src, in.format, ", format: {type: parquet, row_group_size: 1000}")
			if file.Recycled() == before {
				t.Error("no batch given back by the parquet sink")
			}
			if file.ReusedBuffers() != bufs {
				t.Error("read buffers used again after the parquet sink, which keeps values until its row group is full")
			}
			file.SetReader(t, -1, 0, 0)
			if got := run(filepath.Join(dir, "pq", "*.parquet"), "parquet", ""); got != want {
				t.Fatalf("the parquet files read back:\n%.1000s\nserial:\n%.1000s", got, want)
			}
		})
	}
}

// TestMappedBatchesReusedProjected: a source with a watermark whose
// query reads some of its columns (the csv decoder leaves the others
// unparsed, NULL) has its rows projected in the decode workers; the
// decoded batch is then the worker's next, reused without zeroing, as
// the decoder writes every value of a row, the unread ones too. What
// comes out is what a serial read gives, though the unread columns hold
// values that do not parse and the rows' widths differ. (The source
// would decode the query's columns only, SelectColumns, and its batches
// go on as they are: that is turned off here, as for a format without
// it.)
func TestMappedBatchesReusedProjected(t *testing.T) {
	file.SetSelect(t, false)
	r := rand.New(rand.NewPCG(7, 8))
	var in strings.Builder
	for i := range 6000 {
		note, bad := fmt.Sprintf("note %d", r.IntN(50)), fmt.Sprint(r.IntN(1000))
		if i%5 == 0 {
			note = ""
		}
		if i%7 == 0 {
			bad = "not a number"
		}
		fmt.Fprintf(&in, "%d,%s,%s,2026-01-01 10:%02d:%02d.%03d,%s\n", i, bad, note, i/1000, i%60, i%1000, bad)
	}
	dir := t.TempDir()
	run := func() string {
		t.Helper()
		out, _, err := runFusedIn(t, dir, in.String(), "execution: streaming",
			"[id BIGINT, bad BIGINT, note STRING, ts TIMESTAMP(3), bad2 BIGINT]",
			"    format: {type: csv, null_literal: \"\"}\n    watermark: ts - INTERVAL '1' SECOND", "SELECT id, note, ts FROM s", "")
		if err != "" {
			t.Fatal(err)
		}
		return out
	}
	reusedLikeSerial(t, run, 6000)
}

// TestMappedBatchesReusedWithPaths: a json source whose query reads a
// ROW's fields only (decoded into columns of their own, after the
// computed columns' room) has its rows projected in the decode workers,
// and the decoded batch is the worker's next, reused without zeroing:
// the decoder writes every value but the room, which the computed
// columns are written into before they are read. What comes out is what
// a serial read gives, though fields come and go from record to record.
func TestMappedBatchesReusedWithPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var in strings.Builder
	for i := range 6000 {
		var fields []string
		if r.IntN(3) > 0 {
			fields = append(fields, fmt.Sprintf(`"a":%d`, r.IntN(1000)))
		}
		if r.IntN(3) > 0 {
			fields = append(fields, fmt.Sprintf(`"b":"b%d"`, r.IntN(50)))
		}
		rec := "{" + strings.Join(fields, ",") + "}"
		if i%9 == 0 {
			rec = "null"
		}
		fmt.Fprintf(&in, `{"id":%d,"r":%s,"ts":"2026-01-01 10:%02d:%02d.%03d"}`+"\n", i, rec, i/1000, i%60, i%1000)
	}
	dir := t.TempDir()
	run := func() string {
		t.Helper()
		out, _, err := runFusedIn(t, dir, in.String(), "execution: streaming",
			`[id BIGINT, "r ROW<a BIGINT, b STRING>", ts TIMESTAMP(3), "a2 AS COALESCE(r.a, -1) * 2", "tb AS CONCAT(r.b, '!')"]`,
			"    format: json\n    watermark: ts - INTERVAL '1' SECOND", "SELECT id, r.a, a2, tb, ts FROM s", "")
		if err != "" {
			t.Fatal(err)
		}
		return out
	}
	reusedLikeSerial(t, run, 6000)
}

// reusedLikeSerial runs run serially, then on two workers with small
// blocks: the parallel run writes what the serial one wrote (rows rows),
// and some decoded batch was reused unzeroed after its rows were mapped.
func reusedLikeSerial(t *testing.T, run func() string, rows int) {
	t.Helper()
	file.SetReader(t, -1, 0, 0)
	want := run()
	if strings.Count(want, "\n") != rows {
		t.Fatalf("the serial run wrote %d rows", strings.Count(want, "\n"))
	}
	file.SetReader(t, 2, 97, 512)
	before := file.ReusedMapped()
	if got := run(); got != want {
		t.Fatalf("parallel run:\n%.1000s\nserial:\n%.1000s", got, want)
	}
	if file.ReusedMapped() == before {
		t.Error("no decoded batch reused unzeroed after its rows were mapped")
	}
}
