package elasticsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	es "github.com/etld/etld/sinks/elasticsearch"
)

// cluster is a test's handle on the real Elasticsearch.
type cluster struct {
	t      testing.TB
	url    string
	client *elasticsearch.Client
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	url := testenv.ElasticsearchURL(t)
	c, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{t: t, url: url, client: c}
}

// do runs a request and fails the test on an error status.
func (c *cluster) do(method, path, body string) []byte {
	c.t.Helper()
	req, err := newRequest(method, c.url+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := c.client.Perform(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		c.t.Fatalf("%s %s: HTTP %d: %s", method, path, res.StatusCode, out)
	}
	return out
}

// docs refreshes the indices matching pattern and returns every document
// by _index/_id.
func (c *cluster) docs(pattern string) map[string]map[string]any {
	c.t.Helper()
	c.do("POST", "/"+pattern+"/_refresh", "")
	out := c.do("GET", "/"+pattern+"/_search?size=10000", `{"query":{"match_all":{}}}`)
	var resp struct {
		Hits struct {
			Hits []struct {
				Index  string         `json:"_index"`
				ID     string         `json:"_id"`
				Source map[string]any `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		c.t.Fatal(err)
	}
	m := map[string]map[string]any{}
	for _, h := range resp.Hits.Hits {
		m[h.Index+"/"+h.ID] = h.Source
	}
	return m
}

func (c *cluster) count(pattern string) int {
	c.t.Helper()
	c.do("POST", "/"+pattern+"/_refresh", "")
	var resp struct {
		Count int `json:"count"`
	}
	if err := json.Unmarshal(c.do("GET", "/"+pattern+"/_count", ""), &resp); err != nil {
		c.t.Fatal(err)
	}
	return resp.Count
}

// openSink builds, binds and opens a sink from YAML options.
func openSink(t testing.TB, opts es.Config, in connector.SinkInput, reject func(connector.BadRecord) error) *es.Sink {
	t.Helper()
	s, err := es.New(opts, connector.SinkEnv{Name: "es", Formats: builtin.Registry(), Reject: reject, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(in); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

var sensorSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "name", Type: row.Of(row.String)},
	row.Field{Name: "temp", Type: row.Type{ID: row.Decimal, Precision: 10, Scale: 2}},
	row.Field{Name: "ok", Type: row.Of(row.Boolean)},
	row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 3}},
	row.Field{Name: "at", Type: row.Type{ID: row.TimestampLTZ, Precision: 3}},
)

func sensorRow(id int64, name string, temp int64, ts string) row.Row {
	t, err := time.Parse("2006-01-02 15:04:05.000", ts)
	if err != nil {
		panic(err)
	}
	return row.Row{row.BigIntValue(id), row.StringValue(name), row.DecimalValue(temp, 2), row.BoolValue(id%2 == 0),
		row.TimestampValue(t.UnixMicro()), row.TimestampLTZValue(t.UnixMicro())}
}

func batch(changes ...row.Change) *row.Batch {
	return &row.Batch{Changes: changes}
}

// TestUpsertIndexesAndDeletes writes inserts, updates and deletes by key
// and checks the documents: one per live key, with the last values and
// the types kept.
func TestUpsertIndexesAndDeletes(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_upsert")
	s := openSink(t, es.Config{Hosts: []string{c.url}, Index: index},
		connector.SinkInput{Schema: sensorSchema, Mode: connector.Upsert, Key: []int{0, 1}}, nil)
	ctx := testenv.Context(t, time.Minute)
	w := func(b *row.Batch) {
		t.Helper()
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	w(batch(
		row.Change{Kind: row.Insert, Row: sensorRow(1, "a", 1050, "2024-01-01 10:00:00.123")},
		row.Change{Kind: row.Insert, Row: sensorRow(2, "b", -300, "2024-01-01 11:00:00.000")},
		row.Change{Kind: row.Insert, Row: sensorRow(3, "c", 0, "2024-01-01 12:00:00.000")},
	))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	w(batch(
		row.Change{Kind: row.UpdateBefore, Row: sensorRow(1, "a", 1050, "2024-01-01 10:00:00.123")},
		row.Change{Kind: row.UpdateAfter, Row: sensorRow(1, "a", 2000, "2024-01-02 10:00:00.000")},
		row.Change{Kind: row.Delete, Row: sensorRow(2, "b", -300, "2024-01-01 11:00:00.000")},
		// A delete of a document that was never written is no error.
		row.Change{Kind: row.Delete, Row: sensorRow(9, "z", 0, "2024-01-01 11:00:00.000")},
		row.Change{Kind: row.Insert, Row: sensorRow(4, "", 1, "2024-01-01 11:00:00.000")},
	))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A NULL key value becomes the null literal.
	nullName := sensorRow(5, "", 1, "2024-01-01 11:00:00.000")
	nullName[1] = row.NullValue
	w(batch(row.Change{Kind: row.Insert, Row: nullName}))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := c.docs(index)
	want := map[string]string{
		index + "/1_a":    `{"at":"2024-01-02T10:00:00Z","id":1,"name":"a","ok":false,"temp":20,"ts":"2024-01-02T10:00:00"}`,
		index + "/3_c":    `{"at":"2024-01-01T12:00:00Z","id":3,"name":"c","ok":false,"temp":0,"ts":"2024-01-01T12:00:00"}`,
		index + "/4_":     `{"at":"2024-01-01T11:00:00Z","id":4,"name":"","ok":true,"temp":0.01,"ts":"2024-01-01T11:00:00"}`,
		index + "/5_null": `{"at":"2024-01-01T11:00:00Z","id":5,"name":null,"ok":false,"temp":0.01,"ts":"2024-01-01T11:00:00"}`,
	}
	compareDocs(t, got, want)
	// The first document's raw JSON: numbers stay numbers, the fraction of
	// a timestamp is kept.
	if s.Bytes() <= 0 {
		t.Errorf("Bytes() = %d after three flushes", s.Bytes())
	}
}

func compareDocs(t *testing.T, got map[string]map[string]any, want map[string]string) {
	t.Helper()
	var g, w []string
	for k, v := range got {
		b, _ := json.Marshal(v) // sorted keys
		g = append(g, k+" "+string(b))
	}
	for k, v := range want {
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		w = append(w, k+" "+string(b))
	}
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("documents:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}

func newRequest(method, url, body string) (*http.Request, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// TestUnavailableAtStartIsRetried points the sink at a proxy that refuses
// connections; Open keeps trying, and once the proxy forwards to the real
// cluster the rows arrive without an error.
func TestUnavailableAtStartIsRetried(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_unavailable")
	p := testenv.NewProxy(t, strings.TrimPrefix(c.url, "http://"))
	delay := 20 * time.Millisecond
	// No interval flush: the rows stay buffered until Flush.
	var off time.Duration
	s, err := es.New(es.Config{Hosts: []string{"http://" + p.Addr()}, Index: index, BackoffDelay: &delay, BulkFlushInterval: &off},
		connector.SinkEnv{Name: "es", Formats: builtin.Registry(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: sensorSchema, Mode: connector.Upsert, Key: []int{0}}); err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t, time.Minute)
	opened := make(chan error, 1)
	go func() { opened <- s.Open(ctx) }()
	p.WaitRefused(t, 3)
	select {
	case err := <-opened:
		t.Fatalf("Open returned %v while the cluster was unreachable", err)
	default:
	}
	p.Up()
	if err := <-opened; err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close(context.Background())
	var b row.Batch
	for i := int64(0); i < 50; i++ {
		b.Append(row.Insert, sensorRow(i, "x", i, "2024-01-01 10:00:00.000"))
	}
	if err := s.Write(ctx, &b); err != nil {
		t.Fatal(err)
	}
	// The cluster goes away again before the flush: Flush waits and
	// retries until it is back.
	p.Down()
	refused := p.Refused()
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(ctx) }()
	p.WaitRefused(t, refused+2)
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned %v while the cluster was unreachable", err)
	default:
	}
	p.Up()
	if err := <-flushed; err != nil {
		t.Fatalf("Flush after the cluster came back: %v", err)
	}
	if n := c.count(index); n != 50 {
		t.Fatalf("%d documents, want 50", n)
	}
}

// TestAppendGeneratesIDs writes rows without a key: every row is its own
// document, and equal rows are not folded.
func TestAppendGeneratesIDs(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_append")
	max := 7
	s := openSink(t, es.Config{Hosts: []string{c.url}, Index: index, BulkFlushMaxActions: &max},
		connector.SinkInput{Schema: sensorSchema, Mode: connector.Append}, nil)
	ctx := testenv.Context(t, time.Minute)
	var b row.Batch
	for i := int64(0); i < 100; i++ {
		b.Append(row.Insert, sensorRow(i%10, "same", 1, "2024-01-01 10:00:00.000"))
	}
	if err := s.Write(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.count(index); n != 100 {
		t.Fatalf("%d documents, want 100", n)
	}
}

// TestIndexPatternRoutesByDate sends rows into one index per day of
// their timestamp, deletes included.
func TestIndexPatternRoutesByDate(t *testing.T) {
	c := newCluster(t)
	base := c.index("es_pattern")
	s := openSink(t, es.Config{Hosts: []string{c.url}, Index: base + "-{ts|yyyy.MM.dd}"},
		connector.SinkInput{Schema: sensorSchema, Mode: connector.Upsert, Key: []int{0}}, nil)
	ctx := testenv.Context(t, time.Minute)
	if err := s.Write(ctx, batch(
		row.Change{Kind: row.Insert, Row: sensorRow(1, "a", 1, "2024-01-01 23:59:59.999")},
		row.Change{Kind: row.Insert, Row: sensorRow(2, "b", 2, "2024-01-02 00:00:00.000")},
		row.Change{Kind: row.Insert, Row: sensorRow(3, "c", 3, "2024-01-02 10:00:00.000")},
		row.Change{Kind: row.Insert, Row: sensorRow(4, "d", 4, "2024-02-29 10:00:00.000")},
		row.Change{Kind: row.Delete, Row: sensorRow(4, "d", 4, "2024-02-29 10:00:00.000")},
	)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := c.docs(base + "-*")
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{base + "-2024.01.01/1", base + "-2024.01.02/2", base + "-2024.01.02/3"}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("documents %v, want %v", keys, want)
	}
}

// TestMappingErrorGoesToDeadLetter creates an index whose field v is a
// long, and sends one row with text in v among good ones, through a
// whole pipeline with on_error: dead-letter. The good rows land; the bad
// one is in the dead-letter file with the document and the reason.
func TestMappingErrorGoesToDeadLetter(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_mapping")
	c.do("PUT", "/"+index, `{"mappings":{"properties":{"k":{"type":"keyword"},"v":{"type":"long"}}}}`)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.csv"), "k,v\na,1\nb,not a number\nc,3\n")
	dlq := filepath.Join(dir, "dlq.jsonl")
	sum := runPipeline(t, dir, fmt.Sprintf(`version: 1
name: es_mapping
sources:
  - name: rows
    type: file
    path: %s
    format: {type: csv, header: true}
    schema: [k STRING, v STRING]
sinks:
  - name: es
    from: rows
    type: elasticsearch
    hosts: %s
    index: %s
    on_error: dead-letter
    dead_letter: %s
`, filepath.Join(dir, "in.csv"), c.url, index, dlq))
	if n := c.count(index); n != 2 {
		t.Fatalf("%d documents, want the 2 good ones", n)
	}
	// Written means acknowledged: the refused document is not written.
	if len(sum.Sinks) != 1 || sum.Sinks[0].In != 3 || sum.Sinks[0].Out != 2 || sum.Sinks[0].Skipped != 1 {
		t.Errorf("summary %+v: want 3 rows in, 2 written and 1 skipped in the sink", sum.Sinks)
	}
	data, err := os.ReadFile(dlq)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 {
		t.Fatalf("dead letters:\n%s\nwant one", data)
	}
	var rec struct{ Sink, Position, Error, Record string }
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Sink != "es" || rec.Record != `{"k":"b","v":"not a number"}` || !strings.Contains(rec.Error, "failed to parse field [v] of type [long]") || !strings.Contains(rec.Position, index) {
		t.Fatalf("dead letter %+v", rec)
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGroupByUpsertLeavesFinalTable runs a CSV file through GROUP BY with
// a HAVING that first admits and later removes groups, into an upsert
// sink, and compares the index with the table computed here: one document
// per key with its final values, none for removed groups.
func TestGroupByUpsertLeavesFinalTable(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_groupby")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	var csv strings.Builder
	type acc struct{ n, sum, max int64 }
	groups := map[string]*acc{}
	for i := 0; i < 6000; i++ {
		k := fmt.Sprintf("k%d", rng.IntN(70))
		v := rng.Int64N(1000) - 200
		fmt.Fprintf(&csv, "%s,%d\n", k, v)
		a := groups[k]
		if a == nil {
			a = &acc{max: v}
			groups[k] = a
		}
		a.n++
		a.sum += v
		a.max = max(a.max, v)
	}
	writeFile(t, filepath.Join(dir, "in.csv"), csv.String())
	want := map[string]string{}
	removed := 0
	for k, a := range groups {
		// HAVING COUNT(*) BETWEEN 70 AND 95: groups enter the result and
		// leave it again as rows arrive, so the sink must delete them.
		switch {
		case a.n >= 70 && a.n <= 95:
			want[index+"/"+k] = fmt.Sprintf(`{"k":%q,"n":%d,"total":%d,"hi":%d}`, k, a.n, a.sum, a.max)
		case a.n > 95:
			removed++
		}
	}
	if len(want) == 0 || removed == 0 {
		t.Fatalf("test data gives %d final and %d removed groups: the test would prove little", len(want), removed)
	}
	runPipeline(t, dir, fmt.Sprintf(`version: 1
name: es_groupby
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING, v BIGINT]
transforms:
  - name: agg
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS hi
      FROM src GROUP BY k HAVING COUNT(*) BETWEEN 70 AND 95
sinks:
  - name: es
    from: agg
    type: elasticsearch
    hosts: [%s]
    index: %s
    mode: upsert
    bulk_flush_max_actions: 50
    parallelism: 3
`, filepath.Join(dir, "in.csv"), c.url, index))
	compareDocs(t, c.docs(index), want)
}

// TestDeadLettersIntoAnIndex: the documents an index refuses go, as dead
// letters, to another index of the pipeline, each with the _id of its
// dead letter's id, so that running the input again (as a restored run
// does) leaves each once.
func TestDeadLettersIntoAnIndex(t *testing.T) {
	c := newCluster(t)
	index, errors := c.index("es_dl_target"), c.index("es_dl_errors")
	c.do("PUT", "/"+index, `{"mappings":{"properties":{"k":{"type":"keyword"},"v":{"type":"long"}}}}`)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.csv"), "k,v\na,1\nb,not a number\nc,3\n")
	yaml := fmt.Sprintf(`version: 1
name: es_dead_letters
sources:
  - name: rows
    type: file
    path: %s
    format: {type: csv, header: true}
    schema: [k STRING, v STRING]
sinks:
  - name: es
    from: rows
    type: elasticsearch
    hosts: %s
    index: %s
    on_error: {policy: dead-letter, sink: errors}
  - name: errors
    type: elasticsearch
    hosts: %s
    index: %s
`, filepath.Join(dir, "in.csv"), c.url, index, c.url, errors)
	for range 2 {
		runPipeline(t, dir, yaml)
	}
	docs := c.docs(errors)
	if len(docs) != 1 {
		t.Fatalf("dead letters %v, want the one refused document once", docs)
	}
	for id, d := range docs {
		if d["sink"] != "es" || d["record"] != `{"k":"b","v":"not a number"}` || !strings.Contains(fmt.Sprint(d["error"]), "failed to parse field [v]") || id != errors+"/"+fmt.Sprint(d["id"]) {
			t.Errorf("dead letter %s: %v", id, d)
		}
	}
}
