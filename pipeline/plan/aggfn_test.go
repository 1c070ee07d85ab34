package plan_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
)

func aggPipeline(sql string) string {
	return `version: 1
name: t
sources:
  - name: gen
    type: datagen
    rows: 5
    schema: [k STRING, n BIGINT, i INT, "d DECIMAL(10,2)", b BOOLEAN]
transforms:
  - name: a
    sql: ` + sql + `
sinks:
  - name: out
    from: a
    type: print
`
}

// The planner refuses what the aggregate functions cannot take, at the
// offending position of the SQL (line 10 of the file, after "sql: ").
func TestAggregateFunctionErrors(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT k, STDDEV_POP(d) FROM gen GROUP BY k", "p.yaml:10:31: transforms[0].sql: STDDEV_POP over DECIMAL is not supported yet; CAST the argument AS DOUBLE"},
		{"SELECT k, VAR_SAMP(k) FROM gen GROUP BY k", "p.yaml:10:29: transforms[0].sql: VAR_SAMP needs a numeric argument, got STRING"},
		{"SELECT k, LISTAGG(n) FROM gen GROUP BY k", "p.yaml:10:28: transforms[0].sql: LISTAGG needs a STRING argument, got BIGINT; CAST it AS STRING"},
		{"SELECT k, LISTAGG(k, k) FROM gen GROUP BY k", "p.yaml:10:31: transforms[0].sql: LISTAGG's separator must be a string literal"},
		{"SELECT k, LISTAGG(k, ',', ';') FROM gen GROUP BY k", "p.yaml:10:20: transforms[0].sql: LISTAGG takes one or two arguments"},
		{"SELECT k, FIRST_VALUE(DISTINCT n) FROM gen GROUP BY k", "p.yaml:10:20: transforms[0].sql: FIRST_VALUE(DISTINCT ...) is not allowed"},
		{"SELECT k, COUNT(*) FILTER (WHERE n) FROM gen GROUP BY k", "p.yaml:10:43: transforms[0].sql: FILTER (WHERE ...) needs a BOOLEAN condition, got BIGINT"},
		{"SELECT k, SUM(n) FILTER (WHERE COUNT(*) > 1) FROM gen GROUP BY k", "p.yaml:10:41: transforms[0].sql: aggregate functions cannot be nested in FILTER (WHERE ...)"},
		{"SELECT k, UPPER(k) FILTER (WHERE b) FROM gen", "p.yaml:10:29: transforms[0].sql: FILTER (WHERE ...) applies only to aggregate functions, not to UPPER"},
		{"SELECT k, SUM(n) FILTER (WHERE nope) FROM gen GROUP BY k", "p.yaml:10:41: transforms[0].sql: "},
		{"SELECT k, JSON_ARRAYAGG(DISTINCT n) FROM gen GROUP BY k", "p.yaml:10:20: transforms[0].sql: JSON_ARRAYAGG(DISTINCT ...) is not allowed"},
		{"SELECT k, JSON_OBJECTAGG(KEY k VALUE n) FILTER (WHERE b) FROM gen GROUP BY k", "p.yaml:10:50: transforms[0].sql: FILTER after JSON_OBJECTAGG is not allowed"},
		{"SELECT JSON_OBJECTAGG(KEY n VALUE k) FROM gen", "p.yaml:10:36: transforms[0].sql: JSON_OBJECTAGG's key must be a character string, got BIGINT"},
		{"SELECT k, LISTAGG(k IGNORE NULLS) FROM gen GROUP BY k", "transforms[0].sql: IGNORE NULLS belongs to ARRAY_AGG"},
		{"SELECT k, PERCENTILE(n, 1.5) FROM gen GROUP BY k", "p.yaml:10:34: transforms[0].sql: Percentage of PERCENTILE should be between [0.0, 1.0], but was '1.5'"},
		{"SELECT k, PERCENTILE(n, i) FROM gen GROUP BY k", "p.yaml:10:34: transforms[0].sql: PERCENTILE's percentage must be a numeric constant"},
		{"SELECT k, PERCENTILE(k, 0.5) FROM gen GROUP BY k", "p.yaml:10:31: transforms[0].sql: PERCENTILE needs a numeric value, got STRING"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := plan.Build(parse(t, aggPipeline(tc.sql)), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The result types of ARRAY_AGG, the JSON aggregates, PERCENTILE and
// STDDEV/VARIANCE are Flink's.
func TestAggregateFunctionTypes(t *testing.T) {
	sql := "SELECT k, ARRAY_AGG(i) AS a, ARRAY_AGG(k IGNORE NULLS) AS ak, JSON_ARRAYAGG(n) AS ja, JSON_OBJECTAGG(k VALUE d) AS jo, PERCENTILE(d, 0.5) AS p, STDDEV(i) AS s, VARIANCE(n) AS v FROM gen GROUP BY k"
	p, err := plan.Build(parse(t, aggPipeline(sql)), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	want := "schema: (k STRING, a ARRAY<INT>, ak ARRAY<STRING>, ja STRING NOT NULL, jo STRING NOT NULL, p DOUBLE, s INT, v BIGINT)"
	if ex := p.Explain(); !strings.Contains(ex, want) {
		t.Errorf("explain lacks %q:\n%s", want, ex)
	}
}

// Explain names each aggregate with its FILTER and DISTINCT, and the
// result types follow Flink's: STDDEV/VAR keep the argument type, LISTAGG
// is STRING.
func TestAggregateFunctionPlan(t *testing.T) {
	sql := "SELECT k, COUNT(*) FILTER (WHERE b) AS nb, SUM(DISTINCT n) AS sd, MAX(DISTINCT i) AS mx, STDDEV_POP(i) AS sp, VAR_SAMP(n) AS vs, LISTAGG(k) AS l, LAST_VALUE(d) AS ld FROM gen GROUP BY k"
	p, err := plan.Build(parse(t, aggPipeline(sql)), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ex := p.Explain()
	for _, want := range []string{
		"schema: (k STRING, nb BIGINT NOT NULL, sd BIGINT, mx INT, sp INT, vs BIGINT, l STRING, ld DECIMAL(10, 2))",
		"GroupAggregate(groupBy=[k], select=[COUNT(*) FILTER (WHERE b), SUM(DISTINCT n), MAX(DISTINCT i), STDDEV_POP(i), VAR_SAMP(n), LISTAGG(k), LAST_VALUE(d)])",
	} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}
}
