package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/plan"
)

// opIDSources is a stream of orders, and a MySQL table looked up by key.
const opIDSources = `version: 1
name: ids
sources:
  - name: orders
    type: file
    path: orders.csv
    schema: [id BIGINT, cust INT, amount INT, pt AS PROCTIME()]
  - name: customers
    type: mysql
    dsn: "u@tcp(127.0.0.1:9)/d"
    table: customers
    schema: [id INT, region STRING]
    lookup: {}
transforms:
  - name: enriched
    sql: %q
sinks:
  - {name: out, from: enriched, type: print}
`

// operatorIDs plans sql as the transform "enriched" and returns its
// operators' ids by their plan's kind, in the description's order, and
// the plan text of each id.
func operatorIDs(t *testing.T, sql string) (ids []string, plans map[string]string, d plan.Description) {
	t.Helper()
	p := buildPlan(t, allConnectors(), "ids.yaml", []byte(fmt.Sprintf(opIDSources, sql)), func(string) (string, bool) { return "", false })
	d = p.Describe()
	plans = map[string]string{}
	for _, n := range d.Nodes {
		if n.Kind == plan.KindOperator {
			ids = append(ids, n.OperatorID)
			plans[n.OperatorID] = n.Label
		}
	}
	// The runtime's nodes carry the same ids, for /metrics.
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range g.Ops {
		if _, ok := plans[op.Short]; !ok || plans[op.Short] != op.Name {
			t.Errorf("runtime operator %q (%s) is not the description's %q", op.Short, op.Name, plans[op.Short])
		}
	}
	return ids, plans, d
}

// An operator's id is its transform, its kind and its number among the
// transform's operators of that kind: edits around a GROUP BY (a wider
// filter, another aggregate call, a HAVING) change its plan text, not
// its id.
func TestOperatorIDsStayPut(t *testing.T) {
	before, plansBefore, _ := operatorIDs(t, "SELECT cust, COUNT(*) AS n FROM orders WHERE amount > 0 GROUP BY cust")
	after, plansAfter, _ := operatorIDs(t, "SELECT cust, COUNT(*) AS n, MAX(amount) AS m FROM orders WHERE amount > 0 AND amount < 100 GROUP BY cust HAVING COUNT(*) > 1")
	if got := strings.Join(before, " "); got != "enriched/calc#1 enriched/group_aggregate#1 enriched/calc#2" {
		t.Errorf("ids before the edit: %s", got)
	}
	if got := strings.Join(after, " "); got != "enriched/calc#1 enriched/group_aggregate#1 enriched/calc#2" {
		t.Errorf("ids after the edit: %s", got)
	}
	const agg = "enriched/group_aggregate#1"
	if plansBefore[agg] == plansAfter[agg] || !strings.HasPrefix(plansAfter[agg], "GroupAggregate(") {
		t.Errorf("the GROUP BY's plan %q, then %q: the edit should show in the plan, not the id", plansBefore[agg], plansAfter[agg])
	}
}

// A lookup join has an edge from the table it looks up, marked as such,
// besides the edge of the rows it joins.
func TestLookupJoinHasItsTableEdge(t *testing.T) {
	ids, _, d := operatorIDs(t, "SELECT o.id, c.region FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id")
	join := ""
	for _, n := range d.Nodes {
		if n.Operator == "lookup_join" {
			join = n.ID
		}
	}
	if join == "" {
		t.Fatalf("no lookup join among %v", ids)
	}
	var lookups, streams []string
	for _, e := range d.Edges {
		if e.To != join {
			continue
		}
		if e.Lookup {
			lookups = append(lookups, e.From)
		} else {
			streams = append(streams, e.From)
		}
	}
	if strings.Join(lookups, ",") != "source:customers" || len(streams) != 1 || streams[0] == "source:customers" {
		t.Errorf("edges into the join: lookup %v, stream %v; want the lookup from source:customers and one stream", lookups, streams)
	}
	checkGraph(t, d)
}
