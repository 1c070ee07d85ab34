package elasticsearch_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esutil"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	es "github.com/etld/etld/sinks/elasticsearch"
)

var benchSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "name", Type: row.Of(row.String)},
	row.Field{Name: "total", Type: row.Of(row.BigInt)},
	row.Field{Name: "avg", Type: row.Of(row.Double)},
	row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 3}},
)

// upsertStream makes n changes over n/10 keys, as a GROUP BY emits them:
// +I for a new key, +U after, and a -D now and then.
func upsertStream(n int) []*row.Batch {
	keys := max(n/10, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	live := make([]bool, keys)
	var out []*row.Batch
	b := row.NewBatch(1024, benchSchema.Len())
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for i := 0; i < n; i++ {
		k := rng.IntN(keys)
		r := b.NewRow()
		r[0] = row.BigIntValue(int64(k))
		r[1] = row.StringValue("sensor-" + strconv.Itoa(k))
		r[2] = row.BigIntValue(int64(i))
		r[3] = row.DoubleValue(float64(i) / 7)
		r[4] = row.TimestampValue(base + int64(i)*1000)
		switch {
		case live[k] && rng.IntN(20) == 0:
			b.Append(row.Delete, r)
			live[k] = false
		case live[k]:
			b.Append(row.UpdateAfter, r)
		default:
			b.Append(row.Insert, r)
			live[k] = true
		}
		if b.Len() == 1024 {
			out = append(out, b)
			b = row.NewBatch(1024, benchSchema.Len())
		}
	}
	if b.Len() > 0 {
		out = append(out, b)
	}
	return out
}

func benchRows() int {
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 100_000
}

// BenchmarkUpsert sends an upsert stream through the sink and the same
// documents through a plain esutil.BulkIndexer loop (default settings,
// documents encoded beforehand), and reports both rates and their ratio.
// ETLD_BENCH_ROWS sets the number of changes (default 100k over 10k keys;
// 1M over 100k for a full measurement).
func BenchmarkUpsert(b *testing.B) {
	c := newCluster(b)
	n := benchRows()
	stream := upsertStream(n)

	// The baseline's documents: what the sink would send, made here once.
	type action struct {
		del bool
		id  string
		doc []byte
	}
	var actions []action
	for _, bt := range stream {
		for _, ch := range bt.Changes {
			a := action{del: ch.Kind == row.Delete, id: strconv.FormatInt(ch.Row[0].Int64(), 10)}
			if !a.del {
				a.doc = fmt.Appendf(nil, `{"id":%d,"name":%q,"total":%d,"avg":%v,"ts":%q}`,
					ch.Row[0].Int64(), ch.Row[1].Str(), ch.Row[2].Int64(), ch.Row[3].Float64(),
					ch.Row[4].Time().Format("2006-01-02T15:04:05.000"))
			}
			actions = append(actions, a)
		}
	}

	// The documents the stream leaves: keys whose last change is not -D.
	last := map[int64]row.Kind{}
	for _, bt := range stream {
		for _, ch := range bt.Changes {
			last[ch.Row[0].Int64()] = ch.Kind
		}
	}
	wantDocs := 0
	for _, k := range last {
		if k != row.Delete {
			wantDocs++
		}
	}

	var sinkTime, baseTime time.Duration
	baseFailed := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The sink.
		index := c.index("bench_sink")
		s, err := es.New(es.Config{Hosts: []string{c.url}, Index: index},
			connector.SinkEnv{Name: "es", Formats: builtin.Registry(), Logger: testLogger(b)})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Bind(connector.SinkInput{Schema: benchSchema, Mode: connector.Upsert, Key: []int{0}}); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if err := s.Open(ctx); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for _, bt := range stream {
			// Write takes ownership of its batch; hand it a copy of the
			// change list so the next pass has the stream still.
			cp := &row.Batch{Changes: append([]row.Change(nil), bt.Changes...)}
			if err := s.Write(ctx, cp); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		sinkTime += time.Since(start)
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}

		// The plain BulkIndexer loop.
		bindex := c.index("bench_base")
		bi, err := esutil.NewBulkIndexer(esutil.BulkIndexerConfig{Client: c.client, Index: bindex})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for _, a := range actions {
			item := esutil.BulkIndexerItem{Action: "index", DocumentID: a.id}
			if a.del {
				item.Action = "delete"
			} else {
				item.Body = bytes.NewReader(a.doc)
			}
			if err := bi.Add(ctx, item); err != nil {
				b.Fatal(err)
			}
		}
		if err := bi.Close(ctx); err != nil {
			b.Fatal(err)
		}
		baseTime += time.Since(start)
		// The BulkIndexer's workers send requests side by side, so a
		// delete can overtake the index of its document and fail (404):
		// reported, not fatal, as it is the baseline's own behaviour.
		baseFailed += int(bi.Stats().NumFailed)
		if got := c.count(index); got != wantDocs {
			b.Fatalf("the sink left %d documents, want %d", got, wantDocs)
		}
	}
	b.StopTimer()
	total := float64(n) * float64(b.N)
	sinkRate := total / sinkTime.Seconds()
	baseRate := total / baseTime.Seconds()
	b.ReportMetric(sinkRate, "docs/s")
	b.ReportMetric(baseRate, "baseline-docs/s")
	b.ReportMetric(sinkRate/baseRate, "ratio")
	b.ReportMetric(float64(baseFailed)/float64(b.N), "baseline-failed-items")
}
