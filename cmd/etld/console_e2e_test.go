package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/etld/etld/internal/app/admin"
	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/plan"
)

// The web console in a real browser (headless Chromium, driven by
// chromedp) against the etld binary running examples as a daemon.

const (
	consoleToken = "Qx7-t0k3n-9fz2"
	// Values of ${VAR}s the pipelines reference: neither may reach the page.
	brokenSecret = "hX9q-2kZr-77wv"
	liveSecret   = "zebra-cobalt-77"
)

// livePipeline never ends: its rates fill the charts, its GROUP BY has
// state and updates its rows (-U/+U), its rows carry a ${VAR} value that
// the sample must hide, and its second sink gets every generated row (+I).
const livePipeline = `version: 1
name: live-counts
sources:
  - name: gen
    type: datagen
    rate: 20
    seed: 1
    schema:
      - id BIGINT
      - v INT
    fields:
      v: { min: 0, max: 4 }
transforms:
  - name: per_v
    sql: |
      SELECT v, COUNT(*) AS n, MAX('${LIVE_TOKEN}') AS tag FROM gen GROUP BY v
sinks:
  - name: out
    from: per_v
    type: print
  - name: raw
    from: gen
    type: print
`

// brokenPipeline fails to load with errors on lines 11 and 13; line 13
// references a secret.
const brokenPipeline = `version: 1
name: broken
sources:
  - name: gen
    type: datagen
    rows: 10
    schema:
      - id BIGINT
sinks:
  - name: out
    from: nowhere
    type: print
    password: ${DB_PASSWORD}
`

// consoleExamples are the examples the daemon runs besides the two above
// (bounded ones, whose counters end up still, so the page's numbers can
// equal /pipelines exactly).
var consoleExamples = []string{"hello-datagen", "sensor-stats", "sensor-windows", "statement-set", "kafka-orders-produce", "kafka-orders"}

// consoleDaemon starts etld on a pipelines directory holding the examples
// (their data and output paths made absolute), the live pipeline and the
// broken file, with an admin token on a loopback address.
func consoleDaemon(t *testing.T) string {
	// The Kafka examples show a consumer lag; their topic and group are
	// this run's own.
	brokers := testenv.Kafka(t)
	topic := fmt.Sprintf("console-orders-%d", time.Now().UnixNano())
	work := t.TempDir()
	dir := filepath.Join(work, "pipelines")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range consoleExamples {
		data, err := os.ReadFile(filepath.Join(root, "configs", "examples", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "configs/examples/data/", filepath.Join(root, "configs", "examples", "data")+"/")
		text = strings.ReplaceAll(text, "path: out/", "path: "+filepath.Join(work, "out")+"/")
		text = strings.ReplaceAll(text, "topic: orders", "topic: "+topic)
		text = strings.ReplaceAll(text, "group_id: etld-orders", "group_id: "+topic)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{"live.yaml": livePipeline, "broken.yaml": brokenPipeline} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, work, []string{
		"ETLD_ADMIN_TOKEN=" + consoleToken, "DB_PASSWORD=" + brokenSecret, "KAFKA_BROKERS=" + brokers, "LIVE_TOKEN=" + liveSecret, "ETLD_LOG_FORMAT=json",
	}, "--daemon", "--pipelines", dir, "--admin-address", "127.0.0.1:0", "--checkpoint-interval", "1s")
	return d.adminURL()
}

// authGet fetches path with the token.
func authGet(t *testing.T, base, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+consoleToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestConsoleInBrowser(t *testing.T) {
	testenv.Chromium(t)
	base := consoleDaemon(t)
	shots := screenshotDir(t)

	// Without the token nothing but the sign-in form is served.
	for _, path := range []string{"/pipelines", "/ui/", "/ui/app.js", "/pipelines/live-counts/plan"} {
		if code, body := httpGet(t, base+path); code != http.StatusUnauthorized || strings.Contains(body, "live-counts") {
			t.Errorf("GET %s without the token = %d %.80q, want 401", path, code, body)
		}
	}

	ctx, cancel := newBrowser(t)
	defer cancel()
	signIn(t, ctx, base, shots, "console-sign-in")

	status := listMatchesPipelines(t, ctx, base)
	for _, st := range status {
		if st.Name != "broken" && st.Name != "live-counts" && st.Name != "kafka-orders" && st.State != "finished" {
			t.Errorf("example %s is %s", st.Name, st.State)
		}
	}
	// The charts have points once the history has two samples.
	eventually(t, "the live pipeline's sparkline", func() error {
		n, err := eval[int](ctx, `document.querySelectorAll('tr[data-pipeline="live-counts"] [data-field=rates] polyline').length`)
		if err != nil {
			return err
		}
		if n != 2 {
			html, _ := eval[string](ctx, `document.querySelector('tr[data-pipeline="live-counts"] [data-field=rates]').outerHTML + document.getElementById('status').textContent`)
			return fmt.Errorf("%d lines: %s", n, html)
		}
		return nil
	})
	screenshot(t, ctx, shots, "console-pipelines")

	for _, st := range status {
		if st.Name != "broken" {
			planMatchesDescribe(t, ctx, base, shots, st.Name)
		}
	}
	brokenFileShown(t, ctx, base, shots)
	sampleHidesSecret(t, ctx, base, shots)
	t.Run("behind a path prefix", func(t *testing.T) { consoleBehindPrefix(t, base, shots) })
}

// listMatchesPipelines waits until every number the list shows equals
// /pipelines, once the bounded pipelines have finished (their counters
// are still then); the live one changes every second, so its counters
// only have to be as far as /pipelines was before the page read them, or
// nearer. It returns /pipelines as the page last matched it.
func listMatchesPipelines(t *testing.T, ctx context.Context, base string) []statusJSON {
	t.Helper()
	var status []statusJSON
	eventually(t, "the list shows /pipelines' numbers", func() error {
		code, before := authGet(t, base, "/pipelines")
		if code != 200 {
			return fmt.Errorf("/pipelines = %d", code)
		}
		shown, err := eval[map[string]map[string]string](ctx, readList)
		if err != nil {
			return err
		}
		_, after := authGet(t, base, "/pipelines")
		status = nil
		if err := json.Unmarshal([]byte(after), &status); err != nil {
			return err
		}
		var prior []statusJSON
		_ = json.Unmarshal([]byte(before), &prior)
		if len(shown) != len(status) {
			return fmt.Errorf("page lists %d pipelines, /pipelines %d", len(shown), len(status))
		}
		for i, st := range status {
			got := shown[st.Name]
			if st.Name == "live-counts" {
				if got["state"] != "running" || got["restarts"] != "0" || got["errors"] != "0" {
					return fmt.Errorf("live-counts shows %v", got)
				}
				for _, f := range []string{"rows_in", "rows_out"} {
					n, _ := strconv.ParseInt(got[f], 10, 64)
					lo, _ := strconv.ParseInt(prior[i].expected()[f], 10, 64)
					hi, _ := strconv.ParseInt(st.expected()[f], 10, 64)
					if n == 0 || n < lo-40 || n > hi {
						return fmt.Errorf("live-counts %s shows %d, /pipelines said %d then %d", f, n, lo, hi)
					}
				}
				continue
			}
			// The Kafka consumer never finishes: once it has read all
			// 1000 orders, its counters and its lag (0) stay still.
			if st.Name == "kafka-orders" {
				if st.State != "running" || len(st.Sources) != 1 || st.Sources[0].In != 1000 || st.Sources[0].Lag == nil {
					return fmt.Errorf("kafka-orders is %s, read %+v", st.State, st.Sources)
				}
			} else if st.State != "finished" && st.State != "failed" {
				return fmt.Errorf("%s is still %s", st.Name, st.State)
			}
			for f, want := range st.expected() {
				if got[f] != want {
					return fmt.Errorf("%s: %s shows %q, /pipelines says %q", st.Name, f, got[f], want)
				}
			}
		}
		return nil
	})
	return status
}

// planMatchesDescribe opens the plan of the pipeline name: every node and
// edge of Describe is drawn, with its label.
func planMatchesDescribe(t *testing.T, ctx context.Context, base, shots, name string) {
	t.Helper()
	code, body := authGet(t, base, "/pipelines/"+name+"/plan")
	if code != 200 {
		t.Fatalf("plan of %s = %d %s", name, code, body)
	}
	if strings.Contains(body, liveSecret) {
		t.Errorf("the plan of %s shows a secret", name)
	}
	var d plan.Description
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	browse(t, ctx, "open "+name, chromedp.Navigate(base+"/ui/#/p/"+url.PathEscape(name)))
	type drawn struct {
		Nodes map[string]struct{ Title, Text string }
		Edges map[string]string
	}
	var g drawn
	eventually(t, "the plan of "+name, func() error {
		var err error
		g, err = eval[drawn](ctx, fmt.Sprintf(`(() => {
  const svg = document.querySelector('#plan svg[data-pipeline=%q]');
  if (!svg) return {Nodes: {}, Edges: {}};
  const nodes = {}, edges = {};
  for (const g of svg.querySelectorAll('g[data-id]')) nodes[g.getAttribute('data-id')] = {Title: g.querySelector('title').textContent, Text: g.textContent};
  for (const g of svg.querySelectorAll('g.edge')) edges[g.getAttribute('data-from') + ' -> ' + g.getAttribute('data-to')] = g.querySelector('title').textContent;
  return {Nodes: nodes, Edges: edges};
})()`, d.Name))
		if err != nil {
			return err
		}
		if len(g.Nodes) != len(d.Nodes) || len(g.Edges) != len(d.Edges) {
			return fmt.Errorf("drawn %d nodes and %d edges, Describe has %d and %d", len(g.Nodes), len(g.Edges), len(d.Nodes), len(d.Edges))
		}
		return nil
	})
	for _, n := range d.Nodes {
		got, ok := g.Nodes[n.ID]
		if !ok || got.Title != n.Label {
			t.Errorf("%s: node %s drawn %v with label %q, want %q", d.Name, n.ID, ok, got.Title, n.Label)
		}
		if n.Kind == plan.KindSink && !strings.Contains(got.Text, "mode "+n.SinkMode) {
			t.Errorf("%s: sink %s shows %q, want its mode %s", d.Name, n.ID, got.Text, n.SinkMode)
		}
		if n.Kind != plan.KindTransform && !strings.Contains(got.Text, n.Changelog.Text) {
			t.Errorf("%s: node %s shows %q, want its changelog %s", d.Name, n.ID, got.Text, n.Changelog.Text)
		}
		if n.Stateful && !strings.Contains(got.Text, "state: ") {
			t.Errorf("%s: stateful %s shows no state size: %q", d.Name, n.ID, got.Text)
		}
	}
	for _, e := range d.Edges {
		want := e.Changelog.Text + " key " + plan.KeyText(e.UpsertKey)
		if e.Lookup {
			want = "lookup"
		}
		if got := g.Edges[e.From+" -> "+e.To]; got != want {
			t.Errorf("%s: edge %s -> %s labelled %q, want %q", d.Name, e.From, e.To, got, want)
		}
	}
	if name == "live-counts" {
		// The GROUP BY's state size reaches the graph: 5 keys (v in 0..4).
		eventually(t, "the state size in the graph", func() error {
			text, err := eval[string](ctx, `[...document.querySelectorAll('#plan g.stateful')].map(g => g.textContent).join('|')`)
			if err != nil {
				return err
			}
			if !strings.Contains(text, "state: 5 entries") {
				return fmt.Errorf("stateful nodes show %q", text)
			}
			return nil
		})
	}
	screenshot(t, ctx, shots, "console-plan-"+name)
}

// brokenFileShown opens the file that did not load: its errors at their
// lines, its ${VAR} reference and never the value.
func brokenFileShown(t *testing.T, ctx context.Context, base, shots string) {
	t.Helper()
	browse(t, ctx, "open broken", chromedp.Navigate(base+"/ui/#/p/broken"))
	type fileShown struct {
		Line11, Line13, Msg11, Msg13, HTML string
	}
	var file fileShown
	eventually(t, "the broken file's errors", func() error {
		var err error
		file, err = eval[fileShown](ctx, `(() => {
  const q = (s) => { const e = document.querySelector(s); return e ? e.textContent : ""; };
  return {Line11: q('.file .line[data-line="11"]'), Line13: q('.file .line[data-line="13"]'),
    Msg11: q('.file .msg[data-line="11"]'), Msg13: q('.file .msg[data-line="13"]'), HTML: document.documentElement.outerHTML};
})()`)
		if err != nil {
			return err
		}
		if file.Msg11 == "" || file.Msg13 == "" {
			return fmt.Errorf("no error under lines 11 and 13 yet")
		}
		return nil
	})
	if !strings.Contains(file.Line11, "from: nowhere") || !strings.Contains(file.Msg11, `"nowhere" is not a source or transform`) {
		t.Errorf("line 11 %q, its error %q", file.Line11, file.Msg11)
	}
	if !strings.Contains(file.Line13, "password: ${DB_PASSWORD}") || !strings.Contains(file.Msg13, "unknown key") {
		t.Errorf("line 13 %q, its error %q", file.Line13, file.Msg13)
	}
	if strings.Contains(file.HTML, brokenSecret) {
		t.Error("the page shows the value of ${DB_PASSWORD}")
	}
	if _, body := authGet(t, base, "/pipelines/broken/file"); strings.Contains(body, brokenSecret) || !strings.Contains(body, "${DB_PASSWORD}") {
		t.Errorf("/pipelines/broken/file: %s", body)
	}
	screenshot(t, ctx, shots, "console-failed-file")
}

// sampleHidesSecret turns the sample view on from the page (it is off
// by default) and reads +I rows with the secret replaced by its reference.
func sampleHidesSecret(t *testing.T, ctx context.Context, base, shots string) {
	t.Helper()
	if _, body := authGet(t, base, "/pipelines/live-counts/sample"); !strings.Contains(body, `"enabled": false`) {
		t.Errorf("sampling is not off by default: %s", body)
	}
	browse(t, ctx, "open live-counts", chromedp.Navigate(base+"/ui/#/p/live-counts"), chromedp.WaitVisible(chromedp.CSS(`#detail[data-pipeline="live-counts"]`)))
	browse(t, ctx, "start sampling", chromedp.Click(chromedp.CSS(`#sample-toggle`)))
	var kinds, rows string
	eventually(t, "sampled changes", func() error {
		var err error
		if kinds, err = eval[string](ctx, `[...document.querySelectorAll('#sample tbody tr')].map(r => r.getAttribute('data-kind')).join(' ')`); err != nil {
			return err
		}
		if rows, err = eval[string](ctx, `[...document.querySelectorAll('#sample tbody td.row')].map(r => r.textContent).join('\n')`); err != nil {
			return err
		}
		if !strings.Contains(kinds, "+I") || !strings.Contains(kinds, "+U") {
			return fmt.Errorf("sampled kinds %q", kinds)
		}
		return nil
	})
	if strings.Contains(rows, liveSecret) || !strings.Contains(rows, "${LIVE_TOKEN}") {
		t.Errorf("sampled rows do not hide the secret:\n%s", rows)
	}
	if !strings.Contains(rows, "+I[") {
		t.Errorf("sampled rows are not in the print sink's form:\n%s", rows)
	}
	screenshot(t, ctx, shots, "console-sample")
}

// consoleBehindPrefix serves the admin server under /prefix/ through a
// reverse proxy that strips it, signs in there from a fresh browser, and
// checks the page and its requests stay under the prefix.
func consoleBehindPrefix(t *testing.T, base, shots string) {
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var outside []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	mux := http.NewServeMux()
	mux.Handle("/prefix/", http.StripPrefix("/prefix", proxy))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		outside = append(outside, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := newBrowser(t)
	defer cancel()
	signIn(t, ctx, srv.URL+"/prefix", shots, "")
	browse(t, ctx, "open a plan", chromedp.Navigate(srv.URL+"/prefix/ui/#/p/sensor-stats"))
	eventually(t, "the plan behind the prefix", func() error {
		n, err := eval[int](ctx, `document.querySelectorAll('#plan g.node').length`)
		if err != nil {
			return err
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("no plan drawn")
		}
		if !strings.HasPrefix(loc, srv.URL+"/prefix/ui/") {
			t.Errorf("the page left the prefix: %s", loc)
		}
		return nil
	})
	names, err := eval[string](ctx, `[...document.querySelectorAll('#pipelines tbody tr')].map(r => r.getAttribute('data-pipeline')).sort().join(' ')`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "broken hello-datagen kafka-orders kafka-orders-produce live-counts sensor-stats sensor-windows statement-set"; names != want {
		t.Errorf("behind the prefix the list shows %q, want %q", names, want)
	}
	screenshot(t, ctx, shots, "console-prefix")
	mu.Lock()
	defer mu.Unlock()
	for _, p := range outside {
		if p != "/favicon.ico" {
			t.Errorf("the page requested %s, outside the prefix", p)
		}
	}
}

// The decision the daemon takes for a non-loopback admin address, through
// the functions runDaemon uses: /ui and /pipelines need the token, and
// without one configured nobody gets in (the server is served on loopback
// here; the address only decides).
func TestConsoleTokenBeyondLoopback(t *testing.T) {
	for _, tc := range []struct {
		token            string
		bearer           string
		pipelines, pages int
	}{
		{"", "", 401, 401},
		{"", "anything", 401, 401},
		{"t0k", "", 401, 401},
		{"t0k", "wrong", 401, 401},
		{"t0k", "t0k", 200, 200},
	} {
		cfg := daemon.Defaults()
		if err := cfg.Set("admin-address", "0.0.0.0:9464"); err != nil {
			t.Fatal(err)
		}
		cfg.Admin.Token = tc.token
		sup := daemon.New(daemon.Options{Dir: t.TempDir()})
		secrets := redact.NewSet()
		h := admin.Handler(consoleOptions(admin.Options{
			Ready:     sup.Ready,
			Pipelines: func() any { return sup.Status() },
		}, sup, cfg.Admin, secrets))
		srv := httptest.NewServer(h)
		for path, want := range map[string]int{"/pipelines": tc.pipelines, "/ui/": tc.pages, "/healthz": 200} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("token %q, bearer %q: GET %s = %d, want %d", tc.token, tc.bearer, path, resp.StatusCode, want)
			}
		}
		if tc.token != "" && secrets.Redact("x "+tc.token) == "x "+tc.token {
			t.Errorf("the token is not a secret of the process")
		}
		srv.Close()
		sup.Shutdown(context.Background())
	}
}
