package elasticsearch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func ptr[T any](v T) *T { return &v }

var testSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Of(row.BigInt)},
	row.Field{Name: "name", Type: row.Of(row.String)},
	row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 3}},
	row.Field{Name: "day", Type: row.Of(row.Date)},
	row.Field{Name: "ok", Type: row.Of(row.Boolean)},
)

// fakeES answers the bulk API like Elasticsearch from a map of documents,
// failing items as status says. It is a unit test of the sink's handling
// of responses: the real cluster cannot be made to answer 429 on demand.
type fakeES struct {
	mu   sync.Mutex
	docs map[string]string
	// lost, when set, drops the answer to a bulk request it applied.
	lost   func(call int) bool
	calls  int
	sizes  []int
	status func(call int, action, id, doc string) int
	// request, when set, answers a whole request with its status.
	request func(call int) int
	// aliasStatus, when set, answers the alias requests with it.
	aliasStatus int
	// requireAlias is the require_alias parameter of the last bulk request.
	requireAlias string
}

func (f *fakeES) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Header: http.Header{
			"X-Elastic-Product": {"Elasticsearch"}, "Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}
	}
	if strings.HasSuffix(req.URL.Path, "/_cluster/health") || req.Method == http.MethodHead {
		return answer(200, `{"status":"green"}`), nil
	}
	if f.aliasStatus != 0 && strings.Contains(req.URL.Path, "_alias") {
		return answer(f.aliasStatus, `{"error":"not allowed"}`), nil
	}
	if !strings.HasSuffix(req.URL.Path, "/_bulk") {
		return answer(404, `{}`), nil
	}
	f.requireAlias = req.URL.Query().Get("require_alias")
	f.calls++
	call := f.calls
	body, _ := io.ReadAll(req.Body)
	if f.request != nil {
		if st := f.request(call); st != 200 {
			return answer(st, `{"error":"unavailable"}`), nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	var items []string
	errs := false
	n := 0
	for sc.Scan() {
		var action map[string]struct {
			Index string `json:"_index"`
			ID    string `json:"_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil {
			return nil, fmt.Errorf("bad action line %q: %w", sc.Text(), err)
		}
		for op, meta := range action {
			doc := ""
			if op != "delete" {
				if !sc.Scan() {
					return nil, errors.New("action without document")
				}
				doc = sc.Text()
			}
			n++
			st := 200
			if f.status != nil {
				st = f.status(call, op, meta.ID, doc)
			}
			key := meta.Index + "/" + meta.ID
			switch {
			case st >= 300:
				errs = true
				items = append(items, fmt.Sprintf(`{%q:{"status":%d,"error":{"type":"t%d","reason":"r"}}}`, op, st, st))
			case op == "delete":
				if _, ok := f.docs[key]; !ok {
					st = 404
				}
				delete(f.docs, key)
				items = append(items, fmt.Sprintf(`{%q:{"status":%d}}`, op, st))
			default:
				f.docs[key] = doc
				items = append(items, fmt.Sprintf(`{%q:{"status":%d}}`, op, st))
			}
		}
	}
	f.sizes = append(f.sizes, n)
	if f.lost != nil && f.lost(call) {
		return nil, errors.New("connection reset by peer")
	}
	return answer(200, fmt.Sprintf(`{"errors":%v,"items":[%s]}`, errs, strings.Join(items, ","))), nil
}

func newFakeSink(t *testing.T, f *fakeES, cfg Config, mode connector.Mode, reject func(connector.BadRecord) error) *Sink {
	t.Helper()
	return newFakeLife(t, f, cfg, mode, reject, connector.RunInfo{})
}

// newFakeLife is newFakeSink told about its run.
func newFakeLife(t *testing.T, f *fakeES, cfg Config, mode connector.Mode, reject func(connector.BadRecord) error, run connector.RunInfo) *Sink {
	t.Helper()
	if f.docs == nil {
		f.docs = map[string]string{}
	}
	cfg.Hosts = []string{"http://127.0.0.1:9"}
	if cfg.Index == "" {
		cfg.Index = "i"
	}
	if cfg.BackoffDelay == nil {
		cfg.BackoffDelay = ptr(time.Millisecond)
	}
	reg := connector.NewRegistry()
	formats.Register(reg)
	s, err := New(cfg, connector.SinkEnv{Name: "es", Formats: reg, Reject: reject, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.transport = f
	in := connector.SinkInput{Schema: row.NewSchema(
		row.Field{Name: "k", Type: row.Of(row.BigInt)}, row.Field{Name: "v", Type: row.Of(row.BigInt)}), Mode: mode}
	if mode == connector.Upsert {
		in.Key = []int{0}
	}
	if err := s.Bind(in); err != nil {
		t.Fatal(err)
	}
	s.SetRun(run)
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func kv(k, v int64) row.Row { return row.Row{row.BigIntValue(k), row.BigIntValue(v)} }

// bodyRecorder keeps the bulk request bodies on their way to fakeES.
type bodyRecorder struct {
	f      *fakeES
	mu     sync.Mutex
	bodies []string
}

func (r *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/_bulk") {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(body))
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r.f.RoundTrip(req)
}
