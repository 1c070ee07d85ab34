package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/edittest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// dumpPipeline reads two followed files a and b (id, k, v, event time
// et) into transform q, whose SQL the case gives.
const dumpPipeline = `version: 1
name: dump
sources:
  - name: a
    type: file
    path: %[1]s/a.csv
    follow: true
    monitor_interval: 20ms
    schema: [id INT, k STRING, v BIGINT, ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
  - name: b
    type: file
    path: %[1]s/b.csv
    follow: true
    monitor_interval: 20ms
    schema: [id INT, k STRING, v BIGINT, ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
transforms:
%[2]s
sinks:
  - name: out
    from: q
    type: blackhole
`

// dumpCases are the operator kinds that keep state, each in a query
// whose state holds rows at the end of the input; view, when set, is a
// transform v before q.
var dumpCases = []struct{ name, sql, view string }{
	{"group_aggregate", "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(id) AS m, LISTAGG(CAST(id AS STRING)) AS ids FROM a GROUP BY k", ""},
	{"group_aggregate_updating", "SELECT n, COUNT(*) AS c FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) GROUP BY n", ""},
	{"distinct", "SELECT DISTINCT k, v % 3 AS r FROM a", ""},
	{"deduplicate", "SELECT id, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY et DESC) AS rn FROM a) WHERE rn = 1", ""},
	{"top_n", "SELECT * FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) WHERE rn <= 2", ""},
	{"top_n_updating", "SELECT * FROM (SELECT k, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k)) WHERE rn <= 2", ""},
	{"join", "SELECT a.id, b.id AS bid, a.k FROM a JOIN b ON a.k = b.k", ""},
	{"left_join", "SELECT a.id, b.id AS bid FROM a LEFT JOIN b ON a.k = b.k AND b.v > 20", ""},
	{"tumble", "SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end", ""},
	{"hop", "SELECT window_start, window_end, MAX(v) AS m FROM TABLE(HOP(TABLE a, DESCRIPTOR(et), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY window_start, window_end", ""},
	{"interval_join", "SELECT a.id, b.id AS bid FROM a, b WHERE a.k = b.k AND a.et BETWEEN b.et - INTERVAL '3' SECOND AND b.et + INTERVAL '3' SECOND", ""},
	{"temporal_join", "SELECT a.id, r.v FROM a JOIN v FOR SYSTEM_TIME AS OF a.et AS r ON a.k = r.k",
		"SELECT k, v, et FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY et DESC) AS rn FROM b) WHERE rn = 1"},
	{"window_join", "SELECT o.id, s.id AS sid FROM " + tumbleOf("a", "o") + " JOIN " + tumbleOf("b", "s") + " ON o.k = s.k AND o.window_start = s.window_start AND o.window_end = s.window_end", ""},
	{"cumulate", "SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE a, DESCRIPTOR(et), INTERVAL '5' SECOND, INTERVAL '20' SECOND)) GROUP BY k, window_start, window_end", ""},
	{"session", "SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE a PARTITION BY k, DESCRIPTOR(et), INTERVAL '30' SECOND)) GROUP BY k, window_start, window_end", ""},
	{"session_table", "SELECT window_start, window_end, k, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM TABLE(SESSION(TABLE a PARTITION BY k, DESCRIPTOR(et), INTERVAL '30' SECOND))) WHERE rn <= 2", ""},
	{"window_top_n", "SELECT window_start, k, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '20' SECOND))) WHERE rn <= 2", ""},
	{"over", "SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY et RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS s FROM a", ""},
	{"over_lag", "SELECT id, k, LAG(v) OVER (PARTITION BY k ORDER BY et) AS prev, COUNT(*) OVER (PARTITION BY k ORDER BY et) AS n FROM a", ""},
	{"over_non_time", "SELECT k, v, SUM(id) OVER (PARTITION BY k ORDER BY v) AS s FROM (SELECT k, v, COUNT(*) AS id FROM a GROUP BY k, v)", ""},
	{"match_recognize", "SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY k ORDER BY et MEASURES FIRST(U.id) AS first_id, LAST(U.id) AS last_id ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (U{2,} D) DEFINE U AS U.v >= 20, D AS D.v < 0) AS T", ""},
	{"intersect", "SELECT k FROM a INTERSECT SELECT k FROM b", ""},
	{"scalar_subquery", "SELECT id, (SELECT MAX(v) FROM b) AS m FROM a", ""},
}

// dumpWants are what some cases' operator q/1 must list, from the input
// alone, in its lines that start with the prefix given: a check of the
// listing itself, which the comparison of a checkpoint's with the live
// one cannot give.
var dumpWants = map[string]func() (string, []string){
	// Per key: COUNT(*), SUM(v), MAX(id), the ids.
	"group_aggregate": func() (string, []string) {
		out := []string{" columns [k COUNT(*) SUM(v) MAX(id) LISTAGG(CAST(id AS STRING))]"}
		for k := range 5 {
			var ids []string
			sum, last := 0, 0
			for i := k; i < 40; i += 5 {
				ids, sum, last = append(ids, fmt.Sprint(i)), sum+(i*7)%40, i
			}
			out = append(out, fmt.Sprintf(": +I[k%d, %d, %d, %d, %s]", k, len(ids), sum, last, strings.Join(ids, ",")))
		}
		return "", out
	},
	// The outer side: every row of a once, with its matches in b (same
	// key, v > 20). The query reads no a.v: projection pushdown leaves
	// it NULL, in the state too.
	"left_join": func() (string, []string) {
		out := []string{"left columns [id k v ts et $count $matches]"}
		for i := range 40 {
			matches := 0
			for j := i % 5; j < 30; j += 5 {
				if (j*7)%40 > 20 {
					matches++
				}
			}
			at := time.UnixMilli(1_700_000_000_000 + int64(i)*1000).UTC().Format("2006-01-02T15:04:05Z")
			out = append(out, fmt.Sprintf("left: +I[%d, k%d, null, %d, %s, 1, %d]", i, i%5, 1_700_000_000_000+int64(i)*1000, at, matches))
		}
		slices.Sort(out)
		return "left", out
	},
}

// dumpWantIDs are the state IDs of the operators dumpWants check.
var dumpWantIDs = map[string]string{"group_aggregate": "transform/q/group_aggregate#1", "left_join": "transform/q/join#1"}

// tumbleOf is a TUMBLE of 10 s over table t, aliased a.
func tumbleOf(t, a string) string {
	return fmt.Sprintf("(SELECT * FROM TABLE(TUMBLE(TABLE %s, DESCRIPTOR(et), INTERVAL '10' SECOND))) %s", t, a)
}

// dumpInput writes a's and b's rows: keys k0..k4, values and event
// times rising one second a row.
func dumpInput(t *testing.T, dir string) (rowsA, rowsB int64) {
	t.Helper()
	for name, rows := range map[string]string{"a.csv": edittest.Rows(40, 1), "b.csv": edittest.Rows(30, 1)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(rows), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return 40, 30
}

// dumpLines lists a state dump as sorted lines "table: row".
func dumpLines(t *testing.T, dump func(d *pipeline.StateDump) error) []string {
	t.Helper()
	var lines []string
	table := ""
	d := &pipeline.StateDump{
		Table: func(name string, cols row.Schema) error {
			table = name
			lines = append(lines, fmt.Sprintf("%s columns %v", name, cols.Names()))
			return nil
		},
		Row: func(r row.Row) error {
			lines = append(lines, table+": "+row.Change{Kind: row.Insert, Row: r}.String())
			return nil
		},
	}
	if err := dump(d); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// TestStateDumpEqualsLiveState: for every operator kind that keeps
// state, what DumpState lists from a checkpoint (restored into a fresh
// operator of the pipeline file) equals what the operator held when the
// checkpoint was taken, listed live from it; and holds rows.
func TestStateDumpEqualsLiveState(t *testing.T) {
	for _, c := range dumpCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rowsA, rowsB := dumpInput(t, dir)
			file := filepath.Join(dir, "dump.yaml")
			transforms := fmt.Sprintf("  - name: q\n    sql: %s\n", c.sql)
			if c.view != "" {
				transforms = fmt.Sprintf("  - name: v\n    sql: %s\n", c.view) + transforms
			}
			if err := os.WriteFile(file, fmt.Appendf(nil, dumpPipeline, dir, transforms), 0o644); err != nil {
				t.Fatal(err)
			}
			env := pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)}
			p, err := pipeline.Load(file, env)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Plan.Close()
			g, err := p.Plan.Graph()
			if err != nil {
				t.Fatal(err)
			}
			store, err := checkpoint.Open(filepath.Join(dir, "state"), p.Name())
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- runtime.Run(context.Background(), g, runtime.Options{Stop: stop, Checkpoint: runtime.CheckpointOptions{Interval: time.Hour, Store: store}})
			}()
			testenv.Eventually(t, 20*time.Second, "every row read", func() error {
				if a, b := g.Sources[0].Stats.RowsIn.Load(), g.Sources[1].Stats.RowsIn.Load(); a != rowsA || b != rowsB {
					return fmt.Errorf("%d and %d rows", a, b)
				}
				return nil
			})
			close(stop)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			cp, err := store.Latest()
			if err != nil || cp == nil {
				t.Fatalf("latest checkpoint %v, %v", cp, err)
			}
			fresh, err := pipeline.Load(file, env)
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Plan.Close()
			dumped := 0
			for _, on := range g.Ops {
				if _, ok := on.Op.(operator.Snapshotter); !ok {
					continue
				}
				if _, ok := on.Op.(operator.StateDumper); !ok {
					t.Errorf("%s (%s) keeps state that etld state dump cannot list", on.ID, on.Name)
					continue
				}
				live := dumpLines(t, func(d *pipeline.StateDump) error { return p.DumpLive(on, d) })
				got := dumpLines(t, func(d *pipeline.StateDump) error { return fresh.DumpState(store, cp, on.ID, d) })
				if !slices.Equal(got, live) {
					t.Errorf("%s: the checkpoint's dump differs from the live state:\n got %q\nwant %q", on.ID, got, live)
				}
				if want := dumpWants[c.name]; want != nil && on.ID == dumpWantIDs[c.name] {
					prefix, lines := want()
					picked := slices.DeleteFunc(slices.Clone(got), func(l string) bool { return !strings.HasPrefix(l, prefix) })
					if !slices.Equal(picked, lines) {
						t.Errorf("%s: dump %q, want %q", on.ID, picked, lines)
					}
				}
				t.Logf("%s: %d lines, e.g. %q", on.ID, len(live), live[:min(3, len(live))])
				if len(live) > 1 {
					dumped++
				}
			}
			if dumped == 0 {
				t.Error("no operator held rows: the case proves nothing")
			}
		})
	}
}
