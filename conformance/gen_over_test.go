package conformance

// Cases of OVER windows (LAG/LEAD over peers, processing-time order,
// ranking functions as OVER aggregates), COLLECT and its MULTISET, and
// LEFT JOIN UNNEST ... ON TRUE.

func init() { areaCases = append(areaCases, overCases) }

const (
	// tableOT has ties in the order key, within and across partitions.
	tableOT = "table: ot (k STRING, v INT, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND"
	dataOT  = `{"k":"a","v":1,"ts":"2024-01-01 10:00:01"}
{"k":"a","v":2,"ts":"2024-01-01 10:00:02"}
{"k":"b","v":10,"ts":"2024-01-01 10:00:02"}
{"k":"a","v":3,"ts":"2024-01-01 10:00:02"}
{"k":"b","v":20,"ts":"2024-01-01 10:00:02"}
{"k":"a","v":4,"ts":"2024-01-01 10:00:03"}
{"k":"a","v":5,"ts":"2024-01-01 10:00:05"}
{"k":"b","v":30,"ts":"2024-01-01 10:00:06"}
{"k":"a","v":6,"ts":"2024-01-01 10:00:07"}
`
	// tableOP orders by processing time: results of ROWS frames and
	// RANGE UNBOUNDED depend on the arrival order only. (A bounded RANGE
	// frame's rows wait for a processing-time timer, which Flink does not
	// fire once a bounded input ends: its result depends on timing.)
	tableOP = "table: op (k STRING, v INT, pt AS PROCTIME()) json"
	dataOP  = `{"k":"a","v":1}
{"k":"b","v":10}
{"k":"a","v":2}
{"k":"a","v":3}
{"k":"b","v":20}
{"k":"a","v":4}
{"k":"b","v":null}
`
	// tableNT has no time attribute: an OVER window ordered by s or v
	// is one of Flink's non-time OVER aggregates. Rows arrive out of the
	// order of s (one in the middle, ties, a NULL).
	tableNT = "table: nt (k STRING, v INT, s INT) json"
	dataNT  = `{"k":"a","v":1,"s":5}
{"k":"a","v":2,"s":3}
{"k":"b","v":10,"s":1}
{"k":"a","v":3,"s":5}
{"k":"a","v":4,"s":4}
{"k":"b","v":20,"s":null}
{"k":"a","v":5,"s":1}
{"k":"b","v":30,"s":1}
`
	// tableUA holds arrays: full, empty, NULL, with a NULL element.
	tableUA = "table: ua (id INT, arr ARRAY<STRING>) json"
	dataUA  = `{"id":1,"arr":["x","y"]}
{"id":2,"arr":[]}
{"id":3,"arr":null}
{"id":4,"arr":["z",null]}
`
)

func overCases() []genCase {
	type q struct {
		name   string
		modes  []string
		tables []string
		query  string
		sink   string
	}
	both := []string{"streaming", "batch"}
	stream := []string{"streaming"}
	tables := map[string][2]string{
		"ot": {tableOT, dataOT}, "op": {tableOP, dataOP}, "ua": {tableUA, dataUA},
		"o": {tableO, dataO}, "e": {tableE, dataE}, "nt": {tableNT, dataNT},
	}
	qs := []q{
		// LAG and LEAD over the default frame, with ties in the order key.
		{"lag-ties", both, []string{"ot"}, "SELECT k, v, LAG(v) OVER (PARTITION BY k ORDER BY ts), LAG(v, 2, -1) OVER (PARTITION BY k ORDER BY ts) FROM ot", ""},
		{"lag-ties-sum", both, []string{"ot"}, "SELECT k, v, SUM(v) OVER w, LAG(v) OVER w FROM ot WINDOW w AS (PARTITION BY k ORDER BY ts)", ""},
		{"lag-ties-global", both, []string{"ot"}, "SELECT k, v, LAG(k) OVER (ORDER BY ts) FROM ot", ""},
		{"lead-ties", both, []string{"ot"}, "SELECT k, v, LEAD(v) OVER (PARTITION BY k ORDER BY ts), LEAD(v, 2, -1) OVER (PARTITION BY k ORDER BY ts) FROM ot", ""},
		{"lead-beside-rows-frame", []string{"batch"}, []string{"ot"}, "SELECT k, v, LEAD(v) OVER (PARTITION BY k ORDER BY ts), SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM ot", ""},
		{"lag-rows-frame", both, []string{"ot"}, "SELECT k, v, LAG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM ot", ""},
		// Ranking functions as OVER aggregates (no Top-N filter).
		{"row-number", both, []string{"ot"}, "SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) FROM ot WHERE v <> 3 AND v <> 20", ""},
		{"rank", both, []string{"ot"}, "SELECT k, v, RANK() OVER (PARTITION BY k ORDER BY ts), DENSE_RANK() OVER (PARTITION BY k ORDER BY ts) FROM ot", ""},
		{"row-number-sum", both, []string{"ot"}, "SELECT k, v, ROW_NUMBER() OVER w, COUNT(*) OVER w FROM ot WHERE v <> 3 AND v <> 20 WINDOW w AS (PARTITION BY k ORDER BY ts)", ""},
		// Processing-time order: rows in arrival order.
		{"proc-rows-unbounded", stream, []string{"op"}, "SELECT k, v, COUNT(*) OVER w, SUM(v) OVER w FROM op WINDOW w AS (PARTITION BY k ORDER BY pt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)", ""},
		{"proc-rows-bounded", stream, []string{"op"}, "SELECT k, v, SUM(v) OVER w, MAX(v) OVER w, COUNT(v) OVER w FROM op WINDOW w AS (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)", ""},
		{"proc-range-unbounded", stream, []string{"op"}, "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY pt), LAG(v) OVER (PARTITION BY k ORDER BY pt) FROM op", ""},
		{"proc-row-number", stream, []string{"op"}, "SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) FROM op", ""},
		{"proc-global", stream, []string{"op"}, "SELECT k, v, COUNT(*) OVER (ORDER BY pt ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM op", ""},
		// Ordered by a column that is not a time attribute.
		{"nt-range", both, []string{"nt"}, "SELECT k, s, v, SUM(v) OVER w, COUNT(*) OVER w, MAX(v) OVER w FROM nt WINDOW w AS (PARTITION BY k ORDER BY s)", ""},
		{"nt-rows", both, []string{"nt"}, "SELECT k, s, v, SUM(v) OVER w, COUNT(*) OVER w, MIN(v) OVER w FROM nt WINDOW w AS (PARTITION BY k ORDER BY s ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)", ""},
		{"nt-global", both, []string{"nt"}, "SELECT k, v, COUNT(*) OVER (ORDER BY v), AVG(v) OVER (ORDER BY v) FROM nt", ""},
		{"nt-string", both, []string{"nt"}, "SELECT k, v, SUM(v) OVER (ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM nt", ""},
		{"nt-where", stream, []string{"nt"}, "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY v) + 1 AS n FROM nt WHERE s IS NOT NULL", ""},
		{"nt-updating", stream, []string{"nt"}, "SELECT k, n, SUM(n) OVER (ORDER BY n) FROM (SELECT k, COUNT(*) AS n FROM nt GROUP BY k)", ""},
		{"nt-updating-rows", stream, []string{"nt"}, "SELECT s, n, COUNT(*) OVER (ORDER BY n ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM (SELECT s, COUNT(*) AS n FROM nt GROUP BY s)", ""},
		{"nt-bounded-rows", stream, []string{"nt"}, "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY s ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM nt", ""},
		{"nt-bounded-range", stream, []string{"nt"}, "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY s RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM nt", ""},
		{"nt-desc", stream, []string{"nt"}, "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY s DESC) FROM nt", ""},
		{"nt-two-keys", stream, []string{"nt"}, "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY s, v) FROM nt", ""},
		{"nt-row-number", both, []string{"nt"}, "SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s) FROM nt", ""},
		{"nt-lag", stream, []string{"nt"}, "SELECT k, v, LAG(v) OVER (PARTITION BY k ORDER BY s) FROM nt", ""},
		{"nt-rank", both, []string{"nt"}, "SELECT k, v, RANK() OVER (PARTITION BY k ORDER BY s) FROM nt", ""},
		{"nt-dense-rank", stream, []string{"nt"}, "SELECT k, v, DENSE_RANK() OVER (PARTITION BY k ORDER BY s) FROM nt", ""},
		{"nt-row-number-sum", both, []string{"nt"}, "SELECT k, v, ROW_NUMBER() OVER w, SUM(v) OVER w FROM nt WINDOW w AS (PARTITION BY k ORDER BY s)", ""},
		// COLLECT and MULTISET.
		{"collect-group", both, []string{"o"}, "SELECT category, COLLECT(qty) FROM o GROUP BY category", ""},
		{"collect-filter", stream, []string{"o"}, "SELECT category, COLLECT(user_id) FILTER (WHERE price > 10), COLLECT(DISTINCT user_id) FILTER (WHERE qty > 1) FROM o GROUP BY category", ""},
		{"collect-strings", both, []string{"o"}, "SELECT category, COLLECT(product) FROM o GROUP BY category", ""},
		{"collect-retract", stream, []string{"o"}, "SELECT n, COLLECT(uid) FROM (SELECT user_id AS uid, COUNT(*) AS n FROM o GROUP BY user_id) GROUP BY n", ""},
		{"collect-tumble", both, []string{"e"}, "SELECT window_start, k, COLLECT(v) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) GROUP BY window_start, window_end, k", ""},
		{"collect-over", both, []string{"ot"}, "SELECT k, v, COLLECT(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM ot", ""},
		{"collect-global", both, []string{"o"}, "SELECT COLLECT(user_id) FROM o", ""},
		{"collect-distinct", stream, []string{"o"}, "SELECT COLLECT(user_id), COLLECT(DISTINCT user_id) FROM o", ""},
		{"collect-json", []string{"batch"}, []string{"o"}, "SELECT product, COLLECT(category) AS categories FROM o GROUP BY product", "sink: json (product STRING, categories MULTISET<STRING>)"},
		// UNNEST: LEFT JOIN keeps rows without elements.
		{"unnest-left", both, []string{"ua"}, "SELECT id, x FROM ua LEFT JOIN UNNEST(arr) AS u(x) ON TRUE", ""},
		{"unnest-left-ordinality", both, []string{"ua"}, "SELECT id, x, n FROM ua LEFT JOIN UNNEST(arr) WITH ORDINALITY AS u(x, n) ON TRUE", ""},
		{"unnest-cross-ordinality", both, []string{"ua"}, "SELECT id, x, n FROM ua CROSS JOIN UNNEST(arr) WITH ORDINALITY AS u(x, n)", ""},
		{"unnest-left-updating", stream, []string{"o"}, "SELECT category, n, x FROM (SELECT category, COUNT(*) AS n FROM o GROUP BY category) LEFT JOIN UNNEST(ARRAY[category, 'all']) AS u(x) ON TRUE", ""},
	}
	var out []genCase
	for _, c := range qs {
		for _, mode := range c.modes {
			name := "over-" + c.name
			if len(c.modes) > 1 {
				name += "-" + mode
			}
			lines, data := readTables(c.tables, tables)
			h := append([]string{"mode: " + mode}, lines...)
			if c.sink != "" {
				h = append(h, c.sink)
			}
			out = append(out, genCase{name: name, header: h, query: c.query, data: data})
		}
	}
	return out
}
