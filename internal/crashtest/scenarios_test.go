package crashtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// (c) file -> projection/filter -> file (CSV): the output must be
// byte-identical to an uninterrupted run's (the file sink's two-phase
// commit, the file source's byte offsets).
var fileToFile = scenario{
	name: "file-to-file",
	pipeline: `version: 1
name: crash-file-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
      - id BIGINT
      - sensor STRING
      - temp DOUBLE
transforms:
  - name: hot
    sql: |
      SELECT id, UPPER(sensor) AS sensor, temp * 1.8 + 32 AS temp_f
      FROM readings
      WHERE temp > 10
sinks:
  - name: out
    from: hot
    type: file
    path: {{.Dir}}/{{.Out}}.csv
    format: { type: csv, header: true }
`,
	setup: func(t *testing.T, e *env) {
		writeReadings(t, filepath.Join(e.Dir, "in.csv"), intEnv("ETLD_CRASH_ROWS", 300_000), e)
	},
	check: func(t *testing.T, e *env) {
		sameFile(t, filepath.Join(e.Dir, "ref.csv"), filepath.Join(e.Dir, "out.csv"))
	},
}

// (a') file -> GROUP BY -> file in retract mode: a stand-in for the upsert
// sinks until their scenarios are added: the changelog of the aggregate,
// restored from operator snapshots, must be byte-identical too.
var fileGroupByToFile = scenario{
	name: "file-groupby-retract",
	pipeline: `version: 1
name: crash-agg-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
      - id BIGINT
      - sensor STRING
      - temp DOUBLE
transforms:
  - name: stats
    sql: |
      SELECT sensor, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
      FROM readings
      GROUP BY sensor
sinks:
  - name: out
    from: stats
    type: file
    mode: retract
    path: {{.Dir}}/{{.Out}}.csv
    format: csv
`,
	setup: func(t *testing.T, e *env) {
		writeReadings(t, filepath.Join(e.Dir, "in.csv"), intEnv("ETLD_CRASH_ROWS", 300_000)/3, e)
	},
	check: func(t *testing.T, e *env) {
		sameFile(t, filepath.Join(e.Dir, "ref.csv"), filepath.Join(e.Dir, "out.csv"))
	},
}

func TestCrash(t *testing.T) {
	for _, sc := range []scenario{fileToFile, fileGroupByToFile} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

// writeReadings writes n CSV rows id,sensor,temp from e's random source.
func writeReadings(t *testing.T, path string, n int, e *env) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "%d,sensor_%d,%.1f\n", i, e.rnd.IntN(500), e.rnd.Float64()*40-5)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func sameFile(t *testing.T, want, got string) {
	t.Helper()
	a, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Logf("%s: %d bytes, identical to the reference", filepath.Base(got), len(b))
		return
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	line := bytes.Count(a[:i], []byte("\n")) + 1
	t.Errorf("%s differs from the reference %s: %d bytes vs %d, first difference at byte %d (line %d):\nwant %q\ngot  %q",
		got, want, len(b), len(a), i, line, excerpt(a, i), excerpt(b, i))
}

func excerpt(b []byte, i int) string {
	lo := max(0, i-40)
	hi := min(len(b), i+40)
	return string(b[lo:hi])
}
