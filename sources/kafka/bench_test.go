package kafka

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// BenchmarkReadJSON reads ETLD_BENCH_ROWS (default 20000) JSON messages
// from a one-partition topic with a bounded source, and, in the same run,
// with a plain kafka-go Reader that only fetches them (the baseline). It
// reports rows/s of both and their ratio.
//
//	ETLD_BENCH_ROWS=1000000 go test -run '^$' -bench ReadJSON ./sources/kafka/
func BenchmarkReadJSON(b *testing.B) {
	addr := testenv.Kafka(b)
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("ETLD_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	topic := testenv.KafkaTopic(b, addr, 1)
	ctx := context.Background()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, BatchSize: 1000, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll}
	msgs := make([]kafka.Message, 0, 1000)
	for i := 0; i < n; i++ {
		msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, `{"id":%d,"sensor":"s-%d","temp":%d.25}`, i, i%100, i%40)})
		if len(msgs) == cap(msgs) || i == n-1 {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
	w.Close()

	schema := testenv.Schema(b, "id BIGINT", "sensor STRING", "temp DOUBLE")
	var plain, ours time.Duration
	for b.Loop() {
		start := time.Now()
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: fetchMaxWait})
		for i := 0; i < n; i++ {
			if _, err := r.FetchMessage(ctx); err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
		plain += time.Since(start)

		start = time.Now()
		s, err := New(Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}},
			connector.SourceEnv{Name: "bench", Schema: schema, Formats: testRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Open(ctx); err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			batch, err := s.Read(ctx, 1024)
			if batch != nil {
				got += batch.Len()
			}
			if err != nil {
				break
			}
		}
		_ = s.Close(ctx)
		if got != n {
			b.Fatalf("read %d rows, want %d", got, n)
		}
		ours += time.Since(start)
	}
	rounds := float64(b.N)
	b.ReportMetric(float64(n)*rounds/ours.Seconds(), "rows/s")
	b.ReportMetric(float64(n)*rounds/plain.Seconds(), "plain-rows/s")
	b.ReportMetric(plain.Seconds()/ours.Seconds(), "ratio")
}
