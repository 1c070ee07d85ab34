package plan_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

// smallIntSources are two tables whose columns hold the same numbers as
// TINYINT, SMALLINT, INT and BIGINT on either side, with event time.
const smallIntSources = `version: 1
name: t
sources:
  - name: a
    type: file
    path: a.csv
    schema: [t TINYINT, s SMALLINT, i INT, b BIGINT, ts TIMESTAMP(3)]
    watermark: ts
  - name: c
    type: file
    path: c.csv
    schema: [t TINYINT, s SMALLINT, i INT, b BIGINT, ts TIMESTAMP(3)]
    watermark: ts
  - name: v
    type: file
    path: v.json
    format: debezium-json
    key: [s]
    schema: [t TINYINT, s SMALLINT, i INT, b BIGINT, ts TIMESTAMP(3)]
    watermark: ts
  - name: p
    type: file
    path: p.csv
    schema: [t TINYINT, s SMALLINT, pt AS PROCTIME()]
  - name: db
    type: mysql
    dsn: "u@tcp(127.0.0.1:9)/d"
    table: t
    schema: [s SMALLINT, i INT, b BIGINT]
    lookup: {}
transforms:
  - name: q
    sql: %s
sinks:
  - {name: out, from: q, type: print}
`

// Flink widens TINYINT, SMALLINT, INT and BIGINT to the wider one
// wherever two of them must agree: set operations, join keys of every
// join kind (a lookup join casts a narrower probe key to the looked-up
// column's type), CASE, COALESCE, IN, ARRAY and MAP constructors.
func TestSmallIntegersWiden(t *testing.T) {
	for _, c := range []struct{ name, sql, want string }{
		{"union all", "SELECT t FROM a UNION ALL SELECT s FROM c UNION ALL SELECT i FROM c UNION ALL SELECT b FROM a", "BIGINT"},
		{"union", "SELECT t, s FROM a UNION SELECT s, t FROM c", "SMALLINT, SMALLINT"},
		{"intersect", "SELECT t FROM a INTERSECT SELECT s FROM c", "SMALLINT"},
		{"except all", "SELECT s FROM a EXCEPT ALL SELECT t FROM c", "SMALLINT"},
		{"join tinyint smallint", "SELECT a.t FROM a JOIN c ON a.t = c.s", ""},
		{"join smallint int", "SELECT a.t FROM a LEFT JOIN c ON a.s = c.i", ""},
		{"join tinyint bigint", "SELECT a.t FROM a FULL JOIN c ON a.t = c.b", ""},
		{"join not distinct", "SELECT a.t FROM a JOIN c ON a.t IS NOT DISTINCT FROM c.s", ""},
		{"semi join", "SELECT a.t FROM a WHERE a.t IN (SELECT c.s FROM c)", ""},
		{"anti join", "SELECT a.t FROM a WHERE NOT EXISTS (SELECT * FROM c WHERE c.i = a.t)", ""},
		{"interval join", "SELECT a.t FROM a JOIN c ON a.t = c.s AND a.ts BETWEEN c.ts - INTERVAL '1' SECOND AND c.ts", ""},
		{"temporal join", "SELECT a.i FROM a JOIN v FOR SYSTEM_TIME AS OF a.ts AS r ON a.t = r.s", ""},
		{"window join", "SELECT l.t FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) l " +
			"JOIN (SELECT * FROM TABLE(TUMBLE(TABLE c, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) r " +
			"ON l.t = r.s AND l.window_start = r.window_start AND l.window_end = r.window_end", ""},
		{"case", "SELECT CASE WHEN i > 0 THEN t WHEN i < 0 THEN s ELSE b END FROM a", "BIGINT"},
		{"coalesce", "SELECT COALESCE(t, s), COALESCE(s, i), NULLIF(t, s), IF(i > 0, t, s) FROM a", "SMALLINT, INT, TINYINT, SMALLINT"},
		{"in list", "SELECT t IN (s, i, b, 1000), s IN (t, 1) FROM a", ""},
		{"compare", "SELECT t = s, s < i, t <> b, t BETWEEN s AND i FROM a", ""},
		{"array", "SELECT ARRAY[t, s], ARRAY[s, i], MAP[t, s] FROM a", "ARRAY<SMALLINT> NOT NULL, ARRAY<INT> NOT NULL, MAP<TINYINT, SMALLINT> NOT NULL"},
		{"lookup join", "SELECT p.t, r.i FROM p JOIN db FOR SYSTEM_TIME AS OF p.pt AS r ON p.t = r.s AND p.s = r.b", "TINYINT, INT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(smallIntSources, fmt.Sprintf("%q", c.sql))
			sp, err := spec.Parse("p.yaml", []byte(src), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build(sp, plan.Env{Registry: allConnectors(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				return
			}
			for _, n := range p.Describe().Nodes {
				if n.ID != "transform:q" {
					continue
				}
				var types []string
				for _, col := range n.Schema {
					types = append(types, col.Type)
				}
				if got := strings.Join(types, ", "); got != c.want {
					t.Errorf("column types %s, want %s", got, c.want)
				}
				return
			}
			t.Fatal("no transform q in the plan")
		})
	}
}
