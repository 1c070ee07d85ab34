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
// refuses a late batch of a killed earlier run once this run has written
// to its partition. Batches grow while a request is in flight
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
//	                   default 30s
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
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Config is the sink's options.
type Config struct {
	Kafka       kafkaconf.Config     `yaml:"-"`
	Topic       string               `yaml:"topic,required"`
	Format      connector.FormatSpec `yaml:"format"`
	KeyFields   []string             `yaml:"key_fields"`
	KeyFormat   connector.FormatSpec `yaml:"key_format"`
	Partitioner string               `yaml:"partitioner"`
	Compression string               `yaml:"compression"`
	BatchSize   int                  `yaml:"batch_size"`
	BatchBytes  int                  `yaml:"batch_bytes"`
	Linger      *time.Duration       `yaml:"linger"`
	Acks        string               `yaml:"acks"`
	// WriteTimeout bounds one produce request; a request that takes longer
	// is retried.
	WriteTimeout      time.Duration `yaml:"write_timeout"`
	CreateTopic       bool          `yaml:"create_topic"`
	Partitions        int           `yaml:"partitions"`
	ReplicationFactor int           `yaml:"replication_factor"`
	// ExactlyOnce is auto (the default) or off.
	ExactlyOnce string `yaml:"exactly_once"`
}

// DecodeNode implements spec.NodeDecoder: the Kafka client keys sit beside
// the sink's own.
func (c *Config) DecodeNode(file string, n *yaml.Node, path string) error {
	type own Config // without DecodeNode
	return kafkaconf.Decode(file, n, path, &c.Kafka, (*own)(c), spec.CommonSinkKeys...)
}

// Defaults.
const (
	DefaultBatchSize    = 10000
	DefaultBatchBytes   = 1_000_000
	DefaultLinger       = 5 * time.Millisecond
	DefaultWriteTimeout = 30 * time.Second
	// recordOverhead is what a record adds to its key and value in a
	// record batch at most (length, attributes, timestamp and offset
	// deltas, header count, as varints), counted so that a batch stays
	// under the broker's message.max.bytes.
	recordOverhead = 24
	// headerOverhead is what the two exactly-once headers add besides
	// their values: a count, two keys and four lengths.
	headerOverhead = 1 + len(headerSink) + len(headerPos) + 4*2
	// queuedBatches is how many sealed batches a partition holds beyond
	// the one in flight before Write waits: memory stays bounded while
	// encoding overlaps sending.
	queuedBatches = 2
)

type partitioner uint8

const (
	byHash partitioner = iota
	roundRobin
)

// New builds a Kafka sink. It checks the options and does no I/O.
func New(cfg Config, env connector.SinkEnv) (*Sink, error) {
	var errs []error
	if err := cfg.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(cfg.Topic) == "" {
		errs = append(errs, connector.Errorf("topic", "must name the topic to write"))
	} else if err := kafkaconf.CheckTopic(cfg.Topic); err != nil {
		errs = append(errs, connector.Errorf("topic", "%v", err))
	}
	if env.Formats == nil {
		errs = append(errs, fmt.Errorf("sink %q: no format registry", env.Name))
	}
	s := &Sink{
		name:       env.Name,
		cfg:        cfg,
		topic:      cfg.Topic,
		kafka:      cfg.Kafka,
		format:     cfg.Format,
		keyFormat:  cfg.KeyFormat,
		keyFields:  cfg.KeyFields,
		formats:    env.Formats,
		reject:     env.Reject,
		log:        env.Logger,
		batchSize:  cfg.BatchSize,
		batchBytes: cfg.BatchBytes,
		linger:     DefaultLinger,
		acks:       kafka.RequireAll,
		timeout:    cfg.WriteTimeout,
		create:     cfg.CreateTopic,
		partitions: cfg.Partitions,
		replicas:   cfg.ReplicationFactor,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.format.IsZero() {
		s.format = connector.FormatSpec{Type: "json"}
	}
	if s.keyFormat.IsZero() {
		s.keyFormat = connector.FormatSpec{Type: "json"}
	}
	switch strings.ToLower(cfg.Partitioner) {
	case "", "hash", "default", "murmur2":
	case "round-robin", "round_robin", "roundrobin":
		s.partitioner = roundRobin
	default:
		errs = append(errs, connector.UnknownValue("partitioner", "partitioner", cfg.Partitioner, "hash", "round-robin"))
	}
	switch strings.ToLower(cfg.Compression) {
	case "", "none":
	case "gzip":
		s.compression = kafka.Gzip
	case "snappy":
		s.compression = kafka.Snappy
	case "lz4":
		s.compression = kafka.Lz4
	case "zstd":
		s.compression = kafka.Zstd
	default:
		errs = append(errs, connector.UnknownValue("compression", "compression", cfg.Compression, "none", "gzip", "snappy", "lz4", "zstd"))
	}
	switch strings.ToLower(cfg.Acks) {
	case "", "all", "-1":
	case "leader", "1":
		s.acks = kafka.RequireOne
	case "none", "0":
		errs = append(errs, connector.Errorf("acks", "acks %q gets no acknowledgement, so a flush could not know the messages are stored; want all (default) or leader", cfg.Acks))
	default:
		errs = append(errs, connector.UnknownValue("acks", "acks", cfg.Acks, "all", "leader"))
	}
	if cfg.BatchSize < 0 {
		errs = append(errs, connector.Errorf("batch_size", "must be >= 0 (0: the default, %d), got %d", DefaultBatchSize, cfg.BatchSize))
	}
	if s.batchSize <= 0 {
		s.batchSize = DefaultBatchSize
	}
	if cfg.BatchBytes < 0 {
		errs = append(errs, connector.Errorf("batch_bytes", "must be >= 0 (0: the default, %d), got %d", DefaultBatchBytes, cfg.BatchBytes))
	}
	if s.batchBytes <= 0 {
		s.batchBytes = DefaultBatchBytes
	}
	if cfg.Linger != nil {
		s.linger = *cfg.Linger
	}
	if s.timeout <= 0 {
		s.timeout = DefaultWriteTimeout
	}
	// Kafka holds partition counts in 32 bits and replication factors in
	// 16; a larger value would wrap around in the create request.
	if cfg.Partitions < 0 || cfg.Partitions > math.MaxInt32 {
		errs = append(errs, connector.Errorf("partitions", "must be from 0 (the default, 1) to %d, got %d", math.MaxInt32, cfg.Partitions))
	}
	if cfg.ReplicationFactor < 0 || cfg.ReplicationFactor > math.MaxInt16 {
		errs = append(errs, connector.Errorf("replication_factor", "must be from 0 (the broker's default) to %d, got %d", math.MaxInt16, cfg.ReplicationFactor))
	}
	if !cfg.CreateTopic && (cfg.Partitions != 0 || cfg.ReplicationFactor != 0) {
		field := "partitions"
		if cfg.Partitions == 0 {
			field = "replication_factor"
		}
		errs = append(errs, connector.Errorf(field, "only applies with create_topic: true"))
	}
	switch strings.ToLower(cfg.ExactlyOnce) {
	case "", "auto":
	case "off":
		s.eoOff = true
	default:
		errs = append(errs, connector.UnknownValue("exactly_once", "exactly_once", cfg.ExactlyOnce, "auto", "off"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

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

	// dial, if set, replaces the transport's dialer: tests route every
	// connection through a proxy, since a broker's metadata names its own
	// address and would take the sink around one after bootstrap.
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

// part is one partition's batches.
type part struct {
	id int
	// cur is the batch Write appends to; queue holds sealed batches, oldest
	// first. Both under Sink.mu.
	cur   *batch
	queue []*batch
	// sent and acked count messages handed to the partition and
	// acknowledged (or rejected) by the broker, under Sink.mu.
	sent, acked int64
	// next is the offset after the last message the brokers acknowledged,
	// under Sink.mu; exactly-once mode only.
	next int64
	free []*batch
	kick chan struct{}
	// seq is the sequence number of the partition's next record, and
	// wire the encoded request being sent; the sender's alone.
	seq  int32
	wire []byte
}

// batch is a run of messages for one partition: their encoded keys and
// values in one buffer, and where each one lies in it.
type batch struct {
	buf   []byte
	recs  []span
	bytes int // counted against batch_bytes
	start time.Time
}

// span locates one message in batch.buf; key or value -1 when null, pos
// (its etld-pos header) -1 when it has none.
type span struct {
	keyOff, keyEnd int32
	valOff, valEnd int32
	posOff, posEnd int32
}

func (b *batch) reset() {
	b.buf, b.recs, b.bytes = b.buf[:0], b.recs[:0], 0
}

func (b *batch) key(i int) []byte {
	r := b.recs[i]
	if r.keyOff < 0 {
		return nil
	}
	return b.buf[r.keyOff:r.keyEnd]
}

func (b *batch) pos(i int) []byte {
	r := b.recs[i]
	if r.posOff < 0 {
		return nil
	}
	return b.buf[r.posOff:r.posEnd]
}

func (b *batch) value(i int) []byte {
	r := b.recs[i]
	if r.valOff < 0 {
		return nil
	}
	return b.buf[r.valOff:r.valEnd]
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

// topicPartitions returns the topic's partition count, creating the topic
// first with create_topic. Errors that waiting cannot fix are Permanent.
func (s *Sink) topicPartitions(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	md, err := s.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{s.topic}})
	if err != nil {
		return 0, err
	}
	for _, t := range md.Topics {
		if t.Name != s.topic {
			continue
		}
		switch {
		case errors.Is(t.Error, kafka.UnknownTopicOrPartition):
			if !s.create {
				return 0, retry.Permanent(fmt.Errorf("topic %q does not exist on brokers %s: create it, or set create_topic: true", s.topic, strings.Join(s.kafka.Addrs(), ",")))
			}
			return 0, s.createTopic(ctx)
		case errors.Is(t.Error, kafka.TopicAuthorizationFailed):
			return 0, retry.Permanent(fmt.Errorf("topic %q: %w", s.topic, t.Error))
		case t.Error != nil:
			return 0, fmt.Errorf("topic %q: %w", s.topic, t.Error)
		case len(t.Partitions) == 0:
			return 0, fmt.Errorf("topic %q has no partitions yet", s.topic)
		}
		if s.create && s.partitions > 0 && len(t.Partitions) != s.partitions {
			s.log.Warn("kafka sink: the topic exists with another partition count; using it as it is", "topic", s.topic, "partitions", len(t.Partitions), "configured", s.partitions)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("topic %q: not in the metadata response", s.topic)
}

// createTopic creates the topic and returns an error so that the caller's
// retry reads the metadata again (a new topic's leaders take a moment).
func (s *Sink) createTopic(ctx context.Context) error {
	parts, replicas := s.partitions, s.replicas
	if parts == 0 {
		parts = 1
	}
	if replicas == 0 {
		replicas = -1 // the broker's default.replication.factor
	}
	res, err := s.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: s.topic, NumPartitions: parts, ReplicationFactor: replicas,
	}}})
	if err != nil {
		return err
	}
	switch err := res.Errors[s.topic]; {
	case errors.Is(err, kafka.TopicAlreadyExists):
		// Another client created it since the metadata said it was
		// missing: it is not ours, and its partition count is whatever
		// that client chose, which the metadata read next reports.
		s.log.Info("kafka sink: the topic already exists (created by another client meanwhile); using it as it is", "topic", s.topic)
		return retry.Expected(errors.New("topic already exists, reading its metadata again"))
	case err != nil:
		var ke kafka.Error
		if errors.As(err, &ke) && !ke.Temporary() {
			return retry.Permanent(fmt.Errorf("create topic %q: %w", s.topic, err))
		}
		return fmt.Errorf("create topic %q: %w", s.topic, err)
	}
	s.log.Info("kafka sink created the topic", "topic", s.topic, "partitions", parts)
	return retry.Expected(errors.New("topic created, reading its metadata again"))
}

// Bytes is the number of key and value bytes the brokers acknowledged.
func (s *Sink) Bytes() int64 { return s.written.Load() }

// Close stops the senders. It does not flush: the runtime flushes before a
// normal Close, and after an error a Close that waited for unreachable
// brokers would hang; unflushed messages were never acknowledged to the
// pipeline. Safe after a failed Open and twice.
func (s *Sink) Close(ctx context.Context) error {
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
		s.cancel = nil
	}
	s.parts, s.eo = nil, nil
	if s.transport != nil {
		s.transport.CloseIdleConnections()
		s.transport = nil
	}
	return nil
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
