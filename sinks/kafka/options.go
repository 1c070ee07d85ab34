package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/pipeline/connector"
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
	errs = append(errs, s.setProducing(cfg)...)
	errs = append(errs, s.setBatching(cfg)...)
	errs = append(errs, checkCreate(cfg)...)
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

// setProducing reads partitioner, compression and acks.
func (s *Sink) setProducing(cfg Config) []error {
	var errs []error
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
	return errs
}

// setBatching reads batch_size, batch_bytes, linger and write_timeout,
// putting the defaults in place of zeros.
func (s *Sink) setBatching(cfg Config) []error {
	var errs []error
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
	return errs
}

// checkCreate checks partitions and replication_factor, which only
// create_topic uses.
func checkCreate(cfg Config) []error {
	var errs []error
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
	return errs
}
