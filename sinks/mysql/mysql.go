// Package mysql is the MySQL/MariaDB sink, `type: mysql`, also what a
// `type: jdbc` sink with a jdbc:mysql:// url builds, for pipelines written
// after Flink's JDBC connector. It
// writes an append stream with multi-row INSERTs and an upsert stream with
// multi-row INSERT ... ON DUPLICATE KEY UPDATE plus DELETE by key.
//
// Options (Flink's JDBC name in brackets):
//
//   - dsn: a go-sql-driver DSN, user:password@tcp(host:port)/database.
//   - url [url]: jdbc:mysql://host:port/database (or jdbc:mariadb://),
//     translated to a DSN; its user and password query parameters are
//     read, other JDBC properties ignored. `type: jdbc` needs url.
//   - username [username], password [password]: override the DSN's. Take
//     the password from the environment: password: ${MYSQL_PASSWORD}.
//   - table [table-name] (required): a table of the connection's database.
//   - batch_size [sink.buffer-flush.max-rows] (default 1000): the changes
//     written in one transaction. Flink's default is 100; larger batches
//     cost fewer round trips.
//   - flush_interval [sink.buffer-flush.interval] (default 0: only the
//     runtime's flushes, every second, and full batches): write a partial
//     batch out once its oldest change is this old, at the next Write.
//   - max_retries [sink.max-retries] (default 0: retry until the pipeline
//     stops, never dropping a batch): tries after a transient failure
//     before the pipeline fails. Flink's default is 3.
//   - parallelism [sink.parallelism] (default 1): connections writing at
//     once. In upsert mode changes are split across them by a hash of the
//     key, each key's changes on one connection in order, one transaction
//     per batch per connection; in append mode whole batches take turns.
//     An upsert with no key (replace_table) uses one.
//   - replace_table (default false): allow an upsert with no key (a
//     global aggregate's one row), which empties the table before each
//     write of that row.
//   - create_table (default false): create a missing table from the input
//     schema, with the upsert key as PRIMARY KEY.
//
// The common sink keys (mode, key, on_error, dead_letter) are etld's.
//
// # Modes
//
// Append mode (+I only) inserts rows. Upsert mode needs a key: +I and +U
// become INSERT ... ON DUPLICATE KEY UPDATE, setting every non-key column;
// -D becomes DELETE ... WHERE key IN (...). On MariaDB and MySQL before
// 8.0.20 the update reads VALUES(col); from MySQL 8.0.20, where VALUES() is
// deprecated, it reads a row alias: INSERT ... AS new ... UPDATE col =
// new.col. The server is told apart by SELECT VERSION() at Open. An upsert
// with an empty key (a global aggregate's single row) can only be kept
// exact by replacing the whole table (DELETE, then INSERT), which would
// also delete rows etld never wrote; so it is refused at plan time unless
// replace_table: true says the table holds nothing else. Flink's JDBC sink
// refuses such a query outright.
//
// Changes are buffered across Writes and folded per key, the last change
// of a key winning, so a delete after an upsert of the same key stays a
// delete and no statement order within a batch matters. A batch is
// written in one transaction when batch_size changes are buffered and
// at every Flush. Statements are cut to stay under 65535 placeholders and
// under 3/4 of the server's max_allowed_packet.
//
// After a crash, a statement that a killed (or frozen) process had sent
// may reach the server late, after the restarted run started. A batch of
// one statement is a transaction too, so a late statement runs in a
// transaction whose COMMIT was never sent, rolled back when the dead
// session ends. In a run with a state directory every transaction also
// reads the sink's fence row (fence.go) with a shared lock, which the
// restarted run raises at Open: it waits for a late COMMIT, which lands
// before the restarted run's first write, and a frozen process's next
// transaction finds the newer fence and stops.
//
// # Errors
//
// Transient errors (lost connection, server gone away or restarting,
// deadlock 1213, lock wait timeout 1205, read-only 1290/1792 during a
// failover) roll back the batch and retry all of it with backoff. A row
// the server refuses for good (data too long 1406, incorrect value 1366,
// NULL into NOT NULL 1048, out of range 1264, foreign key 1452, ...) is
// found by writing the batch again row by row, and each refused row goes to
// on_error with the MySQL error number; the other rows are written. Any
// other server error (no such table, access denied) stops the pipeline.
// The session runs in strict SQL mode (STRICT_ALL_TABLES added to the
// server's sql_mode unless the DSN sets sql_mode), so a value is refused
// rather than silently truncated. A retried append batch whose COMMIT
// succeeded just as the connection broke may be written twice; upserts and
// deletes are idempotent.
//
// At Open the sink connects (retrying with a warning while the server is
// unreachable), checks that the table exists, that each input column has
// a table column of a compatible type, that no table column the input
// lacks is NOT NULL without a default, and in upsert mode that a PRIMARY
// KEY or UNIQUE index covers exactly the key. Identifiers are quoted with
// backticks; values are always statement parameters. Passwords never
// appear in errors or logs: the connection is shown as user@tcp(addr)/db.
//
// # Type mapping
//
// create_table creates, and an existing table may have (information_schema
// DATA_TYPE; any text column takes any type but BYTES, as its text):
//
//	etld type          created as                 existing column may be
//	BOOLEAN            BOOLEAN (TINYINT(1))       integer, bit, decimal
//	TINYINT            TINYINT                    integer, decimal, float, double
//	SMALLINT           SMALLINT                   integer, decimal, float, double
//	INT                INT                        integer, decimal, float, double
//	BIGINT             BIGINT                     integer, decimal, float, double
//	FLOAT              FLOAT                      float, double, decimal
//	DOUBLE             DOUBLE                     float, double, decimal
//	DECIMAL(p, s)      DECIMAL(p, s)              decimal, float, double
//	VARCHAR(n)         VARCHAR(n) utf8mb4         text, enum, set, json
//	STRING             LONGTEXT utf8mb4; a key column VARCHAR(255), less
//	                   when the key's columns would not fit an index
//	                   (3072 bytes, 4 a character): they share what
//	                   the key's other columns leave
//	BYTES              LONGBLOB; VARBINARY(n) for BYTES(n) or a key
//	                                              binary, varbinary, blob
//	DATE               DATE                       date, datetime, timestamp
//	TIMESTAMP(p)       DATETIME(min(p, 6))        datetime, timestamp
//	TIMESTAMP_LTZ(p)   DATETIME(min(p, 6)), UTC   datetime, timestamp
//
// Key columns are NOT NULL; others are NOT NULL when the input's type is.
// DECIMAL values are sent as their exact text, TIMESTAMP as its wall
// clock, TIMESTAMP_LTZ as its UTC time (the session's time_zone is
// +00:00 unless the DSN sets one).
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
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

// DefaultBatchSize is batch_size when not given.
const DefaultBatchSize = 1000

// maxIdentifier is the longest table name MySQL and MariaDB take.
const maxIdentifier = 64

// New builds a MySQL sink. It checks the options and does no I/O.
func New(cfg Config, env connector.SinkEnv) (*Sink, error) {
	// Every problem is reported, not only the first.
	var errs []error
	switch t := cfg.Table; {
	case strings.TrimSpace(t) == "":
		errs = append(errs, connector.Errorf("table", "must name the table to write"))
	case len(t) > maxIdentifier:
		errs = append(errs, connector.Errorf("table", "%q is longer than the %d characters a MySQL table name may have", t, maxIdentifier))
	case strings.HasSuffix(t, " "):
		errs = append(errs, connector.Errorf("table", "%q ends in a space, which MySQL does not allow in a table name", t))
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
	dc, err := driverConfig(cfg)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The driver's own messages (a stale connection it dropped) go to the
	// sink's log, not to stderr.
	dc.Logger = driverLogger{logger}
	s := &Sink{
		name:        env.Name,
		given:       cfg,
		dc:          dc,
		target:      mysqlconn.Redact(dc),
		table:       cfg.Table,
		batchSize:   cfg.BatchSize,
		interval:    cfg.FlushInterval,
		createTable: cfg.CreateTable,
		replace:     cfg.ReplaceTable,
		logger:      logger,
		reject:      env.Reject,
		parallelism: max(cfg.Parallelism, 1),
		seed:        maphash.MakeSeed(),
	}
	// While a write waits to be tried again, a ping notices the server's
	// return: the write goes again at once instead of after the backoff.
	s.backoff = retry.Sink.WithProbe(s.ping)
	if s.batchSize == 0 {
		s.batchSize = DefaultBatchSize
	}
	if cfg.MaxRetries > 0 {
		s.backoff.Attempts = cfg.MaxRetries + 1
	}
	return s, nil
}

// Register adds the sink as type mysql. Type jdbc with a jdbc:mysql://
// url builds it too (sinks.Register picks the sink by the url).
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "mysql", "writes to a MySQL or MariaDB table: batched INSERT, upsert with ON DUPLICATE KEY UPDATE, DELETE by key",
		func(cfg Config, env connector.SinkEnv) (connector.Sink, error) { return New(cfg, env) })
}

// Sink writes changes to a MySQL table. Bind, Open, Write, Flush and
// Close are called from one goroutine; Bytes from any.
type Sink struct {
	name        string
	given       Config // as written, for FlinkSink
	dc          *mysql.Config
	target      string // the connection without its password
	table       string
	batchSize   int
	interval    time.Duration
	createTable bool
	replace     bool // replace_table: an upsert with no key may empty the table
	backoff     retry.Backoff
	logger      *slog.Logger
	reject      func(connector.BadRecord) error
	parallelism int
	seed        maphash.Seed

	// Set by Bind.
	schema row.Schema
	mode   connector.Mode
	key    []int

	// run is what SetRun told. fence is the life's fence and fenceRead
	// the statement that checks it, set by Open in a run with a state
	// directory (fence.go); 0: no check.
	run       connector.RunInfo
	fence     uint64
	fenceRead string

	// Set by Open.
	db        *sql.DB
	srv       server
	stmts     statements
	maxPacket int

	// mu guards cache and the calls of reject, which the lanes' batches
	// in flight share.
	mu    sync.Mutex
	cache map[stmtKey]*sql.Stmt

	lanes  []*lane
	next   int    // append mode: the lane being filled
	kb     []byte // scratch for laneOf
	closed bool
	bytes  atomic.Int64
}

// Capabilities: append, and upsert by key. Retract would need the kind in
// a column; a table holds the result itself.
func (s *Sink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, UpsertNeedsKey: true}
}

// Bind takes the input schema, mode and key.
func (s *Sink) Bind(in connector.SinkInput) error {
	if err := connector.CheckTableInput(in, fmt.Sprintf("sink %q (mysql table %s)", s.name, s.table), s.replace); err != nil {
		return err
	}
	s.schema, s.mode, s.key = in.Schema, in.Mode, nil
	if in.Mode == connector.Upsert {
		s.key = in.Key
	}
	if s.createTable {
		// A key the table could not be created with is refused before
		// the run starts.
		if _, err := s.keyTextBytes(); err != nil {
			return connector.Errorf("create_table", "sink %q (mysql table %s): %v", s.name, s.table, err)
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

// Open connects, retrying while the server cannot be reached, reads the
// server's version and checks or creates the table.
func (s *Sink) Open(ctx context.Context) error {
	if s.schema.Len() == 0 {
		return s.errorf("open before bind")
	}
	if s.db != nil || s.closed {
		return s.errorf("opened twice")
	}
	conn, err := mysql.NewConnector(s.dc)
	if err != nil {
		return s.errorf("%v", err)
	}
	s.db = sql.OpenDB(conn)
	// A connection per lane: a lane's batches go in order on whichever
	// connection is free, and database/sql prepares the cached statements
	// on each connection as it is first used.
	s.db.SetMaxOpenConns(len(s.lanes))
	s.db.SetMaxIdleConns(len(s.lanes))
	s.cache = map[stmtKey]*sql.Stmt{}

	// The version query is retried with the ping: a server that drops
	// between the two is as transient as one that is not up yet.
	connect := retry.Backoff{Initial: s.backoff.Initial, Max: s.backoff.Max}
	var packet int
	err = retry.Do(ctx, connect, s.logger.With("target", s.target), "mysql connect", func(ctx context.Context) error {
		err := s.db.PingContext(ctx)
		if err == nil {
			s.srv, packet, err = queryServer(ctx, s.db)
		}
		if err != nil && classify(err) != transient {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return s.errorf("connect: %w", err)
	}
	s.maxPacket = packet * 3 / 4
	cols := make([]string, s.schema.Len())
	for i, f := range s.schema.Fields {
		cols[i] = quote(f.Name)
	}
	s.stmts = statements{table: quote(s.table), cols: cols, key: s.key, alias: s.srv.rowAlias()}
	if err := s.prepareTable(ctx); err != nil {
		return s.errorf("%w", err)
	}
	if err := s.takeFence(ctx); err != nil {
		return s.errorf("%w", err)
	}
	s.logger.Debug("opened", "target", s.target, "server", s.srv.String(), "table", s.table, "mode", s.mode.String())
	return nil
}

// Write buffers the changes of b, folded per key in upsert mode, and
// writes a batch out whenever batch_size changes are buffered or the
// oldest one is flush_interval old.
func (s *Sink) Write(ctx context.Context, b *row.Batch) error {
	if s.db == nil {
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
	if s.db == nil {
		return s.errorf("flush before open or after close")
	}
	return s.writeAll(ctx)
}

// Bytes is about how many bytes of values the sink has sent, for
// /metrics.
func (s *Sink) Bytes() int64 { return s.bytes.Load() }

// Close releases the connection. It writes nothing: the runtime flushes
// before a graceful close, and after a failure the server may be the
// problem. It is safe after a failed Open and twice.
func (s *Sink) Close(ctx context.Context) error {
	s.closed = true
	if s.db == nil {
		return nil
	}
	var errs []error
	if err := s.drain(); err != nil {
		// A batch in flight failed after the last Write or Flush; it was
		// never acknowledged, so the checkpoint replays it.
		s.logger.Warn("a batch in flight failed while closing", "table", s.table, "error", err.Error())
	}
	if n := s.buffered(); n > 0 {
		s.logger.Warn("closing with unwritten changes; they were never acknowledged and are replayed from the last checkpoint", "changes", n, "table", s.table)
	}
	for _, st := range s.cache {
		errs = append(errs, st.Close())
	}
	errs = append(errs, s.db.Close())
	s.db, s.cache = nil, nil
	if err := errors.Join(errs...); err != nil {
		return s.errorf("close: %w", err)
	}
	return nil
}

// ping asks the server whether it is back, on a connection of the pool.
func (s *Sink) ping(ctx context.Context) error {
	if s.db == nil {
		return errors.New("not connected")
	}
	return s.db.PingContext(ctx)
}

// errorf names the table and the connection (without its password); the
// runtime adds the sink's name.
func (s *Sink) errorf(format string, args ...any) error {
	return fmt.Errorf("mysql table %s at %s: "+format, append([]any{quote(s.table), s.target}, args...)...)
}

// driverLogger hands go-sql-driver's messages to slog at debug level:
// they describe connections it replaces by itself.
type driverLogger struct{ l *slog.Logger }

func (d driverLogger) Print(v ...any) {
	d.l.Debug("mysql driver: " + strings.TrimSpace(fmt.Sprint(v...)))
}

var (
	_ connector.Sink     = (*Sink)(nil)
	_ connector.Meter    = (*Sink)(nil)
	_ connector.RunAware = (*Sink)(nil)
)
