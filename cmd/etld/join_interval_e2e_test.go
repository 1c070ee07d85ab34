package main

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

// Rows of each file come in time order within the 5 s watermark delay, so
// that no row is late: which late rows still join depends on how the two
// sources interleave, in Flink as in etld (the runtime tests cover them).
const timedOrders = `1,a,1000
2,b,2000
3,a,60000
4,c,61000
5,,62000
6,a,200000
7,a,201000
`

const timedShips = `10,a,3000
11,a,30000
13,c,55000
14,,62000
15,a,190000
16,d,250000
12,b,400000
`

// timeJoinCases are interval and window joins compared with Flink's
// folded output.
var timeJoinCases = []struct{ name, sql string }{
	{"interval_inner", "SELECT o.id, s.sid FROM orders o JOIN ships s ON o.k = s.k AND o.et BETWEEN s.et - INTERVAL '10' SECOND AND s.et + INTERVAL '5' SECOND"},
	{"interval_left", "SELECT o.id, s.sid FROM orders o LEFT JOIN ships s ON o.k = s.k AND o.et >= s.et - INTERVAL '20' SECOND AND o.et < s.et + INTERVAL '11' SECOND"},
	{"interval_right", "SELECT o.id, s.sid, s.et FROM orders o RIGHT JOIN ships s ON o.k = s.k AND s.et > o.et AND s.et <= o.et + INTERVAL '2' SECOND"},
	{"interval_full", "SELECT o.id, s.sid, o.et, CAST(s.et AS TIMESTAMP_LTZ(3)) AS ship_et FROM orders o FULL JOIN ships s ON o.k = s.k AND o.et BETWEEN s.et - INTERVAL '10' SECOND AND s.et + INTERVAL '15' SECOND"},
	{"interval_residual", "SELECT o.id, s.sid FROM orders o LEFT JOIN ships s ON o.k = s.k AND s.et BETWEEN o.et - INTERVAL '30' SECOND AND o.et + INTERVAL '30' SECOND AND s.sid > 10"},
	{"interval_no_key", "SELECT o.id, s.sid FROM orders o JOIN ships s ON o.et BETWEEN s.et - INTERVAL '2' SECOND AND s.et + INTERVAL '2' SECOND"},
	{"interval_negative", "SELECT o.id, s.sid FROM orders o FULL JOIN ships s ON o.k = s.k AND o.et BETWEEN s.et + INTERVAL '5' SECOND AND s.et - INTERVAL '5' SECOND"},
	{"interval_then_window", "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE j, DESCRIPTOR(et), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"},
}

const timedDDL = `CREATE TABLE orders (id INT, k STRING, ts BIGINT, et AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR et AS et - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', 'csv.null-literal' = '');
CREATE TABLE ships (sid INT, k STRING, ts BIGINT, et AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR et AS et - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', 'csv.null-literal' = '');
CREATE TEMPORARY VIEW j AS SELECT o.id, o.et, s.sid FROM orders o JOIN ships s ON o.k = s.k AND o.et BETWEEN s.et - INTERVAL '60' SECOND AND s.et + INTERVAL '60' SECOND;
`

const timedSources = `sources:
  - name: orders
    type: file
    path: %s
    format: {type: csv, null_literal: ""}
    schema: [id INT, k STRING, ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
  - name: ships
    type: file
    path: %s
    format: {type: csv, null_literal: ""}
    schema: [sid INT, k STRING, ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
transforms:
  - name: j
    sql: SELECT o.id, o.et, s.sid FROM orders o JOIN ships s ON o.k = s.k AND o.et BETWEEN s.et - INTERVAL '60' SECOND AND s.et + INTERVAL '60' SECOND
`

// TestTimeJoinsMatchFlink runs each interval and window join through etld
// and through Flink into print and compares the folded outputs.
func TestTimeJoinsMatchFlink(t *testing.T) {
	dir := t.TempDir()
	orders, ships := filepath.Join(dir, "orders.csv"), filepath.Join(dir, "ships.csv")
	for path, data := range map[string]string{orders: timedOrders, ships: timedShips} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var scripts []string
	for _, tc := range timeJoinCases {
		script := filepath.Join(dir, tc.name+".sql")
		text := fmt.Sprintf(timedDDL, orders, ships) + tc.sql + ";\n"
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	flink := testenv.RunFlink(t, 5*time.Minute, scripts...)
	for i, tc := range timeJoinCases {
		t.Run(tc.name, func(t *testing.T) {
			if flink[i].Err != "" {
				t.Fatalf("Flink failed: %s", flink[i].Err)
			}
			yaml := fmt.Sprintf("version: 1\nname: %s\n"+timedSources+"  - name: q\n    sql: %s\nsinks:\n  - {name: out, from: q, type: print}\n",
				tc.name, orders, ships, tc.sql)
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := etld(t, dir, "run", "--quiet", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout, "-D[") || strings.Contains(stdout, "-U[") {
				t.Errorf("a time join retracted:\n%s", stdout)
			}
			got, want := foldPrinted(t, stdout), foldPrinted(t, flink[i].Out)
			if len(want) == 0 {
				t.Fatalf("Flink printed nothing: the case tests nothing")
			}
			if !slices.Equal(got, want) {
				t.Errorf("etld's table:\n%s\nFlink's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
