package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/plan"
)

// widePipeline is a plan of 13 operators in four transforms after a
// lookup join (orders from a file, their customers from MySQL), with
// event time: one chain of them is 10 columns deep.
const widePipeline = `version: 1
name: wide
sources:
  - name: orders
    type: file
    path: %s
    schema: [id BIGINT, cust INT, amount INT, ms BIGINT, "ts AS TO_TIMESTAMP_LTZ(ms, 3)", pt AS PROCTIME()]
    watermark: ts - INTERVAL '1' SECOND
  - name: customers
    type: mysql
    dsn: ${WIDE_DSN}
    table: %s
    schema: [id INT, region STRING]
    lookup: {}
transforms:
  - name: enriched
    sql: SELECT o.id, o.amount, o.ts, c.region FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id WHERE o.amount > 0
  - name: per_region
    sql: SELECT region, window_start, COUNT(*) AS n, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE enriched, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY region, window_start, window_end
  - name: top
    sql: SELECT region, window_start, n FROM (SELECT region, window_start, n, ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY n DESC) AS rk FROM per_region) WHERE rk <= 2
  - name: totals
    sql: SELECT region, COUNT(*) AS orders, MAX(amount) AS biggest FROM enriched WHERE amount < 45 GROUP BY region HAVING COUNT(*) > 1
  - name: distinct_regions
    sql: SELECT DISTINCT region FROM enriched
sinks:
  - name: top_out
    from: top
    type: blackhole
  - name: totals_out
    from: totals
    type: blackhole
  - name: regions_out
    from: distinct_regions
    type: blackhole
`

// wideStatus is what /pipelines says of the wide pipeline's nodes.
type wideStatus struct {
	State       string
	Sources     []nodeTime
	Sinks       []nodeTime
	Ops         []nodeTime `json:"operators"`
	Checkpoints struct {
		Recent []struct {
			ID int64 `json:"id"`
		} `json:"recent"`
	} `json:"checkpoints"`
}

type nodeTime struct {
	Name      string  `json:"name"`
	Operator  string  `json:"operator"`
	Watermark string  `json:"watermark"`
	Busy      float64 `json:"busy_seconds"`
}

// The plan of 13 operators is drawn at the size of its text, the page
// scrolling to its last sink, with the edge from the lookup table to its
// join, the busiest operator or sink marked, and each edge showing the
// watermark of the node it leaves, as /pipelines gives them.
func TestConsoleDrawsAWidePlan(t *testing.T) {
	testenv.Chromium(t)
	db, dsn := testenv.MySQL(t)
	table := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+table+"` (id INT PRIMARY KEY, region VARCHAR(20))")
	testenv.Exec(t, db, "INSERT INTO `"+table+"` VALUES (1, 'north'), (2, 'south'), (3, 'east')")
	work := t.TempDir()
	var csv strings.Builder
	for i := range 300 {
		fmt.Fprintf(&csv, "%d,%d,%d,%d\n", i, 1+i%3, i%50, 1704067200000+int64(i)*1000)
	}
	orders := filepath.Join(work, "orders.csv")
	if err := os.WriteFile(orders, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "pipelines")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wide.yaml"), []byte(fmt.Sprintf(widePipeline, orders, table)), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, work, []string{"ETLD_ADMIN_TOKEN=" + consoleToken, "WIDE_DSN=" + dsn, "ETLD_LOG_FORMAT=json"},
		"--daemon", "--pipelines", dir, "--admin-address", "127.0.0.1:0", "--checkpoint-interval", "1s")
	base := d.adminURL()
	var st wideStatus
	testenv.Eventually(t, 60*time.Second, "the wide pipeline finished", func() error {
		_, body := authGet(t, base, "/pipelines")
		var list []wideStatus
		if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 1 {
			return fmt.Errorf("/pipelines: %v %s", err, body)
		}
		st = list[0]
		if st.State != "finished" {
			return fmt.Errorf("wide is %s", st.State)
		}
		return nil
	})
	_, body := authGet(t, base, "/pipelines/wide/plan")
	var desc plan.Description
	if err := json.Unmarshal([]byte(body), &desc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, n := range desc.Nodes {
		if n.Kind == plan.KindOperator {
			ops++
		}
	}
	if ops < 10 {
		t.Fatalf("the plan has %d operators, want 10 or more", ops)
	}

	ctx, cancel := newBrowser(t)
	defer cancel()
	shots := screenshotDir(t)
	signIn(t, ctx, base, shots, "")
	browse(t, ctx, "open wide", chromedp.Navigate(base+"/ui/#/p/wide"))
	type drawn struct {
		SVGWidth, ShownWidth, ScrollWidth, BoxWidth float64
		SmallestText                                float64
		Nodes                                       map[string]struct {
			Right float64
			Class string
		}
		Lookups    []string
		Watermarks map[string]string
		Busiest    []string
	}
	var g drawn
	eventually(t, "the wide plan drawn", func() error {
		var err error
		g, err = eval[drawn](ctx, `(() => {
  const box = document.getElementById('plan');
  const svg = box.querySelector('svg[data-pipeline="wide"]');
  if (!svg) return {Nodes: {}};
  const out = {SVGWidth: +svg.getAttribute('width'), ShownWidth: svg.getBoundingClientRect().width, ScrollWidth: box.scrollWidth,
    BoxWidth: box.clientWidth, SmallestText: 1e9, Nodes: {}, Lookups: [], Watermarks: {}, Busiest: []};
  for (const t of svg.querySelectorAll('text')) out.SmallestText = Math.min(out.SmallestText, t.getBoundingClientRect().height);
  const left = svg.getBoundingClientRect().left;
  for (const g of svg.querySelectorAll('g.node')) {
    out.Nodes[g.getAttribute('data-id')] = {Right: g.getBoundingClientRect().right - left, Class: g.getAttribute('class')};
    if (g.classList.contains('busiest')) out.Busiest.push(g.getAttribute('data-id'));
  }
  for (const e of svg.querySelectorAll('g.edge.lookup')) out.Lookups.push(e.getAttribute('data-from') + ' -> ' + e.getAttribute('data-to'));
  for (const t of svg.querySelectorAll('g.edge tspan.wm')) out.Watermarks[t.closest('g.edge').getAttribute('data-from') + ' -> ' + t.closest('g.edge').getAttribute('data-to')] = t.getAttribute('data-watermark');
  return out;
})()`)
		if err != nil {
			return err
		}
		if len(g.Nodes) != len(desc.Nodes)-5 || len(g.Busiest) == 0 {
			return fmt.Errorf("drawn %d nodes (busiest %v), the plan has %d besides its 5 transforms", len(g.Nodes), g.Busiest, len(desc.Nodes)-5)
		}
		return nil
	})
	screenshot(t, ctx, shots, "console-plan-wide")

	// Drawn at its own size, never scaled to the page: the text stays
	// 11 px and the container scrolls to the last sink.
	if g.ShownWidth != g.SVGWidth || g.SmallestText < 10 {
		t.Errorf("the plan is drawn %v px wide of its %v, its smallest text %v px high", g.ShownWidth, g.SVGWidth, g.SmallestText)
	}
	if g.SVGWidth <= g.BoxWidth || g.ScrollWidth < g.SVGWidth {
		t.Errorf("the plan (%v px) does not scroll in its box (%v px shown, %v scrollable)", g.SVGWidth, g.BoxWidth, g.ScrollWidth)
	}
	for id, n := range g.Nodes {
		if n.Right > g.SVGWidth {
			t.Errorf("node %s ends at %v px, past the plan's %v", id, n.Right, g.SVGWidth)
		}
	}

	// The lookup table's edge into the join.
	join := ""
	for _, n := range desc.Nodes {
		if n.Operator == "lookup_join" {
			join = n.ID
		}
	}
	if want := "source:customers -> " + join; len(g.Lookups) != 1 || g.Lookups[0] != want {
		t.Errorf("lookup edges %v, want %s", g.Lookups, want)
	}

	// The busiest operator or sink over the run, by /pipelines.
	key := map[string]string{}
	for _, n := range desc.Nodes {
		switch n.Kind {
		case plan.KindOperator:
			key[n.OperatorID] = n.ID
		case plan.KindSource, plan.KindSink:
			key[n.Kind+":"+n.Name] = n.ID
		}
	}
	top, hot := -1.0, ""
	for _, o := range st.Ops {
		if o.Busy > top {
			top, hot = o.Busy, key[o.Operator]
		}
	}
	for _, s := range st.Sinks {
		if s.Busy > top {
			top, hot = s.Busy, key["sink:"+s.Name]
		}
	}
	if len(g.Busiest) != 1 || g.Busiest[0] != hot || top <= 0 {
		t.Errorf("busiest drawn %v, want %s (%v s busy)", g.Busiest, hot, top)
	}

	// Each edge shows the watermark of the node it leaves.
	marks := map[string]string{}
	for _, s := range st.Sources {
		marks[key["source:"+s.Name]] = s.Watermark
	}
	for _, o := range st.Ops {
		marks[key[o.Operator]] = o.Watermark
	}
	shown := 0
	for _, e := range desc.Edges {
		want := marks[e.From]
		if e.Lookup || want == "" {
			continue
		}
		shown++
		if got := g.Watermarks[e.From+" -> "+e.To]; got != want {
			t.Errorf("edge %s -> %s shows watermark %q, /pipelines says %q", e.From, e.To, got, want)
		}
	}
	if shown < 5 || marks[key["source:orders"]] == "" {
		t.Errorf("%d edges with a watermark (source's %q): the data's event times did not reach the plan", shown, marks[key["source:orders"]])
	}

	// The node table has each node's watermark and busy time, the
	// checkpoints table the run's checkpoints.
	type row struct{ Watermark, Busy string }
	rows, err := eval[map[string]row](ctx, `Object.fromEntries([...document.querySelectorAll('#nodes tbody tr')].map(tr =>
  [tr.getAttribute('data-node'), {Watermark: tr.querySelector('[data-field=watermark]').getAttribute('data-value'), Busy: tr.querySelector('[data-field=busy]').getAttribute('data-value')}]))`)
	if err != nil {
		t.Fatal(err)
	}
	check := func(k string, n nodeTime) {
		got, ok := rows[k]
		busy, _ := strconv.ParseFloat(got.Busy, 64)
		if !ok || got.Watermark != n.Watermark || busy != n.Busy {
			t.Errorf("node table row %s: %+v (listed %v), /pipelines says watermark %q, busy %v", k, got, ok, n.Watermark, n.Busy)
		}
	}
	for _, s := range st.Sources {
		check("source:"+s.Name, s)
	}
	for _, o := range st.Ops {
		check(o.Operator, o)
	}
	ids, err := eval[[]string](ctx, `[...document.querySelectorAll('#checkpoints tbody tr')].map(tr => tr.getAttribute('data-checkpoint'))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 || len(ids) != len(st.Checkpoints.Recent) || ids[0] != fmt.Sprint(st.Checkpoints.Recent[len(st.Checkpoints.Recent)-1].ID) {
		t.Errorf("checkpoints listed %v, /pipelines has %+v", ids, st.Checkpoints.Recent)
	}
}
