package main

import "strings"

// workload is one whole-process benchmark: its engines run interleaved,
// and ratios are against baseline (an engine's name).
type workload struct {
	name, desc string
	baseline   string
	engines    []engine
	// after, if set, adds the workload's own numbers (W4's per-key
	// figures) once every run is done.
	after func(res []engineResult) map[string]float64
}

const (
	w1SQL      = "SELECT id, k1, amount, name FROM events WHERE amount < 5000"
	w2SQL      = "SELECT k1, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY k1"
	w2PassSQL  = "SELECT k1, amount FROM events"
	w4SQL      = "SELECT k2, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY k2"
	w4SmallSQL = "SELECT MOD(k2, 1000) AS k, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY MOD(k2, 1000)"
	w5SQL      = "SELECT CAST(window_start AS STRING) AS ws, CAST(window_end AS STRING) AS we, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"
	watermark  = "ts - INTERVAL '1' SECOND"
	flinkBatch = "SET 'execution.runtime-mode' = 'batch';"
	// Flink's mini-batch, as etld's mini_batch_aggregate: hold up to
	// 2^20 changes or 1 s.
	flinkMiniBatch = `SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1s';
SET 'table.exec.mini-batch.size' = '1048576';`
	flinkFS = "'connector' = 'filesystem', 'path' = '$OUT', 'format' = 'csv'"
)

func workloads(e *env) []workload {
	streaming := []string{"execution: streaming"}
	batch := []string{"execution: batch"}
	var w4runs []checkpointRun
	w4 := workload{
		name: "W4", desc: "streaming GROUP BY k2 (1M keys) COUNT/SUM/MAX -> blackhole, state dir; vs the same over MOD(k2, 1000)",
		baseline: "etld-1k-keys",
		engines: []engine{
			etldStateEngine(e, "etld-1M-keys", etldPipeline(e, "w4", w4SQL, "blackhole", []string{"execution: streaming", "checkpoint_interval: 1h"}, ""), &w4runs),
			etldStateEngine(e, "etld-1k-keys", etldPipeline(e, "w4small", w4SmallSQL, "blackhole", []string{"execution: streaming", "checkpoint_interval: 1h"}, ""), new([]checkpointRun)),
		},
	}
	w4.after = func(res []engineResult) map[string]float64 {
		var big, small float64
		for _, r := range res {
			switch r.Engine {
			case "etld-1M-keys":
				big = r.RSSMiB * (1 << 20)
			case "etld-1k-keys":
				small = r.RSSMiB * (1 << 20)
			}
		}
		keys := float64(e.meta.Keys2)
		var secs, size []float64
		for _, c := range w4runs {
			secs = append(secs, c.LastCheckpointS)
			size = append(size, float64(c.LastCheckpointSz))
		}
		return map[string]float64{
			"keys":                  keys,
			"rss_bytes_per_key":     (big - small) / keys,
			"checkpoint_bytes":      median(size),
			"checkpoint_bytes_key":  median(size) / keys,
			"checkpoint_s":          median(secs),
			"checkpoint_runs_count": float64(len(w4runs)),
		}
	}
	return append([]workload{{
		name: "W1", desc: "CSV filter+project (amount < 5000) csv -> csv",
		baseline: "go-encoding-csv",
		engines: []engine{
			etldEngine(e, "etld", "out.csv", func(out string) string {
				return etldPipeline(e, "w1", w1SQL, out, batch, "")
			}),
			baselineEngine(e, "go-encoding-csv"),
			baselineEngine(e, "go-byte-split"),
			duckEngine(e, "COPY (SELECT id, k1, amount, name FROM $EVENTS WHERE amount < 5000) TO '$OUT' (HEADER false)"),
			flinkEngine(e, "flink-batch", flinkBatch, "", "id BIGINT, k1 BIGINT, amount BIGINT, name STRING", flinkFS, "INSERT INTO sink_out "+w1SQL, true),
		},
	}, {
		name: "W2-batch", desc: "GROUP BY k1 (100k keys) COUNT/SUM/MAX, batch, csv -> csv",
		baseline: "go-map-loop",
		engines: []engine{
			etldEngine(e, "etld", "out.csv", func(out string) string {
				return etldPipeline(e, "w2b", w2SQL, out, batch, "")
			}),
			baselineEngine(e, "go-map-loop"),
			duckEngine(e, "COPY (SELECT k1, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM $EVENTS GROUP BY k1) TO '$OUT' (HEADER false)"),
			flinkEngine(e, "flink-batch", flinkBatch, "", "k1 BIGINT, n BIGINT, s BIGINT, m BIGINT", flinkFS, "INSERT INTO sink_out "+w2SQL, true),
		},
	}, {
		name: "W2-stream", desc: "GROUP BY k1 (100k keys) COUNT/SUM/MAX, streaming with mini-batch -> blackhole; baseline etld's pass-through",
		baseline: "etld-pass-through",
		engines: []engine{
			etldEngine(e, "etld", "", func(string) string {
				return etldPipeline(e, "w2s", w2SQL, "blackhole", append(streaming, "mini_batch_aggregate: true"), "")
			}),
			etldEngine(e, "etld-pass-through", "", func(string) string {
				return etldPipeline(e, "w2p", w2PassSQL, "blackhole", streaming, "")
			}),
			flinkEngine(e, "flink-mini-batch", flinkMiniBatch, "", "k1 BIGINT, n BIGINT, s BIGINT, m BIGINT", "'connector' = 'blackhole'", "INSERT INTO sink_out "+w2SQL, false),
		},
	}, w4, w3(e, "W3-str1k", "GROUP BY name (STRING, 1k keys)", "SELECT name, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY name", eventsSchema),
		w3(e, "W3-str100k", "GROUP BY k1 read as STRING (100k keys)", "SELECT k1, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY k1", eventsAsStrings("k1")),
		w3(e, "W3-str1M", "GROUP BY k2 read as STRING (1M keys)", "SELECT k2, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY k2", eventsAsStrings("k2")),
		w3(e, "W3-two10k", "GROUP BY name, MOD(k1, 10) (STRING and BIGINT, 10k keys)", "SELECT name, MOD(k1, 10) AS k, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY name, MOD(k1, 10)", eventsSchema),
		w3(e, "W3-two", "GROUP BY name, k1 (STRING and BIGINT, 100M possible keys: about one a row)", "SELECT name, k1, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM events GROUP BY name, k1", eventsSchema), {
			name: "W5", desc: "TUMBLE 10 s COUNT/SUM, streaming, watermark ts - 1 s, csv -> csv",
			baseline: "flink",
			engines: []engine{
				etldEngine(e, "etld", "out.csv", func(out string) string {
					return etldPipeline(e, "w5", w5SQL, out, streaming, watermark)
				}),
				// Flink's file sink commits at checkpoints, so the job
				// checkpoints every 10 s, as etld does by default.
				flinkEngine(e, "flink", "SET 'execution.checkpointing.interval' = '10s';", "ts AS "+watermark, "ws STRING, we STRING, n BIGINT, s BIGINT", flinkFS, "INSERT INTO sink_out "+w5SQL, true),
			},
		}}, matrixWorkloads(e)...)
}

// w3 is a batch GROUP BY of string or composite keys against DuckDB,
// both reading events.csv with schema.
func w3(e *env, name, desc, sql string, schema []string) workload {
	return workload{
		name: name, desc: desc + " COUNT/SUM/MAX, batch, csv -> csv",
		baseline: "duckdb",
		engines: []engine{
			etldEngine(e, "etld", "out.csv", func(out string) string {
				return etldPipelineSchema(e, strings.ToLower(name), sql, out, []string{"execution: batch"}, "", schema)
			}),
			duckEngineSchema(e, "COPY ("+strings.Replace(sql, "FROM events", "FROM $EVENTS", 1)+") TO '$OUT' (HEADER false)", schema),
		},
	}
}
