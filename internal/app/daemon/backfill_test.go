package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
)

// backfillYAML is a followed CSV file's GROUP BY, with `backfill: true`,
// into MySQL table by its key k; sql is the query, sinks more sinks.
func backfillYAML(dir, table, sql, sinks string) string {
	return fmt.Sprintf(`version: 1
name: g
checkpoint_interval: 20ms
backfill: true
sources:
  - name: src
    type: file
    path: %s/in.csv
    follow: true
    monitor_interval: 20ms
    schema: [id INT, k STRING, v BIGINT]
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: mysql
    dsn: ${DAEMON_BACKFILL_DSN}
    table: %s
%s`, dir, sql, table, sinks)
}

// appendRows appends rows [from, to) to dir/in.csv: row i has key
// k(i*7 mod 50) and value i*37 mod 1000.
func appendRows(t *testing.T, dir string, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%d,k%d,%d\n", i, (i*7)%50, (i*37)%1000)
	}
	f, err := os.OpenFile(filepath.Join(dir, "in.csv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
}

// groups is the table of k, COUNT(*), SUM(v) and, with max, MAX(v) over
// rows [0, n), as TableLines gives it.
func groups(n int, max bool) []string {
	type agg struct{ n, s, m int }
	by := map[string]*agg{}
	for i := range n {
		k, v := fmt.Sprintf("k%d", (i*7)%50), (i*37)%1000
		a := by[k]
		if a == nil {
			a = &agg{m: v}
			by[k] = a
		}
		a.n, a.s, a.m = a.n+1, a.s+v, maxInt(a.m, v)
	}
	var out []string
	for k, a := range by {
		line := fmt.Sprintf("%s,%d,%d", k, a.n, a.s)
		if max {
			line += fmt.Sprintf(",%d", a.m)
		} else {
			line += ",null"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// A daemon pipeline with `backfill: true`: an edit that its saved state
// does not fit (an aggregate added to the GROUP BY) is checked before
// the old version stops: one whose backfill would be refused (a sink in
// retract mode reading the transform) leaves the old version running
// with the reason; the other is backfilled beside the old version, which
// it then replaces, and the table ends as the edited query over all the
// rows, those appended after the edit included.
func TestReloadBackfills(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("DAEMON_BACKFILL_DSN", dsn)
	table := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE "+table+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	h := newHarness(t)
	input := t.TempDir()
	appendRows(t, input, 0, 2000)
	const base = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM src GROUP BY k"
	const edited = "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM src GROUP BY k"
	h.write("g.yaml", backfillYAML(input, table, base, ""))
	h.reload()
	h.waitState("g.yaml", Running)
	testenv.Eventually(t, 20*time.Second, "the first rows in the table and a checkpoint", func() error {
		if got, want := testenv.TableLines(t, db, table, ",", "null"), groups(2000, false); !slices.Equal(got, want) {
			return fmt.Errorf("%d rows, want %d", len(got), len(want))
		}
		store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
		if err != nil {
			return err
		}
		if cp, err := store.Latest(); err != nil || cp == nil {
			return fmt.Errorf("no checkpoint yet (%v)", err)
		}
		return nil
	})

	h.write("g.yaml", backfillYAML(input, table, edited, "  - name: log\n    from: q\n    type: blackhole\n    mode: retract\n"))
	res := h.reload()
	if !slices.Contains(res.Failed, filepath.Join(h.dir, "g.yaml")) {
		t.Errorf("reload %+v does not list the refused backfill as failed", res)
	}
	st := h.status("g.yaml")
	if st.State != Running || st.Restarts != 0 {
		t.Errorf("after a refused backfill the pipeline is %s with %d restarts, want the old version running", st.State, st.Restarts)
	}
	for _, want := range []string{"g.yaml:21:5: sinks.log", `sink "log" runs in retract mode`, "backfill of transform/q/group_aggregate#1 refused"} {
		if !strings.Contains(st.ReloadError, want) {
			t.Errorf("reload error %q does not say %q", st.ReloadError, want)
		}
	}

	h.write("g.yaml", backfillYAML(input, table, edited, ""))
	h.reload()
	h.waitState("g.yaml", Running)
	appendRows(t, input, 2000, 3000)
	testenv.Eventually(t, 20*time.Second, "the edited query's table over every row", func() error {
		st := h.status("g.yaml")
		if st.State != Running {
			return fmt.Errorf("pipeline %s: %s", st.State, st.Error)
		}
		if got, want := testenv.TableLines(t, db, table, ",", "null"), groups(3000, true); !slices.Equal(got, want) {
			return fmt.Errorf("table differs: %q..., want %q...", got[:min(3, len(got))], want[:3])
		}
		return nil
	})
	if st := h.status("g.yaml"); st.ReloadError != "" || st.Restarts != 0 {
		t.Errorf("after the backfill: reload error %q, %d restarts", st.ReloadError, st.Restarts)
	}
}
