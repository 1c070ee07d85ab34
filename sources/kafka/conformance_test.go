package kafka

import (
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
)

// TestConformance runs the connector kit on a bounded Kafka source
// (stop: latest) over a topic of three partitions.
func TestConformance(t *testing.T) {
	addr := testenv.Kafka(t)
	conntest.RunSource(t, conntest.Source{
		Max: 7,
		Input: func(t *testing.T) func(t *testing.T) connector.Source {
			topic := testenv.KafkaTopic(t, addr, 3)
			var msgs []kafka.Message
			for i := range 150 {
				msgs = append(msgs, msg(i%3, "", fmt.Sprintf(`{"id":%d,"v":"v%d"}`, i, i)))
			}
			produce(t, addr, topic, msgs...)
			ts := testSource{schema: testenv.Schema(t, "id BIGINT", "v STRING")}
			cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
			return func(t *testing.T) connector.Source { return ts.build(t, cfg) }
		},
	})
}
