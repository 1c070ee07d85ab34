package testenv_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// TestHoldProxyKeepsKafkaClientsOnIt: a Kafka client given the proxy as
// its bootstrap address sends everything through it, although the
// broker's metadata names the broker's own address: a transactional
// request goes to the coordinator FindCoordinator names, a produce to the
// partition's leader. Both must reach the proxy, which can then hold the
// produce.
func TestHoldProxyKeepsKafkaClientsOnIt(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 1)
	p := testenv.NewHoldProxy(t, addr, testenv.KafkaFraming)
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(p.Addr()), Transport: tr, Timeout: 30 * time.Second}
	ctx := testenv.Context(t, time.Minute)

	const initProducerID = 22
	coordinated := p.Seen(func(req []byte) bool { return len(req) >= 6 && binary.BigEndian.Uint16(req[4:]) == initProducerID })
	for {
		res, err := client.InitProducerID(ctx, &kafka.InitProducerIDRequest{
			TransactionalID: topic, TransactionTimeoutMs: 60000, ProducerID: -1, ProducerEpoch: -1,
		})
		if err == nil {
			err = res.Error
		}
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Temporary() && ctx.Err() == nil {
			continue // the coordinator is loading
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	// The proxy tells after it forwarded the request, so the answer can
	// come first: wait for it (a request that went around never comes).
	select {
	case <-coordinated:
	case <-ctx.Done():
		t.Fatal("InitProducerID went to the coordinator around the proxy")
	}

	held := p.Hold(testenv.KafkaProduce)
	produced := make(chan error, 1)
	go func() {
		res, err := client.Produce(ctx, &kafka.ProduceRequest{
			Topic: topic, Partition: 0, RequiredAcks: kafka.RequireAll,
			Records: kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes([]byte("x"))}),
		})
		if err == nil {
			err = res.Error
		}
		produced <- err
	}()
	select {
	case <-held:
	case err := <-produced:
		t.Fatalf("the produce request went to the leader around the proxy (error %v)", err)
	}
	select {
	case <-p.Release():
	case <-ctx.Done():
		t.Fatal("the held produce request was not answered")
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if n := len(testenv.ReadTopic(t, addr, topic)); n != 1 {
		t.Fatalf("%d messages in the topic, want 1", n)
	}
}
