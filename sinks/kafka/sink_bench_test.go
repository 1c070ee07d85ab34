package kafka

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// BenchmarkSinkVsWriter is the sink half alone: N rows (ETLD_BENCH_ROWS,
// 100k by default) in batches of 1024 through Write and one Flush, against
// a synchronous kafka-go Writer with the same batch limits sending the
// same JSON in chunks of 10000, in turn on every iteration, each into a
// fresh topic. It reports the best pass of each and sink/writer as ratio.
func BenchmarkSinkVsWriter(b *testing.B) {
	addr := testenv.Kafka(b)
	n := 100_000
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			b.Fatalf("ETLD_BENCH_ROWS=%q: want a positive number", s)
		}
	}
	schema := testenv.Schema(b, "id BIGINT", "sensor STRING", "ts BIGINT", "temp DOUBLE")
	var batches []*row.Batch
	for i := 0; i < n; i += 1024 {
		bt := &row.Batch{}
		for j := i; j < min(n, i+1024); j++ {
			bt.Append(row.Insert, row.Row{row.BigIntValue(int64(j)), row.StringValue(fmt.Sprintf("sensor-%03d", j%1000)), row.BigIntValue(1_700_000_000_000 + int64(j)*100), row.DoubleValue(float64(j%5000)/100 - 10)})
		}
		batches = append(batches, bt)
	}
	best, bestPlain := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for b.Loop() {
		ctx := testenv.Context(b, 5*time.Minute)
		topic := createTopic(b, addr, 1)
		s, _ := newSink(b, addr, Config{Topic: topic}, connector.SinkInput{Schema: schema, Mode: connector.Append})
		if err := s.Open(ctx); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for _, bt := range batches {
			if err := s.Write(ctx, bt); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		sink := time.Since(start)
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
		topic2 := createTopic(b, addr, 1)
		w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic2, RequiredAcks: kafka.RequireAll, BatchSize: 10000, BatchBytes: 1_000_000, BatchTimeout: 5 * time.Millisecond}
		start = time.Now()
		msgs := make([]kafka.Message, 0, 10000)
		for _, bt := range batches {
			for _, c := range bt.Changes {
				msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, `{"id":%d,"sensor":"%s","ts":%d,"temp":%v}`, c.Row[0].Int64(), c.Row[1].Str(), c.Row[2].Int64(), c.Row[3].Float64())})
				if len(msgs) == cap(msgs) {
					if err := w.WriteMessages(ctx, msgs...); err != nil {
						b.Fatal(err)
					}
					msgs = msgs[:0]
				}
			}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
		plain := time.Since(start)
		w.Close()
		best, bestPlain = min(best, sink), min(bestPlain, plain)
	}
	b.ReportMetric(float64(n)/best.Seconds(), "sink-rows/s")
	b.ReportMetric(float64(n)/bestPlain.Seconds(), "writer-rows/s")
	b.ReportMetric(bestPlain.Seconds()/best.Seconds(), "ratio")
}

// BenchmarkExactlyOnceOverhead writes the same N rows (ETLD_BENCH_ROWS,
// 100k by default; batches of 1024 whose changes name records of three
// inputs) through a sink in exactly-once mode (a resumable run: headers,
// partitions by record) and one with exactly_once: off, in turn, each into
// a fresh three-partition topic. It reports the best pass of each and
// eo/off as ratio.
func BenchmarkExactlyOnceOverhead(b *testing.B) {
	addr := testenv.Kafka(b)
	n := 100_000
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			b.Fatalf("ETLD_BENCH_ROWS=%q: want a positive number", s)
		}
	}
	var batches []*row.Batch
	for i := 0; i < n; i += 1024 {
		batches = append(batches, recordBatch(i, min(n, i+1024), 1))
	}
	pass := func(opt string) time.Duration {
		ctx := testenv.Context(b, 5*time.Minute)
		topic := createTopic(b, addr, 3)
		s, _ := newSink(b, addr, Config{Topic: topic, ExactlyOnce: opt}, connector.SinkInput{Schema: sensorSchema(b), Mode: connector.Append, Replay: connector.Replay{ByRecord: true}})
		s.SetRun(connector.RunInfo{Resumable: true, Pipeline: "bench", Instance: "0123456789abcdef", Since: time.Now()})
		if err := s.Open(ctx); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for _, bt := range batches {
			if err := s.Write(ctx, bt); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
		return took
	}
	best, bestOff := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for b.Loop() {
		best = min(best, pass("auto"))
		bestOff = min(bestOff, pass("off"))
	}
	b.ReportMetric(float64(n)/best.Seconds(), "eo-rows/s")
	b.ReportMetric(float64(n)/bestOff.Seconds(), "off-rows/s")
	b.ReportMetric(bestOff.Seconds()/best.Seconds(), "ratio")
}
