// Package mysql is the MySQL/MariaDB source, `type: mysql`, also
// registered as `type: jdbc` for pipelines written after Flink's JDBC
// connector. It scans a table (or a query) once, bounded, in parallel
// ranges of a numeric column when asked; and it is a lookup table: a
// lookup join (`JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON
// o.customer_id = c.id`) asks it for the rows of a batch of keys with one
// `SELECT ... WHERE id IN (...)` instead of scanning it. With `mode: cdc`
// it captures tables' changes instead: a snapshot, then the binlog
// (cdc.go and the cdc_*.go files).
//
// Options (Flink's JDBC name in brackets):
//
//   - dsn: a go-sql-driver DSN, user:password@tcp(host:port)/database.
//   - url [url]: jdbc:mysql://host:port/database (or jdbc:mariadb://);
//     `type: jdbc` needs url. Its user and password query parameters are
//     read, other JDBC properties ignored.
//   - username [username], password [password]: override the DSN's.
//     Take the password from the environment: password: ${MYSQL_PASSWORD}.
//   - table [table-name]: the table to read; or
//   - query: a SELECT whose result is the table (scan only; a lookup
//     needs a table).
//   - scan.partition.column, .num, .lower_bound, .upper_bound
//     [scan.partition.column, .num, .lower-bound, .upper-bound]: read the
//     numeric column's range [lower_bound, upper_bound] in num ranges of
//     about equal width, each on a connection of its own, at once. As in
//     Flink, rows outside the bounds are not read.
//   - scan.fetch_size [scan.fetch-size]: rows per batch handed on
//     (default 1024; the driver streams the result).
//   - lookup.cache [lookup.cache]: none (default) or partial.
//   - lookup.partial_cache.max_rows, .expire_after_write,
//     .expire_after_access, .cache_missing_key
//     [lookup.partial-cache.max-rows, ...]: the partial cache's bounds;
//     cache_missing_key is true by default, as in Flink.
//   - lookup.max_retries [lookup.max-retries]: tries after a failed
//     lookup query before the pipeline fails; 0 (the default) waits for
//     the server as long as the pipeline runs, as the mysql sink does.
//     Flink's default is 3.
//   - lookup.batch_size: the most keys one lookup query asks for
//     (default 1000); beyond Flink, whose JDBC lookup sends one query per
//     key.
//
// The columns are the source's schema, read by name: SELECT `a`, `b`
// FROM `table`. Every value is read as the server's text and parsed as
// the column's declared type, as the csv format would (a BOOLEAN from
// TINYINT 0/1; DATETIME and TIMESTAMP in the session's UTC); a value
// that does not parse goes to on_error with the table and the row's
// primary key (or its row number in the range) as its position.
//
// # Position
//
// A checkpoint records, per range, how many rows were handed on and
// whether the range is done. When the table has a primary key each range
// is read ORDER BY it, so a restored run (and a range retried after the
// connection broke mid-range) skips the rows it already handed on and
// reads the rest: nothing twice. Without a primary key (a query, a table
// without one) a restored run reads a range that was not done again from
// its start, and a range whose connection breaks fails the pipeline.
//
// Connecting waits for the server with backoff while it is unreachable;
// a lookup query that fails because the server went away is tried again
// the same way. Passwords never appear in errors or logs: the connection
// is shown as user@tcp(addr)/db.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the source's options.
type Config struct {
	DSN      string       `yaml:"dsn"`
	URL      string       `yaml:"url"`
	Username string       `yaml:"username"`
	Password string       `yaml:"password"`
	Table    string       `yaml:"table"`
	Query    string       `yaml:"query"`
	Scan     ScanConfig   `yaml:"scan"`
	Lookup   LookupConfig `yaml:"lookup"`
	// Mode is scan (the default) or cdc, binlog capture (cdc.go), which
	// the options below are for.
	Mode      string          `yaml:"mode"`
	Tables    []string        `yaml:"tables"`
	ServerID  uint32          `yaml:"server_id"`
	Stop      string          `yaml:"stop"`
	Heartbeat HeartbeatConfig `yaml:"heartbeat"`
}

// ScanConfig is the scan.* options.
type ScanConfig struct {
	Partition PartitionConfig `yaml:"partition"`
	FetchSize int             `yaml:"fetch_size"`
	// Startup is binlog capture's scan.startup.
	Startup StartupConfig `yaml:"startup"`
}

// PartitionConfig is scan.partition.*.
type PartitionConfig struct {
	Column     string `yaml:"column"`
	Num        int    `yaml:"num"`
	LowerBound *int64 `yaml:"lower_bound"`
	UpperBound *int64 `yaml:"upper_bound"`
}

// LookupConfig is lookup.*.
type LookupConfig struct {
	Cache        string             `yaml:"cache"`
	PartialCache PartialCacheConfig `yaml:"partial_cache"`
	MaxRetries   int                `yaml:"max_retries"`
	BatchSize    int                `yaml:"batch_size"`
}

// PartialCacheConfig is lookup.partial_cache.*.
type PartialCacheConfig struct {
	MaxRows           int           `yaml:"max_rows"`
	ExpireAfterWrite  time.Duration `yaml:"expire_after_write"`
	ExpireAfterAccess time.Duration `yaml:"expire_after_access"`
	CacheMissingKey   *bool         `yaml:"cache_missing_key"`
}

// Defaults.
const (
	DefaultFetchSize = 1024
	// DefaultLookupBatchSize is above the rows of an input batch (1024
	// by default), so that a batch's keys are one query: a cap of 1000
	// sent a second query of a few keys for nearly every batch, twice the
	// round trips of a hand-written loop.
	DefaultLookupBatchSize = 4096
	DefaultCacheMaxRows    = 10000
)

// New builds the source. It checks the options and does no I/O.
func New(cfg Config, env connector.SourceEnv) (*Source, error) {
	var errs []error
	switch {
	case cfg.Table == "" && cfg.Query == "":
		errs = append(errs, connector.Errorf("table", "missing: name the table to read (or give query)"))
	case cfg.Table != "" && cfg.Query != "":
		errs = append(errs, connector.Errorf("query", "give either table or query, not both"))
	case len(cfg.Table) > 64:
		errs = append(errs, connector.Errorf("table", "%q is longer than the 64 characters a MySQL table name may have", cfg.Table))
	}
	switch strings.ToLower(cfg.Mode) {
	case "", "scan":
	default:
		errs = append(errs, connector.UnknownValue("mode", "mode", cfg.Mode, "scan", "cdc"))
	}
	errs = append(errs, cdcOnly(cfg)...)
	p := cfg.Scan.Partition
	if p.Column != "" || p.Num != 0 || p.LowerBound != nil || p.UpperBound != nil {
		switch {
		case p.Column == "":
			errs = append(errs, connector.Errorf("scan.partition.column", "missing: scan.partition.* needs the numeric column to split the scan by"))
		case env.Schema.Index(p.Column) < 0:
			errs = append(errs, connector.Errorf("scan.partition.column", "%q is not a column of the schema", p.Column))
		case !env.Schema.Fields[env.Schema.Index(p.Column)].Type.ID.Integral():
			errs = append(errs, connector.Errorf("scan.partition.column", "%q is %s: a partition column must be INT or BIGINT", p.Column, env.Schema.Fields[env.Schema.Index(p.Column)].Type))
		}
		if p.Num < 1 {
			errs = append(errs, connector.Errorf("scan.partition.num", "must be 1 or more, got %d", p.Num))
		}
		if p.LowerBound == nil || p.UpperBound == nil {
			errs = append(errs, connector.Errorf("scan.partition", "lower_bound and upper_bound are both needed, as in Flink"))
		} else if *p.LowerBound > *p.UpperBound {
			errs = append(errs, connector.Errorf("scan.partition.upper_bound", "%d is below lower_bound %d", *p.UpperBound, *p.LowerBound))
		}
	}
	if cfg.Scan.FetchSize < 0 {
		errs = append(errs, connector.Errorf("scan.fetch_size", "must be 0 (the default, %d) or more, got %d", DefaultFetchSize, cfg.Scan.FetchSize))
	}
	lk := cfg.Lookup
	switch strings.ToLower(lk.Cache) {
	case "", "none", "partial":
	default:
		errs = append(errs, connector.UnknownValue("lookup.cache", "cache", lk.Cache, "none", "partial"))
	}
	if lk.MaxRetries < 0 {
		errs = append(errs, connector.Errorf("lookup.max_retries", "must be 0 (retry until the pipeline stops) or more, got %d", lk.MaxRetries))
	}
	if lk.BatchSize < 0 {
		errs = append(errs, connector.Errorf("lookup.batch_size", "must be 0 (the default, %d) or more, got %d", DefaultLookupBatchSize, lk.BatchSize))
	}
	if pc := lk.PartialCache; pc.MaxRows < 0 || pc.ExpireAfterWrite < 0 || pc.ExpireAfterAccess < 0 {
		errs = append(errs, connector.Errorf("lookup.partial_cache", "max_rows and the expiries must not be negative"))
	}
	if strings.ToLower(lk.Cache) != "partial" && (lk.PartialCache != PartialCacheConfig{}) {
		errs = append(errs, connector.Errorf("lookup.partial_cache", "is set but lookup.cache is not partial: set lookup.cache: partial"))
	}
	for _, f := range env.Schema.Fields {
		if f.Type.ID.Nested() {
			errs = append(errs, connector.Errorf("", "column %s is %s: a MySQL table has no such column type", f.Name, f.Type))
		}
	}
	if env.Schema.Len() == 0 {
		errs = append(errs, connector.Errorf("", "the schema lists no columns: list the table's columns to read, e.g. `- id BIGINT`"))
	}
	opts := mysqlconn.Options{DSN: cfg.DSN, URL: cfg.URL, Username: cfg.Username, Password: cfg.Password}
	dc, err := mysqlconn.DriverConfig(opts)
	var fe *mysqlconn.FieldError
	if errors.As(err, &fe) {
		err = connector.Errorf(fe.Field, "%s", fe.Msg)
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// One round trip per query: the driver escapes the parameters into
	// the statement text instead of preparing, executing and closing a
	// statement each time.
	dc.InterpolateParams = true
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dc.Logger = driverLogger{logger}
	s := &Source{
		name:   env.Name,
		given:  cfg,
		dc:     dc,
		target: mysqlconn.Redact(dc),
		schema: env.Schema,
		logger: logger,
		reject: env.Reject,
		fetch:  cfg.Scan.FetchSize,
	}
	if s.fetch == 0 {
		s.fetch = DefaultFetchSize
	}
	s.ranges = planRanges(cfg.Scan.Partition)
	s.progress = make([]rangeProgress, len(s.ranges))
	return s, nil
}

// Register adds the source as type mysql and, for Flink's JDBC
// connector's pipelines, as type jdbc.
func Register(r *connector.Registry) {
	connector.RegisterSource(r, "mysql", "reads a MySQL or MariaDB table once (bounded, in parallel ranges with scan.partition), and is a lookup table for lookup joins; mode: cdc captures tables' changes from the binlog",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) {
			if isCDC(cfg) {
				return NewCDC(cfg, env)
			}
			return New(cfg, env)
		})
	connector.RegisterSource(r, "jdbc", "Flink's JDBC connector for MySQL/MariaDB (url: jdbc:mysql://host:port/db); the mysql source",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) {
			if cfg.URL == "" {
				return nil, connector.Errorf("url", "missing: type jdbc needs url: jdbc:mysql://host:port/database (or use type: mysql with dsn)")
			}
			if isCDC(cfg) {
				return nil, connector.Errorf("mode", "type jdbc is Flink's JDBC connector, a scan: capture the binlog with type: mysql, mode: cdc")
			}
			return New(cfg, env)
		})
}

// Source scans a MySQL table. Open, Read, Position and Close are called
// from one goroutine.
type Source struct {
	name   string
	given  Config
	dc     *mysql.Config
	target string
	schema row.Schema
	logger *slog.Logger
	reject func(connector.BadRecord) error
	fetch  int

	ranges   []scanRange
	progress []rangeProgress // by range; guarded by mu once Open started the readers

	db     *sql.DB
	pk     []string // the table's primary key columns, "" when none
	cancel context.CancelFunc
	wg     sync.WaitGroup
	out    chan scanned
	mu     sync.Mutex
	open   int // readers still running
	closed bool
}

// scanned is what a range reader hands Read: the next read rows of the
// table, those that became rows and those that did not (bad, for
// on_error, which Read calls: a reader running ahead of the position
// must not make dead letters a restored run makes again), or the
// range's end or error.
type scanned struct {
	rng  int
	read int64 // table rows read, good and bad
	rows []row.Row
	bad  []connector.BadRecord
	done bool
	err  error
}

// Bounded: a scan ends.
func (s *Source) Bounded() bool { return true }

// Open connects (waiting while the server is unreachable), finds the
// table's primary key and starts one reader per range not yet done.
func (s *Source) Open(ctx context.Context) error {
	if s.db != nil || s.closed {
		return s.errorf("opened twice")
	}
	conn, err := mysql.NewConnector(s.dc)
	if err != nil {
		return s.errorf("%v", err)
	}
	s.db = sql.OpenDB(conn)
	s.db.SetMaxOpenConns(len(s.ranges) + 1)
	if err := connect(ctx, s.db, s.logger.With("target", s.target)); err != nil {
		return s.errorf("connect: %w", err)
	}
	if s.given.Table != "" {
		if s.pk, err = primaryKey(ctx, s.db, s.given.Table); err != nil {
			return s.errorf("%w", err)
		}
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.out = make(chan scanned, 2*len(s.ranges)+2)
	for i := range s.ranges {
		if s.progress[i].Done {
			continue
		}
		s.open++
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.readRange(rctx, i)
		}()
	}
	s.logger.Debug("opened", "target", s.target, "ranges", len(s.ranges), "primary_key", strings.Join(s.pk, ","))
	return nil
}

// Read returns the next batch of rows of any range, io.EOF once every
// range is done.
func (s *Source) Read(ctx context.Context, max int) (*row.Batch, error) {
	if s.db == nil {
		return nil, s.errorf("read before open")
	}
	for s.open > 0 {
		var m scanned
		select {
		case m = <-s.out:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if m.err != nil {
			return nil, m.err
		}
		for _, bad := range m.bad {
			if err := s.reject(bad); err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		if m.done {
			s.progress[m.rng].Done = true
			s.open--
		}
		s.progress[m.rng].Rows += m.read
		s.mu.Unlock()
		if len(m.rows) == 0 {
			continue
		}
		b := &row.Batch{Changes: make([]row.Change, 0, len(m.rows))}
		for _, r := range m.rows {
			b.Append(row.Insert, r)
		}
		return b, nil
	}
	return nil, io.EOF
}

// Close stops the readers and releases the connections; safe after a
// failed Open and twice.
func (s *Source) Close(ctx context.Context) error {
	s.closed = true
	if s.cancel != nil {
		s.cancel()
		// Readers blocked on a full channel see the cancel.
		s.wg.Wait()
		s.cancel = nil
	}
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	if err != nil {
		return s.errorf("close: %w", err)
	}
	return nil
}

// errorf names the table and the connection (without its password).
func (s *Source) errorf(format string, args ...any) error {
	what := "table " + mysqlconn.Quote(s.given.Table)
	if s.given.Table == "" {
		what = "query"
	}
	return fmt.Errorf("mysql %s at %s: "+format, append([]any{what, s.target}, args...)...)
}

// connect pings until the server answers, with the sinks' backoff; an
// error that waiting cannot fix (access denied, no such database) ends
// it at once.
func connect(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	return retry.Do(ctx, retry.Sink, logger, "mysql connect", func(ctx context.Context) error {
		err := db.PingContext(ctx)
		if err != nil && !mysqlconn.Transient(err) {
			return retry.Permanent(err)
		}
		return err
	})
}

// primaryKey returns the table's primary key columns in order, nil when
// it has none; an unknown table is an error.
func primaryKey(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table).Scan(&n); err != nil {
		return nil, fmt.Errorf("look the table up: %w", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("no such table in the connection's database")
	}
	rows, err := db.QueryContext(ctx, "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", table)
	if err != nil {
		return nil, fmt.Errorf("read the primary key: %w", err)
	}
	defer rows.Close()
	var pk []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("read the primary key: %w", err)
		}
		pk = append(pk, c)
	}
	return pk, rows.Err()
}

// driverLogger hands go-sql-driver's messages to slog at debug level.
type driverLogger struct{ l *slog.Logger }

func (d driverLogger) Print(v ...any) {
	d.l.Debug("mysql driver: " + strings.TrimSpace(fmt.Sprint(v...)))
}

var (
	_ connector.Source       = (*Source)(nil)
	_ connector.Positioner   = (*Source)(nil)
	_ connector.LookupSource = (*Source)(nil)
)
