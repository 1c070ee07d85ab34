package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGenerateMatrix: the matrix's files hold rows lines each, the same
// bytes from the same seed, the JSON lines the CSV's rows, the keys in
// their ranges, and wide.csv 30 columns.
func TestGenerateMatrix(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	const rows = 2000
	for _, dir := range []string{a, b} {
		if err := generateMatrix(dir, rows, 7); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"keys-1k.csv", "keys-100k.csv", "keys-10m.csv", "keys-100k.json", "wide.csv"} {
		x, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b, f))
		if string(x) != string(y) {
			t.Errorf("%s differs between two runs of one seed", f)
		}
		if n := strings.Count(string(x), "\n"); n != rows {
			t.Errorf("%s: %d lines, want %d", f, n, rows)
		}
	}
	csvLines := readLines(t, filepath.Join(a, "keys-100k.csv"))
	for i, line := range readLines(t, filepath.Join(a, "keys-100k.json")) {
		var o struct {
			ID, IK, TB, Z, Amount int64
			SK, TA                string
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("json line %d: %v", i, err)
		}
		want := fmt.Sprintf("%d,%d,%s,%s,%d,%d,%d", o.ID, o.IK, o.SK, o.TA, o.TB, o.Z, o.Amount)
		if csvLines[i] != want {
			t.Fatalf("line %d: json %s, csv %s", i, want, csvLines[i])
		}
		if o.IK < 0 || o.IK >= 100_000 || o.SK != fmt.Sprintf("sensor_%d", o.IK) || o.TA != fmt.Sprintf("g%d", o.IK/10) || o.TB != o.IK%10 || o.Z < 0 || o.Z >= 100_000 {
			t.Fatalf("line %d: keys out of shape: %s", i, line)
		}
	}
	for i, line := range readLines(t, filepath.Join(a, "wide.csv")) {
		if n := strings.Count(line, ",") + 1; n != wideColumns {
			t.Fatalf("wide.csv line %d: %d columns", i, n)
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// TestMatrixSQL: the query DuckDB is given reads each source with its
// reader where etld's query names it (FROM and JOIN), and Flink's script
// declares every source table, with the watermark where the shape has
// one, and inserts the shape's query into a blackhole.
func TestMatrixSQL(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for DuckDB's python and for FlinkRun: it keeps its
	// arguments (python -c SCRIPT QUERY; flinkrun --timeout N FILE).
	fake := filepath.Join(dir, "fake")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s' \"$3\" > args\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{data: "/d", python: fake, flink: fake, base: map[string]string{}, timeout: time.Minute}
	for _, sh := range matrixShapes() {
		wd := filepath.Join(dir, sh.name)
		if err := os.MkdirAll(wd, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := matrixDuck(e, sh).run(wd); err != nil {
			t.Fatal(err)
		}
		q, _ := os.ReadFile(filepath.Join(wd, "args"))
		if !strings.HasPrefix(string(q), "COPY (SELECT ") {
			t.Errorf("%s: DuckDB's query %q", sh.name, q)
		}
		_, _ = matrixFlink(e, sh).run(wd) // the stand-in writes no output: an error
		script, err := os.ReadFile(filepath.Join(wd, "q.sql"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sh.srcs {
			if read := duckRead(filepath.Join("/d", s.file), s.format, s.schema); !strings.Contains(string(q), read) {
				t.Errorf("%s: DuckDB's query %q does not read %s with %s", sh.name, q, s.name, read)
			}
			if tableRef(s.name).Match(q) {
				t.Errorf("%s: DuckDB's query %q names the table %s", sh.name, q, s.name)
			}
			if !strings.Contains(string(script), "CREATE TABLE "+s.name+" (") || !strings.Contains(string(script), filepath.Join("/d", s.file)) {
				t.Errorf("%s: Flink's script does not declare %s:\n%s", sh.name, s.name, script)
			}
			if s.watermark != "" && !strings.Contains(string(script), "WATERMARK FOR ts AS "+s.watermark) {
				t.Errorf("%s: Flink's script lacks the watermark:\n%s", sh.name, script)
			}
		}
		if !strings.Contains(string(script), "INSERT INTO sink_out "+sh.sql+";") || !strings.Contains(string(script), "'connector' = 'blackhole'") {
			t.Errorf("%s: Flink's script does not insert the query into a blackhole:\n%s", sh.name, script)
		}
	}
}
