package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// overOrders: product, amount, event time in ms. Equal times (peers in a
// RANGE frame, arrival order in a ROWS frame), rows out of order within
// the watermark's delay (3 s), gaps that split sessions and a row (b at
// 11 s) that closes the gap between two open ones. No row is late under
// any watermark schedule (each is above the highest time before it minus
// 3 s): Flink's file source moves the watermark between records, etld's
// between batches.
var overOrders = []string{
	"a,1,1000", "b,10,1000", "a,2,2000", "a,3,2000", "b,20,1500",
	"a,4,4000", "a,5,3500", "b,30,9000", "a,6,9000", "a,7,8500",
	"b,40,12000", "b,50,11000", "a,8,12500", "a,9,12500", "b,60,12000",
}

// overQueries are the same SQL for etld and Flink, over table orders.
var overQueries = map[string]string{
	"rows": `SELECT product, amount, SUM(amount) OVER w AS s, COUNT(*) OVER w AS n, MAX(amount) OVER w AS hi, MIN(amount) OVER w AS lo
FROM orders WINDOW w AS (PARTITION BY product ORDER BY event_time ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)`,
	"range": `SELECT product, amount, SUM(amount) OVER w AS s, COUNT(*) OVER w AS n, FIRST_VALUE(amount) OVER w AS f
FROM orders WINDOW w AS (PARTITION BY product ORDER BY event_time RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)`,
	"unbounded": `SELECT product, amount, SUM(amount) OVER (PARTITION BY product ORDER BY event_time) AS s,
  AVG(amount) OVER (PARTITION BY product ORDER BY event_time) AS av FROM orders`,
	"rows_unbounded": `SELECT amount, COUNT(*) OVER w AS n, LAST_VALUE(amount) OVER w AS l
FROM orders WINDOW w AS (ORDER BY event_time ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`,
	"session": `SELECT product, window_start, window_end, COUNT(*) AS n, SUM(amount) AS total
FROM TABLE(SESSION(TABLE orders PARTITION BY product, DESCRIPTOR(event_time), INTERVAL '2' SECOND))
GROUP BY product, window_start, window_end`,
}

// TestOverAndSessionAgainstFlink runs each query on etld (into a print
// sink) and on Flink in local mode over the same file, and compares the
// rows each prints, as multisets (the order of rows of different
// partitions that one watermark releases is not promised).
func TestOverAndSessionAgainstFlink(t *testing.T) {
	testenv.Flink(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(data, []byte(strings.Join(overOrders, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(overQueries))
	for name := range overQueries {
		names = append(names, name)
	}
	slices.Sort(names)
	var scripts []string
	for _, name := range names {
		script := filepath.Join(dir, name+".sql")
		text := fmt.Sprintf(`CREATE TABLE orders (
  product STRING, amount BIGINT, ts BIGINT,
  event_time AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR event_time AS event_time - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
%s;
`, data, overQueries[name])
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	flink := testenv.RunFlink(t, 2*time.Minute, scripts...)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			if flink[i].Err != "" {
				t.Fatalf("Flink: %s", flink[i].Err)
			}
			got := printLines(t, dir, data, overQueries[name])
			want := strings.Split(strings.TrimSuffix(flink[i].Out, "\n"), "\n")
			if len(want) < 3 {
				t.Fatalf("Flink printed too little to compare: %q", flink[i].Out)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("etld printed\n%s\nFlink printed\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// printLines runs query over the orders file into etld's print sink and
// returns the lines it printed.
func printLines(t *testing.T, dir, data, query string) []string {
	t.Helper()
	yaml := fmt.Sprintf(`version: 1
name: over
sources:
  - name: orders
    type: file
    path: %s
    schema:
      - product STRING
      - amount BIGINT
      - ts BIGINT
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '3' SECOND
transforms:
  - name: q
    sql: |
      %s
sinks:
  - name: out
    from: q
    type: print
`, data, strings.ReplaceAll(query, "\n", "\n      "))
	// The print sink writes to os.Stdout as it is when the sink is built.
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	stdout := os.Stdout
	os.Stdout = out
	func() {
		defer func() { os.Stdout = stdout }()
		runFile(t, dir, yaml)
	}()
	text, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
}
