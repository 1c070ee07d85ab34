// Package kafka is the Kafka sink (`type: kafka`): it encodes changes into
// messages of one topic, in one of three modes.
//
//   - append (insert-only input): one message per row; the message key is
//     made of the key_fields columns when given (Flink's key.fields), and
//     absent otherwise.
//   - upsert (updating input with an upsert key; Flink's upsert-kafka): the
//     message key is the upsert key's columns encoded with key_format (a
//     JSON object by default); +I and +U write the row as the value, -D
//     writes a tombstone (the key with a null value), -U never arrives.
//   - retract (a changelog format only: debezium-json, canal-json,
//     maxwell-json, ogg-json): every change is one event of the format, an
//     insert for +I/+U and a delete for -U/-D, as Flink writes them.
//
// Messages with a key go to the partition the Java client's murmur2 hash of
// the key picks, so one key stays in one partition, in order; messages
// without one fill a partition's batch, then move on to the next partition.
//
// Delivery. Write encodes into per-partition batches. One goroutine per
// partition sends them with one produce request in flight at a time, so
// that a retried request can never overtake a later one: order holds per
// partition, at least once; exactly once across crashes for pipelines
// whose input replays by record (exactly.go). In a run with a state
// directory every batch carries a producer id, epoch and sequence numbers
// (fence.go): the broker drops a retried batch it appended already, and
// refuses a late batch of a killed earlier run once this run has started
// (a transaction marker of its epoch on every partition). Batches grow while a request is in flight
// (batch_size, batch_bytes), and a partial batch waits at most linger for
// more when the sender is idle. Flush returns once every message written
// before it is acknowledged by the brokers (acks: all by default). Broker
// errors that can pass (leader elections, timeouts, not enough replicas, the
// broker being away) are retried with backoff until the context ends;
// nothing is dropped. A message the broker refuses for good (too large, an
// invalid record) goes to the sink's on_error policy with topic, partition
// and the encoded value; errors that no retry can fix (authorization) stop
// the pipeline.
//
// Options (Flink's names in brackets):
//
//	brokers, client_id, tls, sasl, dial_timeout  see internal/kafkaconf
//	                   [properties.bootstrap.servers, properties.*]
//	topic              required [topic]
//	format             value format: json (default), csv, raw, or a changelog format (debezium-json, canal-json, maxwell-json, ogg-json)
//	                   [format / value.format]
//	key_fields         columns of the message key in append and retract
//	                   modes [key.fields]; upsert mode uses the upsert key
//	key_format         format of the message key, json by default [key.format]
//	partitioner        hash (default: murmur2 of the key; keyless messages
//	                   spread over the partitions) | round-robin (ignore the
//	                   key) [sink.partitioner]
//	compression        none (default) | gzip | snappy | lz4 | zstd
//	                   [properties.compression.type]
//	batch_size         messages per produce request, default 10000
//	batch_bytes        bytes per produce request, default 1000000 (under the
//	                   broker's 1 MiB message.max.bytes)
//	linger             how long an idle sender waits to fill a partial batch,
//	                   default 5ms [properties.linger.ms]
//	acks               all (default) | leader [properties.acks]
//	write_timeout      bound of one produce request before it is retried,
//	                   and of Close's flush of what is left, default 30s
//	create_topic       create the topic at Open when missing (default false);
//	                   an existing topic is used as it is
//	partitions         partitions of a created topic, default 1
//	replication_factor replicas of a created topic, default: the broker's
//	exactly_once       auto (default): with a state directory and an input
//	                   that replays by record, messages carry their source
//	                   record and a restored run skips what a crashed one
//	                   wrote (exactly.go); off: at least once, no headers
package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Register adds the Kafka sink to r.
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "kafka", "writes messages to a Kafka topic: append, upsert (keys and tombstones) or debezium-json changelog",
		func(cfg Config, env connector.SinkEnv) (connector.Sink, error) {
			s, err := New(cfg, env)
			if err != nil {
				return nil, err
			}
			return s, nil
		})
}

// Sink writes changes to a Kafka topic. Bind, Open, Write, Flush and Close
// are called from one goroutine; Bytes from any. The partition senders
// run in goroutines of their own between Open and Close.
type Sink struct {
	name      string
	cfg       Config // as given, for FlinkSink
	topic     string
	kafka     kafkaconf.Config
	format    connector.FormatSpec
	keyFormat connector.FormatSpec
	keyFields []string
	formats   *connector.Registry
	reject    func(connector.BadRecord) error
	log       *slog.Logger

	partitioner partitioner
	compression kafka.Compression
	acks        kafka.RequiredAcks
	batchSize   int
	batchBytes  int
	linger      time.Duration
	timeout     time.Duration
	create      bool
	partitions  int
	replicas    int
	eoOff       bool // exactly_once: off

	// Set by Bind.
	mode   connector.Mode
	enc    connector.Encoder
	keyEnc connector.Encoder
	key    []int   // key column indices; nil without a key
	keyRow row.Row // scratch row for the key encoder
	replay connector.Replay

	// Set by SetRun and Restore, before Open.
	run      connector.RunInfo
	resumeAt []int64          // the checkpoint's next offset of every partition
	carried  []map[string]pos // and the positions it had still to pass

	// dial, if set, replaces the transport's dialer: the conformance
	// kit's outage proxy (testenv.Proxy) forwards bytes and does not
	// rewrite the broker's metadata, which names the broker's own address
	// and would take the sink around it after bootstrap.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// Set by Open.
	client    *kafka.Client
	transport *kafka.Transport
	parts     []*part
	ids       []int // partition ids, for the balancer
	balancer  kafka.Murmur2Balancer
	sticky    int // partition keyless messages go to
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	scratch   []byte
	// eo is set by Open in exactly-once mode (exactly.go).
	eo *dedup
	// prod is the producer the batches carry (fence.go), set by Open.
	prod producer

	// mu guards the partitions' batches, counters and what the senders
	// hand back (rejected, failed).
	mu sync.Mutex
	// progress is closed and replaced whenever a sender finishes a batch:
	// Write waiting for queue room and Flush waiting for acks watch it.
	progress chan struct{}
	rejected []connector.BadRecord
	failed   error

	written atomic.Int64
}

// Capabilities depend on the value format: a changelog format
// (debezium-json, canal-json, maxwell-json, ogg-json) writes every
// change kind (retract, picked by mode: auto for updating input); the
// others write rows, so updates need upsert by key.
func (s *Sink) Capabilities() connector.Capabilities {
	if s.formats.Changelog(s.format) {
		return connector.Capabilities{Append: true, Retract: true, AutoRetract: true}
	}
	// Retract is claimed so that mode: retract reaches Bind, which says
	// what to use instead, rather than a bare "cannot run in retract mode".
	return connector.Capabilities{Append: true, Upsert: true, Retract: true, UpsertNeedsKey: true}
}

// Bind builds the value and key encoders for the input and its mode.
func (s *Sink) Bind(in connector.SinkInput) error {
	switch in.Mode {
	case connector.Append:
	case connector.Upsert:
		if len(s.keyFields) > 0 && !slices.EqualFunc(s.keyFields, in.KeyNames(), strings.EqualFold) {
			return s.bindErrorf("key_fields %s differs from the upsert key (%s): in upsert mode the message key is the upsert key; drop key_fields, or set the sink's key: to the same columns",
				strings.Join(s.keyFields, ", "), strings.Join(in.KeyNames(), ", "))
		}
		if s.formats.Changelog(s.format) {
			return s.bindErrorf("upsert mode writes rows and tombstones by key, and %s writes change events; use mode: retract with %s, or a row format such as json for upsert", s.format.Type, s.format.Type)
		}
	case connector.Retract:
		if !s.formats.Changelog(s.format) {
			return s.bindErrorf("retract mode writes every change kind (-U and -D too), which format %s cannot carry; use a changelog format (debezium-json, canal-json, maxwell-json, ogg-json), or give the input an upsert key (key:, or a GROUP BY) so that the sink writes by key with tombstones", s.format.Type)
		}
	default:
		return s.bindErrorf("cannot run in %s mode", in.Mode)
	}
	enc, err := s.formats.NewEncoder(s.format, in.Schema)
	if err != nil {
		return err
	}
	var key []int
	if in.Mode == connector.Upsert {
		key = in.Key
		if key == nil {
			key = []int{} // the one-row global aggregate: a constant key
		}
	} else if len(s.keyFields) > 0 {
		for _, name := range s.keyFields {
			i := in.Schema.Index(name)
			if i < 0 {
				return connector.Errorf("key_fields", "%q is not a column of the input (its columns: %s)", name, strings.Join(in.Schema.Names(), ", "))
			}
			key = append(key, i)
		}
	}
	var keyEnc connector.Encoder
	if key != nil {
		fields := make([]row.Field, len(key))
		for i, k := range key {
			fields[i] = in.Schema.Fields[k]
		}
		keyEnc, err = s.formats.NewEncoder(s.keyFormat, row.NewSchema(fields...))
		if err != nil {
			return err
		}
		s.keyRow = make(row.Row, len(key))
	}
	// A registry format names its subject after the topic.
	if tf, ok := enc.(connector.TopicFormat); ok {
		tf.SetTopic(s.topic, false)
	}
	if tf, ok := keyEnc.(connector.TopicFormat); ok {
		tf.SetTopic(s.topic, true)
	}
	s.mode, s.enc, s.keyEnc, s.key, s.replay = in.Mode, enc, keyEnc, key, in.Replay
	return nil
}

// Open connects, checks that the topic exists (creating it with
// create_topic) and learns its partitions, retrying while the brokers
// cannot be reached; then it starts one sender per partition.
func (s *Sink) Open(ctx context.Context) error {
	if s.enc == nil {
		return s.errorf("open before bind")
	}
	if s.client != nil {
		return s.errorf("opened twice")
	}
	tr, err := s.kafka.Transport()
	if err != nil {
		return s.errorf("%w", err)
	}
	if s.dial != nil {
		tr.Dial = s.dial
	}
	s.transport = tr
	s.client = &kafka.Client{Addr: kafka.TCP(s.kafka.Addrs()...), Transport: tr, Timeout: s.timeout}
	s.log.Info("kafka sink connecting", "topic", s.topic, "kafka", s.kafka)
	var n int
	err = retry.Do(ctx, retry.Backoff{Initial: 200 * time.Millisecond, Max: 10 * time.Second}, s.log,
		fmt.Sprintf("kafka sink: metadata of topic %q from brokers %s", s.topic, strings.Join(s.kafka.Addrs(), ",")),
		func(ctx context.Context) error {
			var err error
			n, err = s.topicPartitions(ctx)
			if kafkaconf.Refused(err) {
				return retry.Permanent(err)
			}
			return err
		})
	if err != nil {
		return s.errorf("%w", err)
	}
	s.ids = make([]int, n)
	s.parts = make([]*part, n)
	for i := range n {
		s.ids[i] = i
		s.parts[i] = &part{id: i, kick: make(chan struct{}, 1)}
	}
	s.progress = make(chan struct{})
	s.balancer = kafka.Murmur2Balancer{Consistent: true}
	// The epoch first: a late write of an earlier life that lands before
	// it is in the partitions that openDedup reads.
	if err := s.initProducer(ctx); err != nil {
		return err
	}
	if err := s.openDedup(ctx); err != nil {
		return err
	}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, p := range s.parts {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.sender(p)
		}()
	}
	s.log.Info("kafka sink open", "topic", s.topic, "partitions", n, "mode", s.mode.String())
	return nil
}

// Bytes is the number of key and value bytes the brokers acknowledged.
func (s *Sink) Bytes() int64 { return s.written.Load() }

// Close delivers what was written since the last Flush, then stops the
// senders. A sink never drops rows silently: Close flushes with the
// senders' retries and backoff for at most write_timeout (or until ctx
// ends), and returns an error that names the messages the brokers did not
// acknowledge, so that no checkpoint counts them as written; a crashed
// or stopped run replays them from the last checkpoint. Safe after a
// failed Open and twice.
func (s *Sink) Close(ctx context.Context) error {
	var err error
	if s.cancel != nil {
		err = s.closeFlush(ctx)
		s.cancel()
		s.wg.Wait()
		s.cancel = nil
	}
	s.parts, s.eo = nil, nil
	if s.transport != nil {
		s.transport.CloseIdleConnections()
		s.transport = nil
	}
	return err
}

// closeFlush flushes what is not acknowledged yet, within write_timeout.
// A sender's failure is the sink's error from Write and Flush; Close
// repeats it only with messages it leaves unacknowledged.
func (s *Sink) closeFlush(ctx context.Context) error {
	if s.unacked() == 0 {
		s.mu.Lock()
		failed := s.failed
		s.mu.Unlock()
		if failed != nil {
			return nil
		}
		return s.takeBack()
	}
	fctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		if n := s.unacked(); n > 0 {
			s.log.Error("kafka sink: closing with messages the brokers did not acknowledge; they are replayed from the last checkpoint", "topic", s.topic, "messages", n, "error", err.Error())
			return s.errorf("close: %d messages written since the last flush were not acknowledged by the brokers: %w", n, err)
		}
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// unacked is the number of messages written and not yet acknowledged or
// refused by the brokers.
func (s *Sink) unacked() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, p := range s.parts {
		n += p.sent - p.acked
	}
	return n
}

// errorf prefixes the topic to the sink's own errors; the runtime adds the
// sink's name.
func (s *Sink) errorf(format string, args ...any) error {
	return fmt.Errorf("topic %s: "+format, append([]any{s.topic}, args...)...)
}

// bindErrorf names the sink as well: the planner reports Bind's errors
// among those of every sink.
func (s *Sink) bindErrorf(format string, args ...any) error {
	return fmt.Errorf("sink %q (kafka, topic %s): "+format, append([]any{s.name, s.topic}, args...)...)
}

// CopiesRows implements connector.RowCopier: Write encodes each row into
// the bytes of its message before it returns, and keeps no row.
func (s *Sink) CopiesRows() bool { return true }

var (
	_ connector.Sink            = (*Sink)(nil)
	_ connector.RowCopier       = (*Sink)(nil)
	_ connector.Meter           = (*Sink)(nil)
	_ connector.RunAware        = (*Sink)(nil)
	_ connector.SinkSnapshotter = (*Sink)(nil)
	_ connector.ExactlyOnceSink = (*Sink)(nil)
)
