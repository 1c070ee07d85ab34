package pipeline_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// A run reports each stateful operator's state (entries it holds, bytes
// of its snapshot) and shows its sinks' changes to Tap, as the daemon's
// console and /metrics read them.
func TestRunReportsStateAndTaps(t *testing.T) {
	const file = `version: 1
name: counts
sources:
  - name: gen
    type: datagen
    rows: 100
    seed: 1
    schema:
      - v INT
    fields:
      v: { kind: sequence, start: 0, end: 99 }
transforms:
  - name: per_mod
    sql: SELECT MOD(v, 7) AS m, COUNT(*) AS n FROM gen GROUP BY MOD(v, 7)
sinks:
  - name: out
    from: per_mod
    type: blackhole
`
	p, err := pipeline.Parse("counts.yaml", []byte(file), func(string) (string, bool) { return "", false }, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	kinds := map[row.Kind]int{}
	taps := map[string]int{}
	sum, err := p.Run(context.Background(), pipeline.RunOptions{
		StateDir: t.TempDir(),
		Tap: func(sink string, b *row.Batch) {
			mu.Lock()
			defer mu.Unlock()
			taps[sink] += b.Len()
			for _, c := range b.Changes {
				kinds[c.Kind]++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.State) != 1 {
		t.Fatalf("state = %+v, want the GROUP BY", sum.State)
	}
	st := sum.State[0]
	if st.Entries != 7 || st.Bytes <= 0 || st.Operator != "per_mod/group_aggregate#1" || !strings.HasPrefix(st.Plan, "GroupAggregate(") || st.Transform != "per_mod" || st.ID == "" {
		t.Errorf("state = %+v, want 7 entries of per_mod/group_aggregate#1 (a GroupAggregate) with a snapshot", st)
	}
	// Every operator is listed under its short id, with its plan.
	var ids []string
	for _, o := range sum.Operators {
		ids = append(ids, o.ID)
		if o.Plan == "" || o.Transform != "per_mod" {
			t.Errorf("operator %+v: no plan or transform", o)
		}
	}
	if got := strings.Join(ids, " "); !strings.Contains(got, "per_mod/group_aggregate#1") {
		t.Errorf("operators %s, want per_mod/group_aggregate#1 among them", got)
	}
	// The final checkpoint is the last one recorded, with its file's size.
	cps := sum.Checkpoints
	if n := len(cps.Recent); n == 0 || int64(n) != min(cps.Count, 20) || !cps.Recent[n-1].Final || cps.Recent[n-1].Size != cps.LastSize || cps.Recent[n-1].ID != cps.LastID {
		t.Errorf("recent checkpoints %+v, want the run's %d ending with the final one of %d bytes", cps.Recent, cps.Count, cps.LastSize)
	}
	if taps["out"] != int(sum.Sinks[0].Out) || kinds[row.Insert] != 7 {
		t.Errorf("tapped %v (kinds %v), sink wrote %d", taps, kinds, sum.Sinks[0].Out)
	}
}
