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
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func ptr[T any](v T) *T { return &v }

func TestConfigChecks(t *testing.T) {
	base := func() Config { return Config{Hosts: []string{"http://127.0.0.1:9200"}, Index: "logs"} }
	tests := []struct {
		name  string
		edit  func(*Config)
		field string // "" when valid
	}{
		{"minimal", func(*Config) {}, ""},
		{"hosts separated by ;", func(c *Config) { c.Hosts = []string{"http://a:9200;https://b:9200"} }, ""},
		{"host without scheme", func(c *Config) { c.Hosts = []string{"a:9200"} }, "hosts"},
		{"credentials in the url", func(c *Config) { c.Hosts = []string{"http://u:secret@a:9200"} }, "hosts"},
		{"no host", func(c *Config) { c.Hosts = []string{" ; "} }, "hosts"},
		{"port out of range", func(c *Config) { c.Hosts = []string{"http://a:92000"} }, "hosts"},
		{"port zero", func(c *Config) { c.Hosts = []string{"http://a:0"} }, "hosts"},
		{"upper case index", func(c *Config) { c.Index = "Logs" }, "index"},
		{"index with a comma", func(c *Config) { c.Index = "a,b" }, "index"},
		{"pattern", func(c *Config) { c.Index = "logs-{ts|yyyy-MM-dd}" }, ""},
		{"two dynamic parts", func(c *Config) { c.Index = "{a}-{b}" }, "index"},
		{"unclosed part", func(c *Config) { c.Index = "logs-{ts" }, "index"},
		{"bad date letter", func(c *Config) { c.Index = "logs-{ts|yyyy-MM-dd bb}" }, "index"},
		{"now without format", func(c *Config) { c.Index = "logs-{now()}" }, "index"},
		{"negative actions", func(c *Config) { c.BulkFlushMaxActions = ptr(-1) }, "bulk_flush_max_actions"},
		{"size", func(c *Config) { c.BulkFlushMaxSize = "5mb" }, ""},
		{"bad size", func(c *Config) { c.BulkFlushMaxSize = "5 parsecs" }, "bulk_flush_max_size"},
		{"strategy", func(c *Config) { c.BackoffStrategy = "CONSTANT" }, ""},
		{"no retries", func(c *Config) { c.BackoffStrategy = "disabled" }, "bulk_flush_backoff_strategy"},
		{"negative retries", func(c *Config) { c.BackoffMaxRetries = -1 }, "bulk_flush_backoff_max_retries"},
		{"zero delay", func(c *Config) { c.BackoffDelay = ptr(time.Duration(0)) }, "bulk_flush_backoff_delay"},
		{"user without password", func(c *Config) { c.Username = "elastic" }, "username"},
		{"api key and user", func(c *Config) { c.APIKey, c.Username, c.Password = "k", "u", "p" }, "api_key"},
		{"zero timeout", func(c *Config) { c.SocketTimeout = ptr(time.Duration(0)) }, "socket_timeout"},
		{"parallelism", func(c *Config) { c.Parallelism = 100 }, "parallelism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.edit(&cfg)
			_, err := New(cfg, connector.SinkEnv{Name: "es", Formats: connector.NewRegistry()})
			var fe *connector.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.field != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want an error on %s", err, tt.field)
			case tt.field != "" && fe.Field != tt.field:
				t.Fatalf("error on %s (%v), want on %s", fe.Field, err, tt.field)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"2mb", 2 << 20, true}, {"512kb", 512 << 10, true}, {"1 gb", 1 << 30, true}, {"100", 100, true},
		{"0", 0, true}, {"3MB", 3 << 20, true}, {"-1mb", 0, false}, {"mb", 0, false}, {"1.5mb", 0, false},
		{"4gb", 0, false}, {"2 tb", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

var testSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Of(row.BigInt)},
	row.Field{Name: "name", Type: row.Of(row.String)},
	row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 3}},
	row.Field{Name: "day", Type: row.Of(row.Date)},
	row.Field{Name: "ok", Type: row.Of(row.Boolean)},
)

func TestIndexNames(t *testing.T) {
	ts := time.Date(2024, 3, 9, 14, 5, 7, 0, time.UTC)
	r := row.Row{row.BigIntValue(7), row.StringValue("Eu"), row.TimestampValue(ts.UnixMicro()), row.DateValue(19000), row.BoolValue(true)}
	now := func() time.Time { return time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC) }
	tests := []struct{ pattern, want string }{
		{"logs", "logs"},
		{"logs-{ts|yyyy-MM-dd}", "logs-2024-03-09"},
		{"logs-{ts|yyyy.MM}-x", "logs-2024.03-x"},
		{"d-{day|yyyyMMdd}", "d-20220108"},
		{"by-{id}", "by-7"},
		{"{name}", "Eu"},
		{"b-{ok}", "b-true"},
		{"n-{now()|yyyy}", "n-2030"},
	}
	for _, tt := range tests {
		p, err := parseIndex(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if err := p.bind(testSchema); err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		for range 2 { // the second time from the cache
			got, err := p.name(r, now)
			if err != nil || got != tt.want {
				t.Errorf("%s: %q, %v; want %q", tt.pattern, got, err, tt.want)
			}
		}
	}
	for _, bad := range []string{"x-{nope}", "x-{name|yyyy}"} {
		p, err := parseIndex(bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.bind(testSchema); err == nil {
			t.Errorf("%s bound to %s", bad, testSchema)
		}
	}
	p, _ := parseIndex("x-{ts|yyyy}")
	_ = p.bind(testSchema)
	if _, err := p.name(row.Row{row.NullValue, row.NullValue, row.NullValue, row.NullValue, row.NullValue}, now); err == nil {
		t.Error("a NULL index column gave a name")
	}
}

func FuzzIndexPattern(f *testing.F) {
	for _, s := range []string{"logs", "logs-{ts|yyyy-MM-dd}", "{id}", "a-{now()|yyyy}", "{", "}{", "x-{ts|'q}", "{|}"} {
		f.Add(s)
	}
	r := row.Row{row.BigIntValue(1), row.StringValue("x"), row.TimestampValue(0), row.DateValue(0), row.BoolValue(false)}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseIndex(s)
		if err != nil {
			return
		}
		if p.bind(testSchema) != nil {
			return
		}
		name, err := p.name(r, time.Now)
		if err == nil && !strings.HasPrefix(name, p.prefix) {
			t.Fatalf("%q gave %q", s, name)
		}
	})
}

func TestDocumentIDs(t *testing.T) {
	ts := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC).UnixMicro()
	tests := []struct {
		name      string
		key       []int
		r         row.Row
		delim     *string
		nullValue *string
		want      string
	}{
		{"one column", []int{0}, row.Row{row.BigIntValue(42)}, nil, nil, "42"},
		{"joined", []int{0, 1}, row.Row{row.BigIntValue(1), row.StringValue("a")}, nil, nil, "1_a"},
		{"delimiter", []int{1, 0}, row.Row{row.BigIntValue(1), row.StringValue("a")}, ptr("|"), nil, "a|1"},
		{"null", []int{0, 1}, row.Row{row.NullValue, row.StringValue("a")}, nil, nil, "null_a"},
		{"null literal", []int{0}, row.Row{row.NullValue}, nil, ptr("N/A"), "N/A"},
		// Java's toString forms, as Flink's KeyExtractor writes them.
		{"timestamp", []int{0}, row.Row{row.TimestampValue(ts)}, nil, nil, "2024-01-01T10:00"},
		{"timestamp ltz", []int{0}, row.Row{row.TimestampLTZValue(ts + 5e5)}, nil, nil, "2024-01-01T10:00:00.500"},
		{"boolean", []int{0}, row.Row{row.BoolValue(true)}, nil, nil, "true"},
		{"decimal", []int{0}, row.Row{row.DecimalValue(-150, 2)}, nil, nil, "-1.50"},
		// DecimalData.toString is toPlainString: no exponent in an id.
		{"small decimal", []int{0}, row.Row{row.DecimalValue(0, 7)}, nil, nil, "0.0000000"},
		{"decimal(38)", []int{0}, row.Row{row.Decimal128Value(row.Int128{Hi: -1 << 40, Lo: 7}, 30)}, nil, nil, "-20.282409603651670423947251286009"},
		{"double", []int{0}, row.Row{row.DoubleValue(1e7)}, nil, nil, "1.0E7"},
		{"date", []int{0}, row.Row{row.DateValue(0)}, nil, nil, "1970-01-01"},
	}
	for _, tt := range tests {
		cfg := Config{Hosts: []string{"http://x:1"}, Index: "i", KeyDelimiter: tt.delim, KeyNullLiteral: tt.nullValue}
		s, err := New(cfg, connector.SinkEnv{Name: "es", Formats: connector.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		s.key = tt.key
		if got := string(s.docID(tt.r)); got != tt.want {
			t.Errorf("%s: id %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Text is escaped as JSON; invalid UTF-8 becomes one U+FFFD per
// malformed sequence as Java cuts them, as in Flink's documents.
func TestAppendJSONString(t *testing.T) {
	for s, want := range map[string]string{"plain": "plain", `q"uo\te`: `q"uo\te`, "new\nline\x01": "new\nline\x01",
		"é ünïcode ☃": "é ünïcode ☃", "bad \xff utf8": "bad \uFFFD utf8", "": "",
		"a\xe2\x82b": "a\uFFFDb", "\xc0\xaf\"": "\uFFFD\uFFFD\"", "\xed\xa0\x80": "\uFFFD"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, got, err)
		}
		if back != want {
			t.Errorf("%q round-trips as %q, want %q", s, back, want)
		}
	}
}

// fakeES answers the bulk API like Elasticsearch from a map of documents,
// failing items as status says. It is a unit test of the sink's handling
// of responses: the real cluster cannot be made to answer 429 on demand.
type fakeES struct {
	mu   sync.Mutex
	docs map[string]string
	// versions holds the external versions of documents (tombstones
	// included), which it enforces as Elasticsearch does.
	versions map[string]uint64
	// lost, when set, drops the answer to a bulk request it applied.
	lost   func(call int) bool
	calls  int
	sizes  []int
	status func(call int, action, id, doc string) int
	// request, when set, answers a whole request with its status.
	request func(call int) int
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
	if !strings.HasSuffix(req.URL.Path, "/_bulk") {
		return answer(404, `{}`), nil
	}
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
			Index   string `json:"_index"`
			ID      string `json:"_id"`
			Version uint64 `json:"version"`
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
			if cur, ok := f.versions[key]; meta.Version != 0 && ok && cur >= meta.Version && st < 300 {
				errs = true
				items = append(items, fmt.Sprintf(`{%q:{"status":409,"error":{"type":"version_conflict_engine_exception","reason":"[%s]: version conflict, current version [%d] is higher or equal to the one provided [%d]"}}}`,
					op, meta.ID, cur, meta.Version))
				continue
			}
			if meta.Version != 0 && st < 300 {
				if f.versions == nil {
					f.versions = map[string]uint64{}
				}
				f.versions[key] = meta.Version
			}
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

// TestTransientItemsAreRetriedAlone answers 429 and 503 for some items:
// only those are sent again, the others once.
func TestTransientItemsAreRetriedAlone(t *testing.T) {
	seen := map[string]int{}
	f := &fakeES{status: func(call int, op, id, doc string) int {
		seen[id]++
		if (id == "2" || id == "4") && seen[id] <= 2 {
			return 429
		}
		if id == "3" && seen[id] == 1 {
			return 503
		}
		return 200
	}}
	s := newFakeSink(t, f, Config{}, connector.Upsert, nil)
	var b row.Batch
	for k := int64(1); k <= 5; k++ {
		b.Append(row.Insert, kv(k, k*10))
	}
	ctx := context.Background()
	if err := s.Write(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "map[1:1 2:3 3:2 4:3 5:1]" {
		t.Errorf("sends per id %v", seen)
	}
	if len(f.docs) != 5 {
		t.Errorf("documents %v", f.docs)
	}
}

// TestRetriesKeepNewestVersion writes many versions of a few documents,
// one request per action, while the fake answers 429 at random: the
// stored document must always end as the last version written.
func TestRetriesKeepNewestVersion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rmu sync.Mutex
	busy := 0
	f := &fakeES{status: func(int, string, string, string) int {
		rmu.Lock()
		defer rmu.Unlock()
		if rng.IntN(3) == 0 {
			busy++
			return 429
		}
		return 200
	}}
	s := newFakeSink(t, f, Config{BulkFlushMaxActions: ptr(3), Parallelism: 3}, connector.Upsert, nil)
	ctx := context.Background()
	last := map[int64]int64{}
	deleted := map[int64]bool{}
	for i := int64(0); i < 2000; i++ {
		k := i % 7
		b := row.NewBatch(1, 2)
		if i%11 == 0 {
			b.Append(row.Delete, kv(k, last[k]))
			deleted[k] = true
		} else {
			b.Append(row.UpdateAfter, kv(k, i))
			last[k], deleted[k] = i, false
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for k := int64(0); k < 7; k++ {
		doc, ok := f.docs[fmt.Sprintf("i/%d", k)]
		switch {
		case deleted[k] && ok:
			t.Errorf("key %d: deleted last, but holds %s", k, doc)
		case !deleted[k] && doc != fmt.Sprintf(`{"k":%d,"v":%d}`, k, last[k]):
			t.Errorf("key %d: %s, want version %d", k, doc, last[k])
		}
	}
	if f.calls < 300 || busy < 100 {
		t.Errorf("%d requests, %d items answered 429: the test did not exercise retries across requests", f.calls, busy)
	}
}

// TestFoldKeepsOneActionPerDocument writes several versions of one key
// into one request: only the newest is sent.
func TestFoldKeepsOneActionPerDocument(t *testing.T) {
	var ids []string
	f := &fakeES{status: func(_ int, op, id, doc string) int { ids = append(ids, op+":"+id+":"+doc); return 200 }}
	s := newFakeSink(t, f, Config{Parallelism: 1}, connector.Upsert, nil)
	ctx := context.Background()
	if err := s.Write(ctx, &row.Batch{Changes: []row.Change{
		{Kind: row.Insert, Row: kv(1, 1)}, {Kind: row.Insert, Row: kv(2, 1)},
		{Kind: row.UpdateBefore, Row: kv(1, 1)}, {Kind: row.UpdateAfter, Row: kv(1, 2)},
		{Kind: row.Delete, Row: kv(2, 1)},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := `[index:1:{"k":1,"v":2} delete:2:]`
	if got := fmt.Sprint(ids); got != want {
		t.Errorf("actions sent %s, want %s", got, want)
	}
}

// TestWrittenRowsAreNotKept: the rows of a written batch are overwritten
// once Write returned, as a batch given back to its source is, before
// the flush sends them, and again between the retries of a failed
// request: the documents are the rows as they were (connector.RowCopier).
func TestWrittenRowsAreNotKept(t *testing.T) {
	f := &fakeES{request: func(call int) int {
		if call == 1 {
			return 503 // the whole request again
		}
		return 200
	}}
	s := newFakeSink(t, f, Config{Parallelism: 1}, connector.Upsert, nil)
	if !s.CopiesRows() {
		t.Fatal("the sink does not say it copies rows")
	}
	ctx := context.Background()
	b := &row.Batch{}
	for i := range int64(100) {
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: kv(i, 10*i)})
	}
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Changes {
		c.Row[0], c.Row[1] = row.BigIntValue(-1), row.BigIntValue(-1)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.docs) != 100 || f.calls < 2 {
		t.Fatalf("%d documents in %d requests, want 100 after a retry", len(f.docs), f.calls)
	}
	for i := range 100 {
		if got, want := f.docs[fmt.Sprintf("i/%d", i)], fmt.Sprintf(`{"k":%d,"v":%d}`, i, 10*i); got != want {
			t.Fatalf("document %d is %s, want %s", i, got, want)
		}
	}
}

// TestRefusedItemsFollowOnError: a 400 item goes to Reject with its
// document and reason and the rest lands; with a failing policy the
// error comes out of Flush.
func TestRefusedItemsFollowOnError(t *testing.T) {
	status := func(_ int, op, id, doc string) int {
		if id == "2" {
			return 400
		}
		return 200
	}
	var got []connector.BadRecord
	f := &fakeES{status: status}
	s := newFakeSink(t, f, Config{Parallelism: 1}, connector.Upsert, func(b connector.BadRecord) error { got = append(got, b); return nil })
	ctx := context.Background()
	if err := s.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(1, 1)}, {Kind: row.Insert, Row: kv(2, 2)}, {Kind: row.Insert, Row: kv(3, 3)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Raw) != `{"k":2,"v":2}` || !strings.Contains(got[0].Err.Error(), "t400") || !strings.Contains(got[0].Position, "_id 2") {
		t.Fatalf("rejected %+v", got)
	}
	if len(f.docs) != 2 || f.calls != 1 {
		t.Fatalf("docs %v after %d calls", f.docs, f.calls)
	}

	stop := errors.New("policy fail")
	f2 := &fakeES{status: status}
	s2 := newFakeSink(t, f2, Config{}, connector.Upsert, func(connector.BadRecord) error { return stop })
	if err := s2.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(2, 2)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Flush(ctx); !errors.Is(err, stop) {
		t.Fatalf("Flush = %v, want the policy's error", err)
	}
	if err := s2.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(3, 3)}}}); !errors.Is(err, stop) {
		t.Fatalf("Write after the failure = %v, want the policy's error", err)
	}
}

// TestFailedRequestsAreSentAgainWhole: 503 and 429 for the whole request
// are retried; 401 stops; running out of retries stops without dropping.
func TestFailedRequestsAreSentAgainWhole(t *testing.T) {
	ctx := context.Background()
	f := &fakeES{request: func(call int) int {
		if call <= 2 {
			return []int{503, 429}[call-1]
		}
		return 200
	}}
	s := newFakeSink(t, f, Config{Parallelism: 1}, connector.Append, nil)
	if err := s.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(1, 1)}, {Kind: row.Insert, Row: kv(1, 1)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(f.sizes) != "[2]" || f.calls != 3 {
		t.Fatalf("%d calls, answered sizes %v; want 3 calls and one of 2 actions", f.calls, f.sizes)
	}

	f401 := &fakeES{request: func(int) int { return 401 }}
	s401 := newFakeSink(t, f401, Config{}, connector.Append, nil)
	_ = s401.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(1, 1)}}})
	if err := s401.Flush(ctx); err == nil || !strings.Contains(err.Error(), "not allowed") || f401.calls != 1 {
		t.Fatalf("Flush = %v after %d calls; want a permanent auth error after one", err, f401.calls)
	}

	fdown := &fakeES{request: func(int) int { return 503 }}
	sdown := newFakeSink(t, fdown, Config{BackoffMaxRetries: 2}, connector.Append, nil)
	_ = sdown.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(1, 1)}}})
	if err := sdown.Flush(ctx); err == nil || fdown.calls != 3 {
		t.Fatalf("Flush = %v after %d calls; want an error after 3", err, fdown.calls)
	}
}

// TestFlushWaitsUntilContextEnds: a cluster that never recovers holds
// Flush until its context ends, and nothing is acknowledged.
func TestFlushWaitsUntilContextEnds(t *testing.T) {
	f := &fakeES{request: func(int) int { return 503 }}
	s := newFakeSink(t, f, Config{}, connector.Append, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_ = s.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(1, 1)}}})
	done := make(chan error, 1)
	go func() { done <- s.Flush(ctx) }()
	for {
		f.mu.Lock()
		calls := f.calls
		f.mu.Unlock()
		if calls >= 3 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Flush returned %v while the cluster fails", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush = %v, want the context's error", err)
	}
}

func TestBindRefuses(t *testing.T) {
	reg := connector.NewRegistry()
	formats.Register(reg)
	s, err := New(Config{Hosts: []string{"http://x:1"}, Index: "i-{nope|yyyy}"}, connector.SinkEnv{Name: "es", Formats: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []connector.SinkInput{
		{Schema: testSchema, Mode: connector.Append},
		{Schema: testSchema, Mode: connector.Retract},
	} {
		if err := s.Bind(in); err == nil {
			t.Errorf("Bind(%v) accepted", in.Mode)
		}
	}
	s2, _ := New(Config{Hosts: []string{"http://x:1"}, Index: "i"}, connector.SinkEnv{Name: "es", Formats: reg})
	if err := s2.Bind(connector.SinkInput{Schema: testSchema, Mode: connector.Upsert}); err == nil {
		t.Error("upsert without a key accepted")
	}
}

// TestCloseWhileIntervalFlushWaits closes the sink while the interval
// flusher waits for a busy sender and a change is buffered: the flusher
// must not hand the buffered request to a sender whose channel Close has
// closed (a panic: send on closed channel).
func TestCloseWhileIntervalFlushWaits(t *testing.T) {
	for range 100 {
		retrying := make(chan struct{})
		var once sync.Once
		f := &fakeES{request: func(call int) int {
			if call >= 2 {
				once.Do(func() { close(retrying) })
			}
			return 503
		}}
		s := newFakeSink(t, f, Config{BulkFlushInterval: ptr(time.Millisecond), BulkFlushMaxActions: ptr(2), Parallelism: 1}, connector.Append, nil)
		var changes []row.Change
		for k := range 5 {
			changes = append(changes, row.Change{Kind: row.Insert, Row: kv(int64(k), 0)})
		}
		if err := s.Write(context.Background(), &row.Batch{Changes: changes}); err != nil {
			t.Fatal(err)
		}
		// The sender is busy retrying the first request, the second waits
		// in its channel, the fifth change is buffered: the next tick
		// blocks handing it over.
		<-retrying
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

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

// TestEmptyKeyKeepsItsID: an upsert whose key is the empty string sends
// _id "" (which Elasticsearch refuses item by item, so the row goes to
// on_error) even as the sink's first row, never an action without _id,
// which would index a document under a generated id that no later update
// or delete finds.
func TestEmptyKeyKeepsItsID(t *testing.T) {
	rec := &bodyRecorder{f: &fakeES{docs: map[string]string{}}}
	reg := connector.NewRegistry()
	formats.Register(reg)
	s, err := New(Config{Hosts: []string{"http://127.0.0.1:9"}, Index: "i", BulkFlushInterval: ptr(time.Duration(0))},
		connector.SinkEnv{Name: "es", Formats: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.transport = rec
	schema := row.NewSchema(row.Field{Name: "k", Type: row.Of(row.String)}, row.Field{Name: "v", Type: row.Of(row.BigInt)})
	if err := s.Bind(connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	b := &row.Batch{Changes: []row.Change{
		{Kind: row.Insert, Row: row.Row{row.StringValue(""), row.BigIntValue(1)}},
		{Kind: row.Insert, Row: row.Row{row.StringValue("a"), row.BigIntValue(2)}},
	}}
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	all := strings.Join(rec.bodies, "")
	for _, want := range []string{`{"index":{"_index":"i","_id":""}}`, `{"index":{"_index":"i","_id":"a"}}`} {
		if !strings.Contains(all, want) {
			t.Errorf("bulk requests lack %s; sent:\n%s", want, all)
		}
	}
}

// TestPanicInASenderFailsTheSink: a panic on a sender's goroutine (here in
// the HTTP transport) is the sink's error, returned by Flush with its
// stack; it never takes the process down.
func TestPanicInASenderFailsTheSink(t *testing.T) {
	ctx := context.Background()
	f := &fakeES{request: func(int) int { panic("transport bug") }}
	s := newFakeSink(t, f, Config{Parallelism: 2}, connector.Append, nil)
	if err := s.Write(ctx, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: kv(1, 1)}}}); err != nil {
		t.Fatal(err)
	}
	err := s.Flush(ctx)
	if err == nil || !strings.Contains(err.Error(), "transport bug") {
		t.Fatalf("Flush = %v, want the panic as the sink's error", err)
	}
	if _, ok := panics.Stack(err); !ok {
		t.Errorf("Flush's error %v carries no stack", err)
	}
}

// TestVersionedRetries: with a fence, every upsert action carries an
// external version (fence, then the change's number in the life), which
// grows with each change; a request whose answer was lost is sent again
// and its actions, applied already, come back 409: superseded, not an
// error, the documents as written. Once a life's numbers run out the
// sink takes a new fence, and versions go on growing.
func TestVersionedRetries(t *testing.T) {
	f := &fakeES{lost: func(call int) bool { return call%2 == 1 }}
	fences := []uint64{1_700_000_000, 1_700_000_001}
	var took int
	fence := func() (uint64, error) { took++; return fences[took-1], nil }
	s := newFakeLife(t, f, Config{Parallelism: 1}, connector.Upsert, nil, connector.RunInfo{Resumable: true, Fence: fence})
	ctx := context.Background()
	for i := int64(1); i <= 3; i++ {
		b := row.NewBatch(1, 2)
		b.Append(row.UpdateAfter, kv(i%2, i))
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if want := fences[0]<<seqBits | 3; f.versions["i/1"] != want || f.versions["i/0"] != want-1 {
		t.Fatalf("versions %v, want %d for i/1 and %d for i/0", f.versions, want, want-1)
	}
	if got := s.superseded.Load(); got != 3 {
		t.Errorf("%d actions taken as superseded, want the 3 sent again after a lost answer", got)
	}
	if f.docs["i/1"] != `{"k":1,"v":3}` || f.docs["i/0"] != `{"k":0,"v":2}` {
		t.Errorf("documents %v", f.docs)
	}
	s.mu.Lock()
	s.vseq = maxSeq
	s.mu.Unlock()
	b := row.NewBatch(1, 2)
	b.Append(row.UpdateAfter, kv(1, 9))
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if want := fences[1]<<seqBits | 1; took != 2 || f.versions["i/1"] != want || f.docs["i/1"] != `{"k":1,"v":9}` {
		t.Fatalf("after the numbers ran out: %d fences, version %d (want %d), document %s", took, f.versions["i/1"], want, f.docs["i/1"])
	}
}

func TestCurrentVersion(t *testing.T) {
	for reason, want := range map[string]uint64{
		"[a]: version conflict, current version [10] is higher or equal to the one provided [5]": 10,
		"[a]: version conflict, current version [9223372036854775807] is higher":                 1<<63 - 1,
		"[a]: version conflict, document already exists (current version [1])":                   1,
		"version conflict":    0,
		"current version [x]": 0,
		"current version [12": 0,
	} {
		got, ok := currentVersion(&itemError{Reason: reason})
		if got != want || ok != (want != 0) {
			t.Errorf("%q: %d, %v; want %d", reason, got, ok, want)
		}
	}
}
