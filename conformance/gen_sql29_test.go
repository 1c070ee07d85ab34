package conformance

// Session 29's SQL gaps: JOIN ... USING and NATURAL JOIN (the output
// columns as Calcite derives them), ORDER BY without a row count, the
// window functions NTILE, PERCENT_RANK and CUME_DIST, and INTERVAL WEEK
// and QUARTER literals.

func init() { areaCases = append(areaCases, sql29Cases) }

const (
	// tableJU1 and tableJU2 share a and b; a has NULLs and duplicates on
	// both sides, and keys found on one side only.
	tableJU1 = "table: ju1 (a INT, b STRING, x INT) json"
	dataJU1  = `{"a":1,"b":"p","x":10}
{"a":2,"b":"q","x":20}
{"a":2,"b":"r","x":21}
{"a":null,"b":"p","x":30}
{"a":4,"b":null,"x":40}
`
	tableJU2 = "table: ju2 (y INT, b STRING, a INT) json"
	dataJU2  = `{"y":100,"b":"p","a":1}
{"y":200,"b":"q","a":2}
{"y":201,"b":"q","a":2}
{"y":300,"b":"p","a":null}
{"y":500,"b":"s","a":5}
`
	tableJU3 = "table: ju3 (a INT, z STRING) json"
	dataJU3  = `{"a":1,"z":"one"}
{"a":2,"z":"two"}
{"a":5,"z":"five"}
`
	// tableJE1 and tableJE2 have event time, for an interval join.
	tableJE1 = "table: je1 (k INT, v STRING, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND"
	dataJE1  = `{"k":1,"v":"a","ts":"2024-01-01 10:00:01"}
{"k":2,"v":"b","ts":"2024-01-01 10:00:02"}
{"k":1,"v":"c","ts":"2024-01-01 10:00:09"}
{"k":null,"v":"d","ts":"2024-01-01 10:00:10"}
`
	tableJE2 = "table: je2 (k INT, w STRING, ts2 TIMESTAMP(3)) json watermark ts2 AS ts2 - INTERVAL '1' SECOND"
	dataJE2  = `{"k":1,"w":"x","ts2":"2024-01-01 10:00:02"}
{"k":2,"w":"y","ts2":"2024-01-01 10:00:30"}
{"k":1,"w":"z","ts2":"2024-01-01 10:00:10"}
{"k":3,"w":"u","ts2":"2024-01-01 10:00:11"}
`
	// tableSO has every orderable kind of column, with NULLs and ties.
	tableSO = "table: so (id INT, i INT, b BIGINT, d DOUBLE, m DECIMAL(10, 2), s STRING, dt DATE, ts TIMESTAMP(3), bo BOOLEAN) json"
	dataSO  = `{"id":1,"i":5,"b":10,"d":2.5,"m":1.50,"s":"b","dt":"2024-01-15","ts":"2024-01-15 10:30:45.123","bo":true}
{"id":2,"i":null,"b":-7,"d":-0.5,"m":null,"s":"a","dt":"2000-02-29","ts":null,"bo":false}
{"id":3,"i":5,"b":null,"d":null,"m":-2.25,"s":null,"dt":null,"ts":"1970-01-01 00:00:00","bo":null}
{"id":4,"i":-3,"b":10,"d":2.5,"m":1.50,"s":"b","dt":"2024-01-15","ts":"2024-01-15 10:30:45.123","bo":true}
{"id":5,"i":0,"b":3,"d":-1.0E10,"m":0.00,"s":"ä","dt":"1969-12-31","ts":"1969-12-31 23:59:59.5","bo":false}
{"id":6,"i":null,"b":3,"d":1.0E300,"m":99.99,"s":"","dt":"2024-01-16","ts":"2024-01-16 00:00:00","bo":true}
`
)

func sql29Cases() []genCase {
	type q struct {
		name   string
		modes  []string
		tables []string
		query  string
	}
	both := []string{"streaming", "batch"}
	batch := []string{"batch"}
	stream := []string{"streaming"}
	tables := map[string][2]string{
		"ju1": {tableJU1, dataJU1}, "ju2": {tableJU2, dataJU2}, "ju3": {tableJU3, dataJU3},
		"je1": {tableJE1, dataJE1}, "je2": {tableJE2, dataJE2},
		"so": {tableSO, dataSO}, "o": {tableO, dataO}, "ot": {tableOT, dataOT}, "nt": {tableNT, dataNT},
		"t": {tableT, dataT},
	}
	ju := []string{"ju1", "ju2"}
	qs := []q{
		// USING: the column once, first; SELECT * order.
		{"using-inner", both, ju, "SELECT * FROM ju1 JOIN ju2 USING (a)"},
		{"using-left", both, ju, "SELECT * FROM ju1 LEFT JOIN ju2 USING (a)"},
		{"using-right", both, ju, "SELECT * FROM ju1 RIGHT JOIN ju2 USING (a)"},
		{"using-full", both, ju, "SELECT * FROM ju1 FULL OUTER JOIN ju2 USING (a)"},
		{"using-two", both, ju, "SELECT * FROM ju1 FULL JOIN ju2 USING (b, a)"},
		{"using-qualified", both, ju, "SELECT a, ju1.a, ju2.a, x, y FROM ju1 RIGHT JOIN ju2 USING (a)"},
		{"using-qualified-full", both, ju, "SELECT a, l.a AS la, r.a AS ra, l.b, r.b FROM ju1 l FULL JOIN ju2 r USING (a)"},
		{"using-alias-where", both, ju, "SELECT l.x, r.y, b FROM ju1 AS l LEFT JOIN ju2 AS r USING (b) WHERE b <> 'q' OR b IS NULL"},
		{"using-qualified-where", batch, ju, "SELECT l.x, r.y, b FROM ju1 AS l LEFT JOIN ju2 AS r USING (b) WHERE l.b <> 'q' OR r.b IS NULL"},
		{"using-star-qualified", both, ju, "SELECT ju2.*, ju1.x FROM ju1 JOIN ju2 USING (a)"},
		{"using-chain", both, []string{"ju1", "ju2", "ju3"}, "SELECT * FROM ju1 JOIN ju2 USING (a) LEFT JOIN ju3 USING (a)"},
		{"using-group", both, ju, "SELECT a, COUNT(*), SUM(y) FROM ju1 FULL JOIN ju2 USING (a) GROUP BY a"},
		{"using-unknown-column", batch, ju, "SELECT * FROM ju1 JOIN ju2 USING (x)"},
		{"using-interval", stream, []string{"je1", "je2"}, "SELECT k, v, w, ts FROM je1 JOIN je2 USING (k) WHERE je2.ts2 BETWEEN je1.ts AND je1.ts + INTERVAL '5' SECOND"},
		// NATURAL: the columns both sides have, in the left side's order.
		{"natural-inner", both, ju, "SELECT * FROM ju1 NATURAL JOIN ju2"},
		{"natural-left", both, ju, "SELECT * FROM ju1 NATURAL LEFT JOIN ju2"},
		{"natural-right", both, ju, "SELECT * FROM ju1 NATURAL RIGHT OUTER JOIN ju2"},
		{"natural-full", both, ju, "SELECT * FROM ju1 NATURAL FULL JOIN ju2"},
		{"natural-one", both, []string{"ju1", "ju3"}, "SELECT a, x, z FROM ju1 NATURAL FULL JOIN ju3"},
		// ORDER BY without a row count: Flink's batch sorts everything.
		{"order-multi", batch, []string{"o"}, "SELECT oid, category, price FROM o ORDER BY category DESC, price"},
		{"order-nulls", batch, []string{"so"}, "SELECT id, i, s FROM so ORDER BY i NULLS LAST, s DESC NULLS FIRST"},
		{"order-types", batch, []string{"so"}, "SELECT * FROM so ORDER BY bo, dt DESC, ts, m, d DESC, b, s, id"},
		{"order-offset", batch, []string{"so"}, "SELECT id, d FROM so ORDER BY d DESC OFFSET 2 ROWS"},
		{"order-hidden", batch, []string{"o"}, "SELECT product FROM o ORDER BY qty DESC, oid"},
		{"order-expr", batch, []string{"o"}, "SELECT oid, price * qty AS total FROM o ORDER BY total, 1 DESC"},
		{"order-agg", batch, []string{"o"}, "SELECT category, COUNT(*) AS n FROM o GROUP BY category ORDER BY n DESC, category"},
		{"order-subquery", batch, []string{"o"}, "SELECT oid FROM (SELECT oid, price FROM o ORDER BY price DESC) WHERE price > 5"},
		{"order-streaming", stream, []string{"o"}, "SELECT oid, price FROM o ORDER BY price"},
		{"order-streaming-time", stream, []string{"ot"}, "SELECT k, v, ts FROM ot ORDER BY ts"},
		{"order-streaming-time-desc", stream, []string{"ot"}, "SELECT k, v, ts FROM ot ORDER BY ts DESC"},
		// NTILE, PERCENT_RANK, CUME_DIST.
		{"ntile", both, []string{"nt"}, "SELECT k, v, s, NTILE(2) OVER (PARTITION BY k ORDER BY s), NTILE(3) OVER (PARTITION BY k ORDER BY s) FROM nt"},
		{"percent-rank", both, []string{"nt"}, "SELECT k, v, s, PERCENT_RANK() OVER (PARTITION BY k ORDER BY s) FROM nt"},
		{"cume-dist", both, []string{"nt"}, "SELECT k, v, s, CUME_DIST() OVER (PARTITION BY k ORDER BY s) FROM nt"},
		{"rank-family-global", both, []string{"nt"}, "SELECT k, v, s, NTILE(4) OVER w, PERCENT_RANK() OVER w, CUME_DIST() OVER w, RANK() OVER w FROM nt WINDOW w AS (ORDER BY s)"},
		{"rank-family-time", both, []string{"ot"}, "SELECT k, v, NTILE(2) OVER w, PERCENT_RANK() OVER w, CUME_DIST() OVER w FROM ot WINDOW w AS (PARTITION BY k ORDER BY ts)"},
		{"cume-dist-row-number", batch, []string{"ot"}, "SELECT k, v, ROW_NUMBER() OVER w, CUME_DIST() OVER w, PERCENT_RANK() OVER w FROM ot WINDOW w AS (PARTITION BY k ORDER BY ts)"},
		{"cume-dist-lag", batch, []string{"ot"}, "SELECT k, v, LAG(v) OVER w, CUME_DIST() OVER w, RANK() OVER w FROM ot WINDOW w AS (PARTITION BY k ORDER BY ts)"},
		{"ntile-big", batch, []string{"nt"}, "SELECT k, v, NTILE(10) OVER (PARTITION BY k ORDER BY v) FROM nt"},
		{"lag-lead-nt", batch, []string{"nt"}, "SELECT k, v, s, LAG(v) OVER (PARTITION BY k ORDER BY s), LEAD(v, 1, -1) OVER (PARTITION BY k ORDER BY s) FROM nt"},
		// INTERVAL WEEK and QUARTER.
		{"interval-week-quarter", both, []string{"t"}, "SELECT id, ts + INTERVAL '2' WEEK, dt - INTERVAL '1' QUARTER, dt + INTERVAL '3' WEEK FROM t"},
	}
	buildFirst := map[string]bool{"natural-left": true, "using-qualified": true, "using-left": true}
	var out []genCase
	for _, c := range qs {
		for _, mode := range c.modes {
			name := "sql29-" + c.name
			if len(c.modes) > 1 {
				name += "-" + mode
			}
			h := []string{"mode: " + mode}
			if c.name == "order-streaming-time" {
				h = append(h, "expect: streaming-temporal-sort")
			}
			if mode == "streaming" && buildFirst[c.name] {
				// Flink read the padded side first: its NULL-padded
				// rows come and go (-D).
				h = append(h, "expect: build-input-first")
			}
			lines, data := readTables(c.tables, tables)
			out = append(out, genCase{name: name, header: append(h, lines...), query: c.query, data: data})
		}
	}
	return out
}
