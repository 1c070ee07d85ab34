package elasticsearch_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
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

// pipelineOf names the pipeline of a test's lives after the test: the
// sink lists its aliases cluster-wide by pipeline and sink name, and an
// earlier test's later life (its indexes are removed only when its parent
// test ends) would refuse this test's first one.
func pipelineOf(t *testing.T) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(t.Name()))
}

// life opens an upsert sink on kvSchema, with one sender, as one life of
// pipeline p whose state directory gives fence.
func life(t *testing.T, host, index string, fence func() (uint64, error)) *es.Sink {
	t.Helper()
	s, err := es.New(es.Config{Hosts: []string{host}, Index: index, BulkFlushInterval: new(time.Duration), Parallelism: 1},
		connector.SinkEnv{Name: "es", Formats: builtin.Registry(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}); err != nil {
		t.Fatal(err)
	}
	s.SetRun(connector.RunInfo{Resumable: true, Pipeline: pipelineOf(t), Instance: "i", Fence: fence})
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func fenceOf(store *checkpoint.Store) func() (uint64, error) {
	return func() (uint64, error) { return store.Fence(time.Now()) }
}

func write(t *testing.T, s *es.Sink, changes ...row.Change) {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	if err := s.Write(ctx, batch(changes...)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLateBulkOfAKilledLifeIsRefused: the first life's bulk request is
// held on its way (its process killed meanwhile); the next life writes a
// newer value of one document and deletes another, then the held request
// arrives. Nothing of it may land: not over the newer document, not the
// deleted document back (the index keeps a delete's tombstone for
// index.gc_deletes only, here 0s), and not over a document the next life
// never writes (its value stays what the first life had written before
// the request). Elasticsearch refuses it because it goes through the
// first life's write alias, which the next life removed at its start.
// For an index pattern each index the first life wrote has its alias.
func TestLateBulkOfAKilledLifeIsRefused(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		name    string
		pattern func(index string) string
		doc     func(index string, k int) string // _index/_id of key k
	}{
		{"static index", func(index string) string { return index },
			func(index string, k int) string { return fmt.Sprintf("%s/%d", index, k) }},
		{"index pattern", func(index string) string { return index + "-{k}" },
			func(index string, k int) string { return fmt.Sprintf("%s-%d/%d", index, k, k) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			index := c.index("es_fence")
			made := map[string]bool{}
			for k := 1; k <= 3; k++ {
				if name, _, _ := strings.Cut(tc.doc(index, k), "/"); !made[name] {
					c.do("PUT", "/"+name, `{"settings":{"index.gc_deletes":"0s"}}`)
					made[name] = true
				}
			}
			proxy := testenv.NewHoldProxy(t, strings.TrimPrefix(c.url, "http://"), testenv.HTTPFraming)
			store, err := checkpoint.Open(t.TempDir(), "p")
			if err != nil {
				t.Fatal(err)
			}
			ctx := testenv.Context(t, time.Minute)

			first := life(t, "http://"+proxy.Addr(), tc.pattern(index), fenceOf(store))
			write(t, first, kvChange(row.Insert, 1, 1), kvChange(row.Insert, 2, 1), kvChange(row.Insert, 3, 1))
			held := proxy.Hold(testenv.HTTPRequestTo("POST", "/_bulk"))
			if err := first.Write(ctx, batch(kvChange(row.UpdateAfter, 1, 4), kvChange(row.UpdateAfter, 2, 4), kvChange(row.UpdateAfter, 3, 4))); err != nil {
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

			next := life(t, c.url, tc.pattern(index), fenceOf(store))
			write(t, next, kvChange(row.UpdateAfter, 1, 6), kvChange(row.Delete, 2, 1))
			c.docs(index + "*") // a refresh, which drops the delete's tombstone
			select {
			case <-proxy.Release():
			case <-ctx.Done():
				t.Fatal("the held bulk request was not answered")
			}
			if a := proxy.Answers(); len(a) != 1 || !strings.Contains(answerBody(t, a[0]), "index_not_found_exception") {
				t.Errorf("the held bulk request was not refused for its missing alias: %q", a)
			}
			compareDocs(t, c.docs(index+"*"), map[string]string{tc.doc(index, 1): `{"k":1,"v":6}`, tc.doc(index, 3): `{"k":3,"v":1}`})
		})
	}
}

// TestFrozenLifeStopsOnANewerOne: lives still running beside newer ones
// (frozen processes woken up) find their alias gone and stop rather than
// write over the newest life's documents or delete them.
func TestFrozenLifeStopsOnANewerOne(t *testing.T) {
	c := newCluster(t)
	index := c.index("es_frozen")
	store, err := checkpoint.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t, time.Minute)
	oldest := life(t, c.url, index, fenceOf(store))
	write(t, oldest, kvChange(row.Insert, 1, 1))
	older := life(t, c.url, index, fenceOf(store))
	newest := life(t, c.url, index, fenceOf(store))
	write(t, newest, kvChange(row.UpdateAfter, 1, 7))
	for _, z := range []struct {
		s  *es.Sink
		ch row.Change
	}{{oldest, kvChange(row.UpdateAfter, 1, 5)}, {older, kvChange(row.Delete, 1, 5)}} {
		if err := z.s.Write(ctx, batch(z.ch)); err != nil {
			t.Fatal(err)
		}
		if err := z.s.Flush(ctx); err == nil || !strings.Contains(err.Error(), "later run") {
			t.Fatalf("a %s of an older life after a newer one started: %v", z.ch.Kind, err)
		}
	}
	compareDocs(t, c.docs(index), map[string]string{index + "/1": `{"k":1,"v":7}`})
}

// TestWriteAliases: what a user sees of the fencing on a cluster: a
// hidden alias per index the sink writes, named after the index, the
// pipeline, the sink and the life, the newest life's only. An index
// option that is itself an alias is written through its write index.
func TestWriteAliases(t *testing.T) {
	c := newCluster(t)
	store, err := checkpoint.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	// aliases lists the aliases on the indices of pattern as
	// "index: alias", the life's number replaced by F.
	aliases := func(pattern string) []string {
		var resp map[string]struct {
			Aliases map[string]struct {
				Hidden bool `json:"is_hidden"`
			} `json:"aliases"`
		}
		if err := json.Unmarshal(c.do("GET", "/"+pattern+"/_alias", ""), &resp); err != nil {
			t.Fatal(err)
		}
		var out []string
		for index, a := range resp {
			for name, meta := range a.Aliases {
				if i := strings.LastIndexByte(name, '~'); i >= 0 {
					name = name[:i+1] + "F"
				}
				out = append(out, fmt.Sprintf("%s: %s hidden=%v", index, name, meta.Hidden))
			}
		}
		sort.Strings(out)
		return out
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: aliases\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	t.Run("static", func(t *testing.T) {
		index := c.index("es_alias")
		write(t, life(t, c.url, index, fenceOf(store)), kvChange(row.Insert, 1, 1))
		want := []string{index + ": " + index + "~etld~" + pipelineOf(t) + "~es~F hidden=true"}
		check("first life", aliases(index), want)
		life(t, c.url, index, fenceOf(store))
		check("next life", aliases(index), want)
	})
	t.Run("index is an alias", func(t *testing.T) {
		index := c.index("es_alias")
		c.do("PUT", "/"+index+"-a", `{"aliases":{"`+index+`":{}}}`)
		c.do("PUT", "/"+index+"-b", `{"aliases":{"`+index+`":{"is_write_index":true}}}`)
		write(t, life(t, c.url, index, fenceOf(store)), kvChange(row.Insert, 1, 1))
		check("alias", aliases(index+"-*"), []string{
			index + "-a: " + index + " hidden=false",
			index + "-b: " + index + " hidden=false",
			index + "-b: " + index + "~etld~" + pipelineOf(t) + "~es~F hidden=true",
		})
		compareDocs(t, c.docs(index+"-*"), map[string]string{index + "-b/1": `{"k":1,"v":1}`})
	})
	t.Run("pattern", func(t *testing.T) {
		index := c.index("es_alias")
		write(t, life(t, c.url, index+"-{k}", fenceOf(store)), kvChange(row.Insert, 1, 1), kvChange(row.Insert, 2, 1))
		check("first life", aliases(index+"-*"), []string{
			index + "-1: " + index + "-1~etld~" + pipelineOf(t) + "~es~F hidden=true",
			index + "-2: " + index + "-2~etld~" + pipelineOf(t) + "~es~F hidden=true",
		})
		next := life(t, c.url, index+"-{k}", fenceOf(store))
		check("next life at its start", aliases(index+"-*"), nil)
		write(t, next, kvChange(row.UpdateAfter, 1, 2))
		check("next life", aliases(index+"-*"), []string{index + "-1: " + index + "-1~etld~" + pipelineOf(t) + "~es~F hidden=true"})
	})
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

// answerBody is the body of a raw HTTP answer, unzipped.
func answerBody(t *testing.T, raw []byte) string {
	t.Helper()
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader = res.Body
	if res.Header.Get("Content-Encoding") == "gzip" {
		if body, err = gzip.NewReader(res.Body); err != nil {
			t.Fatal(err)
		}
	}
	text, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}
