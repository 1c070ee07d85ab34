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

// windowOf is a window TVF of table t as a subquery aliased a, the form
// Flink's window join documentation uses.
func windowOf(tvf, t, a, args string) string {
	return fmt.Sprintf("(SELECT * FROM TABLE(%s(TABLE %s, DESCRIPTOR(et), %s))) %s", tvf, t, args, a)
}

// windowJoinCases are window joins over the rows of join_interval_e2e's
// files (each in time order within the watermark delay, so no row is
// late in either engine), compared with Flink's folded output.
// A case's view, when set, is a window join the query reads as wj (a
// view in Flink, a transform in etld).
var windowJoinCases = func() []struct{ name, view, sql string } {
	tumble := func(t, a string) string { return windowOf("TUMBLE", t, a, "INTERVAL '1' MINUTE") }
	hop := func(t, a string) string {
		return windowOf("HOP", t, a, "INTERVAL '30' SECOND, INTERVAL '1' MINUTE")
	}
	cumulate := func(t, a string) string {
		return windowOf("CUMULATE", t, a, "INTERVAL '20' SECOND, INTERVAL '1' MINUTE")
	}
	on := " ON o.k = s.k AND o.window_start = s.window_start AND o.window_end = s.window_end"
	sel := "SELECT o.id, s.sid, o.window_start, o.window_end, s.window_start AS sws FROM "
	agg := func(t, a string) string {
		return fmt.Sprintf("(SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE %s, DESCRIPTOR(et), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end) %s", t, a)
	}
	semi := "SELECT o.id, o.k, o.window_start, o.window_end FROM "
	corr := " WHERE o.window_start = s.window_start AND o.window_end = s.window_end"
	// The left window's window_time stays the output's time attribute,
	// so a window aggregate can follow (Flink keeps both sides').
	then := "SELECT window_start, COUNT(*) AS n, MAX(sid) AS m FROM TABLE(TUMBLE(TABLE wj, DESCRIPTOR(wt), INTERVAL '2' MINUTE)) GROUP BY window_start, window_end"
	thenView := "SELECT o.id, s.sid, o.window_time AS wt FROM "
	// GROUP BY window_start, window_end over rows that carry their
	// windows aggregates those windows (Flink's attached windowing):
	// insert-only, one row per window, where a regular GROUP BY would
	// update its rows.
	keepView := "SELECT o.k, s.sid, o.window_start, o.window_end, o.window_time FROM "
	grouped := "SELECT k, window_start, window_end, COUNT(*) AS n, MAX(sid) AS m FROM wj GROUP BY k, window_start, window_end"
	groupedAll := "SELECT window_start, window_end, window_time, COUNT(*) AS n, COUNT(sid) AS c FROM wj GROUP BY window_start, window_end, window_time"
	return []struct{ name, view, sql string }{
		{"window_inner_then_window", thenView + tumble("orders", "o") + " JOIN " + tumble("ships", "s") + on, then},
		{"window_left_then_window", thenView + hop("orders", "o") + " LEFT JOIN " + hop("ships", "s") + on, then},
		{"window_inner_then_group", keepView + tumble("orders", "o") + " JOIN " + tumble("ships", "s") + on, grouped},
		{"window_left_hop_then_group", keepView + hop("orders", "o") + " LEFT JOIN " + hop("ships", "s") + on, groupedAll},
		{"window_inner_cumulate_then_group", keepView + cumulate("orders", "o") + " JOIN " + cumulate("ships", "s") + on, grouped},
		{"cascade_hop_then_group", "SELECT k, window_start, window_end, window_time, COUNT(*) AS sid FROM TABLE(HOP(TABLE orders, DESCRIPTOR(et), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end, window_time", "SELECT window_start, window_end, COUNT(*) AS keys, SUM(sid) AS n FROM wj GROUP BY window_start, window_end"},
		{"window_inner_tumble", "", sel + tumble("orders", "o") + " JOIN " + tumble("ships", "s") + on},
		{"window_left_tumble", "", sel + tumble("orders", "o") + " LEFT JOIN " + tumble("ships", "s") + on},
		{"window_full_tumble", "", sel + tumble("orders", "o") + " FULL OUTER JOIN " + tumble("ships", "s") + on},
		{"window_inner_hop", "", sel + hop("orders", "o") + " JOIN " + hop("ships", "s") + on},
		{"window_left_hop", "", sel + hop("orders", "o") + " LEFT JOIN " + hop("ships", "s") + on + " AND s.sid > 10"},
		{"window_full_hop", "", sel + hop("orders", "o") + " FULL JOIN " + hop("ships", "s") + on},
		{"window_right_cumulate", "", sel + cumulate("orders", "o") + " RIGHT JOIN " + cumulate("ships", "s") + on},
		{"window_full_after_aggregates", "", "SELECT o.k, o.n, s.n AS sn, o.window_start, s.window_end FROM " + agg("orders", "o") + " FULL JOIN " + agg("ships", "s") + on},
		{"window_semi_in", "", semi + tumble("orders", "o") + " WHERE o.k IN (SELECT s.k FROM " + tumble("ships", "s") + corr + ")"},
		{"window_anti_not_in", "", semi + tumble("orders", "o") + " WHERE o.k NOT IN (SELECT s.k FROM " + tumble("ships", "s") + corr + ")"},
		{"window_semi_exists", "", semi + hop("orders", "o") + " WHERE EXISTS (SELECT * FROM " + hop("ships", "s") + corr + " AND o.k = s.k)"},
		{"window_anti_not_exists", "", semi + hop("orders", "o") + " WHERE NOT EXISTS (SELECT * FROM " + hop("ships", "s") + corr + " AND o.k = s.k)"},
	}
}()

// TestWindowJoinsMatchFlink runs each window join through etld and
// through Flink into print and compares the folded outputs.
func TestWindowJoinsMatchFlink(t *testing.T) {
	dir := t.TempDir()
	orders, ships := filepath.Join(dir, "orders.csv"), filepath.Join(dir, "ships.csv")
	for path, data := range map[string]string{orders: timedOrders, ships: timedShips} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var scripts []string
	for _, tc := range windowJoinCases {
		script := filepath.Join(dir, tc.name+".sql")
		text := fmt.Sprintf(timedDDL, orders, ships)
		if tc.view != "" {
			text += "CREATE TEMPORARY VIEW wj AS " + tc.view + ";\n"
		}
		text += tc.sql + ";\n"
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	flink := testenv.RunFlink(t, 5*time.Minute, scripts...)
	for i, tc := range windowJoinCases {
		t.Run(tc.name, func(t *testing.T) {
			if flink[i].Err != "" {
				t.Fatalf("Flink failed: %s", flink[i].Err)
			}
			yaml := fmt.Sprintf("version: 1\nname: %s\n"+timedSources, tc.name, orders, ships)
			if tc.view != "" {
				yaml += fmt.Sprintf("  - name: wj\n    sql: %q\n", tc.view)
			}
			yaml += fmt.Sprintf("  - name: q\n    sql: %q\nsinks:\n  - {name: out, from: q, type: print}\n", tc.sql)
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			explain, stderr, code := etld(t, dir, "explain", path)
			if code != 0 {
				t.Fatalf("explain: exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(tc.name, "cascade_") && !strings.Contains(explain, "WindowJoin(joinType=") {
				t.Fatalf("not planned as a window join:\n%s", explain)
			}
			stdout, stderr, code := etld(t, dir, "run", "--quiet", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout, "-D[") || strings.Contains(stdout, "-U[") {
				t.Errorf("a window join retracted:\n%s", stdout)
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
