package testenv

import (
	"bytes"
	"encoding/binary"
	"net"
	"strconv"
	"sync"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// KafkaFraming frames Kafka's size-prefixed requests and answers, paired
// by correlation id (a client may have several requests in flight on a
// connection). It also keeps the client on the proxy: a broker's
// Metadata and FindCoordinator answers name the brokers' own addresses,
// where the client would connect next, around the proxy; the proxy
// rewrites them to name itself for every broker. So one proxy stands
// for a cluster of one broker (the test broker); with more, every
// broker's traffic would reach the one the proxy forwards to.
var KafkaFraming = Framing{
	Paired: true,
	Request: func(buf []byte) (int, int32) {
		// size, api key, api version, correlation id
		return kafkaFrame(buf, 8)
	},
	Response: func(buf []byte) (int, int32) {
		return kafkaFrame(buf, 4)
	},
	Rewrite: func(addr string) Rewriter { return newKafkaAdvertiser(addr) },
}

func kafkaFrame(buf []byte, idAt int) (int, int32) {
	if len(buf) < 4 {
		return 0, 0
	}
	n := 4 + int(binary.BigEndian.Uint32(buf))
	if len(buf) < n || n < idAt+4 {
		return 0, 0
	}
	return n, int32(binary.BigEndian.Uint32(buf[idAt:]))
}

// Kafka API keys the proxy looks at.
const (
	kafkaProduceKey         = 0
	kafkaMetadataKey        = 3
	kafkaFindCoordinatorKey = 10
)

// kafkaAPI returns a request's API key, or -1 for a short one.
func kafkaAPI(req []byte) int {
	if len(req) < 8 {
		return -1
	}
	return int(binary.BigEndian.Uint16(req[4:]))
}

// KafkaProduce matches a Kafka Produce request.
func KafkaProduce(req []byte) bool { return kafkaAPI(req) == kafkaProduceKey }

// kafkaAdvertiser rewrites one connection's Metadata and FindCoordinator
// answers so that every broker is at the proxy's address.
type kafkaAdvertiser struct {
	host string
	port int32
	mu   sync.Mutex
	// asked maps the correlation id of a request whose answer is
	// rewritten to its API key and version.
	asked map[int32][2]int16
}

func newKafkaAdvertiser(addr string) *kafkaAdvertiser {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return &kafkaAdvertiser{host: host, port: int32(n), asked: map[int32][2]int16{}}
}

func (k *kafkaAdvertiser) Request(req []byte) {
	switch api := kafkaAPI(req); api {
	case kafkaMetadataKey, kafkaFindCoordinatorKey:
		if len(req) < 12 {
			return
		}
		version := int16(binary.BigEndian.Uint16(req[6:]))
		id := int32(binary.BigEndian.Uint32(req[8:]))
		k.mu.Lock()
		k.asked[id] = [2]int16{int16(api), version}
		k.mu.Unlock()
	}
}

// Answer decodes and encodes the answer with kafka-go's protocol package,
// which knows the versions kafka-go asks for; an answer it cannot read
// goes to the client as it is.
func (k *kafkaAdvertiser) Answer(ans []byte) []byte {
	if len(ans) < 8 {
		return ans
	}
	id := int32(binary.BigEndian.Uint32(ans[4:]))
	k.mu.Lock()
	api, ok := k.asked[id]
	delete(k.asked, id)
	k.mu.Unlock()
	if !ok {
		return ans
	}
	_, msg, err := protocol.ReadResponse(bytes.NewReader(ans), protocol.ApiKey(api[0]), api[1])
	if err != nil {
		return ans
	}
	switch m := msg.(type) {
	case *metadata.Response:
		for i := range m.Brokers {
			m.Brokers[i].Host, m.Brokers[i].Port = k.host, k.port
		}
	case *findcoordinator.Response:
		if m.ErrorCode == 0 {
			m.Host, m.Port = k.host, k.port
		}
	default:
		return ans
	}
	var out bytes.Buffer
	if err := protocol.WriteResponse(&out, api[1], id, msg); err != nil {
		return ans
	}
	return out.Bytes()
}
