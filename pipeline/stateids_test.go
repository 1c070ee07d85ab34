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

// stateIDExtra are stateful operators dumpCases leave out: the other set
// operations, a scalar subquery that may return several rows (its
// single-value check), a join with a VALUES table (its build side held
// back, and the VALUES read as a source of the transform).
var stateIDExtra = []struct{ name, sql, view string }{
	{"union_distinct", "SELECT k FROM a UNION SELECT k FROM b", ""},
	{"except", "SELECT k FROM a EXCEPT SELECT k FROM b", ""},
	{"intersect_all", "SELECT k FROM a INTERSECT ALL SELECT k FROM b", ""},
	{"except_all", "SELECT k FROM a EXCEPT ALL SELECT k FROM b", ""},
	{"single_value", "SELECT id, (SELECT v FROM b WHERE id = 3) AS m FROM a", ""},
	{"grouping_sets", "SELECT k, v, COUNT(*) AS n FROM a GROUP BY GROUPING SETS ((k), (v))", ""},
	{"values_join", "SELECT a.id, x.n FROM a JOIN (VALUES ('k1', 1), ('k2', 2)) AS x(k, n) ON a.k = x.k", ""},
}

// stateIDForm is the form of a state ID: a transform's operator
// (TRANSFORM/KIND#N, a join's held-back inputs behind it), a source, a
// source's changelog normalization, a sink.
var stateIDForm = regexp.MustCompile(`^(transform/[a-z0-9_]+/([a-z_]+)#[1-9][0-9]*(/inputs)?|source/[a-z0-9_]+(/normalize)?|sink/[a-z0-9_]+)$`)

// stateIDs lists the state ID of every node of g whose state goes into
// checkpoints, and of each operator its short id.
func stateIDs(g *runtime.Graph) (ids, shorts []string) {
	for _, s := range g.Sources {
		ids = append(ids, s.ID)
	}
	for _, o := range g.Ops {
		if _, ok := o.Op.(operator.Snapshotter); ok {
			ids, shorts = append(ids, o.ID), append(shorts, o.Short)
		}
	}
	for _, u := range g.Unions {
		if u.BuildFirst {
			ids = append(ids, u.ID)
		}
	}
	for _, s := range g.Sinks {
		ids = append(ids, s.ID)
	}
	return ids, shorts
}

// TestStateIDsNameEveryKind: the state ID of every stateful operator
// kind is TRANSFORM/KIND#N (the name and number of the kind, never the
// number of a node or of the plan's kind, which move with the plan or
// with etld's code), its short id the same behind the transform, and
// every kind the runtime keeps state for is named.
func TestStateIDsNameEveryKind(t *testing.T) {
	kinds := map[string]bool{}
	for _, c := range append(slices.Clone(dumpCases), stateIDExtra...) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "dump.yaml")
			transforms := fmt.Sprintf("  - name: q\n    sql: %s\n", c.sql)
			if c.view != "" {
				transforms = fmt.Sprintf("  - name: v\n    sql: %s\n", c.view) + transforms
			}
			if err := os.WriteFile(file, fmt.Appendf(nil, dumpPipeline, dir, transforms), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Plan.Close()
			g, err := p.Plan.Graph()
			if err != nil {
				t.Fatal(err)
			}
			ids, shorts := stateIDs(g)
			t.Logf("%q", ids)
			for _, id := range ids {
				m := stateIDForm.FindStringSubmatch(id)
				switch {
				case m == nil:
					t.Errorf("state ID %q is not of the form TRANSFORM/KIND#N", id)
				case strings.HasPrefix(m[2], "node"):
					t.Errorf("state ID %q names a node number, not a kind", id)
				case m[2] != "":
					kinds[m[2]] = true
				}
			}
			for _, s := range shorts {
				if m := stateIDForm.FindStringSubmatch("transform/" + s); m == nil || strings.HasPrefix(m[2], "node") {
					t.Errorf("operator id %q is not of the form TRANSFORM/KIND#N", s)
				}
			}
		})
	}
	// Every kind of operator the runtime keeps state for, in some case.
	want := []string{"deduplicate", "distinct", "group_aggregate", "join", "match_recognize", "over_aggregate", "rank",
		"set_operation", "single_value", "values", "window_aggregate", "window_rank", "window_table"}
	var got []string
	for k := range kinds {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the cases' stateful kinds are %q, want %q", got, want)
	}
}

// TestFormerKindIDsRestore: a checkpoint written before set operations
// and the single-value check of a scalar subquery had kind names holds
// their state under the kind's number (transform/q/node16#1, as
// `etld validate --against-state` listed it then); a run of the same
// file, or of the transform renamed with renamed_from, restores it and
// ends with the state of a from-scratch run, and its next checkpoint
// names the operator by its kind.
func TestFormerKindIDsRestore(t *testing.T) {
	for _, c := range []struct{ name, sql, id, former, rename string }{
		{"intersect", "SELECT k FROM a INTERSECT ALL SELECT k FROM b", "set_operation#1", "node16#1", ""},
		{"except", "SELECT k, v FROM a EXCEPT SELECT k, v FROM b", "set_operation#1", "node16#1", ""},
		{"except renamed", "SELECT k, v FROM a EXCEPT SELECT k, v FROM b", "set_operation#1", "node16#1", "q2"},
		{"single_value", "SELECT id, (SELECT v FROM b WHERE id = 3) AS m FROM a", "single_value#1", "node18#1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			first, rest := splitInput(t, dir)
			first()
			store, err := checkpoint.Open(filepath.Join(dir, "state"), "edits")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := editRun(t, dir, editFile{sql: c.sql}.text(dir), store, 20, 15); err != nil {
				t.Fatal(err)
			}
			cp, err := store.Latest()
			if err != nil || cp == nil {
				t.Fatalf("checkpoint %v, %v", cp, err)
			}
			// The checkpoint as the etld before the names wrote it: the
			// same format, the operator under its kind's number.
			comp := cp.Find("transform/q/" + c.id)
			if comp == nil {
				t.Fatalf("no transform/q/%s in the checkpoint", c.id)
			}
			comp.ID = "transform/q/" + c.former
			cp.ID++
			if _, err := store.Write(cp); err != nil {
				t.Fatal(err)
			}
			rest()
			edited := editFile{sql: c.sql}
			id := "transform/q/" + c.id
			if c.rename != "" {
				edited = editFile{sql: c.sql, name: c.rename, opts: "    renamed_from: q\n"}
				id = "transform/" + c.rename + "/" + c.id
			}
			p, g, err := editRun(t, dir, edited.text(dir), store, 20, 15)
			if err != nil {
				t.Fatalf("the checkpoint with the former ID did not restore: %v", err)
			}
			got := opState(t, p, g, id)
			scratch := t.TempDir()
			all, more := splitInput(t, scratch)
			all()
			more()
			sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "edits")
			if err != nil {
				t.Fatal(err)
			}
			sp, sg, err := editRun(t, scratch, edited.text(scratch), sstore, 40, 30)
			if err != nil {
				t.Fatal(err)
			}
			want := opState(t, sp, sg, id)
			if len(want) < 2 {
				t.Fatalf("the from-scratch run holds no state in %s: the case proves nothing", id)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s restored from %s holds\n %q\nwant (a from-scratch run)\n %q", id, c.former, got, want)
			}
			next, err := store.Latest()
			if err != nil || next.Find(id) == nil || next.Find("transform/q/"+c.former) != nil {
				t.Errorf("the next checkpoint does not name the operator %s alone: %+v, %v", id, next, err)
			}
		})
	}
}

// normalizedPipeline reads a PostgreSQL table as an upsert changelog
// (changelog_mode upsert), which the planner normalizes after the
// source; loading it connects to nothing.
const normalizedPipeline = `version: 1
name: pg
sources:
  - name: orders
    type: postgres
    dsn: postgres://u@127.0.0.1:9/d
    table: orders
    slot: s1
    changelog_mode: upsert
    schema: [id BIGINT, customer STRING, amount INT]
    key: [id]
transforms:
  - name: q
    sql: SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer
sinks:
  - {name: out, from: q, type: blackhole}
`

// TestNormalizationStateID: an upsert source's changelog normalization
// is checkpointed as source/NAME/normalize (before, it had no ID and the
// runtime named it by its plan and its place among the graph's
// operators, which an edit elsewhere moved), its operator id is
// NAME/changelog_normalize#1; the state a checkpoint holds under the
// former ID is kept; a normalization without saved state after a source
// that keeps its position is refused.
func TestNormalizationStateID(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pg.yaml")
	if err := os.WriteFile(file, []byte(normalizedPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Plan.Close()
	g, err := p.Plan.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ids, shorts := stateIDs(g)
	if want := []string{"source/orders", "source/orders/normalize", "transform/q/group_aggregate#1", "sink/out"}; !slices.Equal(ids, want) {
		t.Errorf("state IDs %q, want %q", ids, want)
	}
	if want := []string{"orders/changelog_normalize#1", "q/group_aggregate#1"}; !slices.Equal(shorts, want) {
		t.Errorf("operator ids %q, want %q", shorts, want)
	}
	fingerprint := map[string]string{}
	for _, s := range g.Sources {
		fingerprint[s.ID] = s.Fingerprint
	}
	for _, o := range g.Ops {
		fingerprint[o.ID] = o.Fingerprint
	}
	for _, s := range g.Sinks {
		fingerprint[s.ID] = s.Fingerprint
	}
	// What the etld before wrote: the normalization under the ID the
	// runtime derived, its plan and its index among the operators (0).
	const former = "transform/ChangelogNormalize(key=[id])/0"
	saved := func(normalization string) *checkpoint.Checkpoint {
		cp := &checkpoint.Checkpoint{ID: 7, Format: checkpoint.Version, Pipeline: "pg"}
		for _, id := range []string{"source/orders", normalization, "transform/q/group_aggregate#1", "sink/out"} {
			if id == "" {
				continue
			}
			fp := fingerprint[id]
			if id == former {
				fp = fingerprint["source/orders/normalize"]
			}
			cp.Components = append(cp.Components, checkpoint.Component{ID: id, Fingerprint: fp, StateTTL: -1})
		}
		return cp
	}
	verdict := func(vs []pipeline.StateVerdict, id string) pipeline.StateVerdict {
		for _, v := range vs {
			if v.ID == id {
				return v
			}
		}
		t.Fatalf("no verdict for %s in %+v", id, vs)
		return pipeline.StateVerdict{}
	}
	vs, err := p.StateVerdicts(saved(former), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(vs, "source/orders/normalize"); v.Action != pipeline.StateKeep || v.From != former {
		t.Errorf("the normalization saved under its former ID: %+v, want kept from %s", v, former)
	}
	for _, v := range vs {
		if v.Action != pipeline.StateKeep {
			t.Errorf("%s: %s (%s), want keep", v.ID, v.Action, v.Why)
		}
	}
	vs, err = p.StateVerdicts(saved(""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(vs, "source/orders/normalize"); v.Action != pipeline.StateRefuse || !strings.Contains(v.Name, `source "orders"`) {
		t.Errorf("a normalization new after a source that keeps its position: %+v, want refused naming the source", v)
	}
	vs, err = p.StateVerdicts(saved(""), []string{"source/orders"})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(vs, "source/orders/normalize"); v.Action != pipeline.StateFresh {
		t.Errorf("a normalization new after a source read again from its start: %+v, want new", v)
	}
}
