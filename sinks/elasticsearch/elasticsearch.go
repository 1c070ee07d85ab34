// Package elasticsearch is the `type: elasticsearch` sink: it writes
// changes to Elasticsearch 7.14+/8.x with the bulk API, as Flink's
// elasticsearch-7 connector does.
//
// Options (Flink's name in brackets):
//
//   - hosts [hosts]: one or more http(s)://host:port (a list, or one
//     string separated by ;). Required.
//   - index [index]: a static index, or a pattern with one dynamic part,
//     `{column}` or `{column|yyyy-MM-dd}` (Java date letters; DATE,
//     TIMESTAMP and TIMESTAMP_LTZ columns, in UTC) or
//     `{now()|yyyy-MM-dd}`. Required.
//   - key_delimiter [document-id.key-delimiter]: joins key values into the
//     document id, default `_`.
//   - key_null_literal [document-id.key-null-literal]: a NULL key value in
//     the id, default `null`.
//   - bulk_flush_max_actions [sink.bulk-flush.max-actions]: actions per
//     bulk request, default 1000, 0 for no limit.
//   - bulk_flush_max_size [sink.bulk-flush.max-size]: bytes per bulk
//     request, default 2mb, 0 for no limit.
//   - bulk_flush_interval [sink.bulk-flush.interval]: send what is
//     buffered at least this often, default 1s, 0 to send only when full
//     or when the pipeline flushes (checkpoints, the end of the input).
//   - bulk_flush_backoff_strategy [sink.bulk-flush.backoff.strategy]:
//     exponential (default) or constant.
//   - bulk_flush_backoff_max_retries [sink.bulk-flush.backoff.max-retries]:
//     0 (default) retries forever; after n failed retries the pipeline
//     stops with the error. Data is never dropped.
//   - bulk_flush_backoff_delay [sink.bulk-flush.backoff.delay]: the first
//     wait, default 100ms; exponential waits double up to 30s.
//   - username, password [username, password]: basic auth; api_key: an
//     encoded API key (both from ${VAR}). ca_file: a PEM file of CA
//     certificates for https hosts.
//   - connection_timeout [connection.timeout]: connecting, default 10s;
//     socket_timeout [socket.timeout]: waiting for a response, default
//     60s.
//   - parallelism [sink.parallelism]: bulk requests in flight at once,
//     default 2 (see ordering below).
//
// Modes: append indexes every row with an id Elasticsearch generates.
// Upsert needs the upsert key: the document id is the key values as
// Flink writes them (Java's toString: 2024-01-01T10:00, true, 1.5)
// joined by key_delimiter; +I and +U index the full row as the document,
// -D deletes it (a document already gone is fine). -U never reaches an
// upsert sink.
//
// Documents are JSON with types kept, through the json format with
// ISO-8601 timestamps: numbers and DECIMAL are numbers, BOOLEAN is a
// bool, TIMESTAMP is 2024-01-01T10:00:00.123, TIMESTAMP_LTZ has a
// trailing Z, DATE is 2024-01-01, BYTES is base64, NULL is null.
//
// Delivery: Write buffers actions into bulk requests; a full request is
// handed to a sender goroutine while Write goes on encoding. Flush hands
// over what is buffered and returns once every action written before it
// is acknowledged. The bulk response is read item by item: items that
// failed with 429 or a 5xx status are sent again with backoff (only
// those items); any other item error (a mapping error, an invalid index
// name) goes to the sink's on_error with the document and the reason. A
// request that fails as a whole (connection refused, 429 or 5xx for the
// request) is sent again whole; 401 and 403 stop the pipeline.
//
// Ordering: retries never let an older version of a document overwrite a
// newer one. Within a run the sink keeps two rules. Within a request
// being built, a newer action for the same _index/_id replaces the older
// one, so a request never holds two actions for one document. And every
// document id always goes to the same sender (by a hash of the id); a
// sender finishes a request, retries included, before it sends its next
// one. So the older action for a document is acknowledged before a newer
// one is sent. In append mode there are no ids and requests are spread
// over the senders.
//
// Across runs (fencing, alias.go): a request that a killed process had
// sent can reach Elasticsearch after the restarted run started (held up
// in the network, or the process frozen rather than dead). In a run with
// a state directory an upsert sink writes through hidden aliases of its
// life, with require_alias, and each life removes the earlier lives'
// aliases before its first write: a late request of an earlier life is
// refused whatever it writes or deletes. Without a state directory there
// is no fence: a late request of a killed process is applied over newer
// values, as with Flink's sink; a restart without state writes
// everything again anyway. Append mode (generated ids) is at least once.
//
// The sink creates a static index at Open, and each index of a pattern
// before the first request that writes to it, instead of leaving that to
// the first bulk request (a cluster may forbid automatic creation); an
// index template that matches the name applies as usual. An index that
// exists (or an alias) is used as it is.
package elasticsearch

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// maxKnown bounds the index names the sink remembers as existing; past
// it, it forgets them and looks again.
const maxKnown = 4096

// New builds an Elasticsearch sink. It checks the options and connects
// to nothing.
func New(cfg Config, env connector.SinkEnv) (*Sink, error) {
	st, err := check(cfg)
	if err != nil {
		return nil, err
	}
	if env.Formats == nil {
		return nil, fmt.Errorf("sink %q: no format registry", env.Name)
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{name: env.Name, given: cfg, cfg: st, formats: env.Formats, reject: env.Reject, logger: logger, now: time.Now}, nil
}

// Register adds the Elasticsearch sink to r.
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "elasticsearch", "writes documents to Elasticsearch with the bulk API; upsert by key (index, delete) or append",
		func(cfg Config, env connector.SinkEnv) (connector.Sink, error) { return New(cfg, env) })
}

// Sink writes changes to Elasticsearch. Bind, Open, Write, Flush and
// Close are called from one goroutine; Bytes from any.
type Sink struct {
	name    string
	given   Config // as written, for FlinkSink
	cfg     settings
	formats *connector.Registry
	reject  func(connector.BadRecord) error
	logger  *slog.Logger
	now     func() time.Time
	// transport replaces the HTTP transport in unit tests.
	transport roundTripper

	mode   connector.Mode
	schema row.Schema
	key    []int
	enc    connector.Encoder

	client *elasticsearch.Client
	lanes  []*lane
	seed   maphash.Seed
	next   int // append mode: the lane of the next row
	seq    int64

	// run is what the runtime told SetRun. fence is the life's number in
	// upsert mode with a state directory, set by Open: the sink writes
	// through the life's aliases (alias.go); 0: to the indices
	// themselves.
	run   connector.RunInfo
	fence uint64
	// aliases caches aliasOf for Write's goroutine, under mu.
	aliases map[string]string
	// known holds index names that exist (found or created), with this
	// life's alias on them when fenced, under knownMu.
	knownMu sync.Mutex
	known   map[string]bool

	// mu guards the lanes' building requests between Write and the
	// interval flusher.
	mu      sync.Mutex
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	failure atomic.Pointer[error]
	sent    atomic.Int64
	idBuf   []byte
	opened  bool
	closed  bool
}

// Capabilities: append with generated ids, upsert by key.
func (s *Sink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, UpsertNeedsKey: true}
}

// Bind checks the input against the index pattern and builds the document
// encoder.
func (s *Sink) Bind(in connector.SinkInput) error {
	switch in.Mode {
	case connector.Append:
	case connector.Upsert:
		if len(in.Key) == 0 {
			return s.bindErrorf("upsert mode needs a key for the document id; declare key: on the sink or group by the columns that identify a document")
		}
	default:
		return s.bindErrorf("cannot run in %s mode: Elasticsearch takes append (generated ids) or upsert (ids from the key)", in.Mode)
	}
	if err := s.cfg.index.bind(in.Schema); err != nil {
		return connector.Errorf("index", "%v", err)
	}
	opts := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "type"}, {Kind: yaml.ScalarNode, Value: "json"},
		{Kind: yaml.ScalarNode, Value: "timestamp_format"}, {Kind: yaml.ScalarNode, Value: "iso-8601"},
	}}
	enc, err := s.formats.NewEncoder(connector.FormatSpec{Type: "json", Options: opts, Path: "documents"}, in.Schema)
	if err != nil {
		return s.bindErrorf("documents: %v", err)
	}
	s.mode, s.schema, s.key, s.enc = in.Mode, in.Schema, in.Key, enc
	return nil
}

// Open connects and waits for the cluster to answer, retrying with
// backoff until ctx ends, then starts the senders.
func (s *Sink) Open(ctx context.Context) error {
	if s.enc == nil {
		return errors.New("open before bind")
	}
	if s.opened || s.closed {
		return errors.New("opened twice")
	}
	client, err := s.newClient()
	if err != nil {
		return err
	}
	s.client = client
	hosts := strings.Join(s.cfg.hosts, ", ")
	err = retry.Do(ctx, s.cfg.backoff, s.logger, "elasticsearch at "+hosts+" is not available", func(ctx context.Context) error {
		return s.ping(ctx)
	})
	if err != nil {
		return fmt.Errorf("elasticsearch at %s: %w", hosts, err)
	}
	s.known = map[string]bool{}
	if s.cfg.index.static() {
		err = retry.Do(ctx, s.cfg.backoff, s.logger, "sink "+s.name+": index "+s.cfg.index.prefix, func(ctx context.Context) error {
			return s.ensureIndex(ctx, s.cfg.index.prefix, false)
		})
		if err != nil {
			return fmt.Errorf("elasticsearch at %s: %w", hosts, err)
		}
	}
	if s.mode == connector.Upsert && s.run.Fence != nil {
		if err := s.fenceOff(ctx); err != nil {
			return fmt.Errorf("elasticsearch at %s: sink %s: %w", hosts, s.name, err)
		}
	}
	s.opened = true
	lctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.seed = maphash.MakeSeed()
	s.lanes = make([]*lane, s.cfg.parallelism)
	for i := range s.lanes {
		l := &lane{s: s, in: make(chan laneMsg, 1)}
		l.building = l.newBulk()
		s.lanes[i] = l
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			l.run(lctx)
		}()
	}
	if s.cfg.interval > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			// A panic here fails the sink, not the process.
			s.fail(panics.Call(func() error { s.tick(lctx); return nil }))
		}()
	}
	return nil
}

// tick hands over buffered actions every bulk_flush_interval, so that a
// trickle of rows reaches Elasticsearch without waiting for a full request.
func (s *Sink) tick(ctx context.Context) {
	t := time.NewTicker(s.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !s.handOverAll(ctx) {
				return
			}
		}
	}
}

// handOverAll gives every lane its buffered actions; false once the sink
// is closing. The lock is released by defer, so that a panic on the way
// (recovered by Open's goroutine) leaves the sink usable for Close.
func (s *Sink) handOverAll(ctx context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Close cancels ctx before it closes the senders' channels under mu:
	// a tick that won the select against ctx.Done must not send on a
	// closed channel.
	if ctx.Err() != nil {
		return false
	}
	for _, l := range s.lanes {
		if err := l.handOver(ctx); err != nil {
			break
		}
	}
	return true
}

// Write encodes the changes of b into bulk actions. Full requests go to
// the senders; Write blocks while they are all busy.
func (s *Sink) Write(ctx context.Context, b *row.Batch) error {
	if !s.opened || s.closed {
		return errors.New("write before open or after close")
	}
	if err := s.err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range b.Changes {
		if err := s.add(ctx, i, c); err != nil {
			return err
		}
	}
	return nil
}

// add encodes one change into the building request of its lane.
func (s *Sink) add(ctx context.Context, i int, c row.Change) error {
	s.seq++
	index, err := s.cfg.index.name(c.Row, s.now)
	if err != nil {
		return s.rejectRow(i, c, err)
	}
	target := s.target(index)
	var l *lane
	var id []byte
	switch s.mode {
	case connector.Upsert:
		if c.Kind == row.UpdateBefore {
			return nil
		}
		id = s.docID(c.Row)
		if len(id) > 512 {
			return s.rejectRow(i, c, fmt.Errorf("document id is %d bytes long; Elasticsearch allows 512", len(id)))
		}
		var h maphash.Hash
		h.SetSeed(s.seed)
		h.WriteString(index)
		h.Write(id)
		l = s.lanes[h.Sum64()%uint64(len(s.lanes))]
	default:
		if c.Kind != row.Insert {
			return fmt.Errorf("change %d of the batch is %s in append mode; only +I can be written", i, c.Kind)
		}
		l = s.lanes[s.next]
		s.next = (s.next + 1) % len(s.lanes)
	}
	if err := l.building.add(s.enc, index, target, id, c.Kind == row.Delete, c.Row, s.seq); err != nil {
		return s.rejectRow(i, c, err)
	}
	if l.building.full(s.cfg.maxActions, s.cfg.maxSize) {
		return l.handOver(ctx)
	}
	return nil
}

// target is what an action for index names: the index itself, or this
// life's alias of it. Called under mu.
func (s *Sink) target(index string) string {
	if s.fence == 0 {
		return index
	}
	if a, ok := s.aliases[index]; ok {
		return a
	}
	if s.aliases == nil || len(s.aliases) >= maxKnown {
		s.aliases = map[string]string{}
	}
	a := s.aliasOf(index)
	s.aliases[index] = a
	return a
}

// fenceOff takes the life's fence and makes the life's aliases the only
// ones of the sink (alias.go); a cluster that refuses leaves the life
// unfenced.
func (s *Sink) fenceOff(ctx context.Context) error {
	f, err := s.run.Fence()
	if err != nil {
		return err
	}
	if f == 0 {
		return errors.New("the state directory gave fence 0")
	}
	s.fence = f
	err = retry.Do(ctx, s.cfg.backoff, s.logger, "sink "+s.name+": the run's write aliases", s.takeOver)
	if errors.Is(err, errRefused) {
		s.logger.Warn("the cluster does not let the sink manage aliases (the manage privilege on the index); a bulk request of a killed run that arrives late may land over this run's documents",
			"sink", s.name, "error", err.Error())
		s.fence = 0
		return nil
	}
	if err != nil {
		return err
	}
	s.logger.Info("the sink writes through its run's aliases; late requests of earlier runs are refused", "sink", s.name, "life", f)
	return nil
}

// SetRun learns whether the run keeps state, and so fences its writes
// (connector.RunAware).
func (s *Sink) SetRun(info connector.RunInfo) { s.run = info }

// docID joins the key values, as Flink writes them, with the delimiter.
func (s *Sink) docID(r row.Row) []byte {
	if s.idBuf == nil {
		// Never nil, even when empty: bulk.add reads a nil id as append
		// mode's "let Elasticsearch make one up".
		s.idBuf = make([]byte, 0, 64)
	}
	id := s.idBuf[:0]
	for j, k := range s.key {
		if j > 0 {
			id = append(id, s.cfg.delimiter...)
		}
		if r[k].IsNull() {
			id = append(id, s.cfg.nullLiteral...)
		} else {
			id = appendKeyValue(id, r[k])
		}
	}
	s.idBuf = id
	return id
}

// rejectRow hands a row that cannot become an action to on_error.
func (s *Sink) rejectRow(i int, c row.Change, err error) error {
	if s.reject == nil {
		return fmt.Errorf("change %d of the batch: %w", i, err)
	}
	return s.reject(connector.BadRecord{
		Position: fmt.Sprintf("sink %s, change %d of the batch", s.name, i),
		Raw:      []byte(c.String()),
		Err:      err,
	})
}

// Flush hands over every buffered action and returns once all actions
// written so far are acknowledged, or the first error that stopped a
// sender, or ctx's error.
func (s *Sink) Flush(ctx context.Context) error {
	if !s.opened || s.closed {
		return errors.New("flush before open or after close")
	}
	s.mu.Lock()
	dones := make([]chan struct{}, 0, len(s.lanes))
	for _, l := range s.lanes {
		if err := l.handOver(ctx); err != nil {
			s.mu.Unlock()
			return err
		}
		done := make(chan struct{})
		select {
		case l.in <- laneMsg{done: done}:
		case <-ctx.Done():
			s.mu.Unlock()
			return context.Cause(ctx)
		}
		dones = append(dones, done)
	}
	s.mu.Unlock()
	for _, done := range dones {
		select {
		case <-done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return s.err()
}

// err is the error that stopped a sender, if any.
func (s *Sink) err() error {
	if p := s.failure.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *Sink) fail(err error) {
	if err == nil {
		return
	}
	s.failure.CompareAndSwap(nil, &err)
}

// Bytes is the number of bulk request bytes sent, retries included.
func (s *Sink) Bytes() int64 { return s.sent.Load() }

// Close stops the senders. Actions not yet flushed are not sent: they
// were never acknowledged, and the runtime replays them from its last
// checkpoint. Close is safe after a failed Open and twice.
func (s *Sink) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.cancel != nil {
		s.cancel()
		s.mu.Lock()
		for _, l := range s.lanes {
			close(l.in)
		}
		s.mu.Unlock()
		s.wg.Wait()
	}
	if s.client != nil {
		if err := s.client.Close(ctx); err != nil && !errors.Is(err, elasticsearch.ErrAlreadyClosed) {
			return err
		}
	}
	return nil
}

// bindErrorf names the sink: the planner reports Bind's errors among
// those of every sink.
func (s *Sink) bindErrorf(format string, args ...any) error {
	return fmt.Errorf("sink %q (elasticsearch): "+format, append([]any{s.name}, args...)...)
}

// CopiesRows implements connector.RowCopier: Write encodes each row into
// the bulk request's bytes (its action and document) before it returns;
// retries and refusals work from those bytes, not from rows.
func (s *Sink) CopiesRows() bool { return true }

var (
	_ connector.Sink      = (*Sink)(nil)
	_ connector.RowCopier = (*Sink)(nil)
	_ connector.Meter     = (*Sink)(nil)
	_ connector.RunAware  = (*Sink)(nil)
)
