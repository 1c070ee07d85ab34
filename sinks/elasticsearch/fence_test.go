package elasticsearch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	es "github.com/etld/etld/sinks/elasticsearch"
)

var kvSchema = row.NewSchema(
	row.Field{Name: "k", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "v", Type: row.Of(row.BigInt)},
)

func kvChange(kind row.Kind, k, v int64) row.Change {
	return row.Change{Kind: kind, Row: row.Row{row.BigIntValue(k), row.BigIntValue(v)}}
}

// life opens an upsert sink on kvSchema as one life of a pipeline whose
// state directory is store's.
func life(t *testing.T, host, index string, fence func() (uint64, error)) *es.Sink {
	t.Helper()
	s, err := es.New(es.Config{Hosts: []string{host}, Index: index, BulkFlushInterval: new(time.Duration)},
		connector.SinkEnv{Name: "es", Formats: builtin.Registry(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}); err != nil {
		t.Fatal(err)
	}
	s.SetRun(connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i", Fence: fence})
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func fenceOf(store *checkpoint.Store) func() (uint64, error) {
	return func() (uint64, error) { return store.Fence(time.Now()) }
}

// TestLateBulkOfAKilledLifeIsRefused: the first life's bulk request is
// held on its way (its process killed meanwhile); the next life writes
// newer values and deletes a document; then the held request arrives.
// Elasticsearch must refuse it: the index keeps the newer life's values
// and the deleted document stays deleted. Without fencing the held
// request is applied last and the index ends with the dead life's
// values.
func TestLateBulkOfAKilledLifeIsRefused(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_fence")
	proxy := testenv.NewHoldProxy(t, strings.TrimPrefix(c.url, "http://"), testenv.HTTPFraming)
	store, err := checkpoint.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t, time.Minute)

	first := life(t, "http://"+proxy.Addr(), index, fenceOf(store))
	// The index exists before any bulk request.
	c.do("HEAD", "/"+index, "")
	if err := first.Write(ctx, batch(kvChange(row.Insert, 1, 1), kvChange(row.Insert, 2, 1))); err != nil {
		t.Fatal(err)
	}
	if err := first.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	held := proxy.Hold(testenv.HTTPRequestTo("POST", "/_bulk"))
	if err := first.Write(ctx, batch(kvChange(row.UpdateAfter, 1, 4), kvChange(row.UpdateAfter, 2, 4))); err != nil {
		t.Fatal(err)
	}
	killed, kill := context.WithCancel(ctx)
	flushed := make(chan error, 1)
	go func() { flushed <- first.Flush(killed) }()
	<-held
	kill() // the process dies with its request on the way
	if err := <-flushed; !errors.Is(err, context.Canceled) {
		t.Fatalf("the held flush ended with %v", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}

	next := life(t, c.url, index, fenceOf(store))
	if err := next.Write(ctx, batch(kvChange(row.UpdateAfter, 1, 6), kvChange(row.Delete, 2, 1))); err != nil {
		t.Fatal(err)
	}
	if err := next.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-proxy.Release():
	case <-ctx.Done():
		t.Fatal("the held bulk request was not answered")
	}
	compareDocs(t, c.docs(index), map[string]string{index + "/1": `{"k":1,"v":6}`})

	// A life still running beside a newer one (a frozen process woken
	// up) fails on the newer life's documents rather than dropping its
	// write or overwriting the newer one.
	old, err := store.Fence(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	newer := life(t, c.url, index, fenceOf(store))
	zombie := life(t, c.url, index, func() (uint64, error) { return old, nil })
	if err := newer.Write(ctx, batch(kvChange(row.UpdateAfter, 1, 7))); err != nil {
		t.Fatal(err)
	}
	if err := newer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := zombie.Write(ctx, batch(kvChange(row.UpdateAfter, 1, 5))); err != nil {
		t.Fatal(err)
	}
	if err := zombie.Flush(ctx); err == nil || !strings.Contains(err.Error(), "later life") {
		t.Fatalf("a write under an older fence over a newer life's document: %v", err)
	}
	compareDocs(t, c.docs(index), map[string]string{index + "/1": `{"k":1,"v":7}`})
}

// TestPatternIndexExistsBeforeItsFirstBulk: the first bulk request for an
// index of a pattern is held on its way; the index exists already (the
// sink created it rather than leave it to the bulk request), and the
// request then writes into it.
func TestPatternIndexExistsBeforeItsFirstBulk(t *testing.T) {
	c := newCluster(t)
	prefix := c.index("es_created")
	proxy := testenv.NewHoldProxy(t, strings.TrimPrefix(c.url, "http://"), testenv.HTTPFraming)
	s := openSink(t, es.Config{Hosts: []string{"http://" + proxy.Addr()}, Index: prefix + "-{k}"},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}, nil)
	ctx := testenv.Context(t, time.Minute)
	held := proxy.Hold(testenv.HTTPRequestTo("POST", "/_bulk"))
	if err := s.Write(ctx, batch(kvChange(row.Insert, 1, 10))); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(ctx) }()
	<-held
	c.do("HEAD", "/"+prefix+"-1", "") // fails the test when missing
	<-proxy.Release()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	compareDocs(t, c.docs(prefix+"-*"), map[string]string{prefix + "-1/1": `{"k":1,"v":10}`})
}
