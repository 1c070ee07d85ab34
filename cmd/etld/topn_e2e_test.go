package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
)

// topNSales is the input of the Top-N and deduplication end-to-end tests:
// category, item, amount, event time in ms (out of order for item y).
const topNSales = `a,x,10,1000
a,y,20,2000
a,z,15,3000
a,w,5,4000
b,q,1,5000
a,y,30,1500
b,q,2,6000
b,r,7,7000
`

// topNCases are queries over that input whose printed changelog must be
// Flink's, change for change: each strategy, with and without the rank
// number, a rank range, and deduplication on event time. Window Top-N and
// batch results are compared as sorted lines: within one window (or at the
// end of a batch run) the order of partitions is Flink's hash order.
var topNCases = []struct {
	name, sql     string
	sorted, batch bool
}{
	{"append_rank", "SELECT cat, item, amount, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount DESC) AS rn FROM sales) WHERE rn <= 2", false, false},
	{"append_no_rank", "SELECT cat, item, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount DESC) AS rn FROM sales) WHERE rn <= 2", false, false},
	{"append_range", "SELECT cat, item, amount, rn FROM (SELECT cat, item, amount, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount ASC) AS rn FROM sales) WHERE rn BETWEEN 2 AND 3", false, false},
	{"retract_rank", "SELECT * FROM (SELECT cat, item, total, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY total DESC) AS rn FROM (SELECT cat, item, SUM(amount) AS total FROM sales GROUP BY cat, item)) WHERE rn <= 2", false, false},
	{"retract_no_rank", "SELECT cat, item, total FROM (SELECT cat, item, total, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY total DESC) AS rn FROM (SELECT cat, item, SUM(amount) AS total FROM sales GROUP BY cat, item)) WHERE rn <= 2", false, false},
	// Flink's UpdateFastStrategy: an updating input with a unique key
	// (cat, item) whose sort field only grows (COUNT, MAX).
	{"update_fast_count", "SELECT * FROM (SELECT cat, item, c, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY c DESC) AS rn FROM (SELECT cat, item, COUNT(*) AS c FROM sales GROUP BY cat, item)) WHERE rn <= 2", false, false},
	{"update_fast_no_rank", "SELECT cat, item, c FROM (SELECT cat, item, c, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY c DESC) AS rn FROM (SELECT cat, item, COUNT(*) AS c FROM sales GROUP BY cat, item)) WHERE rn <= 2", false, false},
	{"update_fast_max", "SELECT * FROM (SELECT cat, item, m, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY m DESC) AS rn FROM (SELECT cat, item, MAX(amount) AS m FROM sales GROUP BY cat, item)) WHERE rn <= 1", false, false},
	{"dedup_last_rowtime", "SELECT item, amount FROM (SELECT item, amount, ROW_NUMBER() OVER (PARTITION BY item ORDER BY event_time DESC) AS rn FROM sales) WHERE rn = 1", false, false},
	{"dedup_first_rowtime", "SELECT item, amount FROM (SELECT item, amount, ROW_NUMBER() OVER (PARTITION BY item ORDER BY event_time) AS rn FROM sales) WHERE rn = 1", false, false},
	{"window_topn_agg", "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn FROM (SELECT window_start, window_end, cat, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(event_time), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, cat)) WHERE rn <= 1", true, false},
	{"window_topn_hop", "SELECT window_start, window_end, item, amount, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY amount DESC) AS rn FROM TABLE(HOP(TABLE sales, DESCRIPTOR(event_time), INTERVAL '2' SECOND, INTERVAL '4' SECOND))) WHERE rn <= 2", true, false},
	{"window_topn_cumulate", "SELECT window_start, window_end, cat, item, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, cat ORDER BY amount DESC) AS rn FROM TABLE(CUMULATE(TABLE sales, DESCRIPTOR(event_time), INTERVAL '2' SECOND, INTERVAL '6' SECOND))) WHERE rn <= 1", true, false},
	{"window_dedup_last", "SELECT window_start, item, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, item ORDER BY event_time DESC) AS rn FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(event_time), INTERVAL '5' SECOND))) WHERE rn = 1", true, false},
	{"window_dedup_first", "SELECT window_start, item, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, item ORDER BY event_time) AS rn FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(event_time), INTERVAL '5' SECOND))) WHERE rn = 1", true, false},
	// Over SESSION: rows wait for their session to end (a session-assign
	// step), then rank within it.
	{"window_topn_session", "SELECT window_start, window_end, cat, item, amount, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY amount DESC) AS rn FROM TABLE(SESSION(TABLE sales PARTITION BY cat, DESCRIPTOR(event_time), INTERVAL '1' SECOND))) WHERE rn <= 2", true, false},
	{"window_dedup_session", "SELECT window_start, window_end, cat, item, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, cat ORDER BY event_time DESC) AS rn FROM TABLE(SESSION(TABLE sales PARTITION BY cat, DESCRIPTOR(event_time), INTERVAL '1' SECOND))) WHERE rn = 1", true, false},
	{"window_topn_session_agg", "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn FROM (SELECT window_start, window_end, cat, SUM(amount) AS total FROM TABLE(SESSION(TABLE sales PARTITION BY cat, DESCRIPTOR(event_time), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, cat)) WHERE rn <= 1", true, false},
	{"batch_rank", "SELECT cat, item, amount, rk FROM (SELECT *, RANK() OVER (PARTITION BY cat ORDER BY amount DESC) AS rk FROM sales) WHERE rk <= 2", true, true},
	{"batch_dense_rank", "SELECT cat, amount, rk FROM (SELECT cat, amount, DENSE_RANK() OVER (PARTITION BY cat ORDER BY amount) AS rk FROM sales) WHERE rk BETWEEN 2 AND 3", true, true},
}

func writeSales(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "sales.csv")
	if err := os.WriteFile(path, []byte(topNSales), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const salesSource = `sources:
  - name: sales
    type: file
    path: %s
    schema:
      - cat STRING
      - item STRING
      - amount BIGINT
      - ts BIGINT
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '5' SECOND
`

// TestTopNMatchesFlink runs each query through etld into print and through
// Flink (local mode) into its print form, and compares the changelogs.
func TestTopNMatchesFlink(t *testing.T) {
	dir := t.TempDir()
	data := writeSales(t, dir)
	var scripts []string
	for _, tc := range topNCases {
		script := filepath.Join(dir, tc.name+".sql")
		mode := ""
		if tc.batch {
			mode = "SET 'execution.runtime-mode' = 'batch';\n"
		}
		text := mode + fmt.Sprintf(`CREATE TABLE sales (cat STRING, item STRING, amount BIGINT, ts BIGINT,
  event_time AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
%s;
`, data, tc.sql)
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	flink := testenv.RunFlink(t, 5*time.Minute, scripts...)
	for i, tc := range topNCases {
		t.Run(tc.name, func(t *testing.T) {
			if flink[i].Err != "" {
				t.Fatalf("Flink failed: %s", flink[i].Err)
			}
			execution := "streaming"
			if tc.batch {
				execution = "batch"
			}
			yaml := fmt.Sprintf("version: 1\nname: %s\nexecution: "+execution+"\n"+salesSource+"transforms:\n  - name: q\n    sql: %s\nsinks:\n  - name: out\n    from: q\n    type: print\n", tc.name, data, tc.sql)
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := etld(t, dir, "run", "--quiet", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tc.sorted {
				stdout, flink[i].Out = sortedLines(stdout), sortedLines(flink[i].Out)
			}
			if stdout != flink[i].Out {
				t.Errorf("etld printed:\n%s\nFlink printed:\n%s", stdout, flink[i].Out)
			}
		})
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestTopNIntoMySQL runs a Top-N (upsert key category + rn), a Top-N over
// an updating aggregate and a keep-last deduplication into MySQL upsert
// sinks and checks the final tables.
func TestTopNIntoMySQL(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	dir := t.TempDir()
	data := writeSales(t, dir)
	top, best, last, first := testenv.UniqueName(t, "top"), testenv.UniqueName(t, "best"), testenv.UniqueName(t, "last"), testenv.UniqueName(t, "first")
	t.Cleanup(func() {
		for _, tab := range []string{top, best, last, first} {
			db.Exec("DROP TABLE IF EXISTS " + tab)
		}
	})
	yaml := fmt.Sprintf(`version: 1
name: topn_mysql
`+strings.Replace(salesSource, "    watermark:", "      - pt AS PROCTIME()\n    watermark:", 1)+`transforms:
  - name: first_seen
    sql: SELECT item, amount FROM (SELECT item, amount, ROW_NUMBER() OVER (PARTITION BY item ORDER BY pt) AS rn FROM sales) WHERE rn = 1
  - name: top2
    sql: SELECT cat, rn, item, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY amount DESC) AS rn FROM sales) WHERE rn <= 2
  - name: best
    sql: |
      SELECT cat, item, total FROM (
        SELECT cat, item, total, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY total DESC) AS rn
        FROM (SELECT cat, item, SUM(amount) AS total FROM sales GROUP BY cat, item))
      WHERE rn = 1
  - name: newest
    sql: SELECT item, amount FROM (SELECT item, amount, ROW_NUMBER() OVER (PARTITION BY item ORDER BY event_time DESC) AS rn FROM sales) WHERE rn = 1
sinks:
  - name: top_db
    from: top2
    type: mysql
    dsn: ${TOPN_DSN}
    table: %s
    create_table: true
  - name: best_db
    from: best
    type: mysql
    dsn: ${TOPN_DSN}
    table: %s
    create_table: true
  - name: last_db
    from: newest
    type: mysql
    dsn: ${TOPN_DSN}
    table: %s
    create_table: true
  - name: first_db
    from: first_seen
    type: mysql
    dsn: ${TOPN_DSN}
    table: %s
    create_table: true
    key: [item]
`, data, top, best, last, first)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOPN_DSN", dsn)
	explain, stderr, code := etld(t, dir, "explain", path)
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"top_db: mysql <- top2, mode=upsert on [cat, rn]",
		"best_db: mysql <- best, mode=upsert on [cat]",
		"last_db: mysql <- newest, mode=upsert on [item]",
		"Rank(strategy=RetractStrategy, rankRange=[1..1], partitionBy=[cat], orderBy=[total DESC], outputRankNumber=false)",
		"Deduplicate(keep=LastRow, key=[item], order=ROWTIME)",
		"Deduplicate(keep=FirstRow, key=[item], order=PROCTIME), changelogMode=[I], upsertKey=[item]",
	} {
		if !strings.Contains(explain, want) {
			t.Errorf("explain lacks %q:\n%s", want, explain)
		}
	}
	if _, stderr, code := etld(t, dir, "run", "--quiet", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, tc := range []struct{ table, query, want string }{
		{top, "SELECT cat, rn, item, amount FROM %s ORDER BY cat, rn", "a,1,y,30 a,2,y,20 b,1,r,7 b,2,q,2"},
		{best, "SELECT cat, item, total FROM %s ORDER BY cat", "a,y,50 b,r,7"},
		{last, "SELECT item, amount FROM %s ORDER BY item", "q,2 r,7 w,5 x,10 y,20 z,15"},
		{first, "SELECT item, amount FROM %s ORDER BY item", "q,1 r,7 w,5 x,10 y,20 z,15"},
	} {
		if got := queryRows(t, db, fmt.Sprintf(tc.query, tc.table)); got != tc.want {
			t.Errorf("%s holds %q, want %q", tc.table, got, tc.want)
		}
	}
}

// queryRows returns a query's rows, columns joined by commas, rows by
// spaces.
func queryRows(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = v.String
		}
		out = append(out, strings.Join(s, ","))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}
