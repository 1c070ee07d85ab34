package plan_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
)

// TestNestedProjectionPushdown: a ROW column of a json file source read
// only through field accesses is not decoded: its fields read are
// (Source.NestedPaths), through computed columns, the watermark and
// transforms over transforms; a ROW read whole anywhere keeps it whole.
func TestNestedProjectionPushdown(t *testing.T) {
	tests := []struct {
		name      string
		extra     string // more source keys
		queries   []string
		direct    bool     // a sink reads the source itself
		projected []string // the columns decoded whole; nil: every column
		paths     []string
	}{
		{name: "fields", queries: []string{"SELECT r.a, r.b FROM s"}, projected: []string{}, paths: []string{"r.a", "r.b"}},
		{name: "nested field and filter", queries: []string{"SELECT id, r.c.x FROM s WHERE r.a > 1"}, projected: []string{"id"}, paths: []string{"r.a", "r.c.x"}},
		{name: "index by name and number", queries: []string{"SELECT r['b'] AS b, r[1] AS a FROM s"}, projected: []string{}, paths: []string{"r.b", "r.a"}},
		{name: "a field twice", queries: []string{"SELECT r.a, r.a + 1 AS a1 FROM s"}, projected: []string{}, paths: []string{"r.a"}},
		{name: "inner ROW whole", queries: []string{"SELECT r.c FROM s"}, projected: []string{}, paths: []string{"r.c"}},
		{name: "ROW whole", queries: []string{"SELECT id, r FROM s"}},
		{name: "ROW whole beside a field", queries: []string{"SELECT r.a, r FROM s"}, projected: []string{"r"}},
		{name: "ROW passed to a function", queries: []string{"SELECT r.a FROM s WHERE r IS NOT NULL"}, projected: []string{"r"}},
		{name: "a path and its prefix", queries: []string{"SELECT r.c, r.c.x FROM s"}, projected: []string{"r"}},
		{name: "whole in another reader", queries: []string{"SELECT r.a FROM s", "SELECT r FROM s"}, projected: []string{"r"}},
		{name: "two readers of fields", queries: []string{"SELECT r.a FROM s", "SELECT r.b FROM s WHERE id > 0"}, projected: []string{"id"}, paths: []string{"r.a", "r.b"}},
		{name: "star", queries: []string{"SELECT * FROM s"}},
		{name: "sink reads the source", queries: []string{"SELECT r.a FROM s"}, direct: true},
		{name: "self join", queries: []string{"SELECT x.r.a FROM s x JOIN s y ON x.id = y.id"}},
		{name: "aggregate", queries: []string{"SELECT r.b, SUM(r.a) AS total FROM s GROUP BY r.b"}, projected: []string{}, paths: []string{"r.b", "r.a"}},
		{name: "transform over a transform", queries: []string{"SELECT a FROM (SELECT r.a AS a, r.b AS b FROM s) WHERE b <> 'x'"}, projected: []string{}, paths: []string{"r.a", "r.b"}},
		{name: "a view read in part", queries: []string{"SELECT a + 1 AS a1 FROM (SELECT r.a AS a, r.b AS b, r.c.x AS x, id FROM s WHERE id > 0)"}, projected: []string{"id"}, paths: []string{"r.a"}},
		{name: "a view read in part by an aggregate", queries: []string{"SELECT b, COUNT(*) AS n FROM (SELECT r.a AS a, r.b AS b FROM s) GROUP BY b"}, projected: []string{}, paths: []string{"r.b"}},
		// The WHERE's x.x > 3 moves below the join, into a filter over
		// x's view (join_filter.go): it reads what the join reads of it.
		{name: "views joined, a filter moved below", queries: []string{"SELECT x.a, y.b FROM (SELECT r.a AS a, r.c.x AS x, r.t AS t, id FROM s) x JOIN (SELECT id, r.b AS b FROM s) y ON x.id = y.id WHERE x.x > 3"},
			projected: []string{"id"}, paths: []string{"r.a", "r.c.x", "r.b"}},
		{name: "computed column", extra: "      - ra AS r.a * 2\n", queries: []string{"SELECT id, ra FROM s"}, projected: []string{"id"}, paths: []string{"r.a"}},
		{name: "computed column not read", extra: "      - ra AS r.a * 2\n", queries: []string{"SELECT id FROM s"}, projected: []string{"id"}},
		{name: "watermark", extra: "      - et AS CASE WHEN id = 0 THEN r.c.y ELSE r.t END\n    watermark: et - INTERVAL '1' SECOND\n",
			queries: []string{"SELECT r.a FROM s"}, projected: []string{"id"}, paths: []string{"r.a", "r.c.y", "r.t"}},
		{name: "computed ROW column read whole", extra: "      - rr AS r\n", queries: []string{"SELECT rr.a FROM s"}, projected: []string{"r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("version: 1\nname: t\nsources:\n  - name: s\n    type: file\n    path: in.json\n    format: json\n    schema:\n")
			b.WriteString("      - id BIGINT\n      - r ROW<a BIGINT, b STRING, c ROW<x INT, y TIMESTAMP(3)>, t TIMESTAMP(3)>\n")
			b.WriteString(tt.extra)
			b.WriteString("transforms:\n")
			for i, q := range tt.queries {
				b.WriteString("  - name: t" + string(rune('0'+i)) + "\n    sql: " + q + "\n")
			}
			b.WriteString("sinks:\n")
			for i := range tt.queries {
				b.WriteString("  - {name: o" + string(rune('0'+i)) + ", from: t" + string(rune('0'+i)) + ", type: blackhole}\n")
			}
			if tt.direct {
				b.WriteString("  - {name: raw, from: s, type: blackhole}\n")
			}
			p, err := plan.Build(parse(t, b.String()), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatalf("%v\n%s", err, b.String())
			}
			src := p.Sources[0]
			got := []string{}
			for i, ok := range src.Projected {
				if ok {
					got = append(got, src.Physical.Fields[i].Name)
				}
			}
			if (tt.projected == nil) != (src.Projected == nil) || tt.projected != nil && !slices.Equal(got, tt.projected) {
				t.Errorf("decoded whole %v (%v), want %v", got, src.Projected, tt.projected)
			}
			if paths := src.NestedPaths(); !slices.Equal(paths, tt.paths) {
				t.Errorf("paths %q, want %q", paths, tt.paths)
			}
		})
	}
}
