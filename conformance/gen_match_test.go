package conformance

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// MATCH_RECOGNIZE: the examples of Flink's documentation page, the
// refusals of its planner, and random tests: seeded event sequences
// matched by a set of patterns, so that the suite checks etld's matches
// against Flink's.

func init() { areaCases = append(areaCases, matchCases) }

const tableTicker = "table: ticker (symbol STRING, price INT, tax INT, rowtime TIMESTAMP(3)) json watermark rowtime AS rowtime - INTERVAL '1' SECOND"

// tickerRows renders (symbol, price, tax, time) rows; the time is
// "HH:MM:SS" on 2018-09-17.
func tickerRows(rows ...[4]any) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, `{"symbol":"%s","price":%d,"tax":%d,"rowtime":"2018-09-17 %s"}`+"\n", r[:]...)
	}
	return b.String()
}

var (
	// The documentation's first ticker (prices 12 ... 19, one second apart).
	tickerDecreasing = tickerRows(
		[4]any{"ACME", 12, 1, "10:00:00"}, [4]any{"ACME", 17, 2, "10:00:01"}, [4]any{"ACME", 19, 1, "10:00:02"},
		[4]any{"ACME", 21, 3, "10:00:03"}, [4]any{"ACME", 25, 2, "10:00:04"}, [4]any{"ACME", 18, 1, "10:00:05"},
		[4]any{"ACME", 15, 1, "10:00:06"}, [4]any{"ACME", 14, 2, "10:00:07"}, [4]any{"ACME", 24, 2, "10:00:08"},
		[4]any{"ACME", 25, 2, "10:00:09"}, [4]any{"ACME", 19, 1, "10:00:10"})
	tickerAvg = tickerRows(
		[4]any{"ACME", 12, 1, "10:00:00"}, [4]any{"ACME", 17, 2, "10:00:01"}, [4]any{"ACME", 13, 1, "10:00:02"},
		[4]any{"ACME", 16, 3, "10:00:03"}, [4]any{"ACME", 25, 2, "10:00:04"}, [4]any{"ACME", 2, 1, "10:00:05"},
		[4]any{"ACME", 4, 1, "10:00:06"}, [4]any{"ACME", 10, 2, "10:00:07"}, [4]any{"ACME", 15, 2, "10:00:08"},
		[4]any{"ACME", 25, 2, "10:00:09"}, [4]any{"ACME", 25, 1, "10:00:10"}, [4]any{"ACME", 30, 1, "10:00:11"})
	tickerGreedy = tickerRows(
		[4]any{"XYZ", 10, 1, "10:00:02"}, [4]any{"XYZ", 11, 2, "10:00:03"}, [4]any{"XYZ", 12, 1, "10:00:04"},
		[4]any{"XYZ", 13, 2, "10:00:05"}, [4]any{"XYZ", 14, 1, "10:00:06"}, [4]any{"XYZ", 16, 2, "10:00:07"})
	tickerWithin = tickerRows(
		[4]any{"ACME", 20, 1, "10:00:00"}, [4]any{"ACME", 17, 2, "10:20:00"}, [4]any{"ACME", 18, 1, "10:40:00"},
		[4]any{"ACME", 11, 3, "11:00:00"}, [4]any{"ACME", 14, 2, "11:20:00"}, [4]any{"ACME", 9, 1, "11:40:00"},
		[4]any{"ACME", 15, 1, "12:00:00"}, [4]any{"ACME", 14, 2, "12:20:00"}, [4]any{"ACME", 24, 2, "12:40:00"},
		[4]any{"ACME", 1, 2, "13:00:00"}, [4]any{"ACME", 19, 1, "13:20:00"})
	tickerOutput = tickerRows(
		[4]any{"XYZ", 10, 1, "10:00:02"}, [4]any{"XYZ", 12, 2, "10:00:03"}, [4]any{"XYZ", 13, 1, "10:00:04"}, [4]any{"XYZ", 11, 2, "10:00:05"})
	tickerSkip = tickerRows(
		[4]any{"XYZ", 7, 1, "10:00:01"}, [4]any{"XYZ", 9, 2, "10:00:02"}, [4]any{"XYZ", 10, 1, "10:00:03"},
		[4]any{"XYZ", 5, 2, "10:00:04"}, [4]any{"XYZ", 10, 2, "10:00:05"}, [4]any{"XYZ", 7, 2, "10:00:06"},
		[4]any{"XYZ", 14, 2, "10:00:07"})
)

// mr is a MATCH_RECOGNIZE query over ticker with the given clauses.
func mr(measures, rest string) string {
	return "SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES " + measures + " " + rest + ") AS T"
}

var matchDocCases = []struct{ name, query, data string }{
	{"doc-decreasing", mr("START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS bottom_tstamp, LAST(PRICE_UP.rowtime) AS end_tstamp",
		"ONE ROW PER MATCH AFTER MATCH SKIP TO LAST PRICE_UP PATTERN (START_ROW PRICE_DOWN+ PRICE_UP) DEFINE PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1), PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)"), tickerDecreasing},
	{"doc-avg", mr("FIRST(A.rowtime) AS start_tstamp, LAST(A.rowtime) AS end_tstamp, AVG(A.price) AS avgPrice",
		"ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A+ B) DEFINE A AS AVG(A.price) < 15"), tickerAvg},
	{"doc-greedy", mr("C.price AS lastPrice", "ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B* C) DEFINE A AS A.price > 10, B AS B.price < 15, C AS C.price > 12"), tickerGreedy},
	{"doc-reluctant", mr("C.price AS lastPrice", "ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B*? C) DEFINE A AS A.price > 10, B AS B.price < 15, C AS C.price > 12"), tickerGreedy},
	{"doc-within", mr("C.rowtime AS dropTime, A.price - C.price AS dropDiff", "ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B* C) WITHIN INTERVAL '1' HOUR DEFINE B AS B.price > A.price - 10, C AS C.price < A.price - 10"), tickerWithin},
	{"doc-output", mr("FIRST(A.price) AS startPrice, LAST(A.price) AS topPrice, B.price AS lastPrice", "ONE ROW PER MATCH PATTERN (A+ B) DEFINE A AS LAST(A.price, 1) IS NULL OR A.price > LAST(A.price, 1), B AS B.price < LAST(A.price)"), tickerOutput},
	{"doc-default-var", mr("C.price AS cPrice, LAST(price, 1) AS before", "PATTERN (A B? C) DEFINE B AS B.price < 20, C AS LAST(price, 1) < C.price"), tickerGreedy},
	{"skip-past-last", mr("SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime", "ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"), tickerSkip},
	{"skip-next", mr("SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime", "ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"), tickerSkip},
	{"skip-default", mr("SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime", "PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"), tickerSkip},
	{"skip-to-last", mr("SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime", "ONE ROW PER MATCH AFTER MATCH SKIP TO LAST A PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"), tickerSkip},
	{"skip-to-first-fails", mr("SUM(A.price) AS sumPrice", "AFTER MATCH SKIP TO FIRST A PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"), tickerSkip},
	{"skip-to-first", mr("FIRST(A.price) AS a, FIRST(B.price) AS b, LAST(B.price) AS lb", "AFTER MATCH SKIP TO FIRST B PATTERN (A B+? C) DEFINE A AS A.price > 8, B AS B.price < 12, C AS C.price > 9"), tickerSkip},
	{"aggregates", mr("COUNT(A.price) AS n, MIN(A.price) AS lo, MAX(A.price) AS hi, SUM(A.price * A.tax) AS weighted, COUNT(*) AS total, MATCH_ROWTIME() AS mt", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A{2,} B) DEFINE A AS A.price < 20, B AS B.price >= 20"), tickerDecreasing},
	{"times", mr("FIRST(A.rowtime) AS s, LAST(B.rowtime) AS e, COUNT(B.price) AS nb", "PATTERN (A B{2,3} C) DEFINE A AS A.price > 15, B AS B.price > A.price, C AS TRUE"), tickerDecreasing},
	{"times-reluctant", mr("FIRST(A.rowtime) AS s, LAST(B.rowtime) AS e, COUNT(B.price) AS nb", "PATTERN (A B{2,3}? C) DEFINE A AS A.price > 15, B AS B.price > A.price, C AS TRUE"), tickerDecreasing},
	{"times-exact-optional", mr("FIRST(A.rowtime) AS s, COUNT(B.price) AS nb, C.price AS c", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A{2} B? C) DEFINE A AS A.price < 20, B AS B.price > 20, C AS C.price < 25"), tickerDecreasing},
	{"first-last-offsets", mr("FIRST(A.price, 1) AS a2, LAST(A.price, 2) AS a3l, FIRST(price) AS p0, LAST(price) AS pl", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A{3,} B) DEFINE A AS A.price < 22, B AS B.price >= 22"), tickerDecreasing},
	{"order-secondary", "SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime, price DESC MEASURES A.price AS a, B.price AS b PATTERN (A B) DEFINE B AS B.price < A.price) AS T",
		tickerRows([4]any{"X", 3, 1, "10:00:00"}, [4]any{"X", 5, 1, "10:00:00"}, [4]any{"X", 4, 1, "10:00:00"}, [4]any{"X", 1, 1, "10:00:01"})},
	{"no-partition", "SELECT * FROM ticker MATCH_RECOGNIZE (ORDER BY rowtime MEASURES A.symbol AS sa, B.symbol AS sb PATTERN (A B) DEFINE B AS B.price > A.price) AS T", tickerSkip},
	{"select-over", "SELECT symbol, n * 10 AS n10 FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES COUNT(A.price) AS n PATTERN (A+? B) DEFINE B AS B.price > 20) AS T WHERE n > 1", tickerDecreasing},
	// Refusals of Flink's planner.
	{"err-greedy-last", mr("A.price AS p", "PATTERN (A B+) DEFINE B AS B.price > 1"), tickerSkip},
	{"err-reluctant-optional", mr("A.price AS p", "PATTERN (A B?? C) DEFINE B AS B.price > 1"), tickerSkip},
	{"err-empty", mr("A.price AS p", "PATTERN (A* B?) DEFINE B AS B.price > 1"), tickerSkip},
	{"err-all-rows", mr("A.price AS p", "ALL ROWS PER MATCH PATTERN (A B) DEFINE B AS B.price > 1"), tickerSkip},
	{"err-prev", mr("A.price AS p", "PATTERN (A B) DEFINE B AS B.price > PREV(B.price)"), tickerSkip},
	{"err-order-desc", "SELECT * FROM ticker MATCH_RECOGNIZE (ORDER BY rowtime DESC MEASURES A.price AS p PATTERN (A B) DEFINE B AS TRUE) AS T", tickerSkip},
	{"err-order-not-time", "SELECT * FROM ticker MATCH_RECOGNIZE (ORDER BY price MEASURES A.price AS p PATTERN (A B) DEFINE B AS TRUE) AS T", tickerSkip},
	{"err-distinct-agg", mr("COUNT(DISTINCT A.price) AS p", "PATTERN (A B) DEFINE B AS TRUE"), tickerSkip},
	{"err-two-vars", mr("SUM(A.price + B.price) AS p", "PATTERN (A B) DEFINE B AS TRUE"), tickerSkip},
	{"measure-named-like-key", mr("A.symbol AS symbol, A.price AS p", "PATTERN (A B) DEFINE B AS B.price > A.price"), tickerSkip},
	{"match-rowtime-arg", mr("MATCH_ROWTIME(rowtime) AS mt, A.price AS p", "PATTERN (A B) DEFINE B AS B.price > A.price"), tickerSkip},
	{"err-classifier", mr("CLASSIFIER() AS c", "PATTERN (A B) DEFINE B AS B.price > A.price"), tickerSkip},
	{"err-match-number", mr("MATCH_NUMBER() AS n", "PATTERN (A B) DEFINE B AS B.price > A.price"), tickerSkip},
	{"group-over-match", "SELECT symbol, COUNT(*) AS n_matches, SUM(p) AS total FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES A.price AS p PATTERN (A B) DEFINE B AS B.price > A.price) AS T GROUP BY symbol", tickerDecreasing},
	{"window-over-match", "WITH m AS (SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES MATCH_ROWTIME() AS mt, A.price AS p PATTERN (A B) DEFINE B AS B.price > A.price) AS T) SELECT window_start, window_end, COUNT(*) AS n, SUM(p) AS total FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(mt), INTERVAL '5' SECOND)) GROUP BY window_start, window_end", tickerDecreasing},
	// The match from 2 completes while the one from 1 is open; only the
	// latter's timing out (WITHIN) lets it out.
	{"within-releases-held", mr("FIRST(A.price) AS a, C.price AS c", "PATTERN (A B+? C) WITHIN INTERVAL '5' SECOND DEFINE C AS C.price = A.price + 10"),
		tickerRows([4]any{"X", 1, 1, "10:00:01"}, [4]any{"X", 2, 1, "10:00:02"}, [4]any{"X", 5, 1, "10:00:03"}, [4]any{"X", 12, 1, "10:00:04"})},
	{"err-optional-after-greedy", mr("A.price AS p", "PATTERN (A B* C? D) DEFINE B AS B.price > 1"), tickerSkip},
	{"err-define-unknown", mr("A.price AS p", "PATTERN (A B) DEFINE X AS X.price > 1"), tickerSkip},
	// Rows out of order: those behind the watermark (time - 1 second) are
	// late and dropped before the NFA sees them.
	{"late-rows", mr("FIRST(A.rowtime) AS s, LAST(rowtime) AS e, COUNT(*) AS n", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+? C) DEFINE A AS A.price < 10, C AS C.price > 20"),
		tickerRows([4]any{"X", 5, 1, "10:00:00"}, [4]any{"X", 12, 1, "10:00:05"}, [4]any{"X", 25, 1, "10:00:02"}, [4]any{"X", 13, 1, "10:00:06"},
			[4]any{"X", 30, 1, "10:00:07"}, [4]any{"X", 4, 1, "10:00:08"}, [4]any{"X", 22, 1, "10:00:07.500"}, [4]any{"X", 40, 1, "10:00:10"})},
}

// randomPatterns are matched against the random sequences: DEFINE over the
// symbol column s (a, b or c) and the value v, with MEASURES that show
// which rows each match took.
var randomPatterns = []struct{ name, measures, rest string }{
	{"abc-greedy", "FIRST(A.ts) AS s, LAST(ts) AS e, COUNT(B.v) AS nb", "PATTERN (A B+ C) DEFINE A AS A.s = 'a', B AS B.s = 'b', C AS C.s = 'c'"},
	{"abc-star-past", "FIRST(A.ts) AS s, LAST(ts) AS e, COUNT(B.v) AS nb", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B* C) DEFINE A AS A.s = 'a', B AS B.s <> 'c', C AS C.s = 'c'"},
	{"reluctant-values", "FIRST(A.ts) AS s, LAST(ts) AS e, SUM(B.v) AS sb", "PATTERN (A B*? C) DEFINE A AS A.v > 5, B AS B.v < 5, C AS C.v >= 5"},
	{"rising", "FIRST(A.ts) AS s, LAST(A.ts) AS e, COUNT(A.v) AS n, B.v AS b", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A{2,4} B) DEFINE A AS LAST(A.v, 1) IS NULL OR A.v > LAST(A.v, 1), B AS B.v <= LAST(A.v)"},
	{"sum-limit", "FIRST(ts) AS s, LAST(ts) AS e, SUM(A.v) AS total", "AFTER MATCH SKIP TO LAST A PATTERN (A+ B) DEFINE A AS SUM(A.v) < 20"},
	{"optional-mid", "FIRST(A.ts) AS s, COUNT(B.v) AS nb, LAST(C.ts) AS c, MATCH_ROWTIME() AS mt", "AFTER MATCH SKIP TO NEXT ROW PATTERN (A B? C+? D) DEFINE A AS A.s = 'a', B AS B.v > 7, C AS C.s <> 'a', D AS D.s = 'a'"},
	{"within", "FIRST(A.ts) AS s, LAST(ts) AS e", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+? C) WITHIN INTERVAL '5' SECOND DEFINE A AS A.v < 3, C AS C.v > 7"},
	{"avg-greedy", "FIRST(ts) AS s, LAST(ts) AS e, AVG(A.v) AS av", "PATTERN (A{2,} B) DEFINE A AS AVG(A.v) >= 4, B AS B.v < 3"},
	// Greedy variables whose condition overlaps the next one's.
	{"greedy-overlap", "FIRST(A.ts) AS s, COUNT(B.v) AS nb, C.v AS c", "PATTERN (A B+ C) DEFINE A AS A.s = 'a', B AS B.v > 2, C AS C.v > 5"},
	{"times-greedy-overlap", "FIRST(A.ts) AS s, COUNT(B.v) AS nb, C.v AS c", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B{1,3} C) DEFINE B AS B.v > 3, C AS C.v > 6"},
	{"times-reluctant-overlap", "FIRST(A.ts) AS s, COUNT(B.v) AS nb, C.v AS c", "PATTERN (A B{1,3}? C) DEFINE B AS B.v > 3, C AS C.v > 6"},
	{"upto-greedy", "FIRST(A.ts) AS s, COUNT(B.v) AS nb, LAST(ts) AS e", "PATTERN (A B{,2} C) DEFINE A AS A.s = 'b', B AS B.v < 6, C AS C.v < 8"},
	{"plus-then-optional", "FIRST(A.ts) AS s, COUNT(A.v) AS na, COUNT(B.v) AS nb, LAST(ts) AS e", "PATTERN (A+? B? C) DEFINE A AS A.v < 7, B AS B.s = 'c', C AS C.v >= 5"},
	{"skip-to-first", "FIRST(A.ts) AS s, FIRST(B.ts) AS b, LAST(ts) AS e", "AFTER MATCH SKIP TO FIRST B PATTERN (A B+? C) DEFINE A AS A.s = 'a', B AS B.s <> 'a', C AS C.s = 'a'"},
	{"running-sum", "FIRST(ts) AS s, LAST(ts) AS e, SUM(v) AS total, COUNT(*) AS n", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B*? C) DEFINE B AS SUM(v) < 15, C AS SUM(v) >= 15 AND FIRST(v) < C.v"},
	{"first-offset", "FIRST(A.ts) AS s, FIRST(A.v, 1) AS a2, LAST(A.v, 1) AS al", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A{3} B) DEFINE A AS FIRST(A.v) <= A.v, B AS B.v < FIRST(A.v, 1)"},
	// Greedy star in the middle, its condition overlapping the next one's.
	{"star-overlap", "FIRST(A.ts) AS s, COUNT(B.v) AS nb, LAST(ts) AS e", "PATTERN (A B* C D) DEFINE A AS A.s = 'a', B AS B.v > 3, C AS C.v > 5, D AS D.v < 5"},
	{"times-or-more", "FIRST(A.ts) AS s, COUNT(A.v) AS na, B.v AS b", "AFTER MATCH SKIP TO LAST A PATTERN (X A{2,} B) DEFINE X AS X.v > 8, A AS A.v < 8, B AS B.v >= 8"},
	{"count-star-define", "FIRST(ts) AS s, LAST(ts) AS e, COUNT(*) AS n, MIN(B.v) AS lo, MAX(B.v) AS hi", "PATTERN (A B+? C) DEFINE A AS A.v = 0 OR A.v = 9, B AS COUNT(*) <= 5, C AS C.v > MAX(B.v)"},
	{"last-any-offset", "FIRST(ts) AS s, LAST(ts) AS e, LAST(v, 2) AS v2", "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B C) DEFINE B AS B.v > LAST(v, 1), C AS C.v > LAST(v, 1) AND C.v > LAST(v, 2)"},
	{"within-ties", "FIRST(A.ts) AS s, LAST(ts) AS e, COUNT(B.v) AS nb", "PATTERN (A B*? C) WITHIN INTERVAL '3' SECOND DEFINE A AS A.s = 'b', C AS C.s = 'b'"},
	{"reluctant-plus-plus", "FIRST(A.ts) AS s, COUNT(A.v) AS na, COUNT(B.v) AS nb, C.v AS c", "PATTERN (A+? B+? C) DEFINE A AS A.v < 6, B AS B.v > 2, C AS C.v = 9"},
	{"optional-first", "FIRST(ts) AS s, COUNT(A.v) AS na, B.v AS b", "PATTERN (A? B C) DEFINE A AS A.s = 'c', B AS B.v > 4, C AS C.v < B.v"},
	{"order-by-value", "FIRST(A.ts) AS s, A.v AS a, B.v AS b, C.v AS c", "PATTERN (A B C) DEFINE B AS B.v >= A.v, C AS C.v < B.v"},
}

// randomEvents is a seeded sequence of n rows over keys: each row one of
// a, b, c and a value 0-9, times mostly rising by 0-2 seconds (equal
// times keep their order of arrival).
func randomEvents(seed uint64, n int, keys []string) string {
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	sec := 0
	for range n {
		sec += r.IntN(3)
		fmt.Fprintf(&b, `{"k":"%s","s":"%s","v":%d,"ts":"2024-01-01 %02d:%02d:%02d"}`+"\n",
			keys[r.IntN(len(keys))], []string{"a", "b", "c"}[r.IntN(3)], r.IntN(10), 10+sec/3600, sec/60%60, sec%60)
	}
	return b.String()
}

func matchCases() []genCase {
	var out []genCase
	for _, c := range matchDocCases {
		out = append(out, genCase{name: "mr-" + c.name, header: []string{tableTicker}, query: c.query, data: map[string]string{"ticker": c.data}})
	}
	for _, name := range []string{"doc-avg", "skip-next", "times"} {
		for _, c := range matchDocCases {
			if c.name == name {
				out = append(out, genCase{name: "mr-batch-" + c.name, header: []string{"mode: batch", tableTicker}, query: c.query, data: map[string]string{"ticker": c.data}})
			}
		}
	}
	const tableEv = "table: ev (k STRING, s STRING, v INT, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND"
	for i, seq := range []string{randomEvents(1, 300, []string{"x", "y", "z"}), randomEvents(2, 400, []string{"x"})} {
		for _, p := range randomPatterns {
			order := "ts"
			if p.name == "order-by-value" {
				order = "ts, v DESC"
			}
			q := "SELECT * FROM ev MATCH_RECOGNIZE (PARTITION BY k ORDER BY " + order + " MEASURES " + p.measures + " " + p.rest + ") AS T"
			out = append(out, genCase{name: fmt.Sprintf("mr-random%d-%s", i+1, p.name), header: []string{tableEv}, query: q, data: map[string]string{"ev": seq}})
		}
	}
	return out
}
