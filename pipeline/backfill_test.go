package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// backfillPipeline reads dir/in.csv (a plain, bounded read) into
// transform q and writes it to MySQL table out by its key k; sinks adds
// sinks.
const backfillPipeline = `version: 1
name: bf
sources:
  - name: a
    type: file
    path: %[1]s/in.csv
%[4]s    schema: [id INT, k STRING, v BIGINT]
transforms:
  - name: q
    sql: %[2]s
sinks:
  - name: out
    from: q
    type: mysql
    dsn: ${BACKFILL_TEST_DSN}
    table: %[3]s
%[5]s`

const (
	bfOld     = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM a GROUP BY k"
	bfAddMax  = "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM a GROUP BY k"
	bfHaving  = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM a GROUP BY k HAVING MAX(v) > 980"
	bfRows    = 20000
	bfKeys    = 300
	bfMaxEdit = 3
)

// bfInput writes dir/in.csv: rows [from, to) of bfRows rows over
// bfKeys keys, appended.
func bfInput(t *testing.T, dir string, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%d,k%d,%d\n", i, (i*7)%bfKeys, (i*37)%1000)
	}
	f, err := os.OpenFile(filepath.Join(dir, "in.csv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// bfLoad writes the pipeline file for sql and loads it.
func bfLoad(t *testing.T, dir, sql, table, sourceOpts, sinks string) *pipeline.Pipeline {
	t.Helper()
	file := filepath.Join(dir, "bf.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(backfillPipeline, dir, sql, table, sourceOpts, sinks)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bfFirstRun runs the old pipeline with a state directory and stops it
// as the sink takes its first rows: the checkpoint is mid-input, with
// operators holding a part of the keys.
func bfFirstRun(t *testing.T, dir, state, table, sourceOpts string) {
	t.Helper()
	p := bfLoad(t, dir, bfOld, table, sourceOpts, "")
	stop := make(chan struct{})
	var once sync.Once
	if _, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: state, Stop: stop, BatchSize: 50,
		Tap: func(string, *row.Batch) { once.Do(func() { close(stop) }) }}); err != nil {
		t.Fatal(err)
	}
	store, err := checkpoint.Open(state, "bf")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint after the first run: %v", err)
	}
	if cp.Finished {
		t.Fatal("the first run read all its input: the test wants a checkpoint mid-input")
	}
}

// TestBackfill: an edit of a GROUP BY that its state refuses (an added
// aggregate; a HAVING that drops groups), backfilled from the file's
// start up to the checkpoint of a run stopped mid-input, and run on to
// the end, leaves in the MySQL table exactly what a from-scratch run of
// the edited pipeline writes; the sink gets only the rows that differ.
func TestBackfill(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("BACKFILL_TEST_DSN", dsn)
	const follow = "    follow: true\n    monitor_interval: 20ms\n"
	for _, tc := range []struct {
		name, sql, ddl, sourceOpts string
		deletes                    bool
	}{
		{"added aggregate", bfAddMax, "k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT", "", false},
		{"having drops groups", bfHaving, "k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT", "", true},
		// A followed file: rows appended after the checkpoint are read by
		// the run after the backfill.
		{"followed file", bfAddMax, "k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT", follow, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, state := t.TempDir(), t.TempDir()
			followed := tc.sourceOpts != ""
			if followed {
				bfInput(t, dir, 0, bfRows/2)
			} else {
				bfInput(t, dir, 0, bfRows)
			}
			table := testenv.MySQLTable(t, db, "")
			fresh := testenv.MySQLTable(t, db, "_fresh")
			testenv.Exec(t, db, "CREATE TABLE "+table+" ("+tc.ddl+")")
			testenv.Exec(t, db, "CREATE TABLE "+fresh+" ("+tc.ddl+")")
			bfFirstRun(t, dir, state, table, tc.sourceOpts)
			before := testenv.TableLines(t, db, table, ",", "null")
			if len(before) == 0 {
				t.Fatal("the first run wrote nothing")
			}
			if followed {
				bfInput(t, dir, bfRows/2, bfRows)
			}

			// Without --backfill the edit is refused, and the refusal
			// names the choice.
			p := bfLoad(t, dir, tc.sql, table, tc.sourceOpts, "")
			_, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: state})
			if err == nil || !strings.Contains(err.Error(), "--backfill") || !strings.Contains(err.Error(), "group_aggregate#1") {
				t.Fatalf("the edit without --backfill: %v", err)
			}

			// From scratch, over the whole input.
			q := bfLoad(t, dir, tc.sql, fresh, "", "")
			if _, err := q.Run(context.Background(), pipeline.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			want := testenv.TableLines(t, db, fresh, ",", "null")

			p = bfLoad(t, dir, tc.sql, table, tc.sourceOpts, "")
			var report *pipeline.BackfillReport
			stop := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				_, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: state, Backfill: true, Stop: stop,
					Backfilled: func(r *pipeline.BackfillReport) { report = r }})
				done <- err
			}()
			if followed {
				testenv.Eventually(t, 20*time.Second, "the table of a from-scratch run", func() error {
					select {
					case err := <-done:
						t.Fatalf("the run ended: %v", err)
					default:
					}
					if got := testenv.TableLines(t, db, table, ",", "null"); !slices.Equal(got, want) {
						return fmt.Errorf("%d rows, want %d", len(got), len(want))
					}
					return nil
				})
				close(stop)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if report == nil || report.Stored == 0 || !slices.Equal(report.Operators, []string{"transform/q/group_aggregate#1"}) || len(report.Sinks) != 1 {
				t.Fatalf("report: %+v", report)
			}
			d := report.Sinks[0]
			if d.Upserted+d.Unchanged+d.Deleted == 0 || (d.Deleted > 0) != tc.deletes {
				t.Fatalf("sink diff: %+v", d)
			}
			if tc.deletes && d.Unchanged == 0 {
				t.Fatalf("a HAVING leaves the groups it keeps as they were, yet none is unchanged: %+v", d)
			}
			if !tc.deletes && (d.Upserted != len(before) || d.Unchanged != 0) {
				t.Fatalf("an added column changes every row held (%d): %+v", len(before), d)
			}
			got := testenv.TableLines(t, db, table, ",", "null")
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("backfilled table (%d rows) differs from a from-scratch run's (%d rows)\n got %q\nwant %q", len(got), len(want), head(got), head(want))
			}
		})
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// TestBackfillRefusals: what a backfill cannot rebuild is refused before
// anything is written, naming the source or sink, its place in the file
// and why, and the state is left as it was.
func TestBackfillRefusals(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("BACKFILL_TEST_DSN", dsn)
	for _, tc := range []struct {
		name, firstOpts, sourceOpts, sinks string
		// reset: a run with --reset-state q between the first run and
		// the backfill.
		reset bool
		wants []string
	}{
		{"retract sink", "", "", "  - name: log\n    from: q\n    type: blackhole\n    mode: retract\n", false,
			[]string{"backfill of transform/q/group_aggregate#1 refused", "bf.yaml:17:5: sinks.log", `sink "log" runs in retract mode`, `transform "q"`, "upsert sink"}},
		// A plain read's position means nothing to a followed read.
		{"position of another mode", "", "    follow: true\n", "", false,
			[]string{"backfill of transform/q/group_aggregate#1 refused", "bf.yaml:4:5: sources.a", `source "a" cannot be read again`, "not taken by a followed read"}},
		{"rotated files", "    follow: true\n    rotated_path: in.csv.*\n", "    follow: true\n    rotated_path: in.csv.*\n", "", false,
			[]string{"backfill of transform/q/group_aggregate#1 refused", "bf.yaml:4:5: sources.a", `source "a" cannot be read again`, "followed glob"}},
		// An operator reset mid-input: no replay of a file from the start
		// gives what the sink holds.
		{"after a reset", "", "", "", true,
			[]string{"started empty mid-input", "etld state reset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, state := t.TempDir(), t.TempDir()
			bfInput(t, dir, 0, bfRows)
			table := testenv.MySQLTable(t, db, "")
			testenv.Exec(t, db, "CREATE TABLE "+table+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
			bfFirstRun(t, dir, state, table, tc.firstOpts)
			if tc.reset {
				stop := make(chan struct{})
				close(stop)
				if _, err := bfLoad(t, dir, bfOld, table, "", "").Run(context.Background(), pipeline.RunOptions{StateDir: state, Stop: stop, ResetState: []string{"q"}}); err != nil {
					t.Fatal(err)
				}
			}
			before := testenv.TableLines(t, db, table, ",", "null")
			store, err := checkpoint.Open(state, "bf")
			if err != nil {
				t.Fatal(err)
			}
			cp, _ := store.Latest()
			p := bfLoad(t, dir, bfAddMax, table, tc.sourceOpts, tc.sinks)
			_, err = p.Run(context.Background(), pipeline.RunOptions{StateDir: state, Backfill: true})
			if err == nil {
				t.Fatal("backfill not refused")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q:\n%v", w, err)
				}
			}
			if after := testenv.TableLines(t, db, table, ",", "null"); !slices.Equal(after, before) {
				t.Error("a refused backfill wrote to the sink")
			}
			if now, _ := store.Latest(); now.ID != cp.ID {
				t.Errorf("a refused backfill stored checkpoint %d (was %d)", now.ID, cp.ID)
			}
		})
	}
}
