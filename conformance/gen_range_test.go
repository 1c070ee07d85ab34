package conformance

// Times at the edge of the years 0000-9999, and CASTs to a type written
// without its length (fn-range-*, format-range-*): Flink's arithmetic
// carries a time past the range unchecked, its json and csv writers spell
// such a year as java.time does (+10000-01-01, -0001-12-31), its json
// reader takes that text back, its csv reader a timestamp's but not a
// date's; CHAR and BINARY without a length are CHAR(1) and BINARY(1).

func init() { areaCases = append(areaCases, rangeCases) }

// The edges: the last millisecond of 9999 and the first of 0000, as
// values of each time type and as the texts past them.
const (
	rangeCols = "ts TIMESTAMP(3), dt DATE, ts0 TIMESTAMP(3), dt0 DATE, ss STRING, sd STRING"
	rangeRow  = `{"ts":"9999-12-31 23:59:59.999","dt":"9999-12-31","ts0":"0000-01-01 00:00:00","dt0":"0000-01-01","ss":"10000-01-01 00:00:00","sd":"10000-01-01"}` + "\n"
	// The values past the range, as the json and csv sinks get them.
	rangePast     = "SELECT ts + INTERVAL '1' DAY AS a, dt + INTERVAL '1' DAY AS b, ts0 - INTERVAL '1' DAY AS c, dt0 - INTERVAL '1' DAY AS d, CAST(ts + INTERVAL '1' DAY AS TIMESTAMP_LTZ(3)) AS e, ts AS f, dt AS g, ts0 AS h, dt0 AS i FROM r"
	rangeSinkCols = "a TIMESTAMP(3), b DATE, c TIMESTAMP(3), d DATE, e TIMESTAMP_LTZ(3), f TIMESTAMP(3), g DATE, h TIMESTAMP(3), i DATE"
)

func rangeCases() []genCase {
	table := "table: r (" + rangeCols + ") json"
	data := map[string]string{"r": rangeRow}
	expr := func(name, exprs string) genCase {
		return genCase{name: "fn-range-" + name, header: []string{table}, query: "SELECT " + exprs + " FROM r", data: data}
	}
	return []genCase{
		expr("interval-past", "ts + INTERVAL '1' DAY, ts + INTERVAL '1' YEAR, dt + INTERVAL '1' DAY, dt + INTERVAL '1' YEAR, ts0 - INTERVAL '1' DAY, dt0 - INTERVAL '1' DAY, ts0 - INTERVAL '1' YEAR, ts - INTERVAL '-0.001' SECOND"),
		expr("timestampadd-past", "TIMESTAMPADD(YEAR, 1, ts), TIMESTAMPADD(DAY, 1, ts), TIMESTAMPADD(YEAR, 10000, ts), TIMESTAMPADD(YEAR, -2000, ts0), TIMESTAMPADD(DAY, 1, dt), TIMESTAMPADD(MONTH, -1, dt0)"),
		// Before the year -4800 Flink's julian-day arithmetic (Java's
		// truncating division) is a day off: -20000-01-02.
		withExpect(expr("timestampadd-far", "TIMESTAMPADD(YEAR, -20000, ts0), TIMESTAMPADD(MONTH, -12 * 5000, ts0), TIMESTAMPADD(YEAR, -4000, ts0)"), "julian-before-4800"),
		expr("convert-past", "CAST(CAST(dt + INTERVAL '1' DAY AS TIMESTAMP(3)) AS DATE), CAST(dt0 - INTERVAL '1' DAY AS TIMESTAMP(3)), CAST(ts + INTERVAL '1' DAY AS TIMESTAMP_LTZ(3)), EXTRACT(YEAR FROM ts + INTERVAL '1' DAY), EXTRACT(YEAR FROM ts0 - INTERVAL '1' DAY), DATE_FORMAT(ts + INTERVAL '1' DAY, 'yyyy-MM-dd')"),
		withExpect(expr("cast-string-past", "CAST(ts + INTERVAL '1' DAY AS STRING), CAST(dt + INTERVAL '1' DAY AS STRING), CAST(ts0 - INTERVAL '1' DAY AS STRING), CAST(dt0 - INTERVAL '1' DAY AS STRING)"), "cast-string-year-range"),
		expr("parse-past", "TO_TIMESTAMP(ss), TO_DATE(sd), TRY_CAST(ss AS TIMESTAMP(3)), TRY_CAST(sd AS DATE), TO_TIMESTAMP('-0001-01-01 00:00:00')"),
		expr("cast-timestamp-past", "CAST(ss AS TIMESTAMP(3))"),
		expr("cast-date-past", "CAST(sd AS DATE)"),
		// CHAR, VARCHAR, BINARY and VARBINARY without a length.
		{name: "fn-range-cast-no-length", header: []string{"table: f (s STRING, n INT, b BYTES) json"},
			query: "SELECT CAST(s AS CHAR), CAST(s AS VARCHAR), CAST(n AS CHAR), CAST(n AS VARCHAR), CAST(b AS BINARY), CAST(b AS VARBINARY), CHAR_LENGTH(CAST(s AS CHAR)), CAST(s AS CHAR) || '|', CAST('xyz' AS CHAR), CAST(s AS CHARACTER) FROM f",
			data:  map[string]string{"f": `{"s":"abc","n":123,"b":"AQID"}` + "\n" + `{"s":"","n":-5,"b":""}` + "\n"}},
		// The writers.
		{name: "format-range-json-out", header: []string{"mode: batch", "table: r (" + rangeCols + ") json", "sink: json (" + rangeSinkCols + ")"}, query: rangePast, data: data},
		{name: "format-range-csv-out", header: []string{"mode: batch", "table: r (" + rangeCols + ") json", "sink: csv (" + rangeSinkCols + ")", "expect: csv-text"}, query: rangePast, data: data},
		// The readers, of what the writers wrote.
		{name: "format-range-json-in", header: []string{"table: j (id INT, a TIMESTAMP(3), b DATE, e TIMESTAMP_LTZ(3)) json"}, query: "SELECT id, a, b, e, EXTRACT(YEAR FROM a), EXTRACT(YEAR FROM b) FROM j",
			data: map[string]string{"j": `{"id":1,"a":"+10000-01-01 23:59:59.999","b":"+10000-01-01","e":"+10000-01-01 23:59:59.999Z"}` + "\n" +
				`{"id":2,"a":"-0001-12-31 00:00:00","b":"-0001-12-31","e":"-0001-12-31 00:00:00Z"}` + "\n" +
				`{"id":3,"a":"9999-12-31 23:59:59.999","b":"0000-01-01","e":"0000-01-01 00:00:00Z"}` + "\n"}},
		{name: "format-range-csv-in-timestamp", header: []string{"table: c (id INT, a TIMESTAMP(3), e TIMESTAMP_LTZ(3)) csv"}, query: "SELECT id, a, e, EXTRACT(YEAR FROM a) FROM c",
			data: map[string]string{"c": `1,"+10000-01-01 23:59:59.999","+10000-01-01 23:59:59.999Z"` + "\n" + `2,"-0001-12-31 00:00:00","-0001-12-31 00:00:00Z"` + "\n"}},
		{name: "format-range-csv-in-date", header: []string{"table: c (id INT, b DATE) csv"}, query: "SELECT id, b FROM c",
			data: map[string]string{"c": "1,+10000-01-01\n"}},
	}
}

// withExpect names the difference g's etld result shows (differences.go).
func withExpect(g genCase, diff string) genCase {
	g.header = append(g.header, "expect: "+diff)
	return g
}
