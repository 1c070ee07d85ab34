package conformance

import (
	"fmt"
	"time"
)

// The rest of Flink's stream OverAggregateITCase (runtime/stream/sql):
// LAG over rows of equal times, bounded and unbounded ROWS and RANGE
// frames on event time, partitioned or not, processing-time ROWS frames,
// ROW_NUMBER, RANK and DENSE_RANK on processing time, DISTINCT
// aggregates and NULL values.
//
// Adapted for the case format: the ITCases' sources emit their watermarks
// between rows (Right(wm)) and drop the rows behind them; a file source's
// watermark is its largest time less a delay, here a minute, so no row
// is late and equal times stay in file order. The user aggregates
// (LTCNT, CntNullNonNull, PairCount) and PERCENTILE are left out, and
// processing-time RANGE frames, whose peers are the rows of one
// millisecond of the clock, are too.

func init() { areaCases = append(areaCases, itcaseOver29Cases) }

// overMS is a row of an ITCase's source: its time in epoch milliseconds
// and its fields.
type overMS struct {
	ms     int64
	fields []any
}

// overTable writes rows as a table of cols plus ts, the time attribute.
func overTable(name, cols string, names []string, rows []overMS) [2]string {
	data := make([][]any, len(rows))
	for i, r := range rows {
		ts := time.UnixMilli(r.ms).UTC().Format("2006-01-02 15:04:05.000")
		data[i] = append(append([]any(nil), r.fields...), ts)
	}
	return [2]string{fmt.Sprintf("table: %s (%s, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' MINUTE", name, cols),
		itJSON(append(append([]string(nil), names...), "ts"), data)}
}

var itOverTables = map[string][2]string{
	// testLagFunction.
	"LG": overTable("LG", "a INT, b BIGINT, c STRING", []string{"a", "b", "c"}, []overMS{
		{14000001, []any{1, 1, "Hi"}}, {14000005, []any{1, 2, "Hi"}}, {14000002, []any{1, 3, "Hello"}},
		{14000003, []any{1, 4, "Hello"}}, {14000003, []any{1, 5, "Hello"}}, {14000021, []any{1, 6, "Hello world"}},
		{14000022, []any{1, 7, "Hello world"}},
	}),
	// testRowTimeBoundedPartitionedRangeOver (and NonPartitioned).
	"RB": overTable("RB", "a BIGINT, b INT, c STRING", []string{"a", "b", "c"}, []overMS{
		{1500, []any{1, 15, "Hello"}}, {1600, []any{1, 16, "Hello"}}, {1000, []any{1, 1, "Hello"}}, {2000, []any{2, 2, "Hello"}},
		{2000, []any{2, 2, "Hello"}}, {2000, []any{2, 3, "Hello"}}, {3000, []any{3, 3, "Hello"}}, {4000, []any{4, 4, "Hello"}},
		{5000, []any{5, 5, "Hello"}}, {6000, []any{6, 6, "Hello"}}, {6500, []any{6, 65, "Hello"}}, {9000, []any{6, 9, "Hello"}},
		{9500, []any{6, 18, "Hello"}}, {9000, []any{6, 9, "Hello"}}, {10000, []any{7, 7, "Hello World"}}, {11000, []any{7, 17, "Hello World"}},
		{11000, []any{7, 77, "Hello World"}}, {14000, []any{7, 18, "Hello World"}}, {15000, []any{8, 8, "Hello World"}}, {20000, []any{20, 20, "Hello World"}},
	}),
	// testRowTimeBoundedPartitionedRowsOver.
	"RR": overTable("RR", "a BIGINT, b INT, c STRING", []string{"a", "b", "c"}, []overMS{
		{1, []any{1, 1, "Hello"}}, {2, []any{2, 2, "Hello"}}, {1, []any{1, 1, "Hello"}}, {2, []any{2, 2, "Hello"}},
		{2, []any{2, 2, "Hello"}}, {1, []any{1, 1, "Hello"}}, {3, []any{7, 7, "Hello World"}}, {1, []any{7, 7, "Hello World"}},
		{1, []any{7, 7, "Hello World"}}, {3, []any{3, 3, "Hello"}}, {4, []any{4, 4, "Hello"}}, {5, []any{5, 5, "Hello"}},
		{6, []any{6, 6, "Hello"}}, {20, []any{20, 20, "Hello World"}}, {8, []any{8, 8, "Hello World"}}, {7, []any{7, 7, "Hello World"}},
	}),
	// testRowTimeBoundedNonPartitionedRowsOver (its late row kept).
	"RN": overTable("RN", "a BIGINT, b INT, c STRING", []string{"a", "b", "c"}, []overMS{
		{2, []any{2, 2, "Hello"}}, {2, []any{2, 2, "Hello"}}, {1, []any{1, 1, "Hello"}}, {1, []any{1, 1, "Hello"}},
		{2, []any{2, 2, "Hello"}}, {1, []any{1, 1, "Hello"}}, {20, []any{20, 20, "Hello World"}}, {2, []any{2, 2, "Hello"}},
		{3, []any{3, 3, "Hello"}}, {4, []any{4, 4, "Hello"}}, {5, []any{5, 5, "Hello"}}, {6, []any{6, 6, "Hello"}},
		{7, []any{7, 7, "Hello World"}}, {9, []any{9, 9, "Hello World"}}, {8, []any{8, 8, "Hello World"}}, {8, []any{8, 8, "Hello World"}},
	}),
	// testRowTimeUnBoundedPartitionedRangeOver and NonPartitioned.
	"UR": overTable("UR", "a INT, b BIGINT, c STRING", []string{"a", "b", "c"}, []overMS{
		{14000005, []any{1, 1, "Hi"}}, {14000000, []any{2, 1, "Hello"}}, {14000002, []any{1, 1, "Hello"}}, {14000002, []any{1, 2, "Hello"}},
		{14000002, []any{1, 3, "Hello world"}}, {14000003, []any{2, 2, "Hello world"}}, {14000003, []any{2, 3, "Hello world"}},
		{14000021, []any{1, 4, "Hello world"}}, {14000022, []any{1, 5, "Hello world"}}, {14000022, []any{1, 6, "Hello world"}},
		{14000022, []any{1, 7, "Hello world"}}, {14000023, []any{2, 4, "Hello world"}}, {14000023, []any{2, 5, "Hello world"}},
	}),
	// testRowTimeUnBoundedPartitionedRowsOver2 (its late rows kept).
	"U2": overTable("U2", "a INT, b BIGINT, c STRING", []string{"a", "b", "c"}, []overMS{
		{14000005, []any{1, 1, "Hi"}}, {14000000, []any{2, 1, "Hello"}}, {14000002, []any{3, 1, "Hello"}}, {14000003, []any{1, 2, "Hello"}},
		{14000004, []any{1, 3, "Hello world"}}, {14000007, []any{3, 2, "Hello world"}}, {14000008, []any{2, 2, "Hello world"}},
		{14000008, []any{1, 4, "Hello world"}}, {14000008, []any{2, 3, "Hello world"}}, {14000008, []any{3, 3, "Hello world"}},
		{14000012, []any{1, 5, "Hello world"}}, {14000021, []any{1, 6, "Hello world"}}, {14000019, []any{1, 6, "Hello world"}},
		{14000018, []any{2, 4, "Hello world"}}, {14000018, []any{3, 4, "Hello world"}}, {14000022, []any{2, 5, "Hello world"}},
		{14000022, []any{3, 5, "Hello world"}}, {14000024, []any{1, 7, "Hello world"}}, {14000023, []any{1, 8, "Hello world"}},
		{14000021, []any{1, 9, "Hello world"}},
	}),
	// testTimestampRowTimeDistinctUnboundedPartitionedRangeOverWithNullValues.
	"DN": overTable("DN", "b INT, c STRING", []string{"b", "c"}, []overMS{
		{1000, []any{1, nil}}, {2000, []any{1, nil}}, {3000, []any{2, nil}}, {4000, []any{1, "Hello"}}, {5000, []any{1, "Hello"}},
		{6000, []any{2, "Hello"}}, {7000, []any{1, "Hello World"}}, {8000, []any{2, "Hello World"}}, {9000, []any{2, "Hello World"}},
		{10000, []any{1, nil}},
	}),
	// tupleData5 with a processing-time attribute.
	"T5P": {"table: T5P (a INT, b BIGINT, c INT, d STRING, e BIGINT, pt AS PROCTIME()) json", itJSON([]string{"a", "b", "c", "d", "e"}, itTupleData5)},
	// The ITCase's data of (a, b, c) with a processing-time attribute.
	"P3": {"table: P3 (a BIGINT, b INT, c STRING, pt AS PROCTIME()) json", itJSON([]string{"a", "b", "c"}, [][]any{
		{1, 1, "Hello"}, {2, 2, "Hello"}, {3, 3, "Hello"}, {4, 4, "Hello"}, {5, 5, "Hello"}, {6, 6, "Hello"},
		{7, 7, "Hello World"}, {8, 8, "Hello World"}, {20, 20, "Hello World"},
	})},
	// testDecimalSum0.
	"PD": {"table: PD (d DECIMAL(38, 18), pt AS PROCTIME()) json", "{\"d\":1.11}\n{\"d\":2.22}\n{\"d\":3.33}\n{\"d\":4.44}\n"},
}

const (
	unb  = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
	unbR = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
)

var itcaseOver29Queries = []struct {
	name   string
	tables []string
	query  string
}{
	{"over-lag-ties", []string{"LG"}, "SELECT a, b, c, LAG(b) OVER (PARTITION BY a ORDER BY ts), LAG(b, 2) OVER (PARTITION BY a ORDER BY ts), LAG(b, 2, CAST(10086 AS BIGINT)) OVER (PARTITION BY a ORDER BY ts) FROM LG"},
	{"over-rowtime-bounded-range-partitioned", []string{"RB"}, "SELECT c, b, COUNT(a) OVER (PARTITION BY c ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW), SUM(a) OVER (PARTITION BY c ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM RB"},
	{"over-rowtime-bounded-rows-partitioned", []string{"RR"}, "SELECT c, a, COUNT(1) OVER (PARTITION BY c ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), SUM(a) OVER (PARTITION BY c ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM RR"},
	{"over-rowtime-bounded-range", []string{"RB"}, "SELECT c, b, COUNT(a) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW), SUM(a) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM RB"},
	{"over-rowtime-bounded-rows", []string{"RN"}, "SELECT c, a, COUNT(a) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), SUM(a) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM RN"},
	{"over-rowtime-unbounded-range-partitioned", []string{"UR"}, "SELECT a, b, c, SUM(b) OVER w, COUNT(b) OVER w, AVG(b) OVER w, MAX(b) OVER w, MIN(b) OVER w FROM UR WINDOW w AS (PARTITION BY a ORDER BY ts " + unbR + ")"},
	{"over-rowtime-unbounded-rows-partitioned", []string{"U2"}, "SELECT a, b, c, SUM(b) OVER w, COUNT(b) OVER w, AVG(b) OVER w, MAX(b) OVER w, MIN(b) OVER w FROM U2 WINDOW w AS (PARTITION BY a ORDER BY ts " + unb + ")"},
	{"over-rowtime-unbounded-range", []string{"UR"}, "SELECT a, b, c, SUM(b) OVER (ORDER BY ts " + unbR + "), COUNT(b) OVER (ORDER BY ts " + unbR + "), AVG(b) OVER (ORDER BY ts " + unbR + "), MAX(b) OVER (ORDER BY ts " + unbR + "), MIN(b) OVER (ORDER BY ts " + unbR + ") FROM UR"},
	{"over-rowtime-unbounded-rows", []string{"UR"}, "SELECT a, b, c, SUM(b) OVER (ORDER BY ts " + unb + "), COUNT(b) OVER (ORDER BY ts " + unb + "), MAX(b) OVER (ORDER BY ts " + unb + ") FROM UR"},
	{"over-rowtime-distinct-nulls", []string{"DN"}, "SELECT c, b, COUNT(DISTINCT c) OVER (PARTITION BY b ORDER BY ts RANGE UNBOUNDED PRECEDING), COUNT(c) OVER (PARTITION BY b ORDER BY ts RANGE UNBOUNDED PRECEDING) FROM DN"},
	{"over-proc-row-number", []string{"T5P"}, "SELECT a, b, ROW_NUMBER() OVER (PARTITION BY a ORDER BY pt) FROM T5P"},
	{"over-proc-bounded-rows-partitioned", []string{"T5P"}, "SELECT a, SUM(c) OVER (PARTITION BY a ORDER BY pt ROWS BETWEEN 4 PRECEDING AND CURRENT ROW), MIN(c) OVER (PARTITION BY a ORDER BY pt ROWS BETWEEN 4 PRECEDING AND CURRENT ROW) FROM T5P"},
	{"over-proc-bounded-rows", []string{"T5P"}, "SELECT a, FIRST_VALUE(d) OVER (ORDER BY pt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW), LAST_VALUE(d) OVER (ORDER BY pt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW), SUM(c) OVER (ORDER BY pt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW), MIN(c) OVER (ORDER BY pt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) FROM T5P"},
	{"over-proc-unbounded-rows-partitioned", []string{"P3"}, "SELECT c, sum1, maxnull FROM (SELECT c, MAX(CAST(NULL AS VARCHAR)) OVER (PARTITION BY c ORDER BY pt " + unb + ") AS maxnull, SUM(1) OVER (PARTITION BY c ORDER BY pt " + unb + ") AS sum1 FROM P3)"},
	{"over-proc-unbounded-rows-listagg", []string{"P3"}, "SELECT LISTAGG(DISTINCT c, '|') OVER (ORDER BY pt " + unb + "), COUNT(a) OVER (ORDER BY pt " + unb + ") FROM P3"},
	{"over-proc-distinct-bounded-rows", []string{"T5P"}, "SELECT a, SUM(DISTINCT e) OVER (PARTITION BY a ORDER BY pt ROWS BETWEEN 3 PRECEDING AND CURRENT ROW), MIN(DISTINCT e) OVER (PARTITION BY a ORDER BY pt ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM T5P"},
	{"over-proc-decimal-sum", []string{"PD"}, "SELECT SUM(d) OVER (ORDER BY pt " + unb + ") FROM PD"},
}

func itcaseOver29Cases() []genCase {
	var out []genCase
	for _, q := range itcaseOver29Queries {
		lines, data := readTables(q.tables, itOverTables)
		h := append([]string{"mode: streaming"}, lines...)
		out = append(out, genCase{name: "itcase29-" + q.name, header: h, query: q.query, data: data})
	}
	return out
}
