package testenv_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/elastic/go-elasticsearch/v8/esutil"
	"github.com/go-sql-driver/mysql"
	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// TestKafkaSmoke creates a topic, produces three messages with kafka-go's
// Writer and reads them back with a Reader.
func TestKafkaSmoke(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 60*time.Second)
	topic := testenv.UniqueName(t, "smoke")

	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	created, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}},
	})
	if err != nil {
		t.Fatalf("CreateTopics: %v", err)
	}
	if err := created.Errors[topic]; err != nil {
		t.Fatalf("CreateTopics %s: %v", topic, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
		if err == nil {
			err = resp.Errors[topic]
		}
		if err != nil {
			t.Errorf("DeleteTopics %s: %v", topic, err)
		}
	})

	want := []kafka.Message{
		{Key: []byte("k1"), Value: []byte("hello")},
		{Key: []byte("k2"), Value: []byte(`{"n":2}`)},
		{Key: nil, Value: []byte("third")},
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(addr),
		Topic:        topic,
		Balancer:     &kafka.LeastBytes{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
	}
	// A topic's leader can take a moment to be elected after creation; the
	// Writer retries until then.
	if err := w.WriteMessages(ctx, want...); err != nil {
		t.Fatalf("WriteMessages: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Writer.Close: %v", err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   []string{addr},
		Topic:     topic,
		Partition: 0,
		MinBytes:  1,
		MaxBytes:  1 << 20,
		MaxWait:   100 * time.Millisecond,
	})
	defer r.Close()
	for i, w := range want {
		got, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("ReadMessage %d: %v", i, err)
		}
		if got.Offset != int64(i) || !bytes.Equal(got.Key, w.Key) || !bytes.Equal(got.Value, w.Value) {
			t.Errorf("message %d = offset %d key %q value %q; want offset %d key %q value %q",
				i, got.Offset, got.Key, got.Value, i, w.Key, w.Value)
		}
	}
}

// TestMySQLSmoke creates a table, upserts into it with
// INSERT ... ON DUPLICATE KEY UPDATE and reads the rows back.
func TestMySQLSmoke(t *testing.T) {
	cfg, err := mysql.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatalf("ParseDSN: %v", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("NewConnector: %v", err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	ctx := testenv.Context(t, 60*time.Second)
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}

	table := testenv.UniqueName(t, "smoke")
	if _, err := db.ExecContext(ctx, "CREATE TABLE `"+table+"` ("+
		"id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL, "+
		"n INT NOT NULL, at DATETIME(6) NOT NULL)"); err != nil {
		t.Fatalf("CREATE TABLE: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP TABLE `"+table+"`"); err != nil {
			t.Errorf("DROP TABLE: %v", err)
		}
	})

	upsert := "INSERT INTO `" + table + "` (id, name, n, at) VALUES (?, ?, ?, ?), (?, ?, ?, ?) " +
		"ON DUPLICATE KEY UPDATE name = VALUES(name), n = n + VALUES(n), at = VALUES(at)"
	t1 := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	t2 := t1.Add(time.Hour)
	res, err := db.ExecContext(ctx, upsert, 1, "a", 1, t1, 2, "b", 2, t1)
	if err != nil {
		t.Fatalf("first upsert: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("first upsert affected %d rows; want 2 (two inserts)", n)
	}
	res, err = db.ExecContext(ctx, upsert, 2, "B", 5, t2, 3, "c", 3, t2)
	if err != nil {
		t.Fatalf("second upsert: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Errorf("second upsert affected %d rows; want 3 (one update counts 2, one insert 1)", n)
	}

	type row struct {
		ID   int64
		Name string
		N    int
		At   time.Time
	}
	rows, err := db.QueryContext(ctx, "SELECT id, name, n, at FROM `"+table+"` ORDER BY id")
	if err != nil {
		t.Fatalf("SELECT: %v", err)
	}
	defer rows.Close()
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.ID, &r.Name, &r.N, &r.At); err != nil {
			t.Fatalf("Scan: %v", err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	want := []row{{1, "a", 1, t1}, {2, "B", 7, t2}, {3, "c", 3, t2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %+v; want %+v", got, want)
	}
}

// TestElasticsearchSmoke bulk-indexes three documents with esutil.BulkIndexer
// and reads them back after a refresh.
func TestElasticsearchSmoke(t *testing.T) {
	url := testenv.ElasticsearchURL(t)
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{url}})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	ctx := testenv.Context(t, 60*time.Second)
	index := testenv.UniqueName(t, "smoke")

	// The client's product check runs on this first call: it fails unless
	// the server is a real Elasticsearch.
	health, err := es.Cluster.Health(es.Cluster.Health.WithContext(ctx))
	if err := done(health, err); err != nil {
		t.Fatalf("cluster health: %v", err)
	}

	create, err := es.Indices.Create(index, es.Indices.Create.WithContext(ctx),
		es.Indices.Create.WithBody(strings.NewReader(`{
			"settings": {"number_of_shards": 1, "number_of_replicas": 0},
			"mappings": {"properties": {
				"name": {"type": "keyword"}, "n": {"type": "long"},
				"temp": {"type": "double"}, "at": {"type": "date"}}}}`)))
	if err := done(create, err); err != nil {
		t.Fatalf("create index: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		del, err := es.Indices.Delete([]string{index}, es.Indices.Delete.WithContext(ctx))
		if err := done(del, err); err != nil {
			t.Errorf("delete index: %v", err)
		}
	})

	type doc struct {
		Name string  `json:"name"`
		N    int64   `json:"n"`
		Temp float64 `json:"temp"`
		At   string  `json:"at"`
	}
	want := map[string]doc{
		"1": {"alpha", 1, 21.5, "2024-05-06T07:08:09.123Z"},
		"2": {"beta", 2, -3.25, "2024-05-06T08:08:09.123Z"},
		"3": {"gamma", 1 << 40, 30.125, "2024-05-06T09:08:09.123Z"},
	}
	bi, err := esutil.NewBulkIndexer(esutil.BulkIndexerConfig{Client: es, Index: index, NumWorkers: 1})
	if err != nil {
		t.Fatalf("NewBulkIndexer: %v", err)
	}
	var failures []string
	for _, id := range []string{"1", "2", "3"} {
		body, err := json.Marshal(want[id])
		if err != nil {
			t.Fatal(err)
		}
		err = bi.Add(ctx, esutil.BulkIndexerItem{
			Action:     "index",
			DocumentID: id,
			Body:       bytes.NewReader(body),
			OnFailure: func(_ context.Context, item esutil.BulkIndexerItem, res esutil.BulkIndexerResponseItem, err error) {
				failures = append(failures, fmt.Sprintf("%s: %v %s: %s", item.DocumentID, err, res.Error.Type, res.Error.Reason))
			},
		})
		if err != nil {
			t.Fatalf("BulkIndexer.Add: %v", err)
		}
	}
	if err := bi.Close(ctx); err != nil {
		t.Fatalf("BulkIndexer.Close: %v", err)
	}
	if st := bi.Stats(); st.NumIndexed != 3 || st.NumFailed != 0 || len(failures) > 0 {
		t.Fatalf("bulk stats %+v, failures %v; want 3 indexed, 0 failed", st, failures)
	}

	refresh, err := es.Indices.Refresh(es.Indices.Refresh.WithIndex(index), es.Indices.Refresh.WithContext(ctx))
	if err := done(refresh, err); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	search, err := es.Search(es.Search.WithContext(ctx), es.Search.WithIndex(index),
		es.Search.WithBody(strings.NewReader(`{"size": 10, "sort": [{"at": "asc"}], "query": {"match_all": {}}}`)))
	if err := responseErr(search, err); err != nil {
		t.Fatalf("search: %v", err)
	}
	defer search.Body.Close()
	var result struct {
		Hits struct {
			Total struct {
				Value int `json:"value"`
			} `json:"total"`
			Hits []struct {
				ID     string `json:"_id"`
				Source doc    `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.NewDecoder(search.Body).Decode(&result); err != nil {
		t.Fatalf("decode search response: %v", err)
	}
	if result.Hits.Total.Value != 3 || len(result.Hits.Hits) != 3 {
		t.Fatalf("search found %d (%d returned); want 3", result.Hits.Total.Value, len(result.Hits.Hits))
	}
	for i, h := range result.Hits.Hits {
		wantID := []string{"1", "2", "3"}[i]
		if h.ID != wantID || h.Source != want[wantID] {
			t.Errorf("hit %d = %s %+v; want %s %+v", i, h.ID, h.Source, wantID, want[wantID])
		}
	}
}

// responseErr turns a transport error or an HTTP error status into an error;
// it closes the body of a failed response and leaves a good one open.
func responseErr(res *esapi.Response, err error) error {
	if err != nil {
		return err
	}
	if res.IsError() {
		defer res.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(res.Body)
		return errors.New(res.Status() + ": " + buf.String())
	}
	return nil
}

// done is responseErr for responses whose body is not needed: it always
// closes the body.
func done(res *esapi.Response, err error) error {
	if err := responseErr(res, err); err != nil {
		return err
	}
	return res.Body.Close()
}
