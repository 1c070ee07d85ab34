package conformance

// Expressions over a TIMESTAMP_LTZ under a session zone (local_time_zone,
// Flink's table.local-time-zone): conversions to and from a wall clock in
// Asia/Shanghai and in America/Los_Angeles across its 2024 shifts, where
// a wall clock is skipped (2024-03-10 02:30) or repeated (2024-11-03
// 01:30).

func init() { areaCases = append(areaCases, ltz29Cases) }

const ltz29Table = "table: Z (id INT, ts BIGINT, w STRING, rowtime AS TO_TIMESTAMP_LTZ(ts, 3)) json"

// ltz29Data: instants at both Los Angeles shifts and around the epoch,
// and wall clocks that are skipped, repeated or plain there.
const ltz29Data = `{"id":1,"ts":1602259201000,"w":"2020-10-10 00:00:01"}
{"id":2,"ts":1710064799000,"w":"2024-03-10 01:59:59.123"}
{"id":3,"ts":1710064800000,"w":"2024-03-10 02:30:00"}
{"id":4,"ts":1730622600000,"w":"2024-03-10 03:00:00"}
{"id":5,"ts":1730626200000,"w":"2024-11-03 01:30:00"}
{"id":6,"ts":1730628000000,"w":"2024-11-03 02:00:00"}
{"id":7,"ts":-1000,"w":"1969-12-31 23:59:59"}
{"id":8,"ts":1704067199999,"w":"2023-12-31 23:59:59.999"}
`

// ltz29Parts reads fields of the wall clock; before 1970 there Flink
// divides the epoch milliseconds truncating (before-epoch-millis), so that
// row has a case of its own.
const ltz29Parts = "SELECT id, YEAR(rowtime), MONTH(rowtime), DAYOFMONTH(rowtime), HOUR(rowtime), MINUTE(rowtime), EXTRACT(DAY FROM rowtime), DAYOFWEEK(rowtime), DATE_FORMAT(rowtime, 'yyyy-MM-dd HH:mm:ss'), FROM_UNIXTIME(ts / 1000) FROM Z"

var ltz29Queries = []struct{ name, query string }{
	{"cast-out", "SELECT id, CAST(rowtime AS STRING), CAST(rowtime AS TIMESTAMP(3)), CAST(rowtime AS DATE), CAST(rowtime AS TIME(3)) FROM Z"},
	{"cast-in", "SELECT id, CAST(CAST(w AS TIMESTAMP(3)) AS TIMESTAMP_LTZ(3)), CAST(w AS TIMESTAMP_LTZ(3)), CAST(CAST(w AS DATE) AS TIMESTAMP_LTZ(3)) FROM Z"},
	{"parts", ltz29Parts + " WHERE id <> 7"},
	{"floor", "SELECT id, FLOOR(rowtime TO HOUR), FLOOR(rowtime TO DAY), CEIL(rowtime TO DAY), FLOOR(rowtime TO MONTH), CEIL(rowtime TO YEAR), FLOOR(rowtime TO WEEK), FLOOR(rowtime TO MINUTE) FROM Z WHERE id <> 7"},
	{"compare", "SELECT id, rowtime < '2024-11-03 01:30:00', rowtime >= '2024-03-10 02:30:00', rowtime = '2024-11-03 01:30:00', rowtime <> '2020-10-10 00:00:01' FROM Z"},
	{"arith", "SELECT id, TIMESTAMPADD(DAY, 1, rowtime), TIMESTAMPADD(MONTH, 1, rowtime), rowtime + INTERVAL '1' MONTH, rowtime + INTERVAL '1' DAY, TIMESTAMPDIFF(DAY, rowtime, TO_TIMESTAMP_LTZ(1730800000000, 3)), TIMESTAMPDIFF(MONTH, rowtime, TO_TIMESTAMP_LTZ(1730800000000, 3)) FROM Z WHERE id <> 7"},
	// TO_TIMESTAMP_LTZ reads its text in UTC under any zone (Flink's
	// documented UTC+0); UNIX_TIMESTAMP in the session zone. Rows 2's
	// and 8's fractions past the pattern are another matter (Flink reads
	// them).
	{"parse", "SELECT id, TO_TIMESTAMP_LTZ(w, 'yyyy-MM-dd HH:mm:ss'), UNIX_TIMESTAMP(w, 'yyyy-MM-dd HH:mm:ss'), UNIX_TIMESTAMP(w) FROM Z WHERE id NOT IN (2, 8)"},
	{"json", "SELECT id, JSON_OBJECT('t' VALUE rowtime), JSON_ARRAY(rowtime), CAST(rowtime AS VARCHAR(10)), CONCAT('at ', CAST(rowtime AS STRING)) FROM Z WHERE id IN (1, 3, 5)"},
	{"epoch", "SELECT id, EXTRACT(EPOCH FROM rowtime) FROM Z"},
	{"roundtrip", "SELECT id, CAST(CAST(rowtime AS TIMESTAMP(3)) AS TIMESTAMP_LTZ(3)), CAST(CAST(rowtime AS STRING) AS TIMESTAMP_LTZ(3)) FROM Z"},
}

func ltz29Cases() []genCase {
	var out []genCase
	for _, z := range []struct{ suffix, zone string }{{"sh", shanghai}, {"la", losAngeles}} {
		for _, q := range ltz29Queries {
			out = append(out, genCase{
				name:   "ltz29-" + q.name + "-" + z.suffix,
				header: []string{"mode: streaming", ltz29Table, "zone: " + z.zone},
				query:  q.query,
				data:   map[string]string{"Z": ltz29Data},
			})
		}
	}
	out = append(out, genCase{
		name:   "ltz29-compare-timestamp-la",
		header: []string{"mode: streaming", ltz29Table, "zone: " + losAngeles, "expect: ltz-compare-timestamp"},
		query:  "SELECT id, rowtime > CAST(w AS TIMESTAMP(3)), rowtime = CAST(w AS TIMESTAMP(3)) FROM Z",
		data:   map[string]string{"Z": ltz29Data},
	})
	out = append(out, genCase{
		name:   "ltz29-parts-before-epoch-la",
		header: []string{"mode: streaming", ltz29Table, "zone: " + losAngeles, "expect: before-epoch-millis"},
		query:  ltz29Parts + " WHERE id = 7",
		data:   map[string]string{"Z": ltz29Data},
	})
	return out
}
