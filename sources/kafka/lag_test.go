package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// Each partition's lag, in messages and in the messages' own times: five
// messages a partition, a second apart, of which Read has returned some.
func TestPartitionLags(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var msgs []kafka.Message
	for p := range 2 {
		for i := range 5 {
			m := msg(p, "", fmt.Sprintf(`{"p":%d,"i":%d}`, p, i))
			m.Time = t0.Add(time.Duration(i) * time.Second)
			msgs = append(msgs, m)
		}
	}
	produce(t, addr, topic, msgs...)
	s := testSource{schema: testenv.Schema(t, "p INT", "i INT")}.open(t, Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Start: "earliest", Format: connector.FormatSpec{Type: "json"}}, nil)
	// Read one message at a time until each partition gave one.
	read := map[string]int64{}
	for len(read) < 2 {
		for _, c := range readN(t, s, 1, 1) {
			read[fmt.Sprintf("%s/%d", topic, c.Row[0].Int64())]++
		}
	}
	n := int64(0)
	for _, k := range read {
		n += k
	}
	testenv.Eventually(t, 30*time.Second, "both partitions' lags known", func() error {
		lags := s.PartitionLags()
		if len(lags) != 2 {
			return fmt.Errorf("lags %+v", lags)
		}
		for _, l := range lags {
			// The newest message (at 4 s) less the last one read (at
			// k-1 s after k read), once the partition's reader fetched
			// the newest.
			k := read[l.Partition]
			if l.Messages != 5-k || !l.SecondsKnown || l.Seconds != float64(5-k) {
				return fmt.Errorf("%s: %+v, want %d messages, %d s (read %v)", l.Partition, l, 5-k, 5-k, read)
			}
		}
		return nil
	})
	readN(t, s, int(10-n), 10)
	for _, l := range s.PartitionLags() {
		if l.Messages != 0 || !l.SecondsKnown || l.Seconds != 0 {
			t.Errorf("%s at the end: %+v, want no lag", l.Partition, l)
		}
	}
}
