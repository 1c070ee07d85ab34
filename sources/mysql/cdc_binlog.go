package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// binlogReader is one connection's read of the binlog, and where it is
// in it.
type binlogReader struct {
	syncer *replication.BinlogSyncer
	stream *replication.BinlogStreamer
	broken error // the stream's error, kept while Read hands on the rows before it

	// pending is a rows event whose rows are not all handed on; next is
	// its next row.
	pending *replication.BinlogEvent
	next    int
	// skip counts the row changes of the first transaction read that a
	// batch before the (re)start handed on.
	skip int64

	cur      binlogPos // after the last event read
	inTxn    bool
	began    bool // the transaction opened with a BEGIN statement
	txnStart binlogPos
	txnRows  int64 // row changes of the transaction read
	txnGTID  string
	opTS     int64 // the transaction's time, micros

	mappers map[uint64]*rowMapper // by table id
	// filterUntil: before it, a change applies to a row only after the
	// position its snapshot segment was read as of.
	filterUntil *binlogPos
}

// syncerConfig is the replica connection's configuration.
func (s *CDC) syncerConfig() (replication.BinlogSyncerConfig, error) {
	cfg := replication.BinlogSyncerConfig{
		ServerID:                s.serverID,
		Flavor:                  s.server.flavor(),
		User:                    s.dc.User,
		Password:                s.dc.Passwd,
		TLSConfig:               s.dc.TLS,
		Localhost:               "etld-" + s.name,
		Charset:                 "utf8mb4",
		TimestampStringLocation: timeUTC,
		HeartbeatPeriod:         s.beat,
		ReadTimeout:             3 * s.beat,
		DisableRetrySync:        true,
		Logger:                  slog.New(debugHandler{s.logger.Handler()}),
	}
	// The rows of other tables are not decoded: on a busy server they
	// are most of the binlog.
	cfg.RowsEventDecodeFunc = func(e *replication.RowsEvent, data []byte) error {
		at, err := e.DecodeHeader(data)
		if err != nil || s.captured(e.Table) == nil {
			return err
		}
		return e.DecodeData(at, data)
	}
	host, port, err := net.SplitHostPort(s.dc.Addr)
	if err != nil {
		return cfg, retry.Permanent(fmt.Errorf("address %s: %w", s.dc.Addr, err))
	}
	var p uint64
	if _, err := fmt.Sscan(port, &p); err != nil {
		return cfg, retry.Permanent(fmt.Errorf("port %s: %w", port, err))
	}
	cfg.Host, cfg.Port = host, uint16(p)
	return cfg, nil
}

// startBinlog connects a replica to the server and asks for the binlog
// from the position read so far.
func (s *CDC) startBinlog(ctx context.Context) error {
	cfg, err := s.syncerConfig()
	if err != nil {
		return err
	}
	bl := &binlogReader{syncer: replication.NewBinlogSyncer(cfg), skip: s.st.Skip, cur: s.st.Binlog, mappers: map[uint64]*rowMapper{}}
	if last, varied := s.st.lastAsOf(); varied {
		bl.filterUntil = &last
	} else {
		s.st.Tables = nil // every change applies: the progress is of no use
	}
	if s.st.Binlog.File == "" {
		bl.stream, err = bl.syncer.StartSyncGTID(s.gset.Clone())
	} else {
		bl.stream, err = bl.syncer.StartSync(mysql.Position{Name: s.st.Binlog.File, Pos: s.st.Binlog.Pos})
	}
	if err != nil {
		bl.syncer.Close()
		return classifyBinlog(err)
	}
	s.bl = bl
	s.logger.Debug("reading the binlog", "from", s.st.Binlog.String(), "skip", s.st.Skip, "gtid", s.gset.String())
	return nil
}

// closeBinlog ends the binlog connection.
func (s *CDC) closeBinlog() {
	if s.bl != nil {
		s.bl.syncer.Close()
		s.bl = nil
	}
}

// reconnect reads the binlog again from the position handed on, after
// the connection broke, waiting with backoff while the server is away.
func (s *CDC) reconnect(ctx context.Context, cause error) error {
	s.closeBinlog()
	s.logger.Warn("binlog connection lost: reconnecting", "error", cause, "at", s.st.Binlog.String())
	return retry.Do(ctx, retry.Sink.WithProbe(s.db.PingContext), s.logger, "mysql binlog", func(ctx context.Context) error {
		if s.st.Binlog.File != "" {
			err := checkOnServer(ctx, s.db, s.st.Binlog)
			if errors.As(err, new(*purgedError)) || (err != nil && !mysqlconn.Transient(err)) {
				return retry.Permanent(err)
			}
			if err != nil {
				return err
			}
		}
		return s.startBinlog(ctx)
	})
}

// classifyBinlog marks the errors of the binlog connection that waiting
// cannot fix permanent, with what to do about them.
func classifyBinlog(err error) error {
	var me *mysql.MyError
	if errors.As(err, &me) {
		switch me.Code {
		case 1236: // ER_MASTER_FATAL_ERROR_READING_BINLOG
			return retry.Permanent(fmt.Errorf("the server cannot send the binlog from the position asked for (purged, or not a position of this server; reset the pipeline's state (etld state reset) to take a new snapshot): %w", err))
		case 1045, 1044, 1142, 1227: // access denied, no privilege
			return retry.Permanent(fmt.Errorf("the user may not read the binlog: grant it REPLICATION SLAVE and REPLICATION CLIENT: %w", err))
		}
		if !mysqlconn.TransientCodes[me.Code] {
			return retry.Permanent(err)
		}
		return err
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, mysql.ErrBadConn), errors.Is(err, replication.ErrSyncClosed), errors.Is(err, replication.ErrNeedSyncAgain):
		return err
	}
	if msg := err.Error(); strings.Contains(msg, "connection") || strings.Contains(msg, "EOF") || strings.Contains(msg, "broken pipe") {
		return err
	}
	return retry.Permanent(err)
}

// readBinlog returns the next changes of the captured tables: at least
// one, or what came within a short linger of the first. A lost
// connection is made again from the position of the changes handed on.
func (s *CDC) readBinlog(ctx context.Context, max int) (*row.Batch, error) {
	b := &row.Batch{Changes: make([]row.Change, 0, max)}
	wait := ctx
	for {
		if s.bl == nil {
			if err := s.reconnectOrStart(ctx); err != nil {
				return s.partial(b, ctx, err)
			}
		}
		bl := s.bl
		if s.rangeDone() {
			// A backfill's range read reached its end.
			if b.Len() > 0 {
				return b, nil
			}
			return nil, io.EOF
		}
		if bl.pending != nil {
			if err := s.takeRows(ctx, b, max); err != nil {
				return nil, err
			}
			if bl.pending != nil || b.Len() >= max {
				// The batch is full (an update's two changes may not
				// have fitted).
				return b, nil
			}
			continue
		}
		if s.stopped() {
			if b.Len() > 0 {
				return b, nil
			}
			return nil, io.EOF
		}
		if bl.broken != nil {
			err := bl.broken
			if b.Len() > 0 {
				return b, nil
			}
			if err = classifyBinlog(err); retry.IsPermanent(err) {
				return nil, s.errorf("binlog at %s: %w", s.st.Binlog, err)
			}
			if err := s.reconnect(ctx, bl.broken); err != nil {
				return s.partial(b, ctx, err)
			}
			continue
		}
		if b.Len() > 0 && wait == ctx {
			var cancel context.CancelFunc
			wait, cancel = context.WithTimeout(ctx, binlogLinger)
			defer cancel()
		}
		ev, err := bl.stream.GetEvent(wait)
		if err != nil {
			if wait.Err() != nil {
				return s.partial(b, ctx, wait.Err())
			}
			bl.broken = err
			continue
		}
		if err := s.handleEvent(ev); err != nil {
			return nil, s.errorf("binlog at %s: %w", bl.cur, err)
		}
	}
}

// reconnectOrStart starts the first binlog read, with the reconnect's
// backoff while the server is away.
func (s *CDC) reconnectOrStart(ctx context.Context) error {
	return retry.Do(ctx, retry.Sink.WithProbe(s.db.PingContext), s.logger, "mysql binlog", s.startBinlog)
}

// partial ends a Read: with the changes it has, or else with ctx's
// error when it ended, or else with err.
func (s *CDC) partial(b *row.Batch, ctx context.Context, err error) (*row.Batch, error) {
	if b.Len() > 0 {
		return b, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, s.errorf("binlog at %s: %w", s.st.Binlog, err)
}

// stopped reports whether a bounded read reached its stop position.
func (s *CDC) stopped() bool {
	bl := s.bl
	return s.st.Stop != nil && !bl.inTxn && bl.cur.File != "" && bl.cur.compare(*s.st.Stop) >= 0
}

// handleEvent follows the binlog's transactions; a rows event becomes
// pending, for takeRows.
func (s *CDC) handleEvent(ev *replication.BinlogEvent) error {
	bl := s.bl
	h := ev.Header
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		// The server starts a dump with a rotate to the file asked for
		// (no position of its own): within that file the position asked
		// for stands. A real rotate ends a file: the next one starts.
		// A dump asked for by GTID starts with a rotate to the file it
		// found: the position handed on stays the GTID set until the
		// first event of that file.
		next := binlogPos{File: string(e.NextLogName), Pos: uint32(e.Position)}
		if h.LogPos == 0 && next.File == bl.cur.File {
			return nil
		}
		bl.cur = next
		if h.LogPos != 0 {
			s.settle()
		}
		return nil
	case *replication.FormatDescriptionEvent, *replication.HeartbeatEvent:
		return nil
	case *replication.MariadbGTIDEvent:
		// MariaDB writes no BEGIN: a GTID that is not standalone opens a
		// transaction that runs to its XID (or COMMIT), whatever
		// statements (a SAVEPOINT) it logs on the way.
		s.beginTxn(h, e.GTID.String())
		bl.began = !e.IsStandalone()
	case *replication.GTIDEvent:
		g := ""
		if next, err := e.GTIDNext(); err == nil {
			g = next.String()
		}
		s.beginTxn(h, g)
	case *replication.QueryEvent:
		q := strings.TrimSpace(string(e.Query))
		switch {
		case strings.EqualFold(q, "BEGIN"):
			if !bl.inTxn {
				s.beginTxn(h, "")
			}
			bl.began = true
		case strings.EqualFold(q, "COMMIT"), strings.EqualFold(q, "ROLLBACK"):
			s.endTxn(h)
		default:
			if err := s.checkStatement(string(e.Schema), q, h); err != nil {
				return err
			}
			if !bl.began {
				s.endTxn(h)
			}
		}
	case *replication.XIDEvent:
		s.endTxn(h)
	case *replication.RowsEvent:
		if !bl.inTxn {
			s.beginTxn(h, "")
		}
		bl.pending, bl.next = ev, 0
		bl.opTS = int64(h.Timestamp) * 1_000_000
	case *replication.TransactionPayloadEvent:
		return errors.New("the server compresses transactions in the binlog (binlog_transaction_compression): binlog capture does not read them yet; turn it off")
	}
	s.advance(h)
	return nil
}

// advance moves the position past an event of the binlog. The events a
// server sends before the position asked for (its format description)
// and those without a position are not moves.
func (s *CDC) advance(h *replication.EventHeader) {
	bl := s.bl
	if h.LogPos == 0 || h.LogPos <= bl.cur.Pos {
		return
	}
	bl.cur.Pos = h.LogPos
	s.settle()
}

// settle sets the position handed on: the transaction's start while in
// one, else the event after the last.
func (s *CDC) settle() {
	bl := s.bl
	if bl.inTxn {
		s.st.Binlog, s.st.Skip = bl.txnStart, bl.txnRows
	} else {
		s.st.Binlog, s.st.Skip = bl.cur, 0
	}
	if bl.filterUntil != nil && s.st.Binlog.compare(*bl.filterUntil) >= 0 {
		// Every part of every table is now behind: all changes apply.
		bl.filterUntil = nil
		s.st.Tables = nil
	}
}

func (s *CDC) beginTxn(h *replication.EventHeader, gtid string) {
	bl := s.bl
	bl.inTxn, bl.began = true, false
	bl.txnStart = binlogPos{File: bl.cur.File, Pos: h.LogPos - h.EventSize}
	bl.txnRows, bl.txnGTID = 0, gtid
	bl.opTS = int64(h.Timestamp) * 1_000_000
}

func (s *CDC) endTxn(h *replication.EventHeader) {
	bl := s.bl
	if bl.inTxn && bl.txnGTID != "" && s.gset != nil {
		_ = s.gset.Update(bl.txnGTID)
	}
	bl.inTxn, bl.began, bl.skip = false, false, 0
}

// takeRows hands on the pending event's rows of a captured table, up to
// max changes in b; the rows a restarted read already handed on are
// counted and passed over (those of other tables are not decoded).
func (s *CDC) takeRows(ctx context.Context, b *row.Batch, max int) error {
	bl := s.bl
	ev := bl.pending
	e := ev.Event.(*replication.RowsEvent)
	ti := s.captured(e.Table)
	step := 1
	kind := e.Type()
	if kind == replication.EnumRowsEventTypeUpdate {
		step = 2
	}
	var m *rowMapper
	if ti != nil {
		var err error
		if m, err = s.mapper(e.Table, ti, ev.Header); err != nil {
			return s.errorf("binlog at %s: %w", bl.cur, err)
		}
	}
	pos := binlogPos{File: bl.cur.File, Pos: ev.Header.LogPos - ev.Header.EventSize}
	if ti == nil && bl.skip == 0 {
		bl.txnRows += int64((len(e.Rows) - bl.next) / step)
		bl.next = len(e.Rows)
	}
	for bl.next+step <= len(e.Rows) {
		if ti != nil && bl.skip == 0 && b.Len() > 0 && b.Len()+step > max {
			return nil
		}
		if bl.skip == 0 && s.rangeDone() {
			// A backfill's range ends in this transaction: the rest is
			// the next range's.
			return nil
		}
		images := e.Rows[bl.next : bl.next+step]
		for k := bl.next; k < bl.next+step && ti != nil; k++ {
			if k < len(e.SkippedColumns) && len(e.SkippedColumns[k]) > 0 {
				return s.errorf("binlog at %s: a change of table %s lacks columns: its session logged it with binlog_row_image other than FULL", pos, ti.name)
			}
		}
		bl.next += step
		bl.txnRows++
		if bl.skip > 0 {
			bl.skip--
			continue
		}
		if ti == nil {
			continue
		}
		if err := s.emit(ctx, b, m, kind, images, pos); err != nil {
			return err
		}
		s.settle()
	}
	bl.pending = nil
	s.advance(ev.Header)
	return nil
}

// captured returns the captured table a table map names, nil for
// another table.
func (s *CDC) captured(tm *replication.TableMapEvent) *tableInfo {
	if tm == nil {
		return nil
	}
	db, name := string(tm.Schema), string(tm.Table)
	for _, ti := range s.info {
		if ti.name.name == name && ti.name.db == db {
			return ti
		}
	}
	return nil
}

// emit appends the changes of one row change: +I, -D, -U and +U, or
// -D and +I for an update of the key;
// during a resumed snapshot's catch-up an image whose row was read as
// of a later position is left out (an update whose before image is
// left out becomes +I, one whose after image is, -D).
func (s *CDC) emit(ctx context.Context, b *row.Batch, m *rowMapper, kind replication.EnumRowsEventType, images [][]any, pos binlogPos) error {
	bl := s.bl
	kinds := [2]row.Kind{row.Insert}
	switch kind {
	case replication.EnumRowsEventTypeDelete:
		kinds[0] = row.Delete
	case replication.EnumRowsEventTypeUpdate:
		kinds = [2]row.Kind{row.UpdateBefore, row.UpdateAfter}
		if len(images) == 2 && keyText(m.table, m.key(images[0])) != keyText(m.table, m.key(images[1])) {
			// An update of the primary key: a row leaves and another
			// comes, as Debezium tells it. -U/+U would pair rows of two
			// keys, and an upsert sink, which drops -U, would keep the
			// old key's row.
			kinds = [2]row.Kind{row.Delete, row.Insert}
		}
	}
	apply := [2]bool{true, true}
	if bl.filterUntil != nil {
		for i, img := range images {
			// In the source's life, not the Read's: that ends for every
			// checkpoint's barrier, and an error here drops the batch
			// while the position has moved past its changes.
			ok, err := s.applies(s.life, m, img)
			if err != nil {
				return s.errorf("binlog at %s: place a change in the resumed snapshot: %w", pos, err)
			}
			apply[i] = ok
		}
		if len(images) == 2 && apply[0] != apply[1] {
			kinds = [2]row.Kind{row.Delete, row.Insert}
		}
	}
	for i, img := range images {
		if !apply[i] {
			continue
		}
		r, err := m.convert(img, s.slab)
		if err != nil {
			bad := connector.BadRecord{Position: fmt.Sprintf("mysql binlog %s, table %s, row %s", pos, m.table.name, keyText(m.table, m.key(img))), Raw: []byte(m.rowText(img)), Err: err}
			if err := s.reject(bad); err != nil {
				return err
			}
			continue
		}
		s.fillMeta(r, changeMeta{table: m.table.name, kind: kinds[i], opTS: bl.opTS, pos: pos, gtid: bl.txnGTID})
		b.Append(kinds[i], r)
	}
	return nil
}

// applies reports whether a change of the row img names comes after the
// position its snapshot segment was read as of.
func (s *CDC) applies(ctx context.Context, m *rowMapper, img []any) (bool, error) {
	at, ok, err := s.readAsOf(ctx, m, img)
	if err != nil || !ok {
		return true, err
	}
	return s.bl.txnStart.compare(at) >= 0, nil
}

// readAsOf returns the position the snapshot segment holding the row img
// names was read as of; ok is false when no segment holds it (a table,
// or the part of one, that the snapshot has not read yet).
func (s *CDC) readAsOf(ctx context.Context, m *rowMapper, img []any) (at binlogPos, ok bool, err error) {
	prog := s.st.progress(m.table.name.String())
	if prog == nil {
		return at, false, nil
	}
	key := m.key(img)
	for _, seg := range prog.Segs {
		if seg.Hi != nil {
			in, err := keyAtMost(ctx, s.db, m.table, key, seg.Hi)
			if err != nil {
				return at, false, err
			}
			if !in {
				continue
			}
		}
		return seg.AsOf, true, nil
	}
	return at, false, nil
}

// keyAtMost asks the server whether key is at most hi in the order of
// the table's primary key (its columns' types and collations).
func keyAtMost(ctx context.Context, db *sql.DB, ti *tableInfo, key, hi []*string) (bool, error) {
	a := make([]string, len(ti.pk))
	args := make([]any, 0, 2*len(ti.pk))
	for i, c := range ti.pk {
		a[i] = keyCast(c)
		args = append(args, key[i])
	}
	for i := range ti.pk {
		args = append(args, hi[i])
	}
	q := fmt.Sprintf("SELECT (%s) <= (%s)", strings.Join(a, ", "), strings.Join(a, ", "))
	var at bool
	if err := db.QueryRowContext(ctx, q, args...).Scan(&at); err != nil {
		return false, err
	}
	return at, nil
}
