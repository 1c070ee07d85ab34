package plan_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
)

// TestProjectionPushdown: the columns a file source is told to decode
// are those the plan reads, through computed columns, the watermark and
// joins; a reader that is not a projecting Calc or a join keeps them all.
func TestProjectionPushdown(t *testing.T) {
	const overTime = "      - et AS TO_TIMESTAMP_LTZ(ts, 3)\n    watermark: et - INTERVAL '1' SECOND\n"
	tests := []struct {
		name    string
		extra   string // more source keys
		queries []string
		direct  bool     // a sink reads the source itself
		want    []string // nil: every column
	}{
		{name: "filter and project", queries: []string{"SELECT id, amount FROM s WHERE amount > 5"}, want: []string{"id", "amount"}},
		{name: "filter column only in WHERE", queries: []string{"SELECT id FROM s WHERE name <> 'x'"}, want: []string{"id", "name"}},
		{name: "two readers", queries: []string{"SELECT id FROM s", "SELECT UPPER(name) AS n FROM s"}, want: []string{"id", "name"}},
		{name: "star", queries: []string{"SELECT * FROM s"}},
		{name: "star with a filter", queries: []string{"SELECT * FROM s WHERE id > 1"}},
		{name: "sink reads the source", queries: []string{"SELECT id FROM s"}, direct: true},
		{name: "aggregate", queries: []string{"SELECT name, SUM(amount) AS total FROM s GROUP BY name"}, want: []string{"amount", "name"}},
		{name: "computed column", extra: "      - double_amount AS amount * 2\n", queries: []string{"SELECT id, double_amount FROM s"}, want: []string{"id", "amount"}},
		{name: "watermark", extra: "      - et AS TO_TIMESTAMP_LTZ(ts, 3)\n    watermark: et - INTERVAL '1' SECOND\n", queries: []string{"SELECT id FROM s"}, want: []string{"id", "ts"}},
		// A join reads its keys, its condition's columns and what its
		// readers read of it.
		{name: "self join", queries: []string{"SELECT a.id FROM s a JOIN s b ON a.id = b.id"}, want: []string{"id"}},
		{name: "join condition", queries: []string{"SELECT a.name FROM s a LEFT JOIN s b ON a.id = b.id AND a.amount > 3"}, want: []string{"id", "name", "amount"}},
		{name: "semi join", queries: []string{"SELECT name FROM s WHERE id IN (SELECT amount FROM s)"}, want: []string{"id", "name", "amount"}},
		{name: "join of joins", queries: []string{"SELECT a.name FROM s a JOIN s b ON a.id = b.id JOIN s c ON b.amount = c.amount"}, want: []string{"id", "name", "amount"}},
		{name: "join read whole", queries: []string{"SELECT * FROM s a JOIN s b ON a.id = b.id"}},
		// An event-time OVER reads its keys, time, arguments and what its
		// readers read of it.
		{name: "over", extra: overTime, queries: []string{"SELECT name, MAX(amount) OVER (PARTITION BY name ORDER BY et ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM s"},
			want: []string{"name", "amount", "ts"}},
		{name: "over partitioned by an unread column", extra: overTime, queries: []string{"SELECT amount, COUNT(*) OVER (PARTITION BY id ORDER BY et RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) AS n FROM s"},
			want: []string{"id", "amount", "ts"}},
		{name: "over with LAG", extra: overTime, queries: []string{"SELECT LAG(name) OVER (PARTITION BY amount ORDER BY et) AS l FROM s"},
			want: []string{"name", "amount", "ts"}},
		{name: "over read whole", extra: overTime, queries: []string{"SELECT *, SUM(amount) OVER (PARTITION BY name ORDER BY et ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("version: 1\nname: t\nsources:\n  - name: s\n    type: file\n    path: in.csv\n    schema:\n")
			b.WriteString("      - id BIGINT\n      - name STRING\n      - amount BIGINT\n      - ts BIGINT\n")
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
			var got []string
			for i, ok := range src.Projected {
				if ok {
					got = append(got, src.Physical.Fields[i].Name)
				}
			}
			want := slices.Clone(tt.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || (tt.want == nil) != (src.Projected == nil) {
				t.Errorf("projected %v (%v), want %v", got, src.Projected, tt.want)
			}
		})
	}
}
