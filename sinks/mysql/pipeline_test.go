package mysql_test

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks"
	"github.com/etld/etld/sources/file"
)

func registry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	file.Register(r)
	// Every sink: type jdbc is the mysql sink by its url.
	sinks.Register(r)
	return r
}

// TestGroupByUpsertPipeline runs CSV -> GROUP BY ... HAVING -> mysql in
// streaming mode, without the runtime's per-batch folding, so that the
// sink gets every +I, +U and -D of groups entering and leaving the HAVING
// range; the table must end as the aggregate computed here directly.
func TestGroupByUpsertPipeline(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 2))
	var csv strings.Builder
	type acc struct{ n, sum int64 }
	accs := map[string]*acc{}
	left := 0 // groups that were in the result and left it
	in := map[string]bool{}
	for i := 0; i < 6000; i++ {
		k := fmt.Sprintf("k%d", rng.IntN(80))
		v := rng.Int64N(1000) - 200
		fmt.Fprintf(&csv, "%s,%d\n", k, v)
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		a.n++
		a.sum += v
		now := a.n >= 60 && a.n <= 80
		if in[k] && !now {
			left++
		}
		in[k] = now
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k, a := range accs {
		if a.n >= 60 && a.n <= 80 {
			want = append(want, fmt.Sprintf("%s|%d|%d", k, a.n, a.sum))
		}
	}
	sort.Strings(want)
	if len(want) == 0 || left == 0 {
		t.Fatalf("test data: %d final groups, %d groups left the result: it would prove nothing", len(want), left)
	}
	runPipeline(t, dsn, fmt.Sprintf(`version: 1
name: agg-to-mysql
mini_batch: false
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING, v BIGINT]
transforms:
  - name: agg
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total
      FROM src GROUP BY k HAVING COUNT(*) BETWEEN 60 AND 80
sinks:
  - name: db
    from: agg
    type: mysql
    dsn: ${ETLD_MYSQL_TEST_DSN}
    table: %s
    key: [k]
    create_table: true
    batch_size: 37
`, filepath.Join(dir, "in.csv"), name))
	if got := dump(t, db, name); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDeadLetterPipeline: rows the server refuses go to the dead-letter
// file with the MySQL error number; the others land. Written through a
// type: jdbc sink, with Flink's url form.
func TestDeadLetterPipeline(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	exec(t, db, "CREATE TABLE `"+name+"` (id INT NOT NULL PRIMARY KEY, code VARCHAR(4) NOT NULL)")
	dir := t.TempDir()
	var csv strings.Builder
	var want []string
	for i := range 50 {
		code := fmt.Sprintf("c%d", i)
		if i%10 == 3 {
			code = "far too long"
		} else {
			want = append(want, fmt.Sprintf("%d|%s", i, code))
		}
		fmt.Fprintf(&csv, "%d,%s\n", i, code)
	}
	sort.Strings(want)
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := driverCfg(t, dsn)
	t.Setenv("ETLD_MYSQL_TEST_PASSWORD", cfg.Passwd)
	dlq := filepath.Join(dir, "dead.jsonl")
	sum := runPipeline(t, dsn, fmt.Sprintf(`version: 1
name: dead-letters
sources:
  - name: src
    type: file
    path: %s
    schema: [id INT, code STRING]
sinks:
  - name: db
    from: src
    type: jdbc
    url: jdbc:mysql://%s/%s
    username: %s
    password: ${ETLD_MYSQL_TEST_PASSWORD}
    table: %s
    on_error: dead-letter
    dead_letter: %s
`, filepath.Join(dir, "in.csv"), cfg.Addr, cfg.DBName, cfg.User, name, dlq))
	if got := dump(t, db, name); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f, err := os.Open(dlq)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct{ Sink, Position, Error, Record string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Sink != "db" || !strings.Contains(rec.Error, "Error 1406") || !strings.Contains(rec.Record, "far too long") {
			t.Errorf("dead letter %+v: want sink db, error 1406 and the row", rec)
		}
		ids = append(ids, strings.SplitN(strings.TrimPrefix(rec.Record, "+I["), ",", 2)[0])
	}
	if strings.Join(ids, " ") != "3 13 23 33 43" {
		t.Errorf("dead-lettered rows %v, want 3 13 23 33 43", ids)
	}
	// Written means acknowledged: the 5 refused rows are not written.
	if len(sum.Sinks) != 1 || sum.Sinks[0].In != 50 || sum.Sinks[0].Out != 45 || sum.Sinks[0].Skipped != 5 {
		t.Errorf("summary %+v: want 50 rows in, 45 written and 5 skipped in the sink", sum.Sinks)
	}
}

// TestExampleConfig runs configs/examples/mysql-sensor-stats.yaml against
// the test server and checks the table against the data file.
func TestExampleConfig(t *testing.T) {
	db, dsn := openDB(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "configs/examples/mysql-sensor-stats.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	name := table(t, db, "")
	dir := t.TempDir()
	yaml := strings.NewReplacer(
		"${ETLD_MYSQL_DSN}", "${ETLD_MYSQL_TEST_DSN}",
		"table: sensor_stats", "table: "+name,
		"configs/examples/data/sensor.csv", filepath.Join(root, "configs/examples/data/sensor.csv"),
		"out/sensor-stats-rejected.jsonl", filepath.Join(dir, "rejected.jsonl"),
	).Replace(string(src))
	runPipeline(t, dsn, yaml)
	data, err := os.ReadFile(filepath.Join(root, "configs/examples/data/sensor.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type acc struct {
		n   int
		max string
		hi  float64
	}
	accs := map[string]*acc{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, ",")
		var v float64
		fmt.Sscan(f[2], &v)
		a := accs[f[0]]
		if a == nil {
			a = &acc{hi: v, max: f[2]}
			accs[f[0]] = a
		}
		a.n++
		if v > a.hi {
			a.hi, a.max = v, f[2]
		}
	}
	var want []string
	for id, a := range accs {
		want = append(want, fmt.Sprintf("%s|%d|%s", id, a.n, a.max))
	}
	sort.Strings(want)
	if got := dump(t, db, name); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestGlobalAggregateNeedsReplaceTable: an upsert with no key can only be
// written by emptying the table, so a pipeline that would do it is refused
// at plan time, naming the option, and the table keeps the rows etld did
// not write. With replace_table: true the table holds the one result row.
func TestGlobalAggregateNeedsReplaceTable(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	exec(t, db, "CREATE TABLE `"+name+"` (n BIGINT)")
	exec(t, db, "INSERT INTO `"+name+"` VALUES (-1)")
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ETLD_MYSQL_TEST_DSN", dsn)
	pipelineFile := func(extra string) string {
		return fmt.Sprintf(`version: 1
name: global-count
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING]
transforms:
  - name: agg
    sql: SELECT COUNT(*) AS n FROM src
sinks:
  - name: db
    from: agg
    type: mysql
    dsn: ${ETLD_MYSQL_TEST_DSN}
    table: %s%s
`, in, name, extra)
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(pipelineFile("")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pipeline.Load(path, pipeline.Env{Registry: registry(), Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Fatal("a keyless upsert into a table was planned; it would delete the table's other rows")
	}
	for _, want := range []string{path + ":", "replace_table", "no key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if got := dump(t, db, name); strings.Join(got, " ") != "-1" {
		t.Errorf("table %v, want the row etld did not write, -1, untouched", got)
	}
	runPipeline(t, dsn, pipelineFile("\n    replace_table: true"))
	if got := dump(t, db, name); strings.Join(got, " ") != "3" {
		t.Errorf("with replace_table: table %v, want one row 3", got)
	}
}

// TestDeadLettersIntoATable: a source's dead letters go to a MySQL table
// that create_table makes from the dead letters' columns, upserted by
// their id: the raw record of a line the format refused, the row of a
// failed CAST as JSON, each with its file and byte offset. Running the
// same input again (as a restored run reads records again) leaves each
// dead letter once.
func TestDeadLettersIntoATable(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,10\n2,x\nbad\n4,40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`version: 1
name: dead-letters-table
sources:
  - name: src
    type: file
    path: %s
    schema: [id INT, amount STRING]
    on_error: {policy: dead-letter, sink: errors}
transforms:
  - name: q
    sql: SELECT id, CAST(amount AS INT) AS amount FROM src
sinks:
  - name: out
    from: q
    type: blackhole
  - name: errors
    type: mysql
    dsn: ${ETLD_MYSQL_TEST_DSN}
    table: %s
    create_table: true
`, in, name)
	for range 2 {
		sum := runPipeline(t, dsn, yaml)
		if len(sum.Sinks) != 2 || sum.Sinks[1].Out != 2 {
			t.Fatalf("summary %+v: want 2 dead letters written", sum.Sinks)
		}
	}
	rows, err := db.Query("SELECT source, transform, position, file, `offset`, error, record, `row` FROM `" + name + "` ORDER BY `offset`")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var source, position, file, errText string
		var transform, record, rowJSON sql.NullString
		var offset int64
		if err := rows.Scan(&source, &transform, &position, &file, &offset, &errText, &record, &rowJSON); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s|%s|%s|%d|%s|%s", source, transform.String, strings.TrimPrefix(position, in), offset, record.String, rowJSON.String))
		if file != in || errText == "" {
			t.Errorf("dead letter of %s: file %q, error %q", position, file, errText)
		}
	}
	want := []string{`src|q|:2|5||{"id":2,"amount":"x"}`, `src||:3|9|bad|`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
