package pipetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/pipetest"
)

// A lookup key that is an expression of the probe side (Flink computes it
// in a Calc below the lookup join): `CAST(o.customer_id AS STRING) =
// c.country` and `o.customer_id + 1 = c.id` look rows up by the computed
// values, and a later lookup join still finds the processing-time
// attribute through the Calc that drops the computed column.
func TestLookupJoinComputedKey(t *testing.T) {
	path := write(t, t.TempDir(), "enrich.yaml", `version: 1
name: enrich
sources:
  - name: orders
    type: file
    path: orders.csv
    schema: [order_id BIGINT, customer_id BIGINT, proc_time AS PROCTIME()]
  - name: customers
    type: mysql
    dsn: ${PIPETEST_UNSET_DSN}
    table: customers
    schema: [id BIGINT, name STRING, country STRING]
    key: [id]
transforms:
  - name: enriched
    sql: |
      SELECT o.order_id, c.name, d.name AS by_country
      FROM orders AS o
      LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id + 1 = c.id
      LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS d ON CAST(o.customer_id AS STRING) = d.country
sinks:
  - name: out
    from: enriched
    type: print
tests:
  - name: computed keys
    inputs:
      orders:
        rows: [{order_id: 1, customer_id: 9}, {order_id: 2, customer_id: 20}]
      customers:
        rows:
          - {id: 10, name: ann, country: "20"}
          - {id: 21, name: bo, country: "9"}
    expect:
      out:
        changes:
          - +I: {order_id: 1, name: ann, by_country: bo}
          - +I: {order_id: 2, name: bo, by_country: ann}
`)
	e := env()
	e.Timeout = 5 * time.Second
	s, err := pipetest.Load(path, e)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var out strings.Builder
	for _, r := range s.Run(context.Background(), nil) {
		pipetest.Write(&out, r)
		if !r.Passed() {
			t.Errorf("%s failed", r.Name)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", out.String())
	}
}
