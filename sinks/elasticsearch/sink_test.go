package elasticsearch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

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

// TestAliasesRefusedLeaveTheRunUnfenced: a cluster that does not let the
// sink list or change aliases (no manage privilege) leaves a run with a
// state directory writing to the index itself, without require_alias.
func TestAliasesRefusedLeaveTheRunUnfenced(t *testing.T) {
	f := &fakeES{aliasStatus: 403}
	s := newFakeLife(t, f, Config{}, connector.Upsert, nil, connector.RunInfo{Resumable: true, Fence: func() (uint64, error) { return 7, nil }})
	ctx := context.Background()
	b := row.NewBatch(1, 2)
	b.Append(row.UpdateAfter, kv(1, 1))
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f.docs["i/1"] != `{"k":1,"v":1}` || f.requireAlias == "true" {
		t.Errorf("documents %v, require_alias %q; want i/1 written to the index itself", f.docs, f.requireAlias)
	}
}
