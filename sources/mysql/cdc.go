package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Binlog capture (mode: cdc), after Flink CDC's mysql-cdc connector
// (its option names in brackets):
//
//   - tables [table-name]: the tables to capture, "t" (in the
//     connection's database) or "db.t"; table names one.
//   - server_id [server-id]: the replica id the source registers with;
//     by default a random one from 5400 to 6400, as Flink CDC draws.
//   - scan.startup.mode [scan.startup.mode]: initial (default: a
//     snapshot, then the binlog from the snapshot's position),
//     snapshot (the snapshot only, bounded), latest-offset,
//     earliest-offset or specific-offset.
//   - scan.startup.specific_offset.file, .pos, .gtid_set
//     [scan.startup.specific-offset.file, .pos, .gtid-set].
//   - scan.fetch_size [scan.snapshot.fetch.size]: snapshot rows per batch.
//   - stop: latest: bounded, reads the binlog up to its end when the
//     source first opened (kept in the checkpoint).
//   - heartbeat.interval [heartbeat.interval]: how often the server
//     sends a heartbeat on a quiet binlog (30s); a connection silent for
//     three intervals is taken for lost and made again.
//
// The server must log ROW events with FULL row images and FULL row
// metadata (the column names): a source refuses any other server with
// the setting to change. Every captured table needs a primary key.

// StartupConfig is scan.startup.*.
type StartupConfig struct {
	Mode           string       `yaml:"mode"`
	SpecificOffset OffsetConfig `yaml:"specific_offset"`
}

// OffsetConfig is scan.startup.specific_offset.*: a binlog file and
// position, or a GTID set.
type OffsetConfig struct {
	File    string `yaml:"file"`
	Pos     uint32 `yaml:"pos"`
	GTIDSet string `yaml:"gtid_set"`
}

// HeartbeatConfig is heartbeat.*.
type HeartbeatConfig struct {
	Interval time.Duration `yaml:"interval"`
}

// Startup modes.
const (
	startInitial  = "initial"
	startSnapshot = "snapshot"
	startLatest   = "latest-offset"
	startEarliest = "earliest-offset"
	startSpecific = "specific-offset"
)

// Defaults of binlog capture.
const (
	DefaultHeartbeat = 30 * time.Second
	// binlogLinger is how long Read waits for more changes once it has
	// one.
	binlogLinger = 20 * time.Millisecond
)

// The metadata keys: Flink CDC's, then etld's own.
const (
	metaDatabase = "database_name"
	metaTable    = "table_name"
	metaOpTS     = "op_ts"
	metaRowKind  = "row_kind"
	metaFile     = "binlog_file"
	metaPos      = "binlog_pos"
	metaGTID     = "gtid"
)

var cdcMetadata = map[string]row.Type{
	metaDatabase: row.Of(row.String),
	metaTable:    row.Of(row.String),
	metaOpTS:     row.Type{ID: row.TimestampLTZ, Precision: 3},
	metaRowKind:  row.Of(row.String),
	metaFile:     row.Of(row.String),
	metaPos:      row.Of(row.BigInt),
	metaGTID:     row.Of(row.String),
}

// isCDC reports whether the options ask for binlog capture.
func isCDC(cfg Config) bool { return strings.EqualFold(cfg.Mode, "cdc") }

// cdcOnly names the binlog capture options set in a scan's options.
func cdcOnly(cfg Config) []error {
	var errs []error
	only := func(field string, set bool) {
		if set {
			errs = append(errs, connector.Errorf(field, "is an option of binlog capture: set mode: cdc"))
		}
	}
	only("tables", len(cfg.Tables) > 0)
	only("server_id", cfg.ServerID != 0)
	only("stop", cfg.Stop != "")
	only("heartbeat", cfg.Heartbeat != HeartbeatConfig{})
	only("scan.startup", cfg.Scan.Startup != StartupConfig{})
	return errs
}

// CDC is the binlog capture source: a consistent snapshot of the
// tables, then their changes from the binlog. Open, Read, Position and
// Close are called from one goroutine.
type CDC struct {
	name     string
	given    Config
	dc       *driver.Config
	target   string
	schema   row.Schema
	meta     []string // parallels schema: the metadata key of a column, "" for a table's
	physical []int    // the table columns of the schema, in order
	logger   *slog.Logger
	reject   func(connector.BadRecord) error
	fetch    int
	tables   []tableName
	startup  string
	serverID uint32
	beat     time.Duration

	st       cdcState
	restored bool
	gset     mysql.GTIDSet // the transactions read, in the server's flavor

	db     *sql.DB
	server serverInfo
	info   []*tableInfo // parallels tables
	life   context.Context
	cancel context.CancelFunc
	snap   *snapshot
	// stale is the +I/-D pairs a resumed snapshot hands on first
	// (cdc_resume.go).
	stale  []row.Change
	bl     *binlogReader
	slab   *rowSlab
	closed bool
	// reread: a backfill's read (cdc_reread.go), of a snapshot or of
	// the binlog up to rangeTo.
	reread  string
	rangeTo *cdcState
}

// NewCDC builds a binlog capture source (mode: cdc). It checks the
// options and does no I/O.
func NewCDC(cfg Config, env connector.SourceEnv) (*CDC, error) {
	var errs []error
	switch {
	case cfg.Table == "" && len(cfg.Tables) == 0:
		errs = append(errs, connector.Errorf("tables", "missing: name the tables to capture (or one in table)"))
	case cfg.Table != "" && len(cfg.Tables) > 0:
		errs = append(errs, connector.Errorf("tables", "give either table or tables, not both"))
	}
	names := cfg.Tables
	if cfg.Table != "" {
		names = []string{cfg.Table}
	}
	for i, n := range names {
		db, t, _ := strings.Cut(n, ".")
		if t == "" {
			t, db = db, ""
		}
		if t == "" || len(t) > 64 || len(db) > 64 || strings.Contains(t, ".") {
			errs = append(errs, connector.Errorf(fmt.Sprintf("tables[%d]", i), "%q is not a table name: write table or database.table", n))
		}
	}
	if cfg.Query != "" {
		errs = append(errs, connector.Errorf("query", "binlog capture reads tables, not a query"))
	}
	if p := cfg.Scan.Partition; p != (PartitionConfig{}) {
		errs = append(errs, connector.Errorf("scan.partition", "is an option of a scan (mode: scan): binlog capture reads each table in one snapshot"))
	}
	if cfg.Lookup != (LookupConfig{}) {
		errs = append(errs, connector.Errorf("lookup", "a binlog capture is not a lookup table: read the table with mode: scan for a lookup join"))
	}
	if cfg.Scan.FetchSize < 0 {
		errs = append(errs, connector.Errorf("scan.fetch_size", "must be 0 (the default, %d) or more, got %d", DefaultFetchSize, cfg.Scan.FetchSize))
	}
	startup := strings.ToLower(cfg.Scan.Startup.Mode)
	off := cfg.Scan.Startup.SpecificOffset
	switch startup {
	case "":
		startup = startInitial
	case startInitial, startSnapshot, startLatest, startEarliest:
	case startSpecific:
		if (off.File == "") == (off.GTIDSet == "") {
			errs = append(errs, connector.Errorf("scan.startup.specific_offset", "give file and pos, or gtid_set"))
		}
	default:
		errs = append(errs, connector.UnknownValue("scan.startup.mode", "startup mode", cfg.Scan.Startup.Mode, startInitial, startSnapshot, startLatest, startEarliest, startSpecific))
	}
	if startup != startSpecific && off != (OffsetConfig{}) {
		errs = append(errs, connector.Errorf("scan.startup.specific_offset", "is set but scan.startup.mode is not specific-offset"))
	}
	if off.File != "" && off.Pos < 4 {
		errs = append(errs, connector.Errorf("scan.startup.specific_offset.pos", "must be 4 or more (a binlog's first event is at 4), got %d", off.Pos))
	}
	switch strings.ToLower(cfg.Stop) {
	case "":
	case "latest":
		if startup == startSnapshot {
			errs = append(errs, connector.Errorf("stop", "scan.startup.mode snapshot reads no binlog: it ends after the snapshot by itself"))
		}
	default:
		errs = append(errs, connector.UnknownValue("stop", "stop", cfg.Stop, "latest"))
	}
	if cfg.Heartbeat.Interval < 0 {
		errs = append(errs, connector.Errorf("heartbeat.interval", "must not be negative"))
	}
	s := &CDC{name: env.Name, given: cfg, schema: env.Schema, meta: env.Metadata, reject: env.Reject,
		fetch: cfg.Scan.FetchSize, startup: startup, serverID: cfg.ServerID, beat: cfg.Heartbeat.Interval}
	for i, f := range env.Schema.Fields {
		if i < len(env.Metadata) && env.Metadata[i] != "" {
			continue
		}
		if f.Type.ID.Nested() {
			errs = append(errs, connector.Errorf("", "column %s is %s: a MySQL table has no such column type", f.Name, f.Type))
		}
		s.physical = append(s.physical, i)
	}
	if len(s.physical) == 0 {
		errs = append(errs, connector.Errorf("", "the schema lists no table columns: list the columns to capture, e.g. `- id BIGINT`"))
	}
	dc, err := driverConfig(cfg)
	errs = append(errs, err)
	if err == nil && dc.Net != "tcp" {
		errs = append(errs, connector.Errorf(mysqlconn.Options{DSN: cfg.DSN, URL: cfg.URL}.Field(), "binlog capture connects over TCP: give tcp(host:port), not %s", dc.Net))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.dc = dc
	s.target = mysqlconn.Redact(dc)
	s.tables = parseTables(names, dc.DBName)
	s.logger = env.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With("target", s.target)
	dc.Logger = driverLogger{s.logger}
	if s.fetch == 0 {
		s.fetch = DefaultFetchSize
	}
	if s.beat == 0 {
		s.beat = DefaultHeartbeat
	}
	if s.serverID == 0 {
		s.serverID = 5400 + rand.Uint32N(1001)
	}
	return s, nil
}

// driverConfig is the go-sql-driver config of the connection options.
func driverConfig(cfg Config) (*driver.Config, error) {
	dc, err := mysqlconn.DriverConfig(mysqlconn.Options{DSN: cfg.DSN, URL: cfg.URL, Username: cfg.Username, Password: cfg.Password})
	var fe *mysqlconn.FieldError
	if errors.As(err, &fe) {
		return nil, connector.Errorf(fe.Field, "%s", fe.Msg)
	}
	if err != nil {
		return nil, err
	}
	dc.InterpolateParams = true
	return dc, nil
}

// Bounded: a snapshot alone ends, and so does stop: latest.
func (s *CDC) Bounded() bool {
	return s.startup == startSnapshot || strings.EqualFold(s.given.Stop, "latest") || s.reread != ""
}

// Updating: the binlog holds updates and deletes.
func (s *CDC) Updating() bool { return true }

// MetadataKeys lists the metadata columns the source fills.
func (s *CDC) MetadataKeys() map[string]row.Type {
	out := make(map[string]row.Type, len(cdcMetadata))
	for k, v := range cdcMetadata {
		out[k] = v
	}
	return out
}

// Open connects (waiting while the server is unreachable), checks that
// the server's binlog can be captured and that every table has the
// schema's columns and a primary key, and finds where to start: the
// restored position, or the startup mode's.
func (s *CDC) Open(ctx context.Context) error {
	if s.db != nil || s.closed {
		return s.errorf("opened twice")
	}
	conn, err := driver.NewConnector(s.dc)
	if err != nil {
		return s.errorf("%v", err)
	}
	s.db = sql.OpenDB(conn)
	s.db.SetMaxOpenConns(4)
	if err := connect(ctx, s.db, s.logger); err != nil {
		return s.errorf("connect: %w", err)
	}
	if s.server, err = checkServer(ctx, s.db); err != nil {
		return s.errorf("%w", err)
	}
	s.info = make([]*tableInfo, len(s.tables))
	for i, t := range s.tables {
		if s.info[i], err = describeTable(ctx, s.db, t); err != nil {
			return s.errorf("%w", err)
		}
		if err := s.info[i].checkColumns(s.schema, s.physical); err != nil {
			return s.errorf("%w", err)
		}
	}
	if s.restored {
		err = s.checkRestored()
	} else {
		err = s.startAt(ctx)
	}
	if err != nil {
		return s.errorf("%w", err)
	}
	if s.gset, err = mysql.ParseGTIDSet(s.server.flavor(), s.st.GTID); err != nil {
		return s.errorf("the GTID set %q: %w", s.st.GTID, err)
	}
	if s.Bounded() && s.startup != startSnapshot && s.st.Stop == nil && s.reread == "" {
		end, err := binlogEnd(ctx, s.db)
		if err != nil {
			return s.errorf("%w", err)
		}
		s.st.Stop = &end
	}
	if !s.st.Snapshot && s.st.Binlog.File != "" {
		if err := checkOnServer(ctx, s.db, s.st.Binlog); err != nil {
			return s.errorf("%w", err)
		}
	}
	s.life, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.slab = &rowSlab{}
	s.logger.Info("binlog capture opened", "tables", s.tableList(), "server_id", s.serverID,
		"snapshot", s.st.Snapshot, "binlog", s.st.Binlog.String(), "gtid", s.st.GTID, "server", s.server.version)
	return nil
}

// startAt sets the position of a source without a checkpoint from its
// startup mode.
func (s *CDC) startAt(ctx context.Context) error {
	s.st.Captured = s.tableList()
	switch s.startup {
	case startSnapshot:
		s.st.Snapshot = true // the position is the snapshot's
	case startInitial:
		s.st.Snapshot = true
		if s.reread != "" {
			// A backfill's snapshot goes to fresh operators: its own
			// position is where it stands, with no rows deleted before
			// it to hand on (cdc_resume.go).
			return nil
		}
		// The binlog is read from here until the snapshot starts and
		// its position takes over: a checkpoint taken before then names
		// where a restored run scans from for the rows deleted before its
		// snapshot (cdc_resume.go), which this run may have handed on.
		end, err := binlogEnd(ctx, s.db)
		if err != nil {
			return err
		}
		s.st.Binlog, s.st.GTID = end, gtidAt(ctx, s.db, s.server, end)
	case startLatest:
		end, err := binlogEnd(ctx, s.db)
		if err != nil {
			return err
		}
		s.st.Binlog, s.st.GTID = end, gtidAt(ctx, s.db, s.server, end)
	case startEarliest:
		files, err := binlogFiles(ctx, s.db)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return errors.New("the server has no binary log")
		}
		s.st.Binlog = binlogPos{File: files[0], Pos: 4}
	case startSpecific:
		off := s.given.Scan.Startup.SpecificOffset
		if off.File != "" {
			s.st.Binlog = binlogPos{File: off.File, Pos: off.Pos}
			s.st.GTID = gtidAt(ctx, s.db, s.server, s.st.Binlog)
		} else {
			s.st.GTID = off.GTIDSet
		}
	}
	return nil
}

// checkRestored refuses a checkpoint of other tables: a table added to
// a running capture would have no snapshot, a table left out would
// leave its rows behind.
func (s *CDC) checkRestored() error {
	if got := s.tableList(); !slices.Equal(s.st.Captured, got) {
		return fmt.Errorf("the checkpoint captured %s; the source now names %s: a table added to a running capture would have no snapshot; reset the pipeline's state (etld state reset) to capture them all from a new snapshot",
			strings.Join(s.st.Captured, ", "), strings.Join(got, ", "))
	}
	return nil
}

// tableList is the captured tables as db.table, sorted.
func (s *CDC) tableList() []string {
	out := make([]string, len(s.tables))
	for i, t := range s.tables {
		out[i] = t.String()
	}
	slices.Sort(out)
	return out
}

// Read returns the snapshot's rows as +I, then the binlog's changes of
// the tables, io.EOF at the end of a bounded capture.
func (s *CDC) Read(ctx context.Context, max int) (*row.Batch, error) {
	if s.db == nil {
		return nil, s.errorf("read before open")
	}
	if s.st.Snapshot {
		b, err := s.readSnapshot(ctx, max)
		if err != nil || b != nil {
			return b, err
		}
	}
	if s.startup == startSnapshot || s.reread == rereadSnapshot {
		return nil, io.EOF
	}
	return s.readBinlog(ctx, max)
}

// Position implements connector.Positioner: the binlog position after
// the last batch Read returned, and the snapshot's progress.
func (s *CDC) Position() ([]byte, error) {
	st := s.st
	if s.gset != nil {
		st.GTID = s.gset.String()
	}
	return json.Marshal(st)
}

// Restore implements connector.Positioner.
func (s *CDC) Restore(pos []byte) error {
	var st cdcState
	if err := json.Unmarshal(pos, &st); err != nil {
		return s.errorf("restore: %w", err)
	}
	s.st, s.restored = st, true
	return nil
}

// Close stops reading and releases the connections; safe after a failed
// Open and twice.
func (s *CDC) Close(ctx context.Context) error {
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	s.closeSnapshot()
	s.closeBinlog()
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

// changeMeta is what the metadata columns of a change are filled from.
type changeMeta struct {
	table tableName
	kind  row.Kind
	opTS  int64 // micros; 0 for the snapshot, as in Flink CDC
	pos   binlogPos
	gtid  string
}

// fillMeta sets the metadata columns of r.
func (s *CDC) fillMeta(r row.Row, m changeMeta) {
	for i, key := range s.meta {
		switch key {
		case "":
		case metaDatabase:
			r[i] = row.StringValue(m.table.db)
		case metaTable:
			r[i] = row.StringValue(m.table.name)
		case metaOpTS:
			r[i] = row.TimestampLTZValue(m.opTS)
		case metaRowKind:
			r[i] = row.StringValue(m.kind.String())
		case metaFile:
			r[i] = row.StringValue(m.pos.File)
		case metaPos:
			r[i] = row.BigIntValue(int64(m.pos.Pos))
		case metaGTID:
			if m.gtid == "" {
				r[i] = row.NullValue
			} else {
				r[i] = row.StringValue(m.gtid)
			}
		}
	}
}

// errorf names the tables and the connection (without its password).
func (s *CDC) errorf(format string, args ...any) error {
	names := make([]string, len(s.tables))
	for i, t := range s.tables {
		names[i] = t.String()
	}
	return fmt.Errorf("mysql binlog capture of %s at %s: "+format, append([]any{strings.Join(names, ", "), s.target}, args...)...)
}

// debugHandler logs the replication library's messages at debug level:
// the source logs what matters (a lost connection) itself.
type debugHandler struct{ slog.Handler }

func (h debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.Handler.Enabled(ctx, slog.LevelDebug)
}

func (h debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return h.Handler.Handle(ctx, r)
}

func (h debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugHandler{h.Handler.WithAttrs(attrs)}
}

func (h debugHandler) WithGroup(name string) slog.Handler {
	return debugHandler{h.Handler.WithGroup(name)}
}

var (
	_ connector.Source         = (*CDC)(nil)
	_ connector.Positioner     = (*CDC)(nil)
	_ connector.UpdatingSource = (*CDC)(nil)
	_ connector.MetadataSource = (*CDC)(nil)
)
