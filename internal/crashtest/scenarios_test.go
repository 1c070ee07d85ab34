package crashtest

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
)

// (c) file -> projection/filter -> file (CSV): the output must be
// byte-identical to an uninterrupted run's (the file sink's two-phase
// commit, the file source's byte offsets).
var fileToFile = scenario{
	name: "file-to-file",
	pipeline: `version: 1
name: crash-file-{{.Out}}
sources:
{{template "readings" .}}
transforms:
  - name: hot
    sql: |
      SELECT id, UPPER(sensor) AS sensor, temp * 1.8 + 32 AS temp_f
      FROM readings
      WHERE temp > 10
sinks:
{{template "file sink" args . "name" "out" "from" "hot" "format" "{ type: csv, header: true }"}}
`,
	setup: writesReadings(1),
	check: sameOutputs(".csv"),
}

// (a') file -> GROUP BY -> file in retract mode: a stand-in for the upsert
// sinks until their scenarios are added: the changelog of the aggregate,
// restored from operator snapshots, must be byte-identical too.
var fileGroupByToFile = scenario{
	name: "file-groupby-retract",
	pipeline: `version: 1
name: crash-agg-{{.Out}}
sources:
{{template "readings" .}}
transforms:
  - name: stats
    sql: |
      SELECT sensor, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
      FROM readings
      GROUP BY sensor
sinks:
{{template "file sink" args . "name" "out" "from" "stats" "mode" "retract" "format" "csv"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv"),
}

// (a3) file -> GROUP BY -> Top-N (RetractStrategy) -> file in retract
// mode, each life with another number of workers (1, 2, 3, ...): the
// Rank's partitions, restored from its snapshots into workers by key
// group, must give a byte-identical changelog (both operators' workers
// emit in the order of the input changes that caused each change).
var fileTopNToFile = scenario{
	name: "file-topn-retract",
	pipeline: `version: 1
name: crash-topn-{{.Out}}
parallelism: {{workers .Life}}
sources:
{{template "readings" .}}
transforms:
  - name: hottest
    sql: |
      SELECT band, sensor, max_temp, rn FROM (
        SELECT band, sensor, max_temp, ROW_NUMBER() OVER (PARTITION BY band ORDER BY max_temp DESC, sensor) AS rn
        FROM (SELECT MOD(CHAR_LENGTH(sensor), 3) AS band, sensor, max_temp
              FROM (SELECT sensor, MAX(temp) AS max_temp FROM readings GROUP BY sensor)))
      WHERE rn <= 3
sinks:
{{template "file sink" args . "name" "out" "from" "hottest" "mode" "retract" "format" "csv"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv"),
}

// (a4) file -> GROUP BY -> file in retract mode, each life with another
// number of workers (1, 2, 3, 1, ...: the reference run has one): every
// restore gives the workers the key groups of a checkpoint written by
// another number of them, and the changelog must still be byte-identical.
var fileGroupByRescale = scenario{
	name: "file-groupby-rescale",
	pipeline: `version: 1
name: crash-rescale-{{.Out}}
parallelism: {{workers .Life}}
sources:
{{template "readings" .}}
transforms:
  - name: stats
    sql: |
      SELECT sensor, MOD(id, 3) AS part, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
      FROM readings
      GROUP BY sensor, MOD(id, 3)
sinks:
{{template "file sink" args . "name" "out" "from" "stats" "mode" "retract" "format" "csv"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv"),
}

// (a5) file -> GROUP BY -> file in retract mode, the pipeline file
// edited between kills: every other life adds a projection after the
// aggregate (it moves the aggregate down the transform's plan, which a
// state ID by depth did not survive). The aggregate keeps its state
// across each edit, so the changelog is byte-identical to the reference
// run's (the projection computes the same values).
var fileGroupByEdited = scenario{
	name: "file-groupby-edited",
	pipeline: `version: 1
name: crash-edit-{{.Out}}
sources:
{{template "readings" .}}
transforms:
  - name: stats
    sql: |
{{- if .Edited}}
      SELECT sensor, n, max_temp, ids + 0 AS ids FROM (
        SELECT sensor, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
        FROM readings
        GROUP BY sensor)
{{- else}}
      SELECT sensor, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
      FROM readings
      GROUP BY sensor
{{- end}}
sinks:
{{template "file sink" args . "name" "out" "from" "stats" "mode" "retract" "format" "csv"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv"),
}

// Edited tells a template to render the edited version of its pipeline:
// in every other life of the crashing runs, never in the reference run.
func (e *env) Edited() bool { return e.Life%2 == 0 && e.Life > 0 }

func TestCrash(t *testing.T) {
	for _, sc := range []scenario{fileToFile, fileGroupByToFile, fileTopNToFile, fileGroupByRescale, fileGroupByEdited} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

// writesReadings is the setup of a scenario that reads the readings:
// ETLD_CRASH_ROWS (300,000) divided by div rows in .Dir/in.csv.
func writesReadings(div int) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		writeReadings(t, filepath.Join(e.Dir, "in.csv"), intEnv("ETLD_CRASH_ROWS", 300_000)/div, e)
	}
}

// sameOutputs is the check of a scenario whose file outputs .Dir/out+ext,
// for each ext, must be byte-identical to the reference's .Dir/ref+ext.
func sameOutputs(exts ...string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		for _, ext := range exts {
			sameFile(t, filepath.Join(e.Dir, "ref"+ext), filepath.Join(e.Dir, "out"+ext))
		}
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

// (a) file -> GROUP BY -> MySQL upsert: the final table must be exactly
// the uninterrupted run's (upserts by key are idempotent; the aggregate
// resumes from its snapshot).
var fileGroupByToMySQL = scenario{
	name: "file-groupby-mysql",
	pipeline: `version: 1
name: crash-mysql-{{.Out}}
sources:
{{template "readings" .}}
transforms:
  - name: stats
    sql: |
      SELECT sensor, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
      FROM readings
      WHERE temp > 0
      GROUP BY sensor
sinks:
{{template "mysql sink" args . "name" "db" "from" "stats" "key" "sensor"}}
`,
	needs: func(t *testing.T) map[string]string {
		return mysqlVars(t, map[string]string{}, "crash")
	},
	setup: writesReadings(3),
	check: func(t *testing.T, e *env) {
		db, _ := testenv.MySQL(t)
		want := tableRows(t, db, e.Vars["table"]+"_ref")
		got := tableRows(t, db, e.Vars["table"]+"_out")
		if len(want) == 0 {
			t.Fatal("the reference table is empty")
		}
		if !slices.Equal(got, want) {
			t.Errorf("table after crashes has %d rows, reference %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
		} else {
			t.Logf("table %s_out: %d rows, identical to the reference", e.Vars["table"], len(got))
		}
	},
	reset: dropOut,
}

func TestCrashMySQL(t *testing.T) { runScenario(t, fileGroupByToMySQL) }

// mysqlVars puts into vars the shared MariaDB's DSN and a name, from
// prefix, for the tables NAME_ref and NAME_out that the mysql sink
// fragment writes; they are dropped when the test ends.
func mysqlVars(t *testing.T, vars map[string]string, prefix string) map[string]string {
	t.Helper()
	db, dsn := testenv.MySQL(t)
	table := testenv.UniqueName(t, prefix)
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS " + table + "_ref")
		db.Exec("DROP TABLE IF EXISTS " + table + "_out")
		testenv.DropMySQLFences(t, db, table)
	})
	vars["dsn"], vars["table"] = dsn, table
	return vars
}

// dropOut is the reset of a scenario with the mysql sink fragment: it
// drops the crashing runs' table.
func dropOut(t *testing.T, e *env) {
	db, _ := testenv.MySQL(t)
	testenv.Exec(t, db, "DROP TABLE IF EXISTS "+e.Vars["table"]+"_out")
}

// tableRows returns every row of table as text, in key order.
func tableRows(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM " + table + " ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString(", ")
			}
			if v.Valid {
				b.WriteString(v.String)
			} else {
				b.WriteString("NULL")
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func diffLines(want, got []string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(want), len(got)) && n < 5; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  row %d: want %q, got %q\n", i, w, g)
			n++
		}
	}
	return b.String()
}

// diffSets lists, sorted, up to 20 lines only want has and up to 20 only
// got has: for tables compared as sets of rows, where one row missing
// shifts every line after it.
func diffSets(want, got []string) string {
	in := func(lines []string) map[string]bool {
		m := make(map[string]bool, len(lines))
		for _, l := range lines {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	list := func(label string, lines []string, other map[string]bool) {
		n := 0
		for _, l := range lines {
			if other[l] {
				continue
			}
			if n++; n <= 20 {
				fmt.Fprintf(&b, "  %s %q\n", label, l)
			}
		}
		if n > 20 {
			fmt.Fprintf(&b, "  ... %d more %s\n", n-20, label)
		}
	}
	list("missing", want, g)
	list("unexpected", got, w)
	return b.String()
}
