package pipetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/pipetest"
)

// enrich looks orders' customers up in a MySQL table whose DSN is unset:
// a test run must never connect to it.
const enrich = `version: 1
name: enrich
sources:
  - name: orders
    type: file
    path: orders.csv
    schema: [order_id BIGINT, customer_id BIGINT, amount DOUBLE, proc_time AS PROCTIME()]
  - name: customers
    type: mysql
    dsn: ${PIPETEST_UNSET_DSN}
    table: customers
    schema: [id BIGINT, name STRING, country STRING]
    key: [id]
    lookup: {cache: partial}
transforms:
  - name: enriched
    sql: |
      SELECT o.order_id, o.amount, c.name, c.country
      FROM orders AS o
      LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id
sinks:
  - name: out
    from: enriched
    type: print
`

// A lookup join in a test reads the lookup table from the test's input:
// rows, or lines in the table's format; a table the test gives no input
// is empty. None of it queries MySQL.
func TestLookupJoinReadsTheTestInput(t *testing.T) {
	path := write(t, t.TempDir(), "enrich.yaml", enrich+`tests:
  - name: from rows
    inputs:
      orders:
        rows: [{order_id: 1, customer_id: 10, amount: 5}, {order_id: 2, customer_id: 11, amount: 7}, {order_id: 3, customer_id: 12, amount: 1}]
      customers:
        rows:
          - {id: 10, name: ann, country: fr}
          - {id: 12, name: cy, country: de}
    expect:
      out:
        changes:
          - +I: {order_id: 1, amount: 5, name: ann, country: fr}
          - +I: {order_id: 2, amount: 7, name: null, country: null}
          - +I: {order_id: 3, amount: 1, name: cy, country: de}
  - name: from lines
    inputs:
      orders: {lines: ["1,10,5"]}
      customers: {lines: ["10,ann,fr"]}
    expect:
      out:
        changes: [+I: {order_id: 1, amount: 5, name: ann, country: fr}]
  - name: no input is an empty table
    inputs:
      orders: {lines: ["1,10,5"]}
    expect:
      out:
        changes: [+I: {order_id: 1, amount: 5, name: null, country: null}]
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

// A lookup table is a table, not a changelog: an input row with another
// kind than +I is refused where it is written.
func TestLookupTableInputHoldsRows(t *testing.T) {
	path := write(t, t.TempDir(), "enrich.yaml", enrich+`tests:
  - name: t
    inputs:
      customers:
        rows:
          - -D: {id: 10, name: ann, country: fr}
    expect:
      out: {changes: []}
`)
	_, err := pipetest.Load(path, pipetest.Env{Registry: builtin.Registry(), Lookup: func(string) (string, bool) { return "", false }})
	want := path + ":30:13: tests[0].inputs.customers.rows[0]: customers is a lookup table, which holds rows, not changes"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v; want one at %s", err, want)
	}
}
