package pipeline_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// widenPipeline reads the followed files a and b, whose column v has
// the type of the case (%[3]s), into transform q (%[2]s) and sink out;
// v is the only column of its type, so that widening it leaves no
// saved value of the narrow type behind.
const widenPipeline = `version: 1
name: widen
parallelism: %[4]d
sources:
  - name: a
    type: file
    path: %[1]s/a.csv
    follow: true
    monitor_interval: 20ms
    schema: [k STRING, "v %[3]s", ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
  - name: b
    type: file
    path: %[1]s/b.csv
    follow: true
    monitor_interval: 20ms
    schema: [k STRING, "v %[3]s", ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
transforms:
  - name: q
    sql: %[2]s
sinks:
  - name: out
    from: q
    type: blackhole
`

// widenFamilies are the stateful operator families of the widening
// matrix, each a query that keeps v in its state: as a key (group,
// partition, join key) where the family has one, and in the rows it
// keeps. Their state IDs are found in the plan.
var widenFamilies = []struct{ name, sql string }{
	{"group_aggregate", "SELECT v, COUNT(*) AS n, MAX(k) AS mk FROM a GROUP BY v"},
	{"group_aggregate_values", "SELECT k, COUNT(*) AS n, MAX(v) AS mv, MIN(v) AS mi FROM a GROUP BY k"},
	{"count_distinct", "SELECT k, COUNT(DISTINCT v) AS d, MAX(v) AS m FROM a GROUP BY k"},
	{"tumble", "SELECT v, window_start, window_end, COUNT(*) AS n, MAX(k) AS mk FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '30' SECOND)) GROUP BY v, window_start, window_end"},
	{"hop", "SELECT v, window_start, window_end, COUNT(*) AS n, MAX(k) AS mk FROM TABLE(HOP(TABLE a, DESCRIPTOR(et), INTERVAL '10' SECOND, INTERVAL '30' SECOND)) GROUP BY v, window_start, window_end"},
	{"cumulate", "SELECT v, window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE a, DESCRIPTOR(et), INTERVAL '10' SECOND, INTERVAL '30' SECOND)) GROUP BY v, window_start, window_end"},
	{"session", "SELECT v, window_start, window_end, COUNT(*) AS n, MAX(k) AS mk FROM TABLE(SESSION(TABLE a PARTITION BY v, DESCRIPTOR(et), INTERVAL '30' SECOND)) GROUP BY v, window_start, window_end"},
	{"join", "SELECT a.k, b.k AS bk, a.v FROM a JOIN b ON a.v = b.v"},
	{"left_join", "SELECT a.k, b.k AS bk, a.v, b.v AS bv FROM a LEFT JOIN b ON a.v = b.v AND a.k <> b.k"},
	{"interval_join", "SELECT a.k, b.k AS bk, a.v FROM a JOIN b ON a.v = b.v AND a.et BETWEEN b.et - INTERVAL '30' SECOND AND b.et + INTERVAL '30' SECOND"},
	{"deduplicate", "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY v ORDER BY et DESC) AS rn FROM a) WHERE rn = 1"},
	{"top_n", "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) WHERE rn <= 2"},
	{"top_n_update", "SELECT * FROM (SELECT v, c, ROW_NUMBER() OVER (ORDER BY c DESC) AS rn FROM (SELECT v, COUNT(*) AS c FROM a GROUP BY v)) WHERE rn <= 3"},
	{"top_n_retract", "SELECT * FROM (SELECT v, c, ROW_NUMBER() OVER (ORDER BY c ASC) AS rn FROM (SELECT v, COUNT(*) AS c FROM a GROUP BY v)) WHERE rn <= 3"},
	{"window_top_n", "SELECT * FROM (SELECT k, v, window_start, window_end, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '30' SECOND))) WHERE rn <= 2"},
	{"over", "SELECT k, v, COUNT(*) OVER (PARTITION BY v ORDER BY et RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS c FROM a"},
	{"over_rows", "SELECT k, v, MAX(v) OVER (PARTITION BY k ORDER BY et ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM a"},
	{"over_non_time", "SELECT k, v, COUNT(*) OVER (PARTITION BY v ORDER BY k) AS c FROM a"},
	{"window_join", "SELECT l.k, r.k AS rk, l.v FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '30' SECOND))) l JOIN (SELECT * FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(et), INTERVAL '30' SECOND))) r ON l.v = r.v AND l.window_start = r.window_start AND l.window_end = r.window_end"},
	{"temporal_join", "WITH r AS (SELECT k, v, et FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY v ORDER BY et DESC) AS rn FROM b) WHERE rn = 1) SELECT a.k, r.k AS rk, a.v FROM a JOIN r FOR SYSTEM_TIME AS OF a.et AS r ON a.v = r.v"},
	{"session_top_n", "SELECT * FROM (SELECT k, v, window_start, window_end, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, v ORDER BY et DESC) AS rn FROM TABLE(SESSION(TABLE a PARTITION BY v, DESCRIPTOR(et), INTERVAL '30' SECOND))) WHERE rn <= 1"},
	{"distinct", "SELECT DISTINCT k, v FROM a"},
	{"intersect", "SELECT v FROM a INTERSECT SELECT v FROM b"},
	{"except", "SELECT k, v FROM a EXCEPT SELECT k, v FROM b"},
	{"match_recognize", "SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY v ORDER BY et MEASURES FIRST(A.k) AS fk, LAST(B.k) AS lk ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) DEFINE B AS B.k <> A.k, C AS C.k = 'none')"},
}

// widenKinds are the column widenings of the matrix: v's type before
// and after, its value for input row i (values the narrow type holds
// exactly, so that a from-scratch run of the wide type reads the same),
// and the worker counts of the run before and after the edit (state
// saved by one worker or by key groups, restored into another count).
var widenKinds = []struct {
	name, from, to string
	value          func(i int) string
	before, after  int
}{
	{"INT to BIGINT", "INT", "BIGINT", func(i int) string { return fmt.Sprint((i * 7) % 11) }, 1, 2},
	{"FLOAT to DOUBLE", "FLOAT", "DOUBLE", func(i int) string { return fmt.Sprintf("%d.5", (i*7)%11) }, 2, 1},
	{"SMALLINT to INT", "SMALLINT", "INT", func(i int) string { return fmt.Sprint((i*7)%11 - 3) }, 2, 2},
	{"DECIMAL precision up", "DECIMAL(6, 2)", "DECIMAL(12, 2)", func(i int) string { return fmt.Sprintf("%d.25", (i*7)%11) }, 1, 2},
	{"VARCHAR to STRING", "VARCHAR(8)", "STRING", func(i int) string { return fmt.Sprintf("v%d", (i*7)%11) }, 2, 1},
	{"TIMESTAMP precision up", "TIMESTAMP(3)", "TIMESTAMP(6)", func(i int) string { return fmt.Sprintf("2026-01-02 03:04:%02d.125", (i*7)%11) }, 1, 2},
}

// widenInput writes the input of a widening case into dir: lines
// [from, to) of a.csv (40 rows) and b.csv (30 rows).
func widenInput(t *testing.T, dir string, value func(int) string, from, to float64) {
	t.Helper()
	write := func(name string, n int) {
		var b strings.Builder
		for i := int(from * float64(n)); i < int(to*float64(n)); i++ {
			fmt.Fprintf(&b, "k%d,%s,%d\n", i%5, value(i), 1_700_000_000_000+int64(i)*1000)
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(b.String()); err != nil {
			t.Fatal(err)
		}
	}
	write("a.csv", 40)
	write("b.csv", 30)
}

func widenText(dir, sql, typ string, workers int) string {
	return fmt.Sprintf(widenPipeline, dir, sql, typ, workers)
}

// stateOps lists the state IDs of g's stateful operators of transform q.
func stateOps(g *runtime.Graph) []string {
	var ids []string
	for _, on := range g.Ops {
		if _, ok := on.Op.(operator.Snapshotter); ok && strings.HasPrefix(on.ID, "transform/q/") {
			ids = append(ids, on.ID)
		}
	}
	return ids
}

// loadPipeline loads text as a pipeline file, closed with the test.
func loadPipeline(t *testing.T, text string) *pipeline.Pipeline {
	t.Helper()
	file := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Plan.Close() })
	return p
}

// loadVerdicts is what validate --against-state shows for text against
// the checkpoint cp, by state ID.
func loadVerdicts(t *testing.T, text string, cp *checkpoint.Checkpoint) map[string]pipeline.StateVerdict {
	t.Helper()
	vs, err := loadPipeline(t, text).StateVerdicts(cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pipeline.StateVerdict{}
	for _, v := range vs {
		out[v.ID] = v
	}
	return out
}

// TestWideningMatrix: for each stateful operator family and each
// widening of a column it keeps, a run restored from the checkpoint of
// the pipeline with the narrow type over the first half of the input
// (at one worker count), then fed the second half under the wide type
// (at another), holds in each of its operators the state a from-scratch
// run of the edited pipeline over the whole input holds: the same keys,
// as many, with the same values (a key saved narrow meets the same key
// read wide in one group, partition or join key). The verdict, as
// validate --against-state shows it, is migrate with the change named;
// a narrowing and a change of type family are refused naming the
// operator, the column and both types.
func TestWideningMatrix(t *testing.T) {
	for _, fam := range widenFamilies {
		for _, kind := range widenKinds {
			t.Run(fam.name+"/"+kind.name, func(t *testing.T) {
				t.Parallel()
				widening(t, fam.sql, kind.from, kind.to, kind.value, kind.before, kind.after)
			})
		}
	}
}

func widening(t *testing.T, sql, from, to string, value func(int) string, before, after int) {
	dir := t.TempDir()
	widenInput(t, dir, value, 0, 0.5)
	store, err := checkpoint.Open(filepath.Join(dir, "state"), "widen")
	if err != nil {
		t.Fatal(err)
	}
	fp, fg, err := editRun(t, dir, widenText(dir, sql, from, before), store, 20, 15)
	if err != nil {
		t.Fatal(err)
	}
	widenInput(t, dir, value, 0.5, 1)
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	vs := loadVerdicts(t, widenText(dir, sql, to, after), cp)
	// `etld state dump` of the checkpoint with the edited file lists each
	// operator's saved state under the wide type: the same values.
	wp := loadPipeline(t, widenText(dir, sql, to, after))
	for _, id := range stateOps(fg) {
		dumped := dumpLines(t, func(d *pipeline.StateDump) error { return wp.DumpState(store, cp, id, d) })
		if saved := opState(t, fp, fg, id); !slices.Equal(dumped, saved) {
			t.Errorf("%s dumped with the widened file:\n %q\nthe state it was taken of:\n %q", id, dumped, saved)
		}
	}
	p, g, err := editRun(t, dir, widenText(dir, sql, to, after), store, 20, 15)
	if err != nil {
		t.Fatalf("the widened pipeline did not restore: %v", err)
	}
	ids := stateOps(g)
	if len(ids) == 0 {
		t.Fatal("transform q has no stateful operator")
	}
	change := strings.TrimSuffix(from, " NOT NULL") + " -> " + to + " on column"
	for _, id := range ids {
		if v := vs[id]; v.Action != pipeline.StateMigrate || !strings.Contains(v.Change, change) {
			t.Errorf("%s: %s %q (%s), want migrate (%s ...)", id, v.Action, v.Change, v.Why, change)
		}
	}

	scratch := t.TempDir()
	widenInput(t, scratch, value, 0, 1)
	sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "widen")
	if err != nil {
		t.Fatal(err)
	}
	sp, sg, err := editRun(t, scratch, widenText(scratch, sql, to, after), sstore, 40, 30)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, id := range ids {
		got, want := opState(t, p, g, id), opState(t, sp, sg, id)
		if strings.Contains(id, "/join#") {
			// An inner join's $matches depends on the order the two
			// inputs were read in.
			got, want = withoutMatches(got), withoutMatches(want)
		}
		held += len(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s after the widening holds %d lines\n %q\nwant (a from-scratch run of the edited pipeline) %d\n %q", id, len(got), got, len(want), want)
		}
	}
	if held < 2 {
		t.Fatal("the from-scratch run holds no state: the case proves nothing")
	}

	// Refused: a narrowing, and a change of type family; a run (on the
	// state now saved under the wide type) says where the transform is,
	// which operator and what changed.
	refused := refusedTypes(from, to)
	_, _, err = editRun(t, dir, widenText(dir, sql, refused[0], after), store, 20, 15)
	for _, want := range []string{"does not fit the edited pipeline", filepath.Join(dir, "edits.yaml") + ":20:5: transform \"q\"", "[" + ids[0] + "]", " changed from " + to + " to " + refused[0] + ":"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("v %s: the run's refusal %v does not say %q", refused[0], err, want)
		}
	}
	for _, typ := range refused {
		vs := loadVerdicts(t, widenText(dir, sql, typ, after), cp)
		for _, id := range ids {
			v := vs[id]
			if v.Action != pipeline.StateRefuse || !regexp.MustCompile(`column \S+ changed from `+regexp.QuoteMeta(from+" to "+typ+":")).MatchString(v.Why) {
				t.Errorf("%s with v %s: %s %q, want refused naming the column and both types", id, typ, v.Action, v.Why)
			}
		}
	}
}

// refusedTypes are types of v an operator's state of v of type from
// does not migrate to.
func refusedTypes(from, to string) []string {
	switch from {
	case "INT", "SMALLINT":
		return []string{"TINYINT", "DOUBLE"}
	case "FLOAT":
		return []string{"INT", "DECIMAL(10, 2)"}
	case "DECIMAL(6, 2)":
		return []string{"DECIMAL(5, 2)", "DECIMAL(12, 3)"}
	case "VARCHAR(8)":
		return []string{"VARCHAR(4)"}
	case "TIMESTAMP(3)":
		return []string{"TIMESTAMP(0)", "TIMESTAMP_LTZ(3)"}
	}
	return nil
}
