package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// windowRun runs a 5 s TUMBLE count per key over the JSON events of
// topic (k, ts in epoch seconds) with a 1 s watermark delay, as an
// unbounded source: the rows the window aggregate emits come to rows,
// and the run stops when stop is closed.
func windowRun(t *testing.T, ctx context.Context, addr, topic, extra string, batch int, stop <-chan struct{}, progress func(pipeline.Summary)) (*[]string, *sync.Mutex, <-chan error) {
	t.Helper()
	yaml := fmt.Sprintf(`version: 1
name: kafka-windows
sources:
  - name: ev
    type: kafka
    brokers: %s
    topic: %s
    format: json
    schema: [k STRING, sec BIGINT, "ts AS TO_TIMESTAMP_LTZ(sec * 1000, 3)"]
    watermark: ts - INTERVAL '1' SECOND
%s
transforms:
  - name: w
    sql: SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end
sinks:
  - name: out
    from: w
    type: blackhole
`, addr, topic, extra)
	p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, t.TempDir(), yaml)
	var mu sync.Mutex
	var rows []string
	tap := func(_ string, b *row.Batch) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range b.Changes {
			rows = append(rows, string(row.AppendPrint(nil, c.Kind, c.Row)))
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, pipeline.RunOptions{Tap: tap, Stop: stop, BatchSize: batch, Progress: progress})
		done <- err
	}()
	return &rows, &mu, done
}

// printTime is epoch second s as a window bound prints.
func printTime(s int) string {
	p := string(row.AppendPrint(nil, row.Insert, row.Row{row.TimestampValue(int64(s) * 1_000_000)}))
	return strings.TrimSuffix(strings.TrimPrefix(p, "+I["), "]")
}

// event is a message for partition part.
func event(part int, _, value string) kafka.Message {
	return kafka.Message{Value: []byte(value), WriterData: part}
}

// produceTo writes msgs, each to the partition its WriterData names.
func produceTo(t *testing.T, addr, topic string, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) })}
	defer w.Close()
	if err := w.WriteMessages(testenv.Context(t, 60*time.Second), msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A partition read far ahead of the others makes none of their rows
// late: the source's watermark is the minimum of its partitions'. All
// of partition 0 is read before partitions 1 and 2 have a message; the
// windows are those of reading the events in time order, whatever the
// batch size. Each partition ends with an event an hour later, which
// closes every window before it.
func TestKafkaPartitionWatermarks(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, batch := range []int{1, 7, 1000} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			ctx := testenv.Context(t, 120*time.Second)
			topic := testenv.KafkaTopic(t, addr, 3)
			events := func(part int) []kafka.Message {
				var msgs []kafka.Message
				for sec := part; sec < 40; sec += 3 {
					msgs = append(msgs, event(part, "", fmt.Sprintf(`{"k":"k%d","sec":%d}`, sec%2, sec)))
				}
				return append(msgs, event(part, "", `{"k":"end","sec":3600}`))
			}
			produceTo(t, addr, topic, events(0)...)
			var read sync.Mutex
			in := int64(0)
			progress := func(s pipeline.Summary) {
				read.Lock()
				defer read.Unlock()
				in = s.Sources[0].In
			}
			stop := make(chan struct{})
			rows, mu, done := windowRun(t, ctx, addr, topic, "", batch, stop, progress)
			waitFor(t, "partition 0 read", 60*time.Second, func() bool {
				read.Lock()
				defer read.Unlock()
				return in >= int64(len(events(0)))
			})
			produceTo(t, addr, topic, events(1)...)
			produceTo(t, addr, topic, events(2)...)
			// The windows of the events in time order: 5 s windows of
			// 0..39 s, counted per key.
			want := map[string]int{}
			for sec := range 40 {
				want[fmt.Sprintf("k%d %d", sec%2, sec/5*5)]++
			}
			var wantRows []string
			for kw, n := range want {
				k, start, _ := strings.Cut(kw, " ")
				var s int
				fmt.Sscan(start, &s)
				wantRows = append(wantRows, fmt.Sprintf("+I[%s, %s, %d]", k, printTime(s), n))
			}
			slices.Sort(wantRows)
			var got []string
			defer func() { t.Logf("got %q", got) }()
			waitFor(t, "the windows", 60*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				got = slices.Clone(*rows)
				return len(got) >= len(wantRows)
			})
			close(stop)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, wantRows) {
				t.Errorf("windows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
			}
		})
	}
}

// A partition without messages holds the watermark back until it has
// been idle for idle_timeout: then the window of the others closes.
func TestKafkaIdlePartitionStopsHoldingTheWatermark(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	topic := testenv.KafkaTopic(t, addr, 3)
	produceTo(t, addr, topic, event(0, "", `{"k":"a","sec":1}`), event(0, "", `{"k":"a","sec":2}`), event(0, "", `{"k":"a","sec":7}`))
	stop := make(chan struct{})
	rows, mu, done := windowRun(t, ctx, addr, topic, "    idle_timeout: 300ms", 1000, stop, nil)
	var got []string
	waitFor(t, "window [0 s, 5 s) closed", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = slices.Clone(*rows)
		return len(got) > 0
	})
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I[a, " + printTime(0) + ", 2]"}; !slices.Equal(got, want) {
		t.Errorf("windows %q, want %q", got, want)
	}
}
