package conformance

// Late rows: a source's watermark moves as each row is read, so a row
// read after one that moved the watermark past it is late for every
// event-time operator, whatever the batch it was read in.

// tableLate is read with a 1 s watermark delay; its rows come out of
// order, some of them behind the watermark of the rows before them.
const tableLate = "table: l (k STRING, v INT, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND"

// dataLateIssue is a,1 s / a,8 s / a,4 s / a,12 s: the row at 4 s comes
// when the watermark is at 7 s, after the window [0 s, 5 s) closed.
const dataLateIssue = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"a","v":2,"ts":"2024-01-01 00:00:08"}
{"k":"a","v":3,"ts":"2024-01-01 00:00:04"}
{"k":"a","v":4,"ts":"2024-01-01 00:00:12"}
`

// dataLate mixes rows late for their windows (v 4, 7, 9, 12), rows out
// of order but within the delay or an open window (v 5, 8, 11), a row
// exactly at the watermark (v 10), and two keys.
const dataLate = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"b","v":2,"ts":"2024-01-01 00:00:02"}
{"k":"a","v":3,"ts":"2024-01-01 00:00:08"}
{"k":"a","v":4,"ts":"2024-01-01 00:00:04"}
{"k":"b","v":5,"ts":"2024-01-01 00:00:07.500"}
{"k":"b","v":6,"ts":"2024-01-01 00:00:12"}
{"k":"b","v":7,"ts":"2024-01-01 00:00:09.500"}
{"k":"a","v":8,"ts":"2024-01-01 00:00:11.500"}
{"k":"a","v":9,"ts":"2024-01-01 00:00:03"}
{"k":"a","v":10,"ts":"2024-01-01 00:00:11"}
{"k":"a","v":11,"ts":"2024-01-01 00:00:20"}
{"k":"b","v":12,"ts":"2024-01-01 00:00:14"}
{"k":"b","v":13,"ts":"2024-01-01 00:00:19.500"}
{"k":"a","v":14,"ts":"2024-01-01 00:00:26"}
`

// dataLateEdge puts a row at 5.999 s: its watermark, 4.999 s, is the
// last millisecond of window [0 s, 5 s), which then fires, so the row
// at 4.5 s after it is late.
const dataLateEdge = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"a","v":2,"ts":"2024-01-01 00:00:05.999"}
{"k":"a","v":3,"ts":"2024-01-01 00:00:04.500"}
{"k":"a","v":4,"ts":"2024-01-01 00:00:12"}
`

// dataLateSessionEdge: the row at 3.999 s moves the watermark to
// 2.999 s, the last millisecond of session [1 s, 3 s), which then fires;
// the row at 2.5 s after it opens a session of its own.
const dataLateSessionEdge = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"a","v":2,"ts":"2024-01-01 00:00:03.999"}
{"k":"a","v":3,"ts":"2024-01-01 00:00:02.500"}
{"k":"a","v":4,"ts":"2024-01-01 00:00:12"}
`

// dataLateOverCleared: with a RANGE 2 s frame the rows of a at 1 s and
// 2 s set a cleanup timer at 4.001 s, which the row at 10 s replaces by
// one at 13.001 s: the replaced one still fires at the watermark 9 s and
// makes the row at 3.5 s late. The row at 20 s sets 23.001 s, which the
// watermark 29 s of b's row reaches: a's state is cleared, so its row at
// 15 s, behind the watermark, is taken and counts alone.
const dataLateOverCleared = `{"k":"a","v":1,"ts":"2024-01-01 00:00:01"}
{"k":"a","v":2,"ts":"2024-01-01 00:00:02"}
{"k":"a","v":3,"ts":"2024-01-01 00:00:10"}
{"k":"a","v":4,"ts":"2024-01-01 00:00:03.500"}
{"k":"a","v":5,"ts":"2024-01-01 00:00:20"}
{"k":"b","v":6,"ts":"2024-01-01 00:00:30"}
{"k":"a","v":7,"ts":"2024-01-01 00:00:15"}
{"k":"b","v":8,"ts":"2024-01-01 00:00:40"}
`

func init() { areaCases = append(areaCases, lateCases) }

func lateCases() []genCase {
	l := map[string]string{"l": dataLate}
	one := func(name, query string, data map[string]string) genCase {
		return genCase{name: "wm-late-" + name, header: []string{"mode: streaming", tableLate}, query: query, data: data}
	}
	const tumble = "TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
	return []genCase{
		one("issue-tumble", "SELECT window_start, window_end, k, COUNT(*) FROM "+tumble+" GROUP BY window_start, window_end, k", map[string]string{"l": dataLateIssue}),
		one("edge-tumble", "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM "+tumble+" GROUP BY window_start, window_end, k", map[string]string{"l": dataLateEdge}),
		one("edge-window-topn", "SELECT window_start, window_end, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM "+tumble+") WHERE rn <= 1", map[string]string{"l": dataLateEdge}),
		one("edge-session", "SELECT window_start, window_end, k, COUNT(*) FROM TABLE(SESSION(TABLE l PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end, k", map[string]string{"l": dataLateEdge}),
		one("edge-session-fired", "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(SESSION(TABLE l PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end, k", map[string]string{"l": dataLateSessionEdge}),
		one("session", "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(SESSION(TABLE l PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end, k", l),
		one("tumble", "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM "+tumble+" GROUP BY window_start, window_end, k", l),
		one("hop", "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(HOP(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k", l),
		one("cumulate", "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(CUMULATE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k", l),
		one("window-topn", "SELECT window_start, window_end, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM "+tumble+") WHERE rn <= 2", l),
		one("window-dedup", "SELECT window_start, window_end, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts ASC) AS rn FROM "+tumble+") WHERE rn = 1", l),
		one("window-agg-topn", "SELECT window_start, window_end, k, c FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY c DESC, k) AS rn FROM (SELECT window_start, window_end, k, COUNT(*) AS c FROM "+tumble+" GROUP BY window_start, window_end, k)) WHERE rn <= 1", l),
		one("over-rows", "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM l", l),
		one("over-range", "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) FROM l", l),
		one("over-range-cleared", "SELECT k, v, COUNT(*) OVER w, SUM(v) OVER w FROM l WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)", map[string]string{"l": dataLateOverCleared}),
	}
}
