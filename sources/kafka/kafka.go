// Package kafka is the Kafka source: it reads one or more topics through a
// value format (csv, json, debezium-json, raw), optionally decodes columns
// from the message key, and fills metadata columns (topic, partition,
// offset, timestamp, key).
//
// Options, with Flink's names in brackets:
//
//	brokers, client_id, tls, sasl, dial_timeout: the Kafka client (package kafkaconf)
//	topic                a topic or a list of them [topic]
//	group_id             consumer group [properties.group.id]
//	group_instance_id    static member id; default etld-<pipeline>-<source>-<state instance>; none: dynamic [properties.group.instance.id]
//	group_shared         several etld processes split the group's partitions; refused with stateful operators
//	session_timeout      how long a silent member keeps its partitions (30s) [properties.session.timeout.ms]
//	start                earliest | latest | group-offsets | timestamp [scan.startup.mode]
//	start_timestamp      ms since the epoch or RFC 3339, for start: timestamp [scan.startup.timestamp-millis]
//	stop                 latest: bounded, up to the end offsets seen at start [scan.bounded.mode]
//	format               the value format [value.format]
//	key_format           the key format [key.format]
//	key_fields           columns decoded from the key [key.fields]
//	value_fields_include all (default) | except_key [value.fields-include]
//
// # Partitions and consumer groups
//
// Without group_id the source reads every partition of its topics itself,
// one kafka-go Reader per partition at an offset it chooses: `start`, or
// the position of a restored checkpoint. Nothing is ever committed, since
// there is no group to commit to.
//
// With group_id it joins the group as a static member (group.instance.id,
// see group.go: kafka-go's ConsumerGroup cannot send one) and reads each
// assigned partition with its own Reader at an offset it chooses. A
// restarted process, even after a kill -9, takes its partitions back at
// once under the same group_instance_id; a graceful stop leaves the
// group, so that its partitions move to the other members at once.
//
// The default group_instance_id names the process slot, not the host:
// etld-<pipeline>-<source>-<instance>, where instance is the state
// directory's identity (connector.RunInfo.Instance, a random id made
// once and kept in the directory). A restart with the same state
// directory takes the same place; two processes with their own state
// directories, on one host or not, are two members. Without a state
// directory nothing identifies a slot: the default is then
// etld-<pipeline>-<source>-<host> for a group the process has to itself,
// and a dynamic member (no static id) with group_shared, so that
// processes on one host do not fence each other; a killed dynamic
// member's partitions move on after session_timeout.
//
// Several processes in one group (see scale.go) each read the partitions
// the group assigns them. That is right when every operator looks at one
// row at a time; group_shared: true declares it, and the planner refuses
// it under an operator that keeps state. Without it, a source under such
// an operator that finds other members holding partitions of its topics
// in its first generation fails (its state would hold a share of the
// rows) instead of reading. It does not use kafka-go's
// group Reader because that Reader commits on its own schedule
// (CommitInterval, or on ReadMessage), which could commit a row before the
// sinks have it. Offsets are committed only by Commit, which the runtime
// calls once a checkpoint's rows are durable in every sink.
//
// Where an assigned partition starts, first match wins:
//  1. a partition this run has already read (it came back after a
//     rebalance): after what Read returned, or at the group's committed
//     offset if another member got further;
//  2. the position of a restored checkpoint; with group_shared, the
//     group's committed offset where that is further (another process
//     delivered those rows while this one was down);
//  3. the group's committed offset. Unlike Flink, a committed offset wins
//     over start: earliest/latest/timestamp, because several etld
//     processes in one group hand partitions to each other on every
//     rebalance and must not re-read them; use a new group_id to re-read;
//  4. start (group-offsets falls back to earliest where nothing is
//     committed; Flink fails there unless auto.offset.reset is set).
//
// A bounded source (stop: latest) with a group_id does not join the
// group: it must read every partition to its end, and membership could
// hand it only some of them (the members of a killed process stay in the
// group until their session times out) so that it would finish with rows
// unread. It reads every partition itself, as Flink's KafkaSource always
// does, starts at the group's committed offsets (same order as above) and
// commits outside any generation, as a standalone consumer; a commit the
// broker refuses while other members are in the group is logged and left
// to the next checkpoint.
//
// Told of a rebalance, the member first asks the runtime for a
// checkpoint and waits a bounded time for its Commit, still in the old
// generation (commitBeforeRevoke), so that the rows Read returned are
// committed before the partitions move. Then the partitions stop: changes
// of them that Read has not returned yet are dropped (their new owners
// read them from the committed offset), and Commit no longer commits
// them. Nothing undelivered is committed, so a rebalance can duplicate
// rows (a checkpoint that misses the wait, a kill), never lose them.
//
// # Delivery
//
// Read returns what has arrived after a short linger. Position is the
// next offset of every partition after the last batch Read returned, as
// JSON {"v":1,"offsets":{"topic/0":42}}; Restore before Open starts there.
// A broker that cannot be reached at start, or later, is logged as a
// warning and retried with backoff; it is not an error. A broker that
// refuses the login or the topics when the source looks them up at start
// (kafkaconf.Refused) fails the source at once: no retry can fix that. A
// message the format cannot decode goes to on_error as
// topic/partition/offset.
package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Config is the source's options.
type Config struct {
	// Kafka is the client part: brokers, client_id, tls, sasl,
	// dial_timeout, shared with the Kafka sink.
	Kafka kafkaconf.Config `yaml:"-"`
	// Topic is a topic or a list of topics; a `;`-separated string, as in
	// Flink, is a list too.
	Topic []string `yaml:"topic,required"`
	// GroupID makes the source a member of that consumer group.
	GroupID string `yaml:"group_id"`
	// GroupInstanceID is the static member id (group.instance.id): a
	// member that comes back under the same id takes its partitions back
	// at once, instead of after the old member's session timeout. Default
	// etld-<pipeline>-<source>-<instance of the state directory>; "none"
	// joins as a dynamic member.
	GroupInstanceID string `yaml:"group_instance_id"`
	// GroupShared declares that several etld processes run the pipeline
	// with this group_id and split its partitions. The planner refuses
	// it when an operator reading the source keeps state.
	GroupShared bool `yaml:"group_shared"`
	// Start is where reading begins: group-offsets (the default with a
	// group_id), earliest (the default without), latest or timestamp.
	Start string `yaml:"start"`
	// StartTimestamp is the time start: timestamp begins at, in ms since
	// the epoch or RFC 3339.
	StartTimestamp string `yaml:"start_timestamp"`
	// Stop: latest makes the source bounded.
	Stop string `yaml:"stop"`
	// Format decodes the message value.
	Format connector.FormatSpec `yaml:"format,required"`
	// KeyFormat decodes the message key into KeyFields.
	KeyFormat connector.FormatSpec `yaml:"key_format"`
	// KeyFields are the columns the key holds, in the key's order.
	KeyFields []string `yaml:"key_fields"`
	// ValueFieldsInclude: all (the value holds every column, key columns
	// too, and its values win, as in Flink) or except_key.
	ValueFieldsInclude string `yaml:"value_fields_include"`
	// SessionTimeout is how long the group waits for a member that stopped
	// heart-beating (a killed process) before it hands that member's
	// partitions to the others [properties.session.timeout.ms]. Shorter
	// means a faster takeover after a crash, longer tolerates longer
	// pauses. 0 keeps the client's default (30s).
	SessionTimeout time.Duration `yaml:"session_timeout"`
}

// DecodeNode reads the options: the client keys into Kafka, the others
// into the source's own fields (spec.Decode has no inline structs).
func (c *Config) DecodeNode(file string, n *yaml.Node, path string) error {
	type own Config // without DecodeNode
	return kafkaconf.Decode(file, n, path, &c.Kafka, (*own)(c), spec.CommonSourceKeys...)
}

// Start modes.
const (
	startEarliest     = "earliest"
	startLatest       = "latest"
	startGroupOffsets = "group-offsets"
	startTimestamp    = "timestamp"
)

// Metadata keys the source offers, with Flink's names and types.
const (
	metaTopic     = "topic"
	metaPartition = "partition"
	metaOffset    = "offset"
	metaTimestamp = "timestamp"
	metaKey       = "key"
	metaHeaders   = "headers"
)

var metadataTypes = map[string]row.Type{
	metaTopic:     row.Of(row.String),
	metaPartition: row.Of(row.Int),
	metaOffset:    row.Of(row.BigInt),
	metaTimestamp: row.Of(row.TimestampLTZ),
	metaKey:       row.Of(row.Bytes),
	// Flink's headers: MAP<STRING, BYTES>; a key sent twice keeps its
	// last value, as Flink's HashMap.put does.
	metaHeaders: row.MapOf(row.Of(row.String), row.Of(row.Bytes)),
}

// Timing of reads. linger is how long Read waits for more messages once it
// has one; the fetch wait bounds how long a broker holds an empty fetch.
const (
	defaultBatch = 1024
	linger       = 20 * time.Millisecond
	fetchMaxWait = 250 * time.Millisecond
	queueLen     = 4096
)

// setupBackoff paces the start-up requests (partitions, offsets), which
// are retried until the broker answers or the source is closed;
// assignBackoff gives up sooner, so that a generation whose partitions
// cannot be placed is handed back and the group tries again.
var (
	setupBackoff  = retry.Backoff{Initial: 200 * time.Millisecond, Max: 10 * time.Second}
	assignBackoff = retry.Backoff{Initial: 200 * time.Millisecond, Max: 10 * time.Second, Attempts: 5}
	// commitBackoff is short: a commit not made now is made by the next
	// checkpoint.
	commitBackoff = retry.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Attempts: 3}
)

// options is Config checked and normalised.
type options struct {
	kafka    kafkaconf.Config
	brokers  []string
	topics   []string
	groupID  string
	start    string
	startTS  time.Time
	bounded  bool
	updating bool
	session  time.Duration
	// instanceID is the static member id; "" for a dynamic member. With
	// defaultInstance it is derived at Open from the run (instanceFor).
	instanceID      string
	defaultInstance bool
	shared          bool
	pipeline        string
	source          string
}

func parseOptions(cfg Config, pipeline, source string) (options, error) {
	o := options{kafka: cfg.Kafka, groupID: strings.TrimSpace(cfg.GroupID), session: cfg.SessionTimeout, shared: cfg.GroupShared, pipeline: pipeline, source: source}
	// Every problem is reported, not only the first.
	var errs []error
	fail := func(field, format string, args ...any) {
		errs = append(errs, connector.Errorf(field, format, args...))
	}
	errs = append(errs, cfg.Kafka.Validate())
	switch id := strings.TrimSpace(cfg.GroupInstanceID); {
	case id != "" && o.groupID == "":
		fail("group_instance_id", "is only read with a group_id")
	case o.groupID == "", strings.EqualFold(id, "none"):
	case id != "":
		if len(id) > 249 {
			fail("group_instance_id", "at most 249 characters, got %d", len(id))
		}
		o.instanceID = id
	default:
		o.defaultInstance = true
	}
	switch {
	case o.session != 0 && o.groupID == "":
		fail("session_timeout", "is only read with a group_id")
	case o.session != 0 && (o.session < time.Second || o.session > 30*time.Minute):
		// The broker refuses sessions outside its group.min/max.session
		// bounds (6s and 30m by default); below a second the heartbeat
		// (a third of it) could not keep up.
		fail("session_timeout", "want between 1s and 30m, got %s", o.session)
	}
	o.brokers = cfg.Kafka.Addrs()
	o.topics = splitList(cfg.Topic)
	if len(o.topics) == 0 {
		fail("topic", "name a topic, or a list of topics")
	}
	seen := map[string]bool{}
	for _, t := range o.topics {
		if seen[t] {
			fail("topic", "topic %q is listed twice", t)
			continue
		}
		seen[t] = true
		if err := kafkaconf.CheckTopic(t); err != nil {
			fail("topic", "%v", err)
		}
	}
	switch s := strings.ToLower(strings.TrimSpace(cfg.Start)); s {
	case "":
		o.start = startEarliest
		if o.groupID != "" {
			o.start = startGroupOffsets
		}
	case startEarliest, "earliest-offset":
		o.start = startEarliest
	case startLatest, "latest-offset":
		o.start = startLatest
	case startGroupOffsets:
		if o.groupID == "" {
			fail("start", "group-offsets needs a group_id to read the committed offsets of")
		}
		o.start = startGroupOffsets
	case startTimestamp:
		o.start = startTimestamp
	default:
		errs = append(errs, connector.UnknownValue("start", "start", cfg.Start, startEarliest, startLatest, startGroupOffsets, startTimestamp))
	}
	switch {
	case o.start == startTimestamp && cfg.StartTimestamp == "":
		fail("start_timestamp", "start: timestamp needs start_timestamp (ms since the epoch, or RFC 3339 such as 2024-05-06T07:08:09Z)")
	case o.start != startTimestamp && cfg.StartTimestamp != "":
		if o.start != "" { // an unknown start is reported already
			fail("start_timestamp", "is only read with start: timestamp")
		}
	case cfg.StartTimestamp != "":
		ts, err := parseTimestamp(cfg.StartTimestamp)
		if err != nil {
			fail("start_timestamp", "%v", err)
		}
		o.startTS = ts
	}
	switch s := strings.ToLower(strings.TrimSpace(cfg.Stop)); s {
	case "", "none", "unbounded":
	case "latest", "latest-offset":
		o.bounded = true
	default:
		errs = append(errs, connector.UnknownValue("stop", "stop", cfg.Stop, "none", "latest"))
	}
	switch {
	case o.shared && o.groupID == "":
		fail("group_shared", "is only read with a group_id: without one every process reads every partition")
	case o.shared && o.bounded:
		// A bounded source reads every partition itself (see the
		// package doc), so processes could not split them.
		fail("group_shared", "a bounded source (stop: latest) reads every partition itself, so processes cannot split them; leave out stop or group_shared")
	}
	return o, errors.Join(errs...)
}

// parseTimestamp reads ms since the epoch or an RFC 3339 time.
func parseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return time.Time{}, fmt.Errorf("negative timestamp %d", ms)
		}
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want ms since the epoch or RFC 3339 such as 2024-05-06T07:08:09Z, got %q", s)
	}
	return t, nil
}

// splitList flattens list items that are themselves `;`- or `,`-separated
// (Flink writes topic lists as 'a;b'), dropping blanks.
func splitList(items []string) []string {
	var out []string
	for _, it := range items {
		for _, f := range strings.FieldsFunc(it, func(r rune) bool { return r == ';' || r == ',' }) {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// New builds a Kafka source. It checks the options and builds the
// decoders; it does no I/O.
func New(cfg Config, env connector.SourceEnv) (*Source, error) {
	if env.Formats == nil {
		return nil, fmt.Errorf("source %q: no format registry", env.Name)
	}
	o, optErr := parseOptions(cfg, env.Pipeline, env.Name)
	// The value format decides the changelog mode (debezium-json,
	// canal-json, ... are updating), as in every source.
	o.updating = env.Formats.Changelog(cfg.Format)
	rb, rowErr := newRowBuilder(cfg, env)
	if err := errors.Join(optErr, rowErr); err != nil {
		return nil, err
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Source{
		name:   env.Name,
		flink:  flinkConfig{format: cfg.Format.Type, keyFields: splitList(cfg.KeyFields), exceptKey: strings.Contains(strings.ToLower(cfg.ValueFieldsInclude), "except")},
		opts:   o,
		rows:   rb,
		reject: env.Reject,
		log:    logger.With("connector", "kafka"),
		parts:  map[topicPartition]*part{},
		from:   map[topicPartition]int64{},
	}, nil
}

// Register adds the Kafka source to r.
func Register(r *connector.Registry) {
	connector.RegisterSource(r, "kafka", "reads Kafka topics, alone or in a consumer group; offsets committed only after delivery",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) {
			s, err := New(cfg, env)
			if err != nil {
				return nil, err
			}
			return s, nil
		})
}

// Bounded reports whether stop: latest was given.
func (s *Source) Bounded() bool { return s.opts.bounded }

// Updating reports whether the value format is a changelog format
// (debezium-json, canal-json, maxwell-json, ogg-json): it carries updates
// and deletes, and the planner then asks for the source's key.
func (s *Source) Updating() bool { return s.opts.updating }

// MetadataKeys lists the metadata columns the source fills.
func (s *Source) MetadataKeys() map[string]row.Type {
	return maps.Clone(metadataTypes)
}
