package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/app/admin"
	"github.com/etld/etld/internal/testenv"
)

// dashPipeline reads orders from Kafka with event time, looks each
// order's customer up in MySQL and counts per region and minute: every
// kind of series the dashboard and the alerts use has a node here.
const dashPipeline = `version: 1
name: dash
sources:
  - name: orders
    type: kafka
    brokers: [%q]
    topic: %s
    group_id: %s
    start: earliest
    format: json
    schema: [id BIGINT, cust INT, ts TIMESTAMP(3), pt AS PROCTIME()]
    watermark: ts - INTERVAL '1' SECOND
  - name: customers
    type: mysql
    dsn: %q
    table: %s
    schema: [id INT, region STRING]
    lookup:
      cache: partial
      partial_cache: { max_rows: 100 }
transforms:
  - name: enriched
    sql: SELECT o.id, o.ts, c.region FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.id
  - name: per_region
    sql: SELECT region, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE enriched, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY region, window_start, window_end
sinks:
  - name: out
    from: per_region
    type: blackhole
`

// seriesNames lists the metric names /metrics serves.
func seriesNames(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		names[line[:strings.IndexAny(line, "{ ")]] = true
	}
	return names
}

// usedNames lists the etld_ metric names in the PromQL expressions of
// configs/: the Grafana dashboard's targets and the alert rules.
func usedNames(t *testing.T) map[string][]string {
	t.Helper()
	var exprs []string
	data, err := os.ReadFile("../../../configs/grafana/etld-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Type    string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	data, err = os.ReadFile("../../../configs/prometheus/etld-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr string
				Labels      map[string]string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatalf("alert rules: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("alert rule %+v lacks its name, expression, severity or summary", r)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	used := map[string][]string{}
	name := regexp.MustCompile(`\betld_[a-z0-9_]+`)
	for _, e := range exprs {
		for _, n := range name.FindAllString(e, -1) {
			used[n] = append(used[n], e)
		}
	}
	if len(used) < 20 {
		t.Fatalf("configs/ use %d metric names: the files were not read whole", len(used))
	}
	return used
}

// Every metric name the Grafana dashboard and the alert rules in
// configs/ use is one that /metrics of a running pipeline serves.
func TestDashboardAndAlertsUseServedMetrics(t *testing.T) {
	used := usedNames(t)
	brokers := testenv.Kafka(t)
	db, dsn := testenv.MySQL(t)
	table := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+table+"` (id INT PRIMARY KEY, region VARCHAR(20))")
	testenv.Exec(t, db, "INSERT INTO `"+table+"` VALUES (1, 'north'), (2, 'south')")
	topic := testenv.KafkaTopic(t, brokers, 2)
	w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	var msgs []kafka.Message
	for i := range 20 {
		msgs = append(msgs, kafka.Message{Value: []byte(fmt.Sprintf(`{"id":%d,"cust":%d,"ts":"2024-01-01 00:%02d:00"}`, i, 1+i%2, i))})
	}
	if err := w.WriteMessages(testenv.Context(t, time.Minute), msgs...); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	reg := runDaemon(t, dir, map[string]string{"dash.yaml": fmt.Sprintf(dashPipeline, brokers, topic, topic, dsn, table)})
	srv := httptest.NewServer(admin.Handler(admin.Options{Gatherer: reg, Ready: func(bool) (bool, []string) { return true, nil }, Pipelines: func() any { return nil }}))
	defer srv.Close()
	testenv.Eventually(t, 60*time.Second, "every metric the dashboard and alerts use", func() error {
		// The pipeline ran: it read every order and looked each up.
		got := scrape(t, reg)
		read := got[`etld_source_rows_read_total{pipeline="dash",source="orders"}`]
		looked := got[`etld_lookup_cache_hits_total{operator="enriched/lookup_join#1",pipeline="dash"}`] + got[`etld_lookup_cache_misses_total{operator="enriched/lookup_join#1",pipeline="dash"}`]
		if read != 20 || looked != 20 {
			return fmt.Errorf("read %v orders, looked %v up", read, looked)
		}
		served := seriesNames(t, srv.URL)
		var missing []string
		for n := range used {
			if !served[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return fmt.Errorf("not in /metrics: %s (first used in %q)", strings.Join(missing, ", "), used[missing[0]][0])
		}
		return nil
	})
}
