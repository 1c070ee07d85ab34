// Command bench is etld's whole-process benchmark harness (`make bench`): it
// generates the seeded data into the cache dir, builds etld and the Go
// baselines under baseline/ once, then runs each workload's engines (etld,
// the baselines, DuckDB, Flink) interleaved -runs times, checks they wrote
// the same rows, and prints a table of medians (rows/s, wall, CPU, peak RSS,
// ratio against the workload's baseline) and the speed targets; -json
// writes it all. DuckDB comes from bench/duckdb.sh, Flink from
// testenv/flink.sh (Java needed); either missing is reported as not run.
//
// Usage: go run ./bench [-rows 10M] [-runs 3] [-only W1,W2-batch] [-json out.json]
//
//	go run ./bench -nexmark [-rows 10M] [-only q0,q5]   (make bench-nexmark)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	rowsFlag := flag.String("rows", "10M", "rows of events.csv (10M, 1M, 100k...)")
	seed := flag.Uint64("seed", 1, "seed of the data generator")
	cache := flag.String("cache", "bench/.cache", "cache dir for data, builds and outputs")
	runs := flag.Int("runs", 3, "runs of each engine (interleaved); medians are reported")
	only := flag.String("only", "", "comma-separated workloads (W1, W2 = W2-batch and W2-stream, W3 = its string and two-column keys, W4, W5, M = the matrix, M-str100k one of its shapes); default all")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	noFlink := flag.Bool("no-flink", false, "skip Flink")
	noDuck := flag.Bool("no-duckdb", false, "skip DuckDB")
	timeout := flag.Duration("timeout", 30*time.Minute, "limit of one engine run")
	again := flag.String("report", "", "print the table of this -json file again and exit")
	nexmark := flag.Bool("nexmark", false, "run the Nexmark queries of bench/nexmark instead, over -rows events (bench/nexmark.go); -only names queries (q0,q5)")
	baseEtld := flag.String("base-etld", "", "an etld binary of another commit, run as etld-base in each round (before and after a change): with -nexmark over the same json, in the matrix in batch mode beside etld-batch")
	engines := flag.String("engines", "", "comma-separated engines to run (etld-batch,etld-base,duckdb); the others are reported as not run; default all")
	noGen := flag.Bool("no-gen", false, "with -nexmark: skip etld-gen (etld's generator in the process)")
	flinkState := flag.String("flink-state", "", "with -nexmark: Flink's state backend (rocksdb, as Flink runs state past its heap; default its heap)")
	flag.BoolVar(&skipChecks, "no-check", false, "skip the untimed check run of each streaming engine (its output is then not compared): for timing runs of shapes already checked")
	flag.Parse()
	if *again != "" {
		if err := reprint(*again); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	rows, err := parseRows(*rowsFlag)
	if err != nil || *runs < 1 {
		fmt.Fprintln(os.Stderr, "bench: -rows:", err, "(and -runs must be >= 1)")
		os.Exit(2)
	}
	run := func() error {
		return bench(*cache, rows, *seed, *runs, *only, *jsonOut, *noFlink, *noDuck, *timeout, *baseEtld, *engines)
	}
	if *nexmark {
		run = func() error {
			return benchNexmark(*cache, rows, *runs, *only, *jsonOut, *noFlink, *timeout, nexmarkOptions{base: *baseEtld, noGen: *noGen, flinkState: *flinkState})
		}
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func bench(cache string, rows int64, seed uint64, runs int, only, jsonOut string, skipFlink, skipDuck bool, timeout time.Duration, baseEtld, engines string) error {
	cache, err := filepath.Abs(cache)
	if err != nil {
		return err
	}
	data := filepath.Join(cache, fmt.Sprintf("data-%d-%d", rows, seed))
	logf("data %s", data)
	meta, err := generate(data, rows, seed)
	if err != nil {
		return err
	}
	e := &env{cache: cache, data: data, meta: meta, timeout: timeout, base: map[string]string{}, baseEtld: baseEtld, engines: engines}
	bin := filepath.Join(cache, "bin")
	// One build of each, before anything is timed.
	builds := map[string]string{"etld": "./cmd/etld", "etldrun": "./bench/etldrun",
		"go-encoding-csv": "./bench/baseline/csvfilter", "go-byte-split": "./bench/baseline/bytefilter", "go-map-loop": "./bench/baseline/mapgroup",
		"parse-limit": "./bench/baseline/parselimit"}
	for name, pkg := range builds {
		out := filepath.Join(bin, name)
		logf("go build %s", pkg)
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v: %s", pkg, err, b)
		}
		e.base[name] = out
	}
	e.etld, e.etldrun = e.base["etld"], e.base["etldrun"]
	if skipDuck {
		e.noDuck = "-no-duckdb"
	} else if e.python, e.noDuck = findDuckDB(cache); e.noDuck != "" {
		logf("DuckDB not run: %s", e.noDuck)
	}
	if skipFlink {
		e.noFlink = "-no-flink"
	} else if e.flink, e.noFlink = findFlink(); e.noFlink != "" {
		logf("Flink not run: %s", e.noFlink)
	}

	rep := report{Date: time.Now().UTC().Format(time.RFC3339), Rows: rows, Runs: runs, Data: meta, Host: hostInfo(), Commit: commitOf()}
	var run []workload
	for _, w := range workloads(e) {
		if selected(w.name, only) {
			run = append(run, w)
		}
	}
	for _, w := range run {
		if strings.HasPrefix(w.name, "M-") {
			logf("matrix data %s", data)
			if err := generateMatrix(data, rows, seed); err != nil {
				return err
			}
			break
		}
	}
	for _, w := range run {
		res, err := runWorkload(e, w, runs)
		if err != nil {
			return err
		}
		rep.Workloads = append(rep.Workloads, res)
	}
	rep.Targets = targets(rep.Workloads)
	rep.print(os.Stdout)
	if jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		o = strings.TrimSpace(o)
		if strings.EqualFold(o, name) || strings.EqualFold(o, strings.SplitN(name, "-", 2)[0]) {
			return true
		}
	}
	return false
}

// runWorkload runs every engine once per round, in order, runs rounds,
// then checks the outputs of the first round against each other.
// skipChecks is -no-check.
var skipChecks bool

func runWorkload(e *env, w workload, runs int) (workloadResult, error) {
	wr := workloadResult{Name: w.name, Desc: w.desc, Baseline: w.baseline}
	res := make([]engineResult, len(w.engines))
	for i, eng := range w.engines {
		res[i] = engineResult{Engine: eng.name, NotRun: eng.notRun}
		if e.engines != "" && res[i].NotRun == "" && !slices.Contains(strings.Split(e.engines, ","), eng.name) {
			res[i].NotRun = "-engines"
		}
	}
	for r := range runs {
		for i, eng := range w.engines {
			if res[i].NotRun != "" || res[i].Error != "" {
				continue
			}
			dir := filepath.Join(e.cache, "work", w.name, eng.name)
			if err := os.RemoveAll(dir); err != nil {
				return wr, err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return wr, err
			}
			logf("%s %s run %d/%d", w.name, eng.name, r+1, runs)
			m, err := eng.run(dir)
			if err != nil {
				res[i].Error = err.Error()
				if m.Wall > 0 {
					// What a run killed at -timeout had spent: a lower bound.
					res[i].Error += fmt.Sprintf(" (after %.0f s wall, %.1f CPU s, %.0f MiB peak)", m.Wall, m.CPU, float64(m.PeakRSS)/(1<<20))
				}
				logf("  failed: %v", res[i].Error)
				continue
			}
			if r == 0 && eng.out != "" {
				n, sum, err := checksum(filepath.Join(dir, eng.out), eng.retract)
				if err != nil {
					res[i].Error = "output: " + err.Error()
					continue
				}
				res[i].OutRows, res[i].Checksum = n, sum
			}
			logf("  wall %.2fs cpu %.2fs rss %.0f MiB job %.2fs script %.2fs", m.Wall, m.CPU, float64(m.PeakRSS)/(1<<20), m.Inner, m.Script)
			res[i].Runs = append(res[i].Runs, m)
		}
	}
	for i, eng := range w.engines {
		if eng.check != nil && !skipChecks && res[i].NotRun == "" && res[i].Error == "" {
			if err := runCheck(e, eng, filepath.Join(e.cache, "work", w.name, eng.name+"-check"), &res[i]); err != nil {
				return wr, err
			}
		}
	}
	var ref *engineResult
	for i := range res {
		r := &res[i]
		r.summarize(e.meta.Rows)
		if r.Checksum == "" {
			continue
		}
		if ref == nil {
			ref, r.Check = r, "ref"
			continue
		}
		switch {
		case r.Checksum == ref.Checksum && r.OutRows == ref.OutRows:
			r.Check = "same"
		case r.OutRows == ref.OutRows:
			r.Check = "DIFFERENT ROWS"
		default:
			r.Check = fmt.Sprintf("DIFFERENT: %d rows", r.OutRows)
		}
	}
	ratios(res, w.baseline)
	wr.Engines = res
	if w.after != nil {
		wr.Extra = w.after(res)
	}
	return wr, nil
}

// ratios sets each engine's time and CPU ratios against the baseline's.
func ratios(res []engineResult, baseline string) {
	for i := range res {
		if res[i].Engine != baseline || res[i].Time <= 0 {
			continue
		}
		for j := range res {
			if res[j].Time > 0 {
				res[j].Ratio = res[i].Time / res[j].Time
			}
			if res[j].CPU > 0 && res[i].CPU > 0 {
				res[j].CPURatio = res[i].CPU / res[j].CPU
			}
		}
	}
}

// reprint prints the table of a -json file again (with this version's
// ratios and targets).
func reprint(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range rep.Workloads {
		ratios(w.Engines, w.Baseline)
	}
	rep.Targets = targets(rep.Workloads)
	rep.print(os.Stdout)
	if len(rep.Workloads) > 0 && rep.Workloads[0].Name == "flink-start" {
		printNexmark(os.Stdout, rep)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func hostInfo() string {
	cpu := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n := strings.Count(string(b), "\nprocessor")
		if strings.HasPrefix(string(b), "processor") {
			n++
		}
		model := ""
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
		cpu = fmt.Sprintf("%d x %s", n, model)
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("%s; load %s at start", cpu, load)
}

// commitOf is the checked-out commit, with "+changes" when the tree
// differs from it; "" outside a git work tree.
func commitOf() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+changes"
	}
	return c
}
