package plan_test

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
)

// TestComputedColumnsInPlace: a source that decodes nested paths leaves
// the computed columns' room between its physical columns and the paths
// (connector.NestedSource's gap), so that its decoded rows have the
// table's layout and the computed columns are evaluated into them, not
// into a copy; a source without paths gets its physical rows copied.
func TestComputedColumnsInPlace(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		paths       []string
		inPlace     bool
	}{
		{name: "paths", query: "SELECT id, ra, rb FROM s", paths: []string{"r.a"}, inPlace: true},
		{name: "ROW read whole", query: "SELECT id, ra, rb, r FROM s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			yaml := `version: 1
name: t
sources:
  - name: s
    type: file
    path: in.json
    format: json
    schema:
      - id BIGINT
      - r ROW<a BIGINT, b STRING>
      - ra AS r.a * 2
      - rb AS ra + id
transforms:
  - name: t
    sql: ` + tt.query + `
sinks:
  - {name: o, from: t, type: blackhole}
`
			p, err := plan.Build(parse(t, yaml), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if paths := p.Sources[0].NestedPaths(); !slices.Equal(paths, tt.paths) {
				t.Fatalf("paths %q, want %q", paths, tt.paths)
			}
			g, err := p.Graph()
			if err != nil {
				t.Fatal(err)
			}
			sn := g.Sources[0]
			if sn.Compute == nil {
				t.Fatal("no computed columns")
			}
			compute := sn.Compute()
			// The decoded row: id, r, and with the path, the gap (old
			// values, as in a batch given back) and r.a.
			r := row.Row{row.BigIntValue(5), row.NullValue}
			if tt.inPlace {
				if sn.GapAt != 2 || sn.Gap != 2 {
					t.Fatalf("gap of %d columns at %d, want 2 at 2", sn.Gap, sn.GapAt)
				}
				r = append(r, row.StringValue("old"), row.StringValue("old"), row.BigIntValue(7))
			} else {
				r[1] = row.StructValue([]row.Value{row.BigIntValue(7), row.StringValue("x")})
			}
			for range 2 {
				got, err := compute(r)
				if err != nil {
					t.Fatal(err)
				}
				if got[2].Int64() != 14 || got[3].Int64() != 19 || got[0].Int64() != 5 {
					t.Fatalf("computed %v", got)
				}
				if same := &got[0] == &r[0]; same != tt.inPlace {
					t.Fatalf("computed in the decoded row: %v, want %v", same, tt.inPlace)
				}
			}
		})
	}
}
