package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// env is what every engine run needs: the binaries built once, the data
// and a work directory per workload.
type env struct {
	cache string // absolute
	data  string // absolute data dir (events.csv, customers.csv)
	meta  dataMeta
	etld  string // the etld binary
	// baseEtld (-base-etld) is another commit's etld, run in the matrix
	// as etld-base beside etld-batch; engines (-engines), when set, are
	// the only engines run.
	baseEtld string
	engines  string
	etldrun  string // bench/etldrun (W4: checkpoint duration)
	udf      string // the example user functions, as make udf-examples builds them (Nexmark q14)
	base     map[string]string
	python   string // DuckDB's venv python; "" = not run
	noDuck   string // why DuckDB is not run
	flink    string // the FlinkRun command; "" = not run
	noFlink  string
	// udfJar is Nexmark q14's Flink function jar (scripts/nexmark/udf.sh);
	// "" when not built, noUDFJar saying why.
	udfJar, noUDFJar string
	// flinkState is Flink's state backend for the Nexmark scripts
	// (-flink-state: "rocksdb"); "" leaves Flink's default, its heap.
	flinkState string
	timeout    time.Duration
}

// engine is one contender of a workload. run does one measured run into
// dir (emptied before each run) and returns its measure; out, when set,
// names its output (a file or Flink's directory), checksummed after the
// first run; retract says the output has an op column to fold.
type engine struct {
	name    string
	notRun  string // set: reported as not run, with this reason
	out     string
	retract bool
	// debezium: out is a debezium-json changelog to fold (Flink's
	// streaming output); check, when set, is one more run, untimed,
	// whose output stands for this engine's (streamcheck.go).
	debezium bool
	check    *engine
	run      func(dir string) (measure, error)
}

var eventsSchema = []string{"id BIGINT", "k1 BIGINT", "k2 BIGINT", "cust BIGINT", "amount BIGINT", "name STRING", "ts TIMESTAMP(3)"}

// eventsAsStrings is eventsSchema with the columns cols read as STRING
// (the same digits, now a string key).
func eventsAsStrings(cols ...string) []string {
	s := slices.Clone(eventsSchema)
	for i, c := range s {
		name, _, _ := strings.Cut(c, " ")
		if slices.Contains(cols, name) {
			s[i] = name + " STRING"
		}
	}
	return s
}

// etldPipeline is a pipeline file over events.csv with one transform.
// sink is "blackhole" or a file path; extra holds top-level keys
// (execution, mini_batch_aggregate, checkpoint_interval).
func etldPipeline(e *env, name, sql, sink string, extra []string, watermark string) string {
	return etldPipelineSchema(e, name, sql, sink, extra, watermark, eventsSchema)
}

// etldPipelineSchema is etldPipeline reading events.csv with schema.
func etldPipelineSchema(e *env, name, sql, sink string, extra []string, watermark string, schema []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: %s\n", name)
	for _, x := range extra {
		b.WriteString(x + "\n")
	}
	fmt.Fprintf(&b, "sources:\n  - name: events\n    type: file\n    path: %s\n    schema:\n", filepath.Join(e.data, "events.csv"))
	for _, c := range schema {
		fmt.Fprintf(&b, "      - %s\n", c)
	}
	if watermark != "" {
		fmt.Fprintf(&b, "    watermark: %s\n", watermark)
	}
	fmt.Fprintf(&b, "transforms:\n  - name: q\n    sql: %q\n", sql)
	if sink == "blackhole" {
		b.WriteString("sinks:\n  - name: out\n    from: q\n    type: blackhole\n")
	} else {
		fmt.Fprintf(&b, "sinks:\n  - name: out\n    from: q\n    type: file\n    path: %s\n", sink)
	}
	return b.String()
}

// etldEngine runs the etld binary (`etld run --quiet FILE`, no state
// dir: a one-shot run as a user types it) over the pipeline yaml builds.
func etldEngine(e *env, name, outName string, yaml func(out string) string) engine {
	return etldBinEngine(e, e.etld, name, outName, yaml)
}

// etldBinEngine is etldEngine of the etld binary bin.
func etldBinEngine(e *env, bin, name, outName string, yaml func(out string) string) engine {
	return etldEnvEngine(e, bin, name, outName, nil, yaml)
}

// etldEnvEngine is etldBinEngine with vars added to the child's
// environment (GOMAXPROCS=1: the same process on one core).
func etldEnvEngine(e *env, bin, name, outName string, vars []string, yaml func(out string) string) engine {
	eng := engine{name: name}
	eng.run = func(dir string) (measure, error) {
		out := "blackhole"
		if outName != "" {
			out = filepath.Join(dir, outName)
		}
		file := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(file, []byte(yaml(out)), 0o644); err != nil {
			return measure{}, err
		}
		m, _, err := runChild([]string{bin, "run", "--quiet", "--log-format", "text", file}, vars, dir, filepath.Join(dir, "stderr"), e.timeout)
		return m, err
	}
	if outName != "" {
		eng.out = outName
	}
	return eng
}

// checkpointRun is what etldrun reports of its run.
type checkpointRun struct {
	ElapsedS         float64 `json:"elapsed_s"`
	SourceRows       int64   `json:"source_rows"`
	Checkpoints      int64   `json:"checkpoints"`
	LastCheckpointS  float64 `json:"last_checkpoint_s"`
	LastCheckpointSz int64   `json:"last_checkpoint_bytes"`
}

// etldStateEngine runs the pipeline through etldrun with a fresh state
// dir, so the final checkpoint's duration and size are known (W4).
func etldStateEngine(e *env, name, yaml string, got *[]checkpointRun) engine {
	eng := engine{name: name}
	eng.run = func(dir string) (measure, error) {
		file := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			return measure{}, err
		}
		sum := filepath.Join(dir, "summary.json")
		state := filepath.Join(dir, "state")
		m, _, err := runChild([]string{e.etldrun, "-state-dir", state, "-summary", sum, file}, nil, dir, filepath.Join(dir, "stderr"), e.timeout)
		if err != nil {
			return m, err
		}
		var cr checkpointRun
		b, err := os.ReadFile(sum)
		if err == nil {
			err = json.Unmarshal(b, &cr)
		}
		if err != nil {
			return m, fmt.Errorf("%s: %w", sum, err)
		}
		if n, err := checkpointBytes(state); err == nil && n > cr.LastCheckpointSz {
			cr.LastCheckpointSz = n
		}
		*got = append(*got, cr)
		m.Rows = cr.SourceRows
		return m, nil
	}
	return eng
}

// baselineEngine runs one of bench/baseline's programs: NAME IN OUT.
func baselineEngine(e *env, name string) engine {
	return engine{name: name, out: "out.csv", run: func(dir string) (measure, error) {
		m, _, err := runChild([]string{e.base[name], filepath.Join(e.data, "events.csv"), filepath.Join(dir, "out.csv")}, nil, dir, filepath.Join(dir, "stderr"), e.timeout)
		return m, err
	}}
}

// duckEngine runs sql (with $EVENTS and $OUT to fill in) in DuckDB.
func duckEngine(e *env, sql string) engine {
	return duckEngineSchema(e, sql, eventsSchema)
}

// duckEngineSchema is duckEngine reading events.csv with schema.
func duckEngineSchema(e *env, sql string, schema []string) engine {
	return duckEngineTables(e, sql, map[string]string{"$EVENTS": duckRead(filepath.Join(e.data, "events.csv"), "csv", schema)})
}

// duckRead is DuckDB's reader of a csv or newline-delimited json file
// with schema (etld's types: STRING is DuckDB's VARCHAR, TIMESTAMP(3) its
// TIMESTAMP).
func duckRead(path, format string, schema []string) string {
	cols := make([]string, len(schema))
	for i, c := range schema {
		name, typ, _ := strings.Cut(c, " ")
		typ = strings.NewReplacer("STRING", "VARCHAR", "TIMESTAMP(3)", "TIMESTAMP").Replace(typ)
		cols[i] = fmt.Sprintf("'%s':'%s'", name, typ)
	}
	if format == "json" {
		return fmt.Sprintf("read_json('%s', format='newline_delimited', columns={%s})", path, strings.Join(cols, ","))
	}
	return fmt.Sprintf("read_csv('%s', header=false, auto_detect=false, columns={%s})", path, strings.Join(cols, ","))
}

// duckEngineTables runs sql in DuckDB with each key of tables (such as
// $EVENTS) replaced by its reader and $OUT by the output file.
func duckEngineTables(e *env, sql string, tables map[string]string) engine {
	eng := engine{name: "duckdb", out: "out.csv", notRun: e.noDuck}
	eng.run = func(dir string) (measure, error) {
		pairs := []string{"$OUT", filepath.Join(dir, "out.csv")}
		for k, v := range tables {
			pairs = append(pairs, k, v)
		}
		q := strings.NewReplacer(pairs...).Replace(sql)
		script := "import duckdb, sys\nduckdb.connect().execute(sys.argv[1])\n"
		m, _, err := runChild([]string{e.python, "-c", script, q}, nil, dir, filepath.Join(dir, "stderr"), e.timeout)
		return m, err
	}
	return eng
}

// flinkEngine runs the body (CREATE TABLE sink_out ... and the INSERT,
// with $OUT for the output dir) after the events table in FlinkRun, one
// JVM per run. The job's own time is read from two SELECT NOW() around
// the INSERT (as pipeline/bench_over_test.go does), so the JVM's and the
// mini-cluster's start are left out of Inner; Wall has them.
func flinkEngine(e *env, name, settings, watermark, sinkCols, sinkWith, insert string, out bool) engine {
	events := flinkTable("events", eventsSchema, filepath.Join(e.data, "events.csv"), "csv", watermark)
	return flinkTablesEngine(e, name, settings, events, sinkCols, sinkWith, insert, out)
}

// flinkTable is the CREATE TABLE of a filesystem source.
func flinkTable(name string, schema []string, path, format, watermark string) string {
	wm := ""
	if watermark != "" {
		wm = ",\n  WATERMARK FOR " + watermark
	}
	return fmt.Sprintf("CREATE TABLE %s (\n  %s%s\n) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = '%s');\n",
		name, strings.Join(schema, ", "), wm, path, format)
}

// flinkTablesEngine is flinkEngine over the source tables of tables
// (flinkTable's statements).
func flinkTablesEngine(e *env, name, settings, tables, sinkCols, sinkWith, insert string, out bool) engine {
	eng := engine{name: name, notRun: e.noFlink}
	if out {
		eng.out = "out"
	}
	eng.run = func(dir string) (measure, error) {
		with := strings.ReplaceAll(sinkWith, "$OUT", filepath.Join(dir, "out"))
		text := fmt.Sprintf(`%s
%sCREATE TABLE sink_out (%s) WITH (%s);
SELECT CAST(NOW() AS STRING);
%s;
SELECT CAST(NOW() AS STRING);
`, settings, tables, sinkCols, with, insert)
		script := filepath.Join(dir, "q.sql")
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			return measure{}, err
		}
		secs := int(e.timeout.Seconds())
		m, stderr, err := runChild([]string{e.flink, "--timeout", fmt.Sprint(secs), script}, flinkEnv(dir), dir, filepath.Join(dir, "stderr"), e.timeout+time.Minute)
		if err != nil {
			return m, err
		}
		m.Script = parseFlinkInner(stderr)
		if b, err := os.ReadFile(script + ".err"); err == nil {
			return m, fmt.Errorf("flink: %s", lastLines(b, 3))
		}
		b, err := os.ReadFile(script + ".out")
		if err != nil {
			return m, err
		}
		m.Inner, err = flinkJobTime(b)
		return m, err
	}
	return eng
}

var nowStamp = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?`)

// flinkJobTime is the time between the two NOW() rows of a script's output.
func flinkJobTime(out []byte) (float64, error) {
	stamps := nowStamp.FindAllString(string(out), -1)
	if len(stamps) != 2 {
		return 0, fmt.Errorf("flink printed %q, want two timestamps", lastLines(out, 4))
	}
	var at [2]time.Time
	for i, s := range stamps {
		t, err := time.Parse("2006-01-02 15:04:05.999999999", strings.Replace(s, "T", " ", 1))
		if err != nil {
			return 0, err
		}
		at[i] = t
	}
	return at[1].Sub(at[0]).Seconds(), nil
}

// findFlink is the FlinkRun command: $ETLD_TEST_FLINK, else what
// testenv/flink.sh installs (it fetches Flink's jars once) when Java is
// there; "" and the reason otherwise.
func findFlink() (string, string) {
	if f := os.Getenv("ETLD_TEST_FLINK"); f != "" {
		return f, ""
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", "no java on PATH"
	}
	if out, err := exec.Command("bash", "testenv/flink.sh", "start").CombinedOutput(); err != nil {
		return "", "testenv/flink.sh start: " + lastLines(out, 2)
	}
	out, err := exec.Command("bash", "testenv/flink.sh", "env").Output()
	if err != nil {
		return "", "testenv/flink.sh env: " + err.Error()
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "export ETLD_TEST_FLINK="); ok {
			return strings.Trim(v, `'"`), ""
		}
	}
	return "", "testenv/flink.sh env printed no ETLD_TEST_FLINK"
}

// findDuckDB runs bench/duckdb.sh (a venv under the cache with duckdb).
func findDuckDB(cache string) (string, string) {
	out, err := exec.Command("bash", "bench/duckdb.sh", cache).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", "bench/duckdb.sh: " + lastLines(ee.Stderr, 2)
		}
		return "", "bench/duckdb.sh: " + err.Error()
	}
	py := strings.TrimSpace(string(out))
	if abs, err := filepath.Abs(py); err == nil {
		py = abs
	}
	return py, ""
}

// flinkEnv is the environment of a FlinkRun child: its log in dir, and a
// heap of 4 GiB unless ETLD_FLINKRUN_HEAP says otherwise (the runner's own
// default of 1 GiB is for tests: at 10M rows a GROUP BY of millions of keys
// keeps Flink collecting a full heap, and the bench would time its
// collector, not its operators).
func flinkEnv(dir string) []string {
	return []string{"ETLD_FLINKRUN_LOG=" + filepath.Join(dir, "flink.log"), "ETLD_FLINKRUN_HEAP=" + envOr("ETLD_FLINKRUN_HEAP", "4g")}
}
