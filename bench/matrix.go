package main

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
)

// The benchmark matrix (-only M): each shape of query run by etld in
// batch mode against DuckDB and by etld in streaming mode against Flink
// 2.3's streaming mode, interleaved, beside the physical limit of its
// input (bench/baseline/parselimit: only parsing, on every core). Every
// engine reads the same generated files (genmatrix.go). Batch runs write
// csv, checked against each other; streaming runs write to a blackhole,
// a GROUP BY with mini-batch on both (etld's mini_batch_aggregate,
// Flink's mini-batch of 1 s or 2^20 rows), and are checked by one more
// untimed run each that writes the changelog (streamcheck.go).

// matrixSource is one input of a shape: its table name in the SQL, its
// file (in the data dir), format and schema, and the watermark of ts (an
// expression) if the query needs event time.
type matrixSource struct {
	name, file, format string
	schema             []string
	watermark          string
}

// matrixShape is one row of the matrix.
type matrixShape struct {
	name, desc string
	srcs       []matrixSource
	// sql is etld's and Flink's query; duckSQL DuckDB's, reading $NAME
	// for each source NAME (upper case), or sql itself when empty.
	sql, duckSQL string
	sinkCols     string // the query's columns and types, for Flink's sink
	agg          bool   // a GROUP BY: mini-batch when streaming
	// keyed: a keyed operator other than a GROUP BY (a join), run on
	// two workers beside the default, as a GROUP BY is.
	keyed bool
	// noBatch, when set, is why etld's batch runs are not run.
	noBatch string
}

const aggCols = "n BIGINT, s BIGINT, m BIGINT"

func keysSource(scale, format string) matrixSource {
	return matrixSource{name: "keys", file: "keys-" + scale + "." + format, format: format, schema: keysSchema}
}

func keysGroupBy(key string) string {
	return "SELECT " + key + ", COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM keys GROUP BY " + key
}

// matrixShapes lists the matrix's rows.
func matrixShapes() []matrixShape {
	var shapes []matrixShape
	for _, sc := range keyScales {
		src := []matrixSource{keysSource(sc.name, "csv")}
		shapes = append(shapes,
			matrixShape{name: "M-int" + sc.name, desc: "GROUP BY a BIGINT key, " + sc.name + " possible keys", srcs: src,
				sql: keysGroupBy("ik"), sinkCols: "ik BIGINT, " + aggCols, agg: true},
			matrixShape{name: "M-str" + sc.name, desc: "GROUP BY a STRING key (sensor_<n>), " + sc.name + " possible keys", srcs: src,
				sql: keysGroupBy("sk"), sinkCols: "sk STRING, " + aggCols, agg: true},
			matrixShape{name: "M-two" + sc.name, desc: "GROUP BY a STRING and a BIGINT key, " + sc.name + " possible keys", srcs: src,
				sql: keysGroupBy("ta, tb"), sinkCols: "ta STRING, tb BIGINT, " + aggCols, agg: true})
	}
	events := matrixSource{name: "events", file: "events.csv", format: "csv", schema: eventsSchema}
	customers := matrixSource{name: "customers", file: "customers.csv", format: "csv", schema: []string{"id BIGINT", "cname STRING", "segment STRING"}}
	eventsTime := events
	eventsTime.watermark = watermark
	wideCols := wideSchema()
	return append(shapes,
		matrixShape{name: "M-zipf", desc: "GROUP BY a Zipf-skewed BIGINT key (s = 1.1, 100k possible keys)",
			srcs: []matrixSource{keysSource("100k", "csv")}, sql: keysGroupBy("z"), sinkCols: "z BIGINT, " + aggCols, agg: true},
		matrixShape{name: "M-json", desc: "GROUP BY a STRING key (100k) over JSON lines",
			srcs: []matrixSource{keysSource("100k", "json")}, sql: keysGroupBy("sk"), sinkCols: "sk STRING, " + aggCols, agg: true},
		matrixShape{name: "M-wide30", desc: "30-column rows (20 BIGINT, 10 STRING): SELECT * WHERE c1 < 5000",
			srcs: []matrixSource{{name: "wide", file: "wide.csv", format: "csv", schema: wideCols}},
			sql:  "SELECT * FROM wide WHERE c1 < 5000", sinkCols: strings.Join(wideCols, ", ")},
		matrixShape{name: "M-join", desc: "events JOIN customers ON cust = id (rows x 1M customers)",
			srcs: []matrixSource{events, customers},
			sql:  "SELECT e.id, e.amount, c.cname FROM events AS e JOIN customers AS c ON e.cust = c.id", sinkCols: "id BIGINT, amount BIGINT, cname STRING", keyed: true},
		matrixShape{name: "M-hop", desc: "HOP(ts, 5 s slide, 10 s size) COUNT/SUM, watermark ts - 1 s",
			srcs: []matrixSource{eventsTime},
			sql:  "SELECT CAST(window_start AS STRING) AS ws, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
			// DuckDB has no HOP: each row in the windows starting at its
			// 5 s bucket and the one before.
			duckSQL:  "SELECT strftime(ws, '%Y-%m-%d %H:%M:%S.%g') AS ws, COUNT(*) AS n, SUM(amount) AS s FROM (SELECT amount, time_bucket(INTERVAL 5 SECOND, ts) - to_seconds(5 * k) AS ws FROM $EVENTS, range(2) AS r(k)) GROUP BY ws",
			sinkCols: "ws STRING, n BIGINT, s BIGINT"},
		matrixShape{name: "M-hopkey", desc: "HOP(ts, 5 s slide, 10 s size) COUNT/SUM per name (1k keys), watermark ts - 1 s",
			srcs: []matrixSource{eventsTime},
			sql:  "SELECT name, CAST(window_start AS STRING) AS ws, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY name, window_start, window_end",
			// As M-hop's, per name.
			duckSQL:  "SELECT name, strftime(ws, '%Y-%m-%d %H:%M:%S.%g') AS ws, COUNT(*) AS n, SUM(amount) AS s FROM (SELECT name, amount, time_bucket(INTERVAL 5 SECOND, ts) - to_seconds(5 * k) AS ws FROM $EVENTS, range(2) AS r(k)) GROUP BY name, ws",
			sinkCols: "name STRING, ws STRING, n BIGINT, s BIGINT", agg: true},
		matrixShape{name: "M-ijoin", desc: "interval self-join per k1 (100k keys): a.ts BETWEEN b.ts - 2 min AND b.ts, watermark ts - 1 s",
			srcs: []matrixSource{eventsTime},
			// A key's rows come about every 100 s: each row meets itself
			// and about one other. DuckDB joins every pair of a key's rows
			// and filters them (100 a key at 10M rows).
			sql:      "SELECT a.id, b.id AS bid FROM events AS a JOIN events AS b ON a.k1 = b.k1 AND a.ts BETWEEN b.ts - INTERVAL '2' MINUTE AND b.ts",
			sinkCols: "id BIGINT, bid BIGINT", keyed: true},
		matrixShape{name: "M-over", desc: "OVER (PARTITION BY name ORDER BY ts ROWS 9 PRECEDING) SUM/MAX per name (1k keys), watermark ts - 1 s",
			srcs: []matrixSource{eventsTime},
			sql:  "SELECT name, id, SUM(amount) OVER w AS s, MAX(amount) OVER w AS m FROM events WINDOW w AS (PARTITION BY name ORDER BY ts ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)",
			// DuckDB orders a partition's rows of one time by id, as they arrive.
			duckSQL:  "SELECT name, id, SUM(amount) OVER w AS s, MAX(amount) OVER w AS m FROM $EVENTS WINDOW w AS (PARTITION BY name ORDER BY ts, id ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)",
			sinkCols: "name STRING, id BIGINT, s BIGINT, m BIGINT", keyed: true},
		matrixShape{name: "M-session", desc: "SESSION(ts, PARTITION BY k1, 5 s gap) COUNT/SUM per k1 (100k keys), watermark ts - 1 s",
			srcs: []matrixSource{eventsTime},
			sql:  "SELECT k1, CAST(window_start AS STRING) AS ws, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(SESSION(TABLE events PARTITION BY k1, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k1, window_start, window_end",
			// DuckDB has no SESSION: a key's row starts a session when the
			// row before it is more than 5 s older (windows [ts, ts + 5 s)
			// that touch merge).
			duckSQL:  "SELECT k1, strftime(min(ts), '%Y-%m-%d %H:%M:%S.%g') AS ws, COUNT(*) AS n, SUM(amount) AS s FROM (SELECT k1, ts, amount, SUM(CASE WHEN prev IS NULL OR ts > prev + INTERVAL 5 SECOND THEN 1 ELSE 0 END) OVER (PARTITION BY k1 ORDER BY ts ROWS UNBOUNDED PRECEDING) AS sid FROM (SELECT k1, ts, amount, lag(ts) OVER (PARTITION BY k1 ORDER BY ts) AS prev FROM $EVENTS)) GROUP BY k1, sid",
			sinkCols: "k1 BIGINT, ws STRING, n BIGINT, s BIGINT", keyed: true},
		matrixShape{name: "M-distinct", desc: "COUNT(DISTINCT name) GROUP BY k1 (100k keys, about 100 rows and names a key at 10M rows)",
			srcs: []matrixSource{events}, sql: "SELECT k1, COUNT(DISTINCT name) AS d FROM events GROUP BY k1", sinkCols: "k1 BIGINT, d BIGINT", agg: true},
	)
}

// matrixWorkloads are the matrix's shapes as workloads: parse-limit,
// etld-batch, duckdb, etld-stream, flink-stream, DuckDB the baseline;
// a GROUP BY or another keyed shape also on two workers (etld-batch-2w,
// etld-stream-2w), a GROUP BY also on one core (etld-batch-1cpu).
func matrixWorkloads(e *env) []workload {
	ws := []workload{matrixStart(e)}
	for _, sh := range matrixShapes() {
		engines := []engine{
			limitEngine(e, sh.srcs),
			etldEngine(e, "etld-batch", "out.csv", func(out string) string {
				return matrixPipeline(e, sh, out, []string{"execution: batch"})
			}),
		}
		if e.baseEtld != "" {
			engines = append(engines, etldBinEngine(e, e.baseEtld, "etld-base", "out-base.csv", func(out string) string {
				return matrixPipeline(e, sh, out, []string{"execution: batch"})
			}))
		}
		if sh.agg || sh.keyed {
			// The GROUP BY on two workers beside the default (one):
			// what the keyed workers gain, in the same run.
			engines = append(engines, etldEngine(e, "etld-batch-2w", "out-2w.csv", func(out string) string {
				return matrixPipeline(e, sh, out, []string{"execution: batch", "parallelism: 2"})
			}))
		}
		if sh.agg {
			// The same process held to one core (GOMAXPROCS=1): what
			// every core gives a GROUP BY, decode and aggregate together,
			// which two workers of the aggregate alone cannot show when
			// the decoders already keep both cores busy.
			engines = append(engines, etldEnvEngine(e, e.etld, "etld-batch-1cpu", "out-1cpu.csv", []string{"GOMAXPROCS=1"}, func(out string) string {
				return matrixPipeline(e, sh, out, []string{"execution: batch"})
			}))
		}
		if sh.noBatch != "" {
			for i := 1; i < len(engines); i++ {
				engines[i].notRun = sh.noBatch
			}
		}
		ws = append(ws, workload{name: sh.name, desc: sh.desc, baseline: "duckdb", engines: append(engines,
			matrixDuck(e, sh),
			etldStream(e, e.etld, "etld-stream", sh),
			matrixFlink(e, sh),
		)})
		if e.baseEtld != "" {
			w := &ws[len(ws)-1]
			w.engines = append(w.engines, etldStream(e, e.baseEtld, "etld-stream-base", sh))
		}
		if sh.agg || sh.keyed {
			extra := []string{"execution: streaming", "parallelism: 2"}
			if sh.agg {
				extra = append(extra, "mini_batch_aggregate: true")
			}
			w := &ws[len(ws)-1]
			w.engines = append(w.engines, etldEngine(e, "etld-stream-2w", "", func(string) string {
				return matrixPipeline(e, sh, "blackhole", extra)
			}))
		}
	}
	return ws
}

// matrixPipeline is etld's pipeline file of a shape.
func matrixPipeline(e *env, sh matrixShape, sink string, extra []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: %s\n", strings.ToLower(sh.name))
	for _, x := range extra {
		b.WriteString(x + "\n")
	}
	b.WriteString("sources:\n")
	for _, s := range sh.srcs {
		fmt.Fprintf(&b, "  - name: %s\n    type: file\n    path: %s\n    format: %s\n    schema:\n", s.name, filepath.Join(e.data, s.file), s.format)
		for _, c := range s.schema {
			fmt.Fprintf(&b, "      - %s\n", c)
		}
		if s.watermark != "" {
			fmt.Fprintf(&b, "    watermark: %s\n", s.watermark)
		}
	}
	fmt.Fprintf(&b, "transforms:\n  - name: q\n    sql: %q\n", sh.sql)
	if sink == "blackhole" {
		b.WriteString("sinks:\n  - name: out\n    from: q\n    type: blackhole\n")
	} else {
		fmt.Fprintf(&b, "sinks:\n  - name: out\n    from: q\n    type: file\n    path: %s\n", sink)
	}
	return b.String()
}

// matrixDuck is DuckDB's run of a shape: COPY (query) TO the output,
// the query reading $NAME for each source NAME.
func matrixDuck(e *env, sh matrixShape) engine {
	sql := sh.duckSQL
	tables := map[string]string{}
	for _, s := range sh.srcs {
		ref := "$" + strings.ToUpper(s.name)
		tables[ref] = duckRead(filepath.Join(e.data, s.file), s.format, s.schema)
	}
	if sql == "" {
		sql = sh.sql
		for _, s := range sh.srcs {
			sql = tableRef(s.name).ReplaceAllStringFunc(sql, func(m string) string {
				verb, _, _ := strings.Cut(m, " ")
				return verb + " $" + strings.ToUpper(s.name)
			})
		}
	}
	return duckEngineTables(e, "COPY ("+sql+") TO '$OUT' (HEADER false)", tables)
}

// tableRef matches a FROM or JOIN of the table name.
func tableRef(name string) *regexp.Regexp {
	return regexp.MustCompile(`\b(FROM|JOIN) ` + name + `\b`)
}

// matrixFlink is Flink's streaming run of a shape into a blackhole.
func matrixFlink(e *env, sh matrixShape) engine {
	var tables strings.Builder
	for _, s := range sh.srcs {
		wm := ""
		if s.watermark != "" {
			wm = "ts AS " + s.watermark
		}
		tables.WriteString(flinkTable(s.name, s.schema, filepath.Join(e.data, s.file), s.format, wm))
	}
	settings := ""
	if sh.agg {
		settings = flinkMiniBatch
	}
	eng := flinkTablesEngine(e, "flink-stream", settings, tables.String(), sh.sinkCols, "'connector' = 'blackhole'", "INSERT INTO sink_out "+sh.sql, false)
	check := flinkTablesEngine(e, "flink-stream", settings+flinkCheckSettings, tables.String(), sh.sinkCols, flinkChangelogFS, "INSERT INTO sink_out "+sh.sql, true)
	check.debezium = true
	eng.check = &check
	return eng
}

// limitEngine runs bench/baseline/parselimit over a shape's files.
func limitEngine(e *env, srcs []matrixSource) engine {
	argv := []string{e.base["parse-limit"], srcs[0].format}
	for _, s := range srcs {
		argv = append(argv, filepath.Join(e.data, s.file))
	}
	return engine{name: "parse-limit", run: func(dir string) (measure, error) {
		m, _, err := runChild(argv, nil, dir, filepath.Join(dir, "stderr"), e.timeout)
		return m, err
	}}
}

// printMatrix prints one line per shape of the matrix's workloads: each
// engine's rows/s, CPU seconds and peak RSS, and the two ratios (time,
// and CPU seconds in brackets): etld batch against DuckDB, etld
// streaming against Flink.
func printMatrix(out io.Writer, ws []workloadResult) {
	var rows []workloadResult
	for _, w := range ws {
		if strings.HasPrefix(w.Name, "M-") && w.Name != "M-start" {
			rows = append(rows, w)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(out, "\nmatrix: rows/s, CPU s, peak RSS MiB of each engine; ratios are the other's time / etld's (CPU seconds' in brackets)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tparse-limit\tetld-batch\tduckdb\tbatch vs DuckDB\tetld-stream\tflink-stream\tstream vs Flink\tbatch output\t")
	cell := func(r *engineResult) string {
		if r == nil {
			return "-"
		}
		rate := fmt.Sprintf("%.2fM", r.RowsPerS/1e6)
		if r.RowsPerS < 1e6 {
			rate = fmt.Sprintf("%.0fk", r.RowsPerS/1e3)
		}
		return fmt.Sprintf("%s %.2f %.0f", rate, r.CPU, r.RSSMiB)
	}
	ratio := func(a, b *engineResult) string {
		if a == nil || b == nil {
			return "-"
		}
		return fmt.Sprintf("%.2fx (%.2fx)", b.Time/a.Time, b.CPU/a.CPU)
	}
	for _, w := range rows {
		eb, dk := w.engine("etld-batch"), w.engine("duckdb")
		es, fl := w.engine("etld-stream"), w.engine("flink-stream")
		check := "-"
		for _, r := range w.Engines {
			if r.Engine == "duckdb" && r.Check != "" {
				check = r.Check
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", w.Name, cell(w.engine("parse-limit")), cell(eb), cell(dk), ratio(eb, dk), cell(es), cell(fl), ratio(es, fl), check)
	}
	tw.Flush()
	printMatrixStream(out, ws)
	for _, w := range rows {
		if base := w.engine("etld-base"); base != nil {
			// -base-etld: this commit's batch run against another's.
			fmt.Fprintf(out, "%s: etld-batch vs etld-base %s\n", w.Name, ratio(w.engine("etld-batch"), base))
		}
	}
}
