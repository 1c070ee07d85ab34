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

// TestWidenOneOfTwoKeyColumns: a GROUP BY over two INT columns, v and w,
// of which only v becomes BIGINT, migrates its state: the retag is by
// column, so the saved keys' v is retagged and their w stays an INT, as
// a from-scratch run of the edited pipeline reads them (a retag by type
// was refused, w's saved values being INTs too). The groups saved before
// the edit are kept, as many as and with the values of a from-scratch
// run, whatever the worker counts before and after.
func TestWidenOneOfTwoKeyColumns(t *testing.T) {
	const sql = "SELECT v, CAST(SUBSTRING(k, 2) AS INT) AS w, COUNT(*) AS n, MIN(v) AS lo, MAX(CAST(SUBSTRING(k, 2) AS INT)) AS hi, COUNT(DISTINCT v) AS d FROM a GROUP BY v, CAST(SUBSTRING(k, 2) AS INT)"
	// (v, w) repeats every 15 rows: the groups of the second half are
	// those saved from the first.
	value := func(i int) string { return fmt.Sprint(i%3 - 1) }
	for _, workers := range [][2]int{{1, 2}, {2, 1}} {
		t.Run(fmt.Sprintf("%d to %d workers", workers[0], workers[1]), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			widenInput(t, dir, value, 0, 0.5)
			store, err := checkpoint.Open(filepath.Join(dir, "state"), "widen")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := editRun(t, dir, widenText(dir, sql, "INT", workers[0]), store, 20, 15); err != nil {
				t.Fatal(err)
			}
			widenInput(t, dir, value, 0.5, 1)
			cp, err := store.Latest()
			if err != nil || cp == nil {
				t.Fatalf("no checkpoint: %v", err)
			}
			vs := loadVerdicts(t, widenText(dir, sql, "BIGINT", workers[1]), cp)
			p, g, err := editRun(t, dir, widenText(dir, sql, "BIGINT", workers[1]), store, 20, 15)
			if err != nil {
				t.Fatalf("the widened pipeline did not restore: %v", err)
			}
			ids := stateOps(g)
			if len(ids) != 1 {
				t.Fatalf("transform q's stateful operators: %v, want one GROUP BY", ids)
			}
			if v := vs[ids[0]]; v.Action != pipeline.StateMigrate || !strings.Contains(v.Change, "INT -> BIGINT on column") {
				t.Errorf("%s: %s %q (%s), want migrate (INT -> BIGINT ...)", ids[0], v.Action, v.Change, v.Why)
			}

			scratch := t.TempDir()
			widenInput(t, scratch, value, 0, 1)
			sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "widen")
			if err != nil {
				t.Fatal(err)
			}
			sp, sg, err := editRun(t, scratch, widenText(scratch, sql, "BIGINT", workers[1]), sstore, 40, 30)
			if err != nil {
				t.Fatal(err)
			}
			got, want := opState(t, p, g, ids[0]), opState(t, sp, sg, ids[0])
			if len(want) < 10 {
				t.Fatalf("the from-scratch run holds %d lines: the case proves nothing", len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("after the widening %d lines\n %q\nwant (a from-scratch run of the edited pipeline) %d\n %q", len(got), got, len(want), want)
			}
		})
	}
}
