package conformance

import "fmt"

// Session 29's functions of Flink 2.3: OVERLAY, PRINTF, ENCODE/DECODE,
// STR_TO_MAP, MAP_FROM_ARRAYS, MAP_UNION, INET_ATON/INET_NTOA,
// IS_DECIMAL, CURRENT_DATABASE, RAND/RAND_INTEGER and CURRENT_WATERMARK.
// Maps are shown through CAST to STRING or MAP_KEYS, which keep the
// order the map holds; Flink's print connector prints a map in a
// HashMap's order of its own.

func init() { areaCases = append(areaCases, fn29Cases) }

const (
	tableF29 = "table: f (id INT, s STRING, n INT, b BIGINT, d DOUBLE, m DECIMAL(10, 2), bo BOOLEAN, ts TIMESTAMP(3), ip STRING) json"
	dataF29  = `{"id":1,"s":"abcdef","n":2,"b":2130706433,"d":0.125,"m":1.25,"bo":true,"ts":"2024-01-02 03:04:05.678","ip":"127.0.0.1"}
{"id":2,"s":null,"n":null,"b":null,"d":null,"m":null,"bo":null,"ts":null,"ip":null}
{"id":3,"s":"日本語😀x","n":3,"b":-1,"d":1.005,"m":-0.5,"bo":false,"ts":"1969-12-31 23:59:59.5","ip":"127.1"}
{"id":4,"s":"","n":0,"b":4294967296,"d":-12345.678,"m":0.00,"bo":true,"ts":"2024-02-29 00:00:00","ip":"256.1.1.1"}
{"id":5,"s":"k=1,j=2,a=3","n":-1,"b":4294967295,"d":1.0E300,"m":99999999.99,"bo":false,"ts":"2000-01-01 00:00:00","ip":"10.0.0.1"}
`
	// tableWM29's rows raise the watermark by a second or more each time
	// it rises (Flink sends a watermark at once only past 200 ms), some
	// come behind it (v 4, 5, 7, 8, 9, 11) and one at it (v 8 at 11 s).
	tableWM29 = "table: l (k STRING, v INT, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND"
	dataWM29  = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"b","v":2,"ts":"2024-01-01 00:00:02"}
{"k":"a","v":3,"ts":"2024-01-01 00:00:08"}
{"k":"a","v":4,"ts":"2024-01-01 00:00:04"}
{"k":"b","v":5,"ts":"2024-01-01 00:00:07.500"}
{"k":"b","v":6,"ts":"2024-01-01 00:00:12"}
{"k":"b","v":7,"ts":"2024-01-01 00:00:09.500"}
{"k":"a","v":8,"ts":"2024-01-01 00:00:11"}
{"k":"a","v":9,"ts":"2024-01-01 00:00:03"}
{"k":"a","v":10,"ts":"2024-01-01 00:00:20"}
{"k":"b","v":11,"ts":"2024-01-01 00:00:19"}
{"k":"b","v":12,"ts":"2024-01-01 00:00:19.100"}
`
)

func fn29Cases() []genCase {
	exprs := []struct {
		name  string
		exprs []string
	}{
		{"overlay", []string{"OVERLAY(s PLACING 'XY' FROM 2)", "OVERLAY(s PLACING 'XY' FROM n)", "OVERLAY(s PLACING 'XY' FROM 2 FOR n)",
			"OVERLAY(s PLACING '-' FROM 1 FOR 0)", "OVERLAY(s PLACING s FROM 3 FOR 1)", "OVERLAY('abcdef' PLACING 'XY' FROM 2 FOR 3)"}},
		{"overlay-overflow", []string{"OVERLAY(s PLACING 'ab' FROM 1 FOR 2147483647)"}},
		{"printf-text", []string{"PRINTF('%s|%5s|%-5s|%S', s, s, n, s)", "PRINTF('%d-%s', n, s)", "PRINTF('%10.3s|', s)",
			"PRINTF('%b %B %b', bo, bo, s)", "PRINTF('%2$s %1$s %<s', s, n)", "PRINTF('%%|%c|%n', n + 64)"}},
		{"printf-numbers", []string{"PRINTF('%d %05d %+d %x %o', n, n, n, b, b)", "PRINTF('%,d|%(d|%#x|% d', b, n, n, n)",
			"PRINTF('%.2f|%e|%g|%10.3f', d, d, d, d)", "PRINTF('%s|%s|%s', m, d, ts)", "PRINTF('%,.2f|%-12.1e|%08.3f', d, d, d)"}},
		{"printf-null", []string{"PRINTF('%d', s)", "PRINTF('%s')", "PRINTF(s, n)", "PRINTF('%f', m)", "PRINTF('%c', s)", "PRINTF('%-d', n)"}},
		{"encode-decode", []string{"ENCODE(s, 'UTF-8')", "ENCODE(s, 'US-ASCII')", "ENCODE(s, 'utf-16le')",
			"DECODE(ENCODE(s, 'UTF-16'), 'UTF-16')", "DECODE(ENCODE(s, 'UTF-8'), 'ISO-8859-1')", "DECODE(ENCODE(s, 'UTF-8'), 'US-ASCII')"}},
		{"encode-bad-charset", []string{"ENCODE(s, ip)"}},
		{"str-to-map", []string{"CAST(STR_TO_MAP(s) AS STRING)", "CAST(STR_TO_MAP(s, ',', '=') AS STRING)", "MAP_KEYS(STR_TO_MAP('k=1,j=2,a=3'))",
			"CAST(STR_TO_MAP('a=1,,b=2,') AS STRING)", `CAST(STR_TO_MAP(ip, '\.', '=') AS STRING)`, "CAST(STR_TO_MAP('x=a=b;y', ';', '=') AS STRING)"}},
		{"map-build", []string{"CAST(MAP_FROM_ARRAYS(ARRAY[id, id + 10], ARRAY[s, ip]) AS STRING)", "CAST(MAP_UNION(MAP[s, id], MAP['a', n]) AS STRING)",
			"CAST(MAP_UNION(MAP['x', id, 'y', n], MAP['y', 0], MAP['z', id]) AS STRING)", "MAP_UNION(MAP[s, id], CAST(NULL AS MAP<STRING, INT>)) IS NULL",
			"MAP_KEYS(MAP_UNION(MAP['a', 1, 'b', 2], MAP['b', 3, 'c', id]))"}},
		{"map-from-arrays-length", []string{"MAP_FROM_ARRAYS(ARRAY[id, 2], ARRAY[s])"}},
		{"inet", []string{"INET_ATON(ip)", "INET_NTOA(b)", "INET_NTOA(n)", "INET_NTOA(INET_ATON(ip))", "INET_ATON(s)"}},
		{"is-decimal", []string{"IS_DECIMAL(s)", "IS_DECIMAL(ip)", "IS_DECIMAL(CAST(d AS STRING))", "IS_DECIMAL(n)", "IS_DECIMAL(m)",
			"IS_DECIMAL('0x1p3')", "IS_DECIMAL(' 1.5f ')", "IS_DECIMAL('1_0')"}},
		{"current-database", []string{"CURRENT_DATABASE()", "CHAR_LENGTH(CURRENT_DATABASE())"}},
		{"rand-seeded", []string{"RAND(1)", "RAND(1)", "RAND_INTEGER(7, 100)", "RAND(id)", "RAND_INTEGER(n, 1000)", "RAND_INTEGER(1, 16)"}},
		{"rand-unseeded", []string{"RAND() >= 0 AND RAND() < 1", "RAND_INTEGER(10) BETWEEN 0 AND 9", "RAND_INTEGER(1) = 0", "RAND(n) IS NULL"}},
		{"rand-bound-zero", []string{"RAND_INTEGER(1, n)"}},
	}
	var out []genCase
	for _, e := range exprs {
		out = append(out, genCase{name: "fn29-" + e.name, header: []string{"mode: streaming", tableF29},
			query: exprQuery("f", e.exprs), data: map[string]string{"f": dataF29}})
	}
	wm := func(name, query string) genCase {
		return genCase{name: "fn29-" + name, header: []string{"mode: streaming", tableWM29}, query: query, data: map[string]string{"l": dataWM29}}
	}
	out = append(out,
		genCase{name: "fn29-current-watermark-batch", header: []string{"mode: batch", tableWM29},
			query: "SELECT k, v, CURRENT_WATERMARK(ts) FROM l", data: map[string]string{"l": dataWM29}},
		wm("current-watermark", "SELECT k, v, ts, CURRENT_WATERMARK(ts) FROM l"),
		wm("current-watermark-late", "SELECT k, v FROM l WHERE ts > CURRENT_WATERMARK(ts) OR CURRENT_WATERMARK(ts) IS NULL"),
		wm("current-watermark-subquery", "SELECT v, CURRENT_WATERMARK(ts), CAST(CURRENT_WATERMARK(ts) AS STRING) FROM (SELECT k, v, ts FROM l WHERE v > 2)"),
		wm("current-watermark-not-rowtime", "SELECT CURRENT_WATERMARK(v) FROM l"),
		wm("current-watermark-count", fmt.Sprintf("SELECT k, COUNT(*) FROM (%s) GROUP BY k", "SELECT k FROM l WHERE CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts)")),
	)
	return out
}
