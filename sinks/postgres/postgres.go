// Package postgres is the PostgreSQL sink, `type: postgres`, also what a
// `type: jdbc` sink with a jdbc:postgresql:// url builds. It writes an
// append stream with COPY and an upsert stream with INSERT ... ON
// CONFLICT DO UPDATE plus DELETE by key, every batch in one transaction.
//
// Options (Flink's JDBC name in brackets):
//
//   - dsn: a libpq connection string, postgres://user:password@host:5432/db
//     (or key=value pairs: host=... dbname=...).
//   - url [url]: jdbc:postgresql://host:port/database, translated; its
//     user, password and sslmode query parameters are read, other JDBC
//     properties ignored.
//   - username [username], password [password]: override the
//     connection's. Take the password from the environment: password:
//     ${PG_PASSWORD}.
//   - table [table-name] (required): name or schema.name (public when
//     no schema), each part exactly as in the catalog, in double quotes
//     when it holds a dot ("my.schema".t). Unlike Flink's PostgreSQL
//     dialect, which leaves names unquoted (so that PostgreSQL folds
//     Orders to orders), etld quotes every identifier: write the name as
//     the catalog has it.
//   - batch_size [sink.buffer-flush.max-rows] (default 5000): the
//     changes written in one transaction.
//   - flush_interval [sink.buffer-flush.interval] (default 0: only the
//     runtime's flushes and full batches): write a partial batch out once
//     its oldest change is this old, at the next Write.
//   - max_retries [sink.max-retries] (default 0: retry until the pipeline
//     stops, never dropping a batch): tries after a transient failure
//     before the pipeline fails.
//   - parallelism [sink.parallelism] (default 1): connections writing at
//     once. In upsert mode changes are split across them by a hash of the
//     key, each key's changes on one connection in order; in append mode
//     whole batches take turns.
//   - replace_table (default false): allow an upsert with no key (a
//     global aggregate's one row), which empties the table before each
//     write of that row.
//   - create_table (default false): create a missing table from the
//     input schema, with the upsert key as PRIMARY KEY.
//
// The common sink keys (mode, key, on_error, dead_letter) are etld's.
//
// # Writing
//
// Append mode (+I only) writes each batch with one COPY ... FROM STDIN
// in COPY's text format. Upsert mode needs a key: +I and +U become one
// INSERT ... SELECT ... FROM unnest($1, $2, ...) ON CONFLICT (key) DO
// UPDATE SET every non-key column = EXCLUDED's, and -D one DELETE ...
// USING unnest(...) by key: one statement per kind and batch whatever its
// size, each column's values a text[] parameter, so a statement never
// nears PostgreSQL's 65535 parameters. Values are always data (COPY
// rows or parameters), never SQL text; identifiers are quoted. Every
// value travels as the text PostgreSQL reads for its column (a
// DECIMAL's exact digits, a timestamp's microseconds) and is cast to the
// column's type by the server.
//
// Changes are buffered across Writes and folded per key, the last change
// of a key winning, so that no statement touches a key twice (which ON
// CONFLICT refuses) and no order within a batch matters. A batch is
// written when batch_size changes are buffered and at every Flush.
//
// # Fencing
//
// After a crash, a transaction that a killed (or frozen) process had
// begun may reach the server late, after the restarted run wrote the
// same rows. Each batch sends BEGIN and its writes in one round trip and
// COMMIT only once their answers are in: a dead process never read them,
// so its late writes run in a transaction that is rolled back when its
// session ends; and a COMMIT that does arrive late ends a transaction
// that holds the locks of the rows it wrote, so the next run's writes of
// those rows wait for it and land after it. A process that froze between
// two batches and wakes up after the next run started would write over
// it, though; in a run with a state directory the sink fences that off.
// At Open it takes a fence (connector.RunInfo.Fence, larger in every run)
// and stores it in a row of table etld_sink_fences (made in the target
// table's schema when missing), keyed by pipeline and sink, unless a
// larger one is there (a later run: this one stops). Every batch's
// transaction first reads that row FOR SHARE, pipelined with the writes,
// and commits only when it still holds this run's fence; else it rolls
// back and the run stops with an error saying why. A transaction of an
// earlier run that read the row before the new fence was stored holds
// the row's lock until it ends, so the new run's fence (and so its first
// write) waits for it. The fence is taken with a lock_timeout and tried
// again while such a transaction is open, with a warning; a process
// frozen with a transaction open holds the new run back until its session
// ends. Without a state directory there is no fence, as in Flink's sink,
// and a restart writes everything again anyway.
//
// # Errors
//
// Transient errors (lost connection, server shutting down or starting,
// too many connections, deadlock, serialization failure, lock timeout,
// a read-only standby during a failover) roll back the batch and retry
// all of it with backoff, on a new connection when the old one broke. A
// row the server refuses for good (SQLSTATE classes 22, data exception,
// and 23, integrity: too long, out of range, invalid text, NULL in a NOT
// NULL column, a check or foreign key) is found by writing the batch
// again row by row, and each refused row goes to on_error with the
// server's message and SQLSTATE; the other rows are written. Any other
// server error (no such table, permission denied) stops the pipeline. A
// retried append batch whose COMMIT succeeded just as the connection
// broke may be written twice; upserts and deletes are idempotent.
//
// At Open the sink connects (retrying with a warning while the server is
// unreachable), checks that the table exists, that each input column has
// a table column of a compatible type (names compared exactly, else
// without regard to case when that finds one column), that no table
// column the input lacks is NOT NULL without a default, and in upsert
// mode that the primary key or a unique index covers exactly the key.
// Passwords never appear in errors or logs: the connection is shown as
// user@host:port/database.
//
// # Type mapping
//
// create_table creates, and an existing column may be (pg_type names;
// any text column (text, varchar, char) takes any type but BYTES, as its
// text, and a json or jsonb column any type, as JSON):
//
//	etld type          created as                    existing column may be
//	BOOLEAN            boolean                       boolean
//	TINYINT, SMALLINT  smallint                      int2, int4, int8, numeric, float4, float8
//	INT                integer                       int2, int4, int8, numeric, float4, float8
//	BIGINT             bigint                        int2, int4, int8, numeric, float4, float8
//	FLOAT              real                          float4, float8, numeric
//	DOUBLE             double precision              float4, float8, numeric
//	DECIMAL(p, s)      numeric(p, s)                 numeric, float4, float8
//	VARCHAR(n)         varchar(n)                    text types, json, jsonb, uuid, enums, inet, ...
//	STRING             text                          as VARCHAR
//	BYTES              bytea                         bytea
//	DATE               date                          date, timestamp, timestamptz
//	TIME(p)            time(min(p, 6))               time, timetz
//	TIMESTAMP(p)       timestamp(min(p, 6))          timestamp, timestamptz (read as UTC)
//	TIMESTAMP_LTZ(p)   timestamptz(min(p, 6))        timestamptz, timestamp (its UTC time)
//	ARRAY<T>           T[] (jsonb when T is ARRAY,   an array of what T goes into; json, jsonb
//	                   MAP or ROW)
//	MAP<K, V>          jsonb                         json, jsonb
//	ROW<...>           jsonb                         json, jsonb (an object of the field names)
//
// A ROW or MAP goes into a json or jsonb column as a JSON object (a MAP's
// keys as their text), or into a text column as that JSON text; any other
// column refuses it at Open, naming the column. Key columns are NOT NULL;
// others are NOT NULL when the input's type is. The sessions run with
// TimeZone UTC: TIMESTAMP values are written as their wall clock,
// TIMESTAMP_LTZ values as their instant (+00), and a STRING holding a
// timestamp into a timestamptz column is read in UTC.
package postgres

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

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the sink's options.
type Config struct {
	DSN           string        `yaml:"dsn"`
	URL           string        `yaml:"url"`
	Username      string        `yaml:"username"`
	Password      string        `yaml:"password"`
	Table         string        `yaml:"table,required"`
	BatchSize     int           `yaml:"batch_size"`
	FlushInterval time.Duration `yaml:"flush_interval"`
	MaxRetries    int           `yaml:"max_retries"`
	CreateTable   bool          `yaml:"create_table"`
	ReplaceTable  bool          `yaml:"replace_table"`
	Parallelism   int           `yaml:"parallelism"`
}

// Defaults and bounds.
const (
	// DefaultBatchSize is batch_size when not given: a COPY or an unnest
	// statement costs one round trip whatever its size, so larger batches
	// than the mysql sink's cost little more memory for fewer commits.
	DefaultBatchSize = 5000
	// MaxParallelism bounds the parallelism option: each lane holds a
	// connection and a batch in memory.
	MaxParallelism = 64
	// maxIdentifier is the longest name PostgreSQL keeps (NAMEDATALEN-1).
	maxIdentifier = 63
)

// New builds a PostgreSQL sink. It checks the options and does no I/O.
func New(cfg Config, env connector.SinkEnv) (*Sink, error) {
	var errs []error
	table, err := pgconf.ParseTable(cfg.Table)
	switch {
	case strings.TrimSpace(cfg.Table) == "":
		errs = append(errs, connector.Errorf("table", "must name the table to write"))
	case err != nil:
		errs = append(errs, connector.Errorf("table", "%v", err))
	case len(table.Name) > maxIdentifier || len(table.Schema) > maxIdentifier:
		errs = append(errs, connector.Errorf("table", "%q is longer than the %d bytes a PostgreSQL name may have", cfg.Table, maxIdentifier))
	}
	if cfg.BatchSize < 0 {
		errs = append(errs, connector.Errorf("batch_size", "must be >= 0 (0: the default, %d), got %d", DefaultBatchSize, cfg.BatchSize))
	}
	if cfg.FlushInterval < 0 {
		errs = append(errs, connector.Errorf("flush_interval", "must be >= 0, got %s", cfg.FlushInterval))
	}
	if cfg.Parallelism < 0 || cfg.Parallelism > MaxParallelism {
		errs = append(errs, connector.Errorf("parallelism", "must be from 1 to %d (0: the default, 1), got %d", MaxParallelism, cfg.Parallelism))
	}
	if cfg.MaxRetries < 0 {
		errs = append(errs, connector.Errorf("max_retries", "must be 0 (retry until the pipeline stops) or more, got %d", cfg.MaxRetries))
	}
	cc, err := pgconf.Config(pgconf.Options{DSN: cfg.DSN, URL: cfg.URL, Username: cfg.Username, Password: cfg.Password})
	var fe *pgconf.FieldError
	if errors.As(err, &fe) {
		err = connector.Errorf(fe.Field, "%s", fe.Msg)
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Sink{
		name:        env.Name,
		given:       cfg,
		cc:          cc,
		target:      pgconf.Redact(cc),
		table:       table,
		batchSize:   cfg.BatchSize,
		interval:    cfg.FlushInterval,
		createTable: cfg.CreateTable,
		replace:     cfg.ReplaceTable,
		logger:      logger,
		reject:      env.Reject,
		parallelism: max(cfg.Parallelism, 1),
		seed:        maphash.MakeSeed(),
	}
	s.backoff = retry.Sink.WithProbe(s.ping)
	if s.batchSize == 0 {
		s.batchSize = DefaultBatchSize
	}
	if cfg.MaxRetries > 0 {
		s.backoff.Attempts = cfg.MaxRetries + 1
	}
	return s, nil
}

// Register adds the sink as type postgres.
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "postgres", "writes to a PostgreSQL table: COPY, upsert with INSERT ... ON CONFLICT DO UPDATE, DELETE by key",
		func(cfg Config, env connector.SinkEnv) (connector.Sink, error) { return New(cfg, env) })
}

// Sink writes changes to a PostgreSQL table. Bind, SetRun, Open, Write,
// Flush and Close are called from one goroutine; Bytes from any.
type Sink struct {
	name        string
	given       Config // as written, for FlinkSink
	cc          *pgx.ConnConfig
	target      string // the connection without its password
	table       pgconf.Table
	batchSize   int
	interval    time.Duration
	createTable bool
	replace     bool
	backoff     retry.Backoff
	logger      *slog.Logger
	reject      func(connector.BadRecord) error
	parallelism int
	seed        maphash.Seed
	run         connector.RunInfo

	// Set by Bind.
	schema row.Schema
	mode   connector.Mode
	key    []int

	// Set by Open.
	cols  []column // the table's column for each input column
	stmts statements
	fence fence

	// mu guards the calls of reject, which the lanes' batches in flight
	// share.
	mu     sync.Mutex
	lanes  []*lane
	next   int    // append mode: the lane being filled
	kb     []byte // scratch for laneOf
	opened bool
	closed bool
	bytes  atomic.Int64
}

// Capabilities: append, and upsert by key. Retract would need the kind
// in a column; a table holds the result itself.
func (s *Sink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, UpsertNeedsKey: true}
}

// Bind takes the input schema, mode and key.
func (s *Sink) Bind(in connector.SinkInput) error {
	if err := connector.CheckTableInput(in, fmt.Sprintf("sink %q (postgres table %s)", s.name, s.table), s.replace); err != nil {
		return err
	}
	s.schema, s.mode, s.key = in.Schema, in.Mode, nil
	if in.Mode == connector.Upsert {
		s.key = in.Key
	}
	if s.createTable {
		// A type the table could not be created with is refused before
		// the run starts.
		if _, err := s.createDDL(); err != nil {
			return connector.Errorf("create_table", "sink %q (postgres table %s): %v", s.name, s.table, err)
		}
	}
	n := s.parallelism
	if in.Mode == connector.Upsert && len(in.Key) == 0 {
		// Replacing the whole table for each write is one connection's job.
		n = 1
	}
	s.lanes, s.next = newLanes(n, s.mode == connector.Upsert, s.key), 0
	return nil
}

// SetRun learns whether the run keeps state, and so fences its writes
// (connector.RunAware).
func (s *Sink) SetRun(info connector.RunInfo) { s.run = info }

// Open connects, retrying while the server cannot be reached, checks or
// creates the table and, in a run with a state directory, takes the
// fence.
func (s *Sink) Open(ctx context.Context) error {
	if s.schema.Len() == 0 {
		return s.errorf("open before bind")
	}
	if s.opened || s.closed {
		return s.errorf("opened twice")
	}
	s.opened = true
	l := s.lanes[0]
	err := retry.Do(ctx, retry.Backoff{Initial: s.backoff.Initial, Max: s.backoff.Max}, s.logger.With("target", s.target), "postgres connect", func(ctx context.Context) error {
		_, err := l.connect(ctx, s)
		if err != nil && pgconf.Classify(err) != pgconf.Transient {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return s.errorf("connect: %w", err)
	}
	if err := s.prepareTable(ctx, l.conn); err != nil {
		return s.errorf("%w", err)
	}
	if s.run.Fence != nil {
		if err := s.takeFence(ctx); err != nil {
			return s.errorf("%w", err)
		}
	}
	s.logger.Debug("opened", "target", s.target, "table", s.table.String(), "mode", s.mode.String(), "fence", s.fence.value)
	return nil
}

// Write buffers the changes of b, folded per key in upsert mode, and
// writes a batch out whenever batch_size changes are buffered or the
// oldest one is flush_interval old.
func (s *Sink) Write(ctx context.Context, b *row.Batch) error {
	if !s.opened || s.closed {
		return s.errorf("write before open or after close")
	}
	for i, c := range b.Changes {
		switch c.Kind {
		case row.Insert, row.UpdateAfter:
		case row.Delete:
			if s.mode != connector.Upsert {
				return s.errorf("change %d of the batch is -D in append mode; only +I can be written", i)
			}
		case row.UpdateBefore:
			// Upsert mode: the +U that follows overwrites the row by key.
			continue
		}
		l := s.laneOf(c)
		if l.buf.len() == 0 {
			l.buf.since = time.Now()
		}
		l.buf.add(c)
		if l.buf.len() >= s.batchSize {
			if err := s.submit(ctx, l); err != nil {
				return err
			}
		}
	}
	if s.interval > 0 {
		return s.writeOld(ctx)
	}
	return nil
}

// Flush writes what is buffered; when it returns nil every change written
// before it is committed.
func (s *Sink) Flush(ctx context.Context) error {
	if !s.opened || s.closed {
		return s.errorf("flush before open or after close")
	}
	return s.writeAll(ctx)
}

// Bytes is about how many bytes of values the sink has sent, for
// /metrics.
func (s *Sink) Bytes() int64 { return s.bytes.Load() }

// Close releases the connections. It writes nothing: the runtime flushes
// before a graceful close, and after a failure the server may be the
// problem. It is safe after a failed Open and twice.
func (s *Sink) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.drain(); err != nil {
		// A batch in flight failed after the last Write or Flush; it was
		// never acknowledged, so the checkpoint replays it.
		s.logger.Warn("a batch in flight failed while closing", "table", s.table.String(), "error", err.Error())
	}
	if n := s.buffered(); n > 0 {
		s.logger.Warn("closing with unwritten changes; they were never acknowledged and are replayed from the last checkpoint", "changes", n, "table", s.table.String())
	}
	var errs []error
	for _, l := range s.lanes {
		errs = append(errs, l.close(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return s.errorf("close: %w", err)
	}
	return nil
}

// ping asks the server whether it is back, on a connection of its own.
func (s *Sink) ping(ctx context.Context) error {
	c, err := connectConn(ctx, s.cc)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// errorf names the table and the connection (without its password); the
// runtime adds the sink's name.
func (s *Sink) errorf(format string, args ...any) error {
	return fmt.Errorf("postgres table %s at %s: "+format, append([]any{s.table, s.target}, args...)...)
}

var (
	_ connector.Sink     = (*Sink)(nil)
	_ connector.Meter    = (*Sink)(nil)
	_ connector.RunAware = (*Sink)(nil)
)
