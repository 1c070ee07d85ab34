package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestSchemaChange: column types that widen without changing a saved
// value migrate, and so do INT to BIGINT and FLOAT to DOUBLE (the saved
// values retagged) for an operator that can retag them, when no column
// stays of the narrow type; any other change of an operator is refused,
// saying what.
func TestSchemaChange(t *testing.T) {
	agg := func(in, out string) string {
		return "GroupAggregate(groupBy=[k], select=[SUM(v)]), input (k " + in + ", v DECIMAL(10, 2)), output (k " + in + ", $a0 " + out + ")"
	}
	for _, c := range []struct {
		old, new string
		want     Action
		why      string
		noWiden  bool // the operator cannot retag saved values
	}{
		{agg("INT", "DECIMAL(38, 2)"), agg("INT", "DECIMAL(38, 2)"), Keep, "", false},
		{agg("SMALLINT", "DECIMAL(38, 2)"), agg("INT", "DECIMAL(38, 2)"), Migrate, "input k SMALLINT -> INT", false},
		{agg("INT NOT NULL", "DECIMAL(20, 2)"), agg("INT", "DECIMAL(38, 2)"), Migrate, "output $a0 DECIMAL(20, 2) -> DECIMAL(38, 2)", false},
		{agg("VARCHAR(5)", "BIGINT"), agg("STRING", "BIGINT"), Migrate, "VARCHAR(5) -> STRING", false},
		{agg("INT", "BIGINT"), agg("BIGINT", "BIGINT"), Migrate, "the saved values and keys retagged: input k INT -> BIGINT, output k INT -> BIGINT", false},
		{agg("INT", "BIGINT"), agg("BIGINT", "BIGINT"), Refuse, "which this operator's restore does not do", true},
		{agg("TINYINT", "FLOAT"), agg("BIGINT", "DOUBLE"), Migrate, "output $a0 FLOAT -> DOUBLE", false},
		{agg("INT", "INT"), agg("BIGINT", "INT"), Refuse, "its output column $a0 stays INT while others widen from it to BIGINT", false},
		{agg("BIGINT", "BIGINT"), agg("INT", "BIGINT"), Refuse, "only widenings migrate in place", false},
		{agg("INT", "DECIMAL(20, 2)"), agg("INT", "DECIMAL(20, 3)"), Refuse, "the scale changed", false},
		{agg("INT", "BIGINT"), agg("INT NOT NULL", "BIGINT"), Refuse, "NOT NULL was added", false},
		{agg("INT", "BIGINT"), strings.Replace(agg("INT", "BIGINT"), "SUM(v)", "SUM(v), MAX(v)", 1), Refuse, "the operator itself changed: was GroupAggregate(groupBy=[k], select=[SUM(v)]), now GroupAggregate(groupBy=[k], select=[SUM(v), MAX(v)])", false},
	} {
		n := &Node{Kind: "transform", Fingerprint: c.new}
		got, why, widen, _, change := fits(n, c.old, !c.noWiden, false)
		if got != c.want || !strings.Contains(why, c.why) || (widen != nil) != strings.Contains(why, "retagged") || (change != "") != (got == Migrate) {
			t.Errorf("%s\n -> %s: %s %q (%q), want %s %q", c.old, c.new, got, why, change, c.want, c.why)
		}
	}
	// The summary validate prints: by change of type, each column once.
	n := &Node{Kind: "transform", Fingerprint: agg("BIGINT", "DOUBLE")}
	if _, _, _, _, change := fits(n, agg("INT NOT NULL", "FLOAT"), true, false); change != "INT -> BIGINT on column k, FLOAT -> DOUBLE on column $a0" {
		t.Errorf("change %q", change)
	}
	two := "Join(k=k), left (k INT, v INT), right (k INT, w FLOAT), output (k INT, v INT, w FLOAT)"
	n = &Node{Kind: "transform", Fingerprint: strings.ReplaceAll(two, "INT", "BIGINT")}
	if _, _, _, _, change := fits(n, two, true, false); change != "INT -> BIGINT on columns k, v" {
		t.Errorf("change %q", change)
	}
	// An operator that retags by input column migrates with a column of
	// the narrow type staying: only the widened column is retagged.
	n = &Node{Kind: "transform", Fingerprint: agg("BIGINT", "INT")}
	got, why, _, cols, _ := fits(n, agg("INT", "INT"), true, true)
	if got != Migrate || !slices.Equal(cols, []row.TypeID{row.BigInt, row.Null}) {
		t.Errorf("by column: %s %q, columns %v", got, why, cols)
	}
}

// TestCompareMatchesStateByIDAliasAndLegacyID: an operator finds its
// saved state under its ID, a former name's ID, or (format 3) its depth
// ID; new, gone and reset operators get their verdicts.
func TestCompareMatchesStateByIDAliasAndLegacyID(t *testing.T) {
	op := func(id string, aliases ...string) *OpNode {
		agg := optest.Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, aggop.GroupAggOptions{}))
		return &OpNode{Node: Node{Name: "agg", Kind: "transform", Transform: "q", ID: id, Aliases: aliases, Fingerprint: "fp"}, Op: agg}
	}
	verdict := func(vs []Verdict, id string) Verdict {
		for _, v := range vs {
			if v.ID == id {
				return v
			}
		}
		t.Fatalf("no verdict for %s in %+v", id, vs)
		return Verdict{}
	}
	g := &Graph{Name: "p", Ops: []*OpNode{op("transform/q/group_aggregate#1", "transform/old/group_aggregate#1", "legacy:transform/old/1")}}
	for _, c := range []struct {
		name   string
		cp     checkpoint.Checkpoint
		reset  []string
		action Action
		from   string
	}{
		{"same id", checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{{ID: "transform/q/group_aggregate#1", Fingerprint: "fp"}}}, nil, Keep, "transform/q/group_aggregate#1"},
		{"renamed", checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{{ID: "transform/old/group_aggregate#1", Fingerprint: "fp"}}}, nil, Keep, "transform/old/group_aggregate#1"},
		{"format 3", checkpoint.Checkpoint{Format: 3, Components: []checkpoint.Component{{ID: "transform/old/1", Fingerprint: "fp"}}}, nil, Keep, "transform/old/1"},
		// Not found (the depth ID means nothing in format 4); the saved
		// state no operator takes is refused beside it.
		{"format 3 id read as 4", checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{{ID: "transform/old/1", Fingerprint: "fp"}}}, nil, Fresh, ""},
		{"new transform", checkpoint.Checkpoint{Format: 4}, nil, Fresh, ""},
		{"changed", checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{{ID: "transform/q/group_aggregate#1", Fingerprint: "fp2"}}}, nil, Refuse, "transform/q/group_aggregate#1"},
		{"changed, reset by metrics id", checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{{ID: "transform/q/group_aggregate#1", Fingerprint: "fp2"}}}, []string{"q/group_aggregate#1"}, Reset, ""},
		{"changed, reset by transform", checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{{ID: "transform/q/group_aggregate#1", Fingerprint: "fp2"}}}, []string{"q"}, Reset, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs, err := Compare(g, &c.cp, c.reset)
			if err != nil {
				t.Fatal(err)
			}
			v := verdict(vs, "transform/q/group_aggregate#1")
			if v.Action != c.action || (c.from != "" && v.From != c.from) {
				t.Errorf("%+v, want %s from %q", v, c.action, c.from)
			}
		})
	}
	// A gone operator of a transform that keeps others is refused; of a
	// gone transform, dropped.
	cp := &checkpoint.Checkpoint{Format: 4, Components: []checkpoint.Component{
		{ID: "transform/q/group_aggregate#1", Fingerprint: "fp"}, {ID: "transform/q/rank#1", Fingerprint: "Rank"}, {ID: "transform/r/distinct#1", Fingerprint: "D"}}}
	vs, err := Compare(g, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(vs, "transform/q/rank#1"); v.Action != Refuse {
		t.Errorf("gone operator of a kept transform: %+v", v)
	}
	if v := verdict(vs, "transform/r/distinct#1"); v.Action != Drop {
		t.Errorf("operator of a gone transform: %+v", v)
	}
	if _, err := Compare(g, cp, []string{"nosuch"}); err == nil || !strings.Contains(err.Error(), "--reset-state nosuch names no operator") {
		t.Errorf("a reset naming nothing: %v", err)
	}
}
