package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// counted is a bounded pipeline of a CSV file through a GROUP BY.
func counted(dir string) string {
	return fmt.Sprintf(`version: 1
name: counted
sources:
  - name: ev
    type: file
    path: %s
    format: csv
    schema: [k STRING, v INT]
transforms:
  - name: per_k
    sql: SELECT k, COUNT(*) AS n FROM ev WHERE v > 0 GROUP BY k
sinks:
  - name: out
    from: per_k
    type: blackhole
`, filepath.Join(dir, "ev.csv"))
}

// /pipelines lists every operator that runs (the GROUP BY's projection
// only renames, so its rows pass on as they are) by its short id with its
// plan text and counters, and names the stateful one by that id too.
func TestStatusListsOperatorsByShortID(t *testing.T) {
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.dir, "ev.csv"), []byte("a,1\nb,2\na,3\nc,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.write("counted.yaml", counted(h.dir))
	h.reload()
	st := h.waitState("counted.yaml", Finished)
	byID := map[string]OperatorStatus{}
	var ids []string
	for _, o := range st.Operators {
		byID[o.Operator] = o
		ids = append(ids, o.Operator)
	}
	if got := strings.Join(ids, " "); got != "per_k/calc#1 per_k/group_aggregate#1" {
		t.Fatalf("operators %s", got)
	}
	agg := byID["per_k/group_aggregate#1"]
	if !strings.HasPrefix(agg.Plan, "GroupAggregate(") || agg.Transform != "per_k" || agg.In != 3 {
		t.Errorf("the GROUP BY: %+v, want its plan, transform per_k and 3 rows in (the filter keeps 3 of 4)", agg)
	}
	if f := byID["per_k/calc#1"]; f.In != 4 || f.Out != 3 {
		t.Errorf("the filter: %+v, want 4 rows in, 3 out", f)
	}
	if len(st.OperatorState) != 1 || st.OperatorState[0].Operator != "per_k/group_aggregate#1" || st.OperatorState[0].Plan != agg.Plan {
		t.Errorf("operator_state %+v, want the GROUP BY by its id", st.OperatorState)
	}
}
