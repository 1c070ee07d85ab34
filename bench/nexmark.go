package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// The Nexmark benchmark (`go run ./bench -nexmark`, make bench-nexmark):
// every query of bench/nexmark over the same events, etld against Flink
// 2.3 local, interleaved. The events are etld's nexmark source's, written
// once as json into the cache; etld reads them with a file source in
// place of its generator, Flink with the filesystem connector in place of
// the nexmark one (bench/nexmark/flink/sql/qN.sql, the project's SQL as the
// correctness recordings ran it, its sinks the project's blackholes), so
// both do the same work. etld-gen is etld's file as it is, its generator
// making the events in the process, as Flink's published figures make
// them with the nexmark connector.

const nexmarkDir = "bench/nexmark"

// nexmarkPublished is Flink's own published throughput per core (events
// per second, the nexmark project's table: 8-core machines, RocksDB,
// exactly-once), for the queries it lists.
var nexmarkPublished = map[string]float64{
	"q0": 155e3, "q1": 158e3, "q2": 175e3, "q4": 34e3, "q5": 22e3,
	"q7": 12.3e3, "q9": 14.2e3, "q16": 18.7e3, "q19": 44e3, "q20": 19e3,
}

// nexmarkEventBytes is about how long an event's json line is (334 MB
// for 1M events), to refuse a size the disk cannot hold.
const nexmarkEventBytes = 340

// nexmarkSource is the nexmark source block of every query file, replaced
// by a json file source over the dump.
var nexmarkSource = regexp.MustCompile(`(?m)^    type: nexmark\n(    (events|seed|base_time): .*\n)+`)

// nexmarkOptions are -nexmark's own flags.
type nexmarkOptions struct {
	base  string // -base-etld: another etld binary, run as etld-base
	noGen bool   // -no-gen: no etld-gen runs
	// flinkState is -flink-state: Flink's state backend ("" its heap).
	flinkState string
}

func benchNexmark(cache string, events int64, runs int, only, jsonOut string, skipFlink bool, timeout time.Duration, opt nexmarkOptions) error {
	cache, err := filepath.Abs(cache)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(nexmarkDir)
	if err != nil {
		return err
	}
	e := &env{cache: cache, meta: dataMeta{Rows: events}, timeout: timeout, base: map[string]string{}, flinkState: opt.flinkState}
	e.etld = filepath.Join(cache, "bin", "etld")
	logf("go build ./cmd/etld")
	if b, err := exec.Command("go", "build", "-o", e.etld, "./cmd/etld").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/etld: %v: %s", err, b)
	}
	e.udf = filepath.Join(cache, "bin", "udf")
	logf("make udf-examples (q14's count_char)")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(e.udf, "count_char.wasm"), "./sdk/go/examples/count_char")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building count_char.wasm: %v: %s", err, b)
	}
	if skipFlink {
		e.noFlink = "-no-flink"
	} else if e.flink, e.noFlink = findFlink(); e.noFlink != "" {
		logf("Flink not run: %s", e.noFlink)
	}
	if e.noFlink == "" && selected("q14", only) {
		jar := filepath.Join(cache, "nexmark", "count_char.jar")
		if err := nexmarkUDFJar(filepath.Join("scripts", "nexmark", "udf.sh"), jar); err != nil {
			e.noUDFJar = err.Error()
			logf("Flink's q14 not run: %s", e.noUDFJar)
		} else {
			e.udfJar = jar
		}
	}
	dump := filepath.Join(cache, "nexmark", fmt.Sprintf("events-%d.json", events))
	if err := nexmarkDump(e, root, dump, events); err != nil {
		return err
	}
	empty := filepath.Join(cache, "nexmark", "events-0.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		return err
	}
	rep := report{Date: time.Now().UTC().Format(time.RFC3339), Rows: events, Runs: runs, Data: e.meta, Host: hostInfo()}
	// Flink's start (the JVM, the mini-cluster, the NOW() jobs) costs CPU
	// seconds whatever the query: measured once over no events, so that
	// the per-core ratio can leave it out.
	start := workload{name: "flink-start", desc: "q0's Flink script over no events: the JVM's and the job's start", baseline: "flink",
		engines: []engine{nexmarkFlink(e, root, "q0", empty)}}
	res, err := runWorkload(e, start, runs)
	if err != nil {
		return err
	}
	rep.Workloads = append(rep.Workloads, res)
	for i := range 24 {
		name := fmt.Sprintf("q%d", i)
		if !selected(name, only) {
			continue
		}
		w := workload{name: name, desc: "Nexmark " + name, baseline: "flink"}
		if opt.base != "" {
			w.engines = append(w.engines, nexmarkEtld(e, opt.base, root, name, "etld-base", dump, 0))
		}
		w.engines = append(w.engines, nexmarkEtld(e, e.etld, root, name, "etld", dump, 0))
		if !opt.noGen {
			w.engines = append(w.engines, nexmarkEtld(e, e.etld, root, name, "etld-gen", "", events))
		}
		w.engines = append(w.engines, nexmarkFlink(e, root, name, dump))
		res, err := runWorkload(e, w, runs)
		if err != nil {
			return err
		}
		rep.Workloads = append(rep.Workloads, res)
	}
	rep.print(os.Stdout)
	printNexmark(os.Stdout, rep)
	if jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		return os.WriteFile(jsonOut, b, 0o644)
	}
	return nil
}

// nexmarkDump writes the events once: q0.yaml's source into a json file
// sink, the DDL's four columns (Flink's json format reads them as the
// nexmark DDL declares them).
func nexmarkDump(e *env, root, path string, events int64) error {
	if st, err := os.Stat(path + ".done"); err == nil && st.Mode().IsRegular() {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err == nil {
		if need, free := uint64(events)*nexmarkEventBytes, fs.Bavail*uint64(fs.Bsize); need > free {
			return fmt.Errorf("%d events take about %d GB as json, and %s has %d GB free", events, need>>30, dir, free>>30)
		}
	}
	yaml, err := nexmarkYAML(root, "q0", "", events)
	if err != nil {
		return err
	}
	head, _, _ := strings.Cut(yaml, "\ntransforms:\n")
	yaml = head + fmt.Sprintf(`
transforms:
  - name: events
    sql: SELECT event_type, person, auction, bid FROM datagen
sinks:
  - name: out
    from: events
    type: file
    path: %q
    format: json
`, path)
	file := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		return err
	}
	logf("writing %d events to %s", events, path)
	if _, _, err := runChild([]string{e.etld, "run", "--quiet", file}, nil, dir, filepath.Join(dir, "dump.stderr"), e.timeout); err != nil {
		return err
	}
	return os.WriteFile(path+".done", nil, 0o644)
}

// nexmarkYAML is a query's file with its source reading the json file
// dump, or, when dump is "", its generator making events events.
func nexmarkYAML(root, name, dump string, events int64) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, name+".yaml"))
	if err != nil {
		return "", err
	}
	text := string(b)
	const full = "    events: 10000000\n"
	if !strings.Contains(text, full) || !nexmarkSource.MatchString(text) {
		return "", fmt.Errorf("%s.yaml: no nexmark source with %q", name, full)
	}
	if dump == "" {
		return strings.Replace(text, full, fmt.Sprintf("    events: %d\n", events), 1), nil
	}
	return nexmarkSource.ReplaceAllLiteralString(text, fmt.Sprintf("    type: file\n    path: %q\n    format: json\n", dump)), nil
}

// nexmarkEtld runs `etld run --quiet` of a query's file (see nexmarkYAML);
// q10 writes into the run's directory, q13 reads side_input.txt.
func nexmarkEtld(e *env, bin, root, name, engineName, dump string, events int64) engine {
	eng := engine{name: engineName}
	eng.run = func(dir string) (measure, error) {
		yaml, err := nexmarkYAML(root, name, dump, events)
		if err != nil {
			return measure{}, err
		}
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			return measure{}, err
		}
		vars := []string{"NEXMARK_DIR=" + dir, "NEXMARK_SIDE_INPUT=" + filepath.Join(root, "side_input.txt"), "NEXMARK_UDF_DIR=" + e.udf}
		m, _, err := runChild([]string{bin, "run", "--quiet", "--log-format", "text", file}, vars, dir, filepath.Join(dir, "stderr"), e.timeout)
		return m, err
	}
	return eng
}

// nexmarkFlink runs a query's Flink script over dump with its sinks as the
// project declares them (blackholes; q10 a partitioned file sink into the
// run's directory), the job's time between two SELECT NOW() around the
// INSERT, as flinkEngine measures it.
func nexmarkFlink(e *env, root, name, dump string) engine {
	eng := engine{name: "flink", notRun: e.noFlink}
	eng.run = func(dir string) (measure, error) {
		b, err := os.ReadFile(filepath.Join(root, "flink", "sql", name+".sql"))
		if err != nil {
			return measure{}, err
		}
		if bytes.Contains(b, []byte("${UDF_JAR}")) && e.udfJar == "" {
			return measure{}, fmt.Errorf("%w: %s", errNeedsUDF, e.noUDFJar)
		}
		quote := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
		text := strings.NewReplacer("${EVENTS_FILE}", quote(dump), "${SIDE_INPUT}", quote(filepath.Join(root, "side_input.txt")),
			"${NEXMARK_DIR}", quote(dir), "${SUBMIT_TIME}", "run", "${UDF_JAR}", quote(e.udfJar)).Replace(string(b))
		at := strings.Index(text, "INSERT INTO nexmark_")
		if at < 0 {
			return measure{}, fmt.Errorf("%s.sql has no INSERT INTO nexmark_", name)
		}
		const now = "SELECT CAST(NOW() AS STRING);\n"
		text = text[:at] + now + strings.TrimRight(text[at:], "\n; ") + ";\n" + now
		if e.flinkState != "" {
			// Flink's own setting for state past its heap, as its
			// published Nexmark figures run.
			text = fmt.Sprintf("SET 'state.backend.type' = '%s';\n", quote(e.flinkState)) + text
		}
		script := filepath.Join(dir, name+".sql")
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			return measure{}, err
		}
		env := flinkEnv(dir)
		m, stderr, err := runChild([]string{e.flink, "--timeout", fmt.Sprint(int(e.timeout.Seconds())), script}, env, dir, filepath.Join(dir, "stderr"), e.timeout+time.Minute)
		if err != nil {
			return m, err
		}
		m.Script = parseFlinkInner(stderr)
		if b, err := os.ReadFile(script + ".err"); err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			return m, fmt.Errorf("flink: %s", first)
		}
		out, err := os.ReadFile(script + ".out")
		if err != nil {
			return m, err
		}
		m.Inner, err = flinkJobTime(out)
		return m, err
	}
	return eng
}

// errNeedsUDF: q14's script adds the nexmark project's jar of user
// functions (ADD JAR), and it was not built.
var errNeedsUDF = errors.New("flink: needs the nexmark project's count_char jar")

// nexmarkUDFJar builds jar with script (scripts/nexmark/udf.sh, the step
// scripts/nexmark/flink.sh builds it with for the recordings) unless the
// cache has it: its build reads the nexmark project's sources, cloned
// when NEXMARK_GIT names no clone, which is worth doing once.
func nexmarkUDFJar(script, jar string) error {
	if st, err := os.Stat(jar); err == nil && st.Mode().IsRegular() {
		return nil
	}
	logf("%s %s (q14's count_char for Flink)", script, jar)
	if b, err := exec.Command("bash", script, jar).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", script, err, lastLines(b, 3))
	}
	if _, err := os.Stat(jar); err != nil {
		return fmt.Errorf("%s wrote no jar: %w", script, err)
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// printNexmark prints the summary of a Nexmark run, a markdown table: per
// query, events/s (etld's over its process's wall time, Flink's over its
// job's time), CPU seconds, peak RSS and the ratios. Flink's job time and
// CPU seconds are taken net of its start (flink-start's, over no events:
// the mini-cluster, the JVM), which at a few million events is a good
// part of them.
func printNexmark(out io.Writer, rep report) {
	var startTime, startCPU float64
	for _, w := range rep.Workloads {
		if f := w.engine("flink"); w.Name == "flink-start" && f != nil {
			startTime, startCPU = f.Time, f.CPU
		}
	}
	net := func(x, start float64) float64 {
		if x > start {
			return x - start
		}
		return x
	}
	n := float64(rep.Rows)
	fmt.Fprintf(out, "\nNexmark, %d events, %d runs each (medians), %s; Flink's start: %.1f s of job time, %.1f CPU s\n",
		rep.Rows, rep.Runs, rep.Host, startTime, startCPU)
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| query\t| etld events/s\t| Flink events/s\t| wall ratio\t| etld CPU s\t| Flink CPU s\t| per-core ratio\t| etld events per CPU s\t| Flink events per CPU s\t| Flink published per core\t| etld RSS MiB\t| Flink RSS MiB\t| etld-gen events/s\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|")
	k := func(x float64) string { return fmt.Sprintf("%.0fk", x/1e3) }
	for _, w := range rep.Workloads {
		if w.Name == "flink-start" {
			continue
		}
		et, fl, gen := w.engine("etld"), w.engine("flink"), w.engine("etld-gen")
		if et == nil || fl == nil {
			fmt.Fprintf(tw, "| %s\t| %s\t|\t|\t|\t|\t|\t|\t|\t|\t|\t|\t|\t|\n", w.Name, nexmarkWhyNot(w))
			continue
		}
		flTime, flCPU := net(fl.Time, startTime), net(fl.CPU, startCPU)
		pub, genRate := "-", "-"
		if p, ok := nexmarkPublished[w.Name]; ok {
			pub = k(p)
		}
		if gen != nil {
			genRate = k(gen.RowsPerS)
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %.1fx\t| %.2f\t| %.1f\t| %.1fx\t| %s\t| %s\t| %s\t| %.0f\t| %.0f\t| %s\t|\n", w.Name,
			k(et.RowsPerS), k(n/flTime), flTime/et.Time, et.CPU, flCPU, flCPU/et.CPU, k(n/et.CPU), k(n/flCPU), pub,
			et.RSSMiB, fl.RSSMiB, genRate)
	}
	tw.Flush()
}

// nexmarkWhyNot is why etld or Flink did not run a query: their errors.
func nexmarkWhyNot(w workloadResult) string {
	var why []string
	for _, r := range w.Engines {
		if r.Engine == "etld-gen" {
			continue
		}
		if r.Error != "" {
			why = append(why, r.Engine+": "+shortError(strings.TrimPrefix(r.Error, r.Engine+": ")))
		} else if r.NotRun != "" {
			why = append(why, r.Engine+" not run: "+r.NotRun)
		}
	}
	return strings.Join(why, "; ")
}

// shortError keeps what names a failure: an etld error without its file
// position and source snippet, a Flink one's first line.
func shortError(s string) string {
	if _, msg, ok := strings.Cut(s, ".sql: "); ok {
		s = msg
	}
	s, _, _ = strings.Cut(s, " | ")
	return oneLine(s, 100)
}
