package pipeline_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline"
)

// wOfK is an INT column w of a's rows (0 to 4), beside v.
const wOfK = "CAST(SUBSTRING(k, 2) AS INT)"

// widenColsFamilies are queries over two INT columns of which only v
// becomes BIGINT: the families whose saved values are each of one input
// column (keys of input columns, rows of the input) retag by column and
// migrate; refused names the families whose layout cannot tell the
// columns apart, which refuse naming the column that stays.
var widenColsFamilies = []struct {
	name, sql string
	refused   bool
}{
	{"group_aggregate", "SELECT v, " + wOfK + " AS w, COUNT(*) AS n, MIN(v) AS lo, MAX(" + wOfK + ") AS hi, COUNT(DISTINCT v) AS d FROM a GROUP BY v, " + wOfK, false},
	{"distinct", "SELECT DISTINCT v, " + wOfK + " AS w FROM a", false},
	{"deduplicate", "SELECT v, w FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY v, w ORDER BY et DESC) AS rn FROM (SELECT v, " + wOfK + " AS w, et FROM a)) WHERE rn = 1", false},
	{"top_n", "SELECT * FROM (SELECT v, w, ROW_NUMBER() OVER (PARTITION BY w ORDER BY v DESC) AS rn FROM (SELECT v, " + wOfK + " AS w FROM a)) WHERE rn <= 2", false},
	{"top_n_update", "SELECT * FROM (SELECT v, w, c, ROW_NUMBER() OVER (ORDER BY c DESC) AS rn FROM (SELECT v, " + wOfK + " AS w, COUNT(*) AS c FROM a GROUP BY v, " + wOfK + ")) WHERE rn <= 3", false},
	{"over", "SELECT v, w, COUNT(*) OVER (PARTITION BY v, w ORDER BY et RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS c FROM (SELECT v, " + wOfK + " AS w, et FROM a)", true},
	{"join", "SELECT a.k, b.k AS bk, a.v, b.w FROM a JOIN (SELECT k, v, " + wOfK + " AS w FROM b) b ON a.v = b.v", false},
	{"left_join", "SELECT a.k, b.k AS bk, a.v, b.w FROM (SELECT k, v, " + wOfK + " AS w FROM a) a LEFT JOIN (SELECT k, v, " + wOfK + " AS w FROM b) b ON a.v = b.v AND a.w = b.w", false},
	{"interval_join", "SELECT a.k, b.k AS bk, a.v FROM a JOIN (SELECT k, v, et, " + wOfK + " AS w FROM b) b ON a.v = b.v AND a.et BETWEEN b.et - INTERVAL '30' SECOND AND b.et + INTERVAL '30' SECOND", true},
}

// TestWidenOneOfTwoColumns: over two INT columns, v and w, of which
// only v becomes BIGINT, the GROUP BY, DISTINCT, deduplication, Top-N
// and the regular join (each side's rows by its own columns) migrate
// their state: the retag is by column, so the saved keys' and
// rows' v is retagged and their w stays an INT, as a from-scratch run
// of the edited pipeline reads them (a retag by type was refused, w's
// saved values being INTs too). The state saved before the edit is
// kept, as many entries as and with the values of a from-scratch run,
// whatever the worker counts before and after. The families that
// retag by type still refuse, naming w.
func TestWidenOneOfTwoColumns(t *testing.T) {
	// (v, w) repeats every 15 rows: the keys of the second half are
	// those saved from the first.
	value := func(i int) string { return fmt.Sprint(i%3 - 1) }
	for _, fam := range widenColsFamilies {
		for _, workers := range [][2]int{{1, 2}, {2, 1}} {
			if fam.refused && workers[0] == 2 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d to %d workers", fam.name, workers[0], workers[1]), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				widenInput(t, dir, value, 0, 0.5)
				store, err := checkpoint.Open(filepath.Join(dir, "state"), "widen")
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := editRun(t, dir, widenText(dir, fam.sql, "INT", workers[0]), store, 20, 15); err != nil {
					t.Fatal(err)
				}
				widenInput(t, dir, value, 0.5, 1)
				cp, err := store.Latest()
				if err != nil || cp == nil {
					t.Fatalf("no checkpoint: %v", err)
				}
				vs := loadVerdicts(t, widenText(dir, fam.sql, "BIGINT", workers[1]), cp)
				if fam.refused {
					refused := 0
					for id, v := range vs {
						if v.Action == pipeline.StateRefuse {
							refused++
							if !strings.Contains(v.Why, "column w stays INT while others widen from it to BIGINT") {
								t.Errorf("%s: refused %q, want the reason naming w", id, v.Why)
							}
						}
					}
					if refused == 0 {
						t.Errorf("nothing refused: %+v", vs)
					}
					return
				}
				p, g, err := editRun(t, dir, widenText(dir, fam.sql, "BIGINT", workers[1]), store, 20, 15)
				if err != nil {
					t.Fatalf("the widened pipeline did not restore: %v", err)
				}
				ids := stateOps(g)
				if len(ids) == 0 {
					t.Fatal("transform q has no stateful operator")
				}
				scratch := t.TempDir()
				widenInput(t, scratch, value, 0, 1)
				sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "widen")
				if err != nil {
					t.Fatal(err)
				}
				sp, sg, err := editRun(t, scratch, widenText(scratch, fam.sql, "BIGINT", workers[1]), sstore, 40, 30)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range ids {
					if v := vs[id]; v.Action != pipeline.StateMigrate || !strings.Contains(v.Change, "INT -> BIGINT on column") {
						t.Errorf("%s: %s %q (%s), want migrate (INT -> BIGINT ...)", id, v.Action, v.Change, v.Why)
					}
					got, want := opState(t, p, g, id), opState(t, sp, sg, id)
					if len(want) < 4 {
						t.Fatalf("%s: the from-scratch run holds %d lines: the case proves nothing", id, len(want))
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s after the widening %d lines\n %q\nwant (a from-scratch run of the edited pipeline) %d\n %q", id, len(got), got, len(want), want)
					}
				}
			})
		}
	}
}
