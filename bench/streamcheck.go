package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// The matrix's streaming engines write to a blackhole when timed, so
// that neither pays for its writer; their results are checked by one more
// run of each, untimed, that writes the changelog to files: etld's file
// sink in retract mode (csv with an op column), Flink's filesystem sink
// in debezium-json (the one format of Flink's that writes every change
// kind to a file). Both are folded into their final table and hashed as
// the batch outputs are, so etld-stream, flink-stream, etld-batch and
// DuckDB all meet in one checksum.

// runCheck runs eng.check once into dir and sets r's output rows and
// checksum from it (or r's error).
func runCheck(e *env, eng engine, dir string, r *engineResult) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logf("  %s: its output, untimed", eng.name)
	if _, err := eng.check.run(dir); err != nil {
		r.Error = "check run: " + err.Error()
		logf("  failed: %v", err)
		return nil
	}
	path := filepath.Join(dir, eng.check.out)
	var n int64
	var sum string
	var err error
	if eng.check.debezium {
		n, sum, err = checksumDebezium(path)
	} else {
		n, sum, err = checksum(path, eng.check.retract)
	}
	if err != nil {
		r.Error = "output: " + err.Error()
		return nil
	}
	r.OutRows, r.Checksum = n, sum
	return nil
}

// checksumDebezium is checksum of a debezium-json changelog (a file or a
// directory of part files): each event's after row inserted, its before
// row retracted, then the final table's rows hashed as csv lines (the
// values in the schema's order, strings unquoted, null empty).
func checksumDebezium(path string) (int64, string, error) {
	files, err := outputFiles(path)
	if err != nil {
		return 0, "", err
	}
	folded := map[string]int{}
	for _, f := range files {
		var bad error
		if err := eachLine(f, func(line []byte) {
			if bad != nil {
				return
			}
			before, after, err := debeziumRows(line)
			if err != nil {
				bad = fmt.Errorf("%s: %w", f, err)
				return
			}
			if before != nil {
				folded[*before]--
			}
			if after != nil {
				folded[*after]++
			}
		}); err != nil {
			return 0, "", err
		}
		if bad != nil {
			return 0, "", bad
		}
	}
	var h multisetHash
	for k, n := range folded {
		if n < 0 {
			return 0, "", fmt.Errorf("%s: a retraction of %q that was never inserted", path, k)
		}
		h.add([]byte(k), n)
	}
	return h.n, h.String(), nil
}

// outputFiles is path, or the files under it when it is a directory
// (Flink's part files, .crc files left out).
func outputFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".crc") {
			files = append(files, p)
		}
		return err
	})
	return files, err
}

// debeziumRows reads one debezium-json event: its before and after rows
// as csv lines, nil when absent or null.
func debeziumRows(line []byte) (before, after *string, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "before", "after":
			row, err := debeziumRow(dec)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", key, err)
			}
			if key == "before" {
				before = row
			} else {
				after = row
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, err
			}
		}
	}
	return before, after, nil
}

// debeziumRow reads a row object (or null) in its fields' order.
func debeziumRow(dec *json.Decoder) (*string, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want an object or null, got %v", tok)
	}
	var vals []string
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the field's name
			return nil, err
		}
		v, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case nil:
			vals = append(vals, "")
		case string:
			vals = append(vals, v)
		case json.Number:
			vals = append(vals, v.String())
		case bool:
			vals = append(vals, fmt.Sprint(v))
		default:
			return nil, fmt.Errorf("a nested value (%v): not a matrix column", v)
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, err
	}
	s := strings.Join(vals, ",")
	return &s, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return fmt.Errorf("empty event")
	}
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

const (
	// flinkChangelogFS is the check run's sink: every change kind, in
	// part files, committed at the end of the input. No checkpoints: a
	// join's state passes the memory-backed checkpoint's 5 MiB limit,
	// and a failed checkpoint commits nothing.
	flinkChangelogFS   = "'connector' = 'filesystem', 'path' = '$OUT', 'format' = 'debezium-json'"
	flinkCheckSettings = ""
)

// etldStream is the etld binary bin's streaming run of a shape into a
// blackhole (a GROUP BY with mini-batch), and its check: the same
// pipeline writing its changelog to a csv file in retract mode.
func etldStream(e *env, bin, name string, sh matrixShape) engine {
	extra := []string{"execution: streaming"}
	if sh.agg {
		extra = append(extra, "mini_batch_aggregate: true")
	}
	eng := etldBinEngine(e, bin, name, "", func(string) string {
		return matrixPipeline(e, sh, "blackhole", extra)
	})
	check := etldBinEngine(e, bin, name, "out.csv", func(out string) string {
		// The sink is the file's last block: mode is one of its keys.
		return matrixPipeline(e, sh, out, extra) + "    mode: retract\n"
	})
	check.retract = true
	eng.check = &check
	return eng
}

// matrixStart is Flink's start in the matrix (the JVM, the mini-cluster,
// the NOW() jobs): a GROUP BY's script over no rows, so that the
// streaming table can give Flink's CPU seconds net of it, as the
// Nexmark table does with flink-start.
func matrixStart(e *env) workload {
	empty := filepath.Join(e.cache, "work", "M-start", "keys-empty.csv")
	eng := flinkTablesEngine(e, "flink-stream", flinkMiniBatch, flinkTable("keys", keysSchema, empty, "csv", ""),
		"ik BIGINT, "+aggCols, "'connector' = 'blackhole'", "INSERT INTO sink_out "+keysGroupBy("ik"), false)
	run := eng.run
	eng.run = func(dir string) (measure, error) {
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			return measure{}, err
		}
		return run(dir)
	}
	return workload{name: "M-start", desc: "Flink's start: a GROUP BY's script over no rows", baseline: "flink-stream", engines: []engine{eng}}
}

// printMatrixStream prints the matrix's streaming side as a markdown
// table: per shape etld-stream's CPU seconds (and etld-stream-2w's,
// etld-stream-base's when run), Flink's whole and net of its start
// (M-start's), the CPU ratios Flink / etld, and whether the two final
// tables agree with each other (and with the batch side's when it ran).
func printMatrixStream(out io.Writer, ws []workloadResult) {
	var startCPU, startTime float64
	var rows []workloadResult
	for _, w := range ws {
		if w.Name == "M-start" {
			if f := w.engine("flink-stream"); f != nil {
				startCPU, startTime = f.CPU, f.Time
			}
			continue
		}
		if strings.HasPrefix(w.Name, "M-") && (w.engine("etld-stream") != nil || w.engine("flink-stream") != nil) {
			rows = append(rows, w)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(out, "\nmatrix, streaming: CPU seconds (user+sys) and Flink / etld ratios; Flink's start (M-start, a GROUP BY over no rows): %.2f CPU s, %.2f s of job time\n", startCPU, startTime)
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| shape\t| etld-stream CPU s\t| Flink CPU s\t| Flink net of start\t| ratio\t| ratio net\t| etld-stream-2w CPU s\t| etld RSS MiB\t| Flink RSS MiB\t| output\t| vs base\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|")
	num := func(r *engineResult, f func(*engineResult) float64, format string) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprintf(format, f(r))
	}
	cpu := func(r *engineResult) float64 { return r.CPU }
	rss := func(r *engineResult) float64 { return r.RSSMiB }
	for _, w := range rows {
		es, fl := w.engine("etld-stream"), w.engine("flink-stream")
		ratio, ratioNet, net := "-", "-", "-"
		if es != nil && fl != nil {
			n := fl.CPU
			if n > startCPU {
				n -= startCPU
			}
			net = fmt.Sprintf("%.2f", n)
			ratio = fmt.Sprintf("%.1fx", fl.CPU/es.CPU)
			ratioNet = fmt.Sprintf("%.1fx", n/es.CPU)
		}
		base := "-"
		if b := w.engine("etld-stream-base"); b != nil && es != nil {
			base = fmt.Sprintf("%.2fx", b.CPU/es.CPU)
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t|\n", w.Name,
			num(es, cpu, "%.2f"), num(fl, cpu, "%.2f"), net, ratio, ratioNet,
			num(w.engine("etld-stream-2w"), cpu, "%.2f"), num(es, rss, "%.0f"), num(fl, rss, "%.0f"),
			streamCheck(w), base)
	}
	tw.Flush()
}

// streamCheck says whether the streaming engines' final tables agree: the
// Check of etld-stream and flink-stream against the workload's first
// checksum (etld-batch's when it ran), or their errors.
func streamCheck(w workloadResult) string {
	var parts []string
	for _, r := range w.Engines {
		if r.Engine != "etld-stream" && r.Engine != "flink-stream" {
			continue
		}
		switch {
		case r.Error != "":
			parts = append(parts, r.Engine+" error")
		case r.Check != "":
			parts = append(parts, r.Engine+" "+r.Check)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
