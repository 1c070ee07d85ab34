package kafka

import (
	"reflect"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
)

// TestTransactionMarkersAreNoMessages: a topic that the Kafka sink writes
// with its fencing holds a transaction marker per partition per start of
// the sink, between the messages and at the ends of the partitions.
// kafka-go's Reader returns a marker as a message (key 00 00 00 00);
// the source must skip it, as Kafka's consumers do, rather than hand it
// to the format (a bad record, or a row of garbage), and a bounded read
// must end at a partition that ends with one. A message that looks like
// a marker and is not is read as any other.
func TestTransactionMarkersAreNoMessages(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	testenv.KafkaMarkers(t, addr, topic, 2)
	produce(t, addr, topic, msg(0, "", `{"id":1}`), msg(1, "", `{"id":2}`))
	testenv.KafkaMarkers(t, addr, topic, 2)
	lookalike := kafka.Message{Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 8}, WriterData: 0}
	produce(t, addr, topic, msg(0, "", `{"id":3}`), lookalike, msg(1, "", `{"id":4}`))
	testenv.KafkaMarkers(t, addr, topic, 2)

	var mu sync.Mutex
	var bad []connector.BadRecord
	ts := testSource{schema: testenv.Schema(t, "id BIGINT"), reject: func(b connector.BadRecord) error {
		mu.Lock()
		defer mu.Unlock()
		bad = append(bad, b)
		return nil
	}}
	s := ts.open(t, Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}, nil)
	got := conntest.ReadAll(t, s, 100)
	if want := []string{"+I[1]", "+I[2]", "+I[3]", "+I[4]"}; !reflect.DeepEqual(printed(got), want) {
		t.Errorf("read %v, want %v", printed(got), want)
	}
	mu.Lock()
	defer mu.Unlock()
	// Partition 0: marker, 1, marker, 3, the look-alike at offset 4.
	if len(bad) != 1 || bad[0].Position != topic+"/0/4" {
		t.Errorf("bad records %v, want the look-alike alone (%s/0/4)", bad, topic)
	}
}
