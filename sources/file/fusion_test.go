package file_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/sources/file"
)

// runFused runs sql as transform q over in.csv into out.csv, with the
// source's extra options (on_error, ...) and schema, and returns what the
// sink wrote, the dead-letter file and the run's error.
func runFused(t *testing.T, dir, in, schema, options, sql string) (out, dead, runErr string) {
	t.Helper()
	src, outPath, deadPath := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
	os.Remove(outPath)
	os.Remove(deadPath)
	if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	options = strings.ReplaceAll(options, "$DEAD", deadPath)
	yaml := fmt.Sprintf(`version: 1
name: fused
sources:
  - name: s
    type: file
    path: %s
    schema: %s
%s
transforms:
  - name: q
    sql: %q
sinks:
  - {name: out, from: q, type: file, path: %s, overwrite: true}
`, src, schema, options, sql, outPath)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("load: %v\n%s", err, yaml)
	}
	if _, err := p.Run(testenv.Context(t, 60*time.Second), pipeline.RunOptions{}); err != nil {
		runErr = err.Error()
	}
	data, _ := os.ReadFile(outPath)
	deadData, _ := os.ReadFile(deadPath)
	return string(data), string(deadData), runErr
}

// TestFusedCalcSameAsSerial: a projection and filter that run inside the
// parallel decoders (with many small blocks) give the output, dead-letter
// entries and errors of a serial read whose Calc runs in its own node,
// under every on_error policy, with bad records and rows whose CAST fails.
func TestFusedCalcSameAsSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"7", "12", "x", `"4"`, `"two` + "\n" + `lines"`, ""}
	var in, clean strings.Builder
	for i := range 3000 {
		line := fmt.Sprintf("%d,%s,%d,2024-01-01 00:00:%02d\n", i, names[r.IntN(len(names))], r.IntN(1000), i%60)
		clean.WriteString(line)
		if i%401 == 400 {
			line = fmt.Sprintf("%d,bad,%d\n", i, r.IntN(1000)) // a bad record: 3 fields
		}
		in.WriteString(line)
	}
	schema := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]"
	computed := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3), twice AS amount * 2]"
	cases := []struct{ name, schema, options, sql string }{
		{"project and filter", schema, "    on_error: skip", "SELECT id, amount FROM s WHERE amount > 500"},
		{"filter only", schema, "    on_error: skip", "SELECT * FROM s WHERE amount < 300"},
		{"skip", schema, "    on_error: skip", "SELECT id, CAST(name AS INT) AS n FROM s WHERE amount > 100"},
		{"dead-letter", schema, "    on_error: dead-letter\n    dead_letter: $DEAD", "SELECT id, CAST(name AS INT) AS n FROM s WHERE amount > 100"},
		// Fails at the first CAST: the input has no bad record, whose
		// error would race with the transform's, serial or not.
		{"fail", schema, "", "SELECT id, CAST(name AS INT) AS n FROM s WHERE amount > 100 AND id > 1000"},
		{"bad record fails", schema, "", "SELECT id, amount FROM s"},
		{"computed column", computed, "    on_error: skip", "SELECT id, twice FROM s WHERE twice > 1000"},
		{"watermark", schema + "\n    watermark: ts - INTERVAL '1' SECOND", "    on_error: skip", "SELECT id, ts FROM s WHERE amount < 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			input := in.String()
			if tc.name == "fail" {
				input = clean.String()
			}
			file.SetReader(t, -1, 0, 0)
			out, dead, err := runFused(t, dir, input, tc.schema, tc.options, tc.sql)
			if out == "" && err == "" {
				t.Fatal("the serial run wrote nothing")
			}
			file.SetReader(t, 2, 97, 512)
			fOut, fDead, fErr := runFused(t, dir, input, tc.schema, tc.options, tc.sql)
			if fErr != err {
				t.Fatalf("fused run's error:\n%s\nserial:\n%s", fErr, err)
			}
			// The source's entries come in order, and the transform's; how
			// the two interleave is a matter of timing, serial or not.
			if byWriter(fDead) != byWriter(dead) {
				t.Fatalf("fused dead letters:\n%.2000s\nserial:\n%.2000s", fDead, dead)
			}
			// A failed run's sink wrote what arrived before the failure
			// cancelled the run: a matter of timing.
			if err == "" && fOut != out {
				t.Fatalf("fused output (%d lines) differs from serial (%d lines)", strings.Count(fOut, "\n"), strings.Count(out, "\n"))
			}
		})
	}
}

// byWriter puts a dead-letter file's entries by the source in front of
// those by a transform, each in their order.
func byWriter(dead string) string {
	var src, tr []string
	for _, line := range strings.SplitAfter(dead, "\n") {
		if strings.Contains(line, `"transform":`) {
			tr = append(tr, line)
		} else {
			src = append(src, line)
		}
	}
	return strings.Join(src, "") + strings.Join(tr, "")
}
