// Package postgres is the PostgreSQL change data capture source, `type:
// postgres`: a consistent snapshot of the chosen tables, then their
// changes from a logical replication slot (the pgoutput plugin, as
// Flink CDC's postgres-cdc connector reads it), as +I, -U/+U and -D.
//
// Options:
//
//   - dsn, url, username, password: the connection, as the postgres
//     sink takes it (postgres://user:password@host:5432/db, or
//     jdbc:postgresql://host:port/db). The user needs the REPLICATION
//     attribute, SELECT on the tables, and to create a publication, the
//     tables' ownership (or a publication made by an owner).
//   - table: the table to capture (name or schema.name); its columns are
//     the schema's. Or
//   - tables: several tables, each filling a ROW column of the schema
//     named after it (the table's name without its schema): a row of
//     orders sets the orders column and leaves the others NULL.
//   - slot (required unless startup is snapshot): the replication slot,
//     lower-case letters, digits and underscores. A slot is the server's
//     promise to keep the changes not yet confirmed; give each pipeline
//     a slot of its own.
//   - publication (default: the slot's name): the publication that names
//     the tables.
//   - create_slot, create_publication (default false): create the slot or
//     the publication (or add missing tables to it) when they are not
//     there; otherwise their absence is an error that says how to make
//     them.
//   - startup: initial (default: a snapshot, then the changes after it),
//     latest (no snapshot: the changes from the slot's position), or
//     snapshot (the snapshot alone, then the source ends: a bounded,
//     insert-only scan that needs no slot); Flink CDC's scan.startup.mode.
//   - stop: none (default) or latest: end once every change committed
//     before the source opened is read (a one-shot catch-up).
//   - fetch_size (default 1024): snapshot rows per batch handed on.
//
// Metadata columns (Flink CDC's names): table_name, schema_name,
// database_name (STRING), op_ts (TIMESTAMP_LTZ(3): the commit time of
// the change's transaction; 0 for a snapshot row, as in Flink CDC), and
// lsn (BIGINT: the commit LSN of the change's transaction, or the LSN of
// the snapshot a row was read in) and row_key (STRING: the row's key
// values as a JSON array of their text), which with several tables make
// a key: `key: [schema_name, table_name, row_key]`.
//
// # Snapshot and stream
//
// Each table's rows are read with COPY (SELECT ... ORDER BY key) TO
// STDOUT in a REPEATABLE READ transaction that imports a snapshot a
// temporary replication slot exported together with its exact LSN: the
// changes of every transaction that committed from that LSN on are in
// the stream, those before it in the snapshot. After the snapshot the
// source streams the permanent slot from that LSN. A checkpoint taken
// during the snapshot keeps the key of the last row handed on; a run
// restored from it takes a new snapshot for the rest of the table, and
// the stream then applies, to each row, only the transactions that
// committed at or after the snapshot the row was read in: the rows
// handed on, the rest and the changes add up to each change once. Such a
// new snapshot first hands on +I then -D of each row of the rest that the
// slot's changes before it deleted last, which a killed run may have
// written to an upsert sink (stale.go). A
// table without a primary key (or unique NOT NULL index) of a type the
// source orders (integers, numeric, text, varchar, uuid, dates,
// timestamps, boolean, bytea) is read in one piece, and a checkpoint in
// its middle cannot be resumed: the error says so.
//
// The stream needs each table's REPLICA IDENTITY FULL, so that an
// update and a delete carry the whole old row for -U and -D (a filter,
// an aggregate or a join downstream reads its other columns): any other
// identity is an error at start that gives the ALTER TABLE. The
// position, the end of the last transaction whose changes were all
// handed on (and how many of the current one's), is kept in checkpoints
// and confirmed to the server only after the checkpoint holding it
// completed (connector.Committer): a process killed at any moment
// restarts from its last checkpoint and reads everything after it again,
// skipping what it handed on, so an upsert sink ends exact. While the
// tables are quiet the position moves with the server's keepalives, so
// the slot frees WAL.
//
// A slot that was dropped while a checkpoint reads from it is an error
// that says so: the source never starts again from nothing by itself. A
// TRUNCATE of a captured table, a table dropped and created again, and a
// change of a column the source reads (dropped, renamed, type changed)
// are errors naming the change; a column added or changed that the
// source does not read is logged and taken. A lost connection or a
// server restart is retried with backoff (the server refuses the slot
// while its last session lingers: also retried), going on from what was
// read.
//
// # Type mapping
//
// Every column reads as STRING (PostgreSQL's text of it); besides:
//
//	etld type            column types
//	BOOLEAN              boolean
//	TINYINT ... BIGINT   smallint, integer, bigint
//	FLOAT, DOUBLE        real, double precision, numeric, integers
//	DECIMAL(p, s)        numeric, real, double precision, integers
//	BYTES                bytea
//	DATE, TIME           date, time
//	TIMESTAMP(p)         timestamp
//	TIMESTAMP_LTZ(p)     timestamptz
//	ARRAY<T>             an array of a type T reads from; json, jsonb
//	MAP<K, V>, ROW<...>  json, jsonb (an object; a ROW's fields by name)
//
// A value that does not fit its declared type (a numeric beyond the
// DECIMAL's precision, an infinite timestamp, a NaN into DECIMAL) is a
// bad record for on_error, named by its table and transaction.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the source's options.
type Config struct {
	DSN               string   `yaml:"dsn"`
	URL               string   `yaml:"url"`
	Username          string   `yaml:"username"`
	Password          string   `yaml:"password"`
	Table             string   `yaml:"table"`
	Tables            []string `yaml:"tables"`
	Slot              string   `yaml:"slot"`
	Publication       string   `yaml:"publication"`
	CreateSlot        bool     `yaml:"create_slot"`
	CreatePublication bool     `yaml:"create_publication"`
	Startup           string   `yaml:"startup"`
	Stop              string   `yaml:"stop"`
	FetchSize         int      `yaml:"fetch_size"`
	ChangelogMode     string   `yaml:"changelog_mode"`
}

// The startup option's values.
const (
	startupInitial  = "initial"
	startupLatest   = "latest"
	startupSnapshot = "snapshot"
)

// The changelog_mode option's values (Flink CDC's changelog-mode).
const (
	changelogAll    = "all"
	changelogUpsert = "upsert"
)

// DefaultFetchSize is fetch_size when not given.
const DefaultFetchSize = 1024

// slotName is what PostgreSQL takes as a slot's name.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// New builds the source. It checks the options and does no I/O.
func New(cfg Config, env connector.SourceEnv) (*Source, error) {
	var errs []error
	switch {
	case cfg.Table == "" && len(cfg.Tables) == 0:
		errs = append(errs, connector.Errorf("table", "missing: name the table to capture (or several with tables)"))
	case cfg.Table != "" && len(cfg.Tables) > 0:
		errs = append(errs, connector.Errorf("tables", "give either table or tables, not both"))
	}
	startup := strings.ToLower(cfg.Startup)
	switch startup {
	case "":
		startup = startupInitial
	case startupInitial, startupLatest, startupSnapshot:
	default:
		errs = append(errs, connector.UnknownValue("startup", "startup mode", cfg.Startup, startupInitial, startupLatest, startupSnapshot))
	}
	stop := strings.ToLower(cfg.Stop)
	switch stop {
	case "", "none":
		stop = ""
	case "latest":
	default:
		errs = append(errs, connector.UnknownValue("stop", "stop", cfg.Stop, "none", "latest"))
	}
	mode := strings.ToLower(cfg.ChangelogMode)
	switch mode {
	case "":
		mode = changelogAll
	case changelogAll, changelogUpsert:
	default:
		errs = append(errs, connector.UnknownValue("changelog_mode", "changelog mode", cfg.ChangelogMode, changelogAll, changelogUpsert))
	}
	switch {
	case cfg.Slot == "" && startup != startupSnapshot:
		errs = append(errs, connector.Errorf("slot", "missing: name the replication slot to read the changes from (startup: snapshot reads no slot)"))
	case cfg.Slot != "" && !slotName.MatchString(cfg.Slot):
		errs = append(errs, connector.Errorf("slot", "%q: a slot's name is 1 to 63 lower-case letters, digits and underscores", cfg.Slot))
	}
	publication := cfg.Publication
	if publication == "" {
		publication = cfg.Slot
	}
	if len(publication) > 63 {
		errs = append(errs, connector.Errorf("publication", "%q is longer than the 63 bytes a PostgreSQL name may have", publication))
	}
	if cfg.FetchSize < 0 {
		errs = append(errs, connector.Errorf("fetch_size", "must be 0 (the default, %d) or more, got %d", DefaultFetchSize, cfg.FetchSize))
	}
	cc, err := pgconf.Config(pgconf.Options{DSN: cfg.DSN, URL: cfg.URL, Username: cfg.Username, Password: cfg.Password})
	var fe *pgconf.FieldError
	if errors.As(err, &fe) {
		err = connector.Errorf(fe.Field, "%s", fe.Msg)
	}
	errs = append(errs, err)
	var caps []*capture
	var meta []metaCol
	if cfg.Table != "" || len(cfg.Tables) > 0 {
		caps, meta, err = newCaptures(cfg, env)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		name: env.Name, cfg: cfg, cc: cc, target: pgconf.Redact(cc),
		slot: cfg.Slot, publication: publication, startup: startup, stop: stop,
		upsert: mode == changelogUpsert, schema: env.Schema,
		fetch: cfg.FetchSize, logger: logger, reject: env.Reject,
		backoff: retry.Sink, caps: caps,
		build: &builder{width: env.Schema.Len(), meta: meta, database: cc.Database},
	}
	for _, m := range meta {
		s.hasRowKey = s.hasRowKey || m.key == metaRowKey
	}
	if s.fetch == 0 {
		s.fetch = DefaultFetchSize
	}
	return s, nil
}

// Register adds the source as type postgres.
func Register(r *connector.Registry) {
	connector.RegisterSource(r, "postgres", "captures PostgreSQL tables: a consistent snapshot, then their changes from a logical replication slot (pgoutput) as +I -U +U -D",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) { return New(cfg, env) })
}

// Source captures PostgreSQL tables. Restore, Open, Read, Position,
// Commit and Close are called from one goroutine.
type Source struct {
	name        string
	cfg         Config
	cc          *pgx.ConnConfig
	target      string
	slot        string
	publication string
	startup     string
	stop        string
	fetch       int
	logger      *slog.Logger
	reject      func(connector.BadRecord) error
	backoff     retry.Backoff
	caps        []*capture
	build       *builder
	hasRowKey   bool
	// upsert: changelog_mode upsert (upsert.go); upsertKey the declared
	// key's columns, which the planner names.
	upsert    bool
	upsertKey []string
	schema    row.Schema

	restored *position
	stopAt   pglogrepl.LSN
	// slotCreated: this run created the slot, which holds no change of
	// a run before.
	slotCreated bool
	// reread: a backfill's read (reread.go), of the snapshot or of a
	// range of the stream up to toDone (or toN changes of toTxn);
	// rereadEnd: the snapshot was read.
	reread        string
	toDone, toTxn pglogrepl.LSN
	toN           int
	rereadEnd     bool

	// Set by Open. readerCtx is the readers' context, which Close ends.
	readerCtx context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	phase     string
	tables    []tableState
	snapQ     *queue[snapChunk]
	chunks    []snapChunk
	at        snapCursor // how much of chunks[0] was handed on
	stream    *streamer
	items     []streamItem
	itemAt    int
	handed    handed
	confirm   pglogrepl.LSN // confirmed before the stream started
	opened    bool
	closed    bool
}

// snapChunks is how many chunks of snapshot rows the reader may hold
// ahead of Read: enough that a reader or a Read kept off the CPU for a
// while does not stall the other.
const snapChunks = 16

// phaseEnded: a bounded source read everything.
const phaseEnded = "ended"

// tableState is what Read has handed on of a table's snapshot.
type tableState struct {
	segments []segment
	lsn      pglogrepl.LSN // the snapshot being read, 0 when none
	last     []string
	done     bool
	def      []string
}

// handed is the stream's position as Read handed changes on.
type handed struct {
	done, txn pglogrepl.LSN
	n         int
}

// Bounded: a snapshot-only source, or one that stops at the WAL position
// it opened at, ends.
func (s *Source) Bounded() bool {
	return s.startup == startupSnapshot || s.stop != "" || s.reread != ""
}

// Updating: changes carry updates and deletes, but for a snapshot alone.
func (s *Source) Updating() bool { return s.startup != startupSnapshot }

// MetadataKeys lists the metadata columns the source fills.
func (s *Source) MetadataKeys() map[string]row.Type { return metadataKeys }

// Restore takes a position Position returned, before Open.
func (s *Source) Restore(pos []byte) error {
	p, err := decodePosition(pos)
	if err != nil {
		return err
	}
	s.restored = p
	return nil
}

// Open connects (waiting while the server is unreachable), checks the
// tables, the publication and the slot (creating them when asked) and
// starts reading the snapshot or the stream.
func (s *Source) Open(ctx context.Context) error {
	if s.opened || s.closed {
		return s.errorf("opened twice")
	}
	s.opened = true
	// The checks run on the connection just made: a server that goes
	// away meanwhile (a restart) ends it, and the whole is tried again.
	// Only a failure of the connection, or a transient server error, is:
	// prepare's own findings (a table with no key) are final.
	connected := false
	err := retry.Do(ctx, s.backoff, s.logger.With("target", s.target), "postgres connect", func(ctx context.Context) error {
		conn, err := pgx.ConnectConfig(ctx, s.cc)
		if err != nil {
			if pgconf.Classify(err) != pgconf.Transient {
				return retry.Permanent(err)
			}
			return err
		}
		connected = true
		defer conn.Close(context.WithoutCancel(ctx))
		err = s.prepare(ctx, conn)
		var pe *pgconn.PgError
		if err != nil && !conn.IsClosed() && (!errors.As(err, &pe) || pgconf.Classify(err) != pgconf.Transient) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil && !connected {
		return s.errorf("connect: %w", err)
	}
	if err != nil {
		return s.errorf("%w", err)
	}
	s.readerCtx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return s.start(s.readerCtx)
}

// prepare checks the tables, publication and slot, and reads where the
// run stops.
func (s *Source) prepare(ctx context.Context, conn *pgx.Conn) error {
	streams := s.startup != startupSnapshot
	for _, c := range s.caps {
		if err := c.check(ctx, conn, streams && !s.upsert); err != nil {
			return err
		}
		if streams && s.upsert {
			if err := c.checkIdentity(ctx, conn); err != nil {
				return err
			}
		}
	}
	if streams && s.upsert {
		if err := s.checkUpsertKey(); err != nil {
			return err
		}
	}
	if err := s.initTables(); err != nil {
		return err
	}
	if streams {
		if err := s.preparePublication(ctx, conn); err != nil {
			return err
		}
		if s.reread == rereadSnapshot {
			// The snapshot needs no slot; the ranges after it read the
			// backfill's, which must be there.
			si, err := s.readSlot(ctx, conn)
			if err != nil {
				return err
			}
			if !si.exists {
				return fmt.Errorf("the backfill's replication slot %s does not exist (dropped by another backfill of the pipeline?)", s.slot)
			}
			return nil
		}
		resumed, need := s.resumePoint()
		created, err := s.prepareSlot(ctx, conn, resumed, need)
		if err != nil {
			return err
		}
		s.slotCreated = created != 0
	}
	if s.stop != "" {
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()").Scan(&s.stopAt); err != nil {
			return fmt.Errorf("read the server's WAL position: %w", err)
		}
	}
	return nil
}

// start starts the reader of the run's first phase.
func (s *Source) start(ctx context.Context) error {
	p := s.restored
	if p != nil && p.Phase == phaseStream {
		done, _ := parseLSN(p.Done)
		txn, _ := parseLSN(p.Txn)
		s.handed = handed{done: done, txn: txn, n: p.Handed}
		return s.startStream(ctx)
	}
	if p == nil && s.startup == startupLatest {
		for i := range s.tables {
			s.tables[i].done = true
		}
		return s.startStream(ctx)
	}
	var todo []snapTable
	for i, ts := range s.tables {
		if !ts.done {
			todo = append(todo, snapTable{table: i, after: ts.last})
		}
	}
	s.phase = phaseSnapshot
	s.snapQ = newQueue[snapChunk](snapChunks)
	// A run restored mid-snapshot, or one that finds the slot made by a
	// run killed before its first checkpoint, reads the rest of tables
	// some run may have handed on more of (stale.go).
	// A backfill's snapshot goes to fresh operators and tables: nothing
	// downstream holds a row of another.
	sn := &snapshotter{s: s, tables: todo, q: s.snapQ, scan: (p != nil || !s.slotCreated) && s.reread == ""}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		sn.run(ctx)
	}()
	return nil
}

// startStream starts streaming after the snapshot: from the oldest
// segment's LSN (a fresh run) or the restored position, each table's
// changes checked against its segments.
func (s *Source) startStream(ctx context.Context) error {
	for i, c := range s.caps {
		w, err := newWindow(s.tables[i].segments, c.keyKinds)
		if err != nil {
			return s.errorf("table %s: %w", c.table, err)
		}
		c.window = w
	}
	if s.handed.done == 0 && s.handed.txn == 0 {
		var oldest pglogrepl.LSN
		for _, c := range s.caps {
			for _, l := range c.window.lsn {
				if oldest == 0 || l < oldest {
					oldest = l
				}
			}
		}
		s.handed.done = oldest
	}
	s.phase = phaseStream
	s.stream = newStreamer(s, s.handed.done, s.handed.txn, s.handed.n)
	s.stream.confirm.Store(uint64(s.confirm))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.stream.run(ctx)
	}()
	return nil
}

// Read returns the next batch: snapshot rows, then changes.
func (s *Source) Read(ctx context.Context, max int) (*row.Batch, error) {
	if !s.opened || s.closed {
		return nil, s.errorf("read before open or after close")
	}
	for {
		switch s.phase {
		case phaseSnapshot:
			b, err := s.readSnapshot(ctx, max)
			if b != nil || err != nil || s.phase == phaseSnapshot {
				return b, err
			}
		case phaseStream:
			return s.readStream(ctx, max)
		default:
			return nil, io.EOF
		}
	}
}

// Close stops the readers and their connections; safe after a failed
// Open and twice.
func (s *Source) Close(ctx context.Context) error {
	s.closed = true
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
		s.cancel = nil
	}
	return nil
}

// errorf names the source's tables and the connection (without its
// password).
func (s *Source) errorf(format string, args ...any) error {
	names := make([]string, len(s.caps))
	for i, c := range s.caps {
		names[i] = c.name
	}
	return fmt.Errorf("postgres %s at %s: "+format, append([]any{strings.Join(names, ", "), s.target}, args...)...)
}

var (
	_ connector.Source         = (*Source)(nil)
	_ connector.Positioner     = (*Source)(nil)
	_ connector.Committer      = (*Source)(nil)
	_ connector.MetadataSource = (*Source)(nil)
	_ connector.UpdatingSource = (*Source)(nil)
	_ connector.UpsertSource   = (*Source)(nil)
)
