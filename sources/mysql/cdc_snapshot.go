package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// snapshot is one attempt at the snapshot: a transaction that sees the
// tables as they were at the binlog position asOf, and the table being
// read in it.
type snapshot struct {
	conn  *sql.Conn
	asOf  binlogPos
	table int // index in CDC.tables
	rows  *sql.Rows
	raw   []sql.RawBytes
	dest  []any
}

// beginSnapshot starts an attempt: a consistent snapshot transaction and
// its binlog position. The first attempt's position is where the binlog
// is read from; a later one (after a crash or a lost connection) closes
// the segments of the tables read so far, so that the binlog's changes
// apply to each part of a table only after the position it was read as
// of.
func (s *CDC) beginSnapshot(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	sn := &snapshot{conn: conn, table: -1}
	if sn.asOf, err = startConsistentSnapshot(ctx, conn, s.server); err != nil {
		conn.Close()
		return err
	}
	first := len(s.st.Tables) == 0
	if first {
		if s.st.Binlog.File == "" {
			s.st.Binlog = sn.asOf
			s.st.GTID = gtidAt(ctx, s.db, s.server, sn.asOf)
		}
		for _, t := range s.tables {
			s.st.Tables = append(s.st.Tables, tableProgress{Table: t.String()})
		}
	}
	for i := range s.st.Tables {
		s.st.Tables[i].interrupt()
	}
	if (!first || s.st.Binlog != sn.asOf) && s.startup != startSnapshot {
		// The binlog read from the snapshot's first position to this
		// attempt's, for the rows deleted meanwhile (cdc_resume.go); in
		// the source's life, not the Read's, which ends for checkpoints.
		// A snapshot alone (startup snapshot) needs no binlog access and
		// gets none.
		stale, err := s.staleRows(s.life, s.st.Binlog, sn.asOf)
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), "COMMIT")
			conn.Close()
			return fmt.Errorf("read the binlog from %s to %s for the rows deleted before the resumed snapshot: %w", s.st.Binlog, sn.asOf, err)
		}
		s.stale = stale
	}
	s.snap = sn
	s.logger.Info("snapshot started", "as_of", sn.asOf.String(), "resumed", !first, "deleted_meanwhile", len(s.stale)/2)
	return nil
}

// startConsistentSnapshot opens a transaction that reads the tables as
// of one binlog position and returns the position: MariaDB tells it
// without a lock (binlog_snapshot_file and _position); on MySQL the
// tables are locked while the transaction starts and the position is
// read.
func startConsistentSnapshot(ctx context.Context, conn *sql.Conn, si serverInfo) (binlogPos, error) {
	if _, err := conn.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return binlogPos{}, err
	}
	if !si.mariadb {
		return lockedSnapshot(ctx, conn)
	}
	if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return binlogPos{}, err
	}
	var p binlogPos
	rows, err := conn.QueryContext(ctx, "SHOW STATUS WHERE Variable_name IN ('binlog_snapshot_file', 'binlog_snapshot_position')")
	if err != nil {
		return p, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, val string
		if err := rows.Scan(&name, &val); err != nil {
			return p, err
		}
		switch strings.ToLower(name) {
		case "binlog_snapshot_file":
			p.File = val
		case "binlog_snapshot_position":
			if _, err := fmt.Sscan(val, &p.Pos); err != nil {
				return p, fmt.Errorf("binlog_snapshot_position %q: %w", val, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	if p.File == "" {
		return p, errors.New("the server gives no binlog_snapshot_file: is log_bin on?")
	}
	return p, nil
}

// lockedSnapshot is MySQL's way (mysqldump --single-transaction
// --source-data): FLUSH TABLES WITH READ LOCK (the RELOAD privilege)
// holds writes while the transaction starts and the position is read.
func lockedSnapshot(ctx context.Context, conn *sql.Conn) (p binlogPos, err error) {
	if _, err := conn.ExecContext(ctx, "FLUSH TABLES WITH READ LOCK"); err != nil {
		return p, fmt.Errorf("lock the tables for the snapshot's position (needs RELOAD): %w", err)
	}
	defer func() {
		if _, uerr := conn.ExecContext(ctx, "UNLOCK TABLES"); uerr != nil && err == nil {
			err = uerr
		}
	}()
	if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return p, err
	}
	rows, err := conn.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		rows, err = conn.QueryContext(ctx, "SHOW BINARY LOG STATUS")
	}
	if err != nil {
		return p, err
	}
	defer rows.Close()
	return scanLogPos(rows)
}

// closeSnapshot ends the attempt (its transaction only read).
func (s *CDC) closeSnapshot() {
	sn := s.snap
	if sn == nil {
		return
	}
	s.snap = nil
	if sn.rows != nil {
		sn.rows.Close()
	}
	_, _ = sn.conn.ExecContext(context.Background(), "COMMIT")
	sn.conn.Close()
}

// readSnapshot returns the next rows of the snapshot, nil once it is
// done. A connection lost mid-snapshot starts a new attempt.
func (s *CDC) readSnapshot(ctx context.Context, max int) (*row.Batch, error) {
	b := &row.Batch{}
	for s.st.Snapshot && b.Len() == 0 {
		if s.snap == nil {
			err := retry.Do(ctx, retry.Sink.WithProbe(s.db.PingContext), s.logger, "mysql snapshot", func(ctx context.Context) error {
				err := s.beginSnapshot(ctx)
				if err != nil && !mysqlconn.Transient(err) && retry.IsPermanent(classifyBinlog(err)) {
					return retry.Permanent(err)
				}
				return err
			})
			if err != nil {
				return nil, s.errorf("snapshot: %w", err)
			}
		}
		if len(s.stale) > 0 {
			// The pairs of the rows deleted before this attempt, each
			// pair in one batch: a checkpoint between its two halves
			// would keep the row.
			n := len(s.stale)
			if lim := max &^ 1; lim >= 2 && n > lim {
				n = lim
			}
			b.Changes = append(b.Changes, s.stale[:n]...)
			s.stale = s.stale[n:]
			return b, nil
		}
		err := s.snapshotRows(b, min(max, s.fetch))
		if err == nil {
			continue
		}
		if errors.As(err, new(connector.BadRecord)) {
			return nil, err // on_error: fail
		}
		if !mysqlconn.Transient(err) {
			return nil, s.errorf("snapshot: %w", err)
		}
		s.logger.Warn("snapshot connection lost: the snapshot goes on in a new transaction", "error", err)
		s.closeSnapshot()
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return b, nil
}

// snapshotRows appends up to n rows of the current attempt to b, moving
// from table to table; when the last table is done it ends the snapshot.
func (s *CDC) snapshotRows(b *row.Batch, n int) error {
	sn := s.snap
	for b.Len() < n {
		if sn.rows == nil {
			next := s.nextSnapshotTable(sn.table)
			if next < 0 {
				s.closeSnapshot()
				s.st.Snapshot = false
				s.logger.Info("snapshot done: reading the binlog", "from", s.st.Binlog.String())
				return nil
			}
			if err := s.openSnapshotTable(sn, next); err != nil {
				return err
			}
		}
		prog := &s.st.Tables[sn.table]
		if !sn.rows.Next() {
			if err := sn.rows.Err(); err != nil {
				return err
			}
			sn.rows.Close()
			sn.rows = nil
			prog.Done = true
			continue
		}
		if err := sn.rows.Scan(sn.dest...); err != nil {
			return err
		}
		ti := s.info[sn.table]
		key := make([]*string, len(ti.pk))
		for i := range key {
			if v := sn.raw[len(s.physical)+i]; v != nil {
				t := string(v)
				key[i] = &t
			}
		}
		prog.Last = key
		r, err := s.snapshotRow(sn.raw, sn.asOf, ti)
		if err != nil {
			bad := connector.BadRecord{Position: fmt.Sprintf("mysql table %s (snapshot), row %s", ti.name, keyText(ti, key)), Raw: rawText(sn.raw[:len(s.physical)]), Err: err}
			if err := s.reject(bad); err != nil {
				return err
			}
			continue
		}
		b.Append(row.Insert, r)
	}
	return nil
}

// nextSnapshotTable is the index of the first table after i whose
// snapshot is not done, -1 when none is left.
func (s *CDC) nextSnapshotTable(i int) int {
	for j := i + 1; j < len(s.tables); j++ {
		if !s.st.Tables[j].Done {
			return j
		}
	}
	return -1
}

// openSnapshotTable starts reading table i in primary key order, after
// the last row handed on, as a new segment as of the attempt's position.
func (s *CDC) openSnapshotTable(sn *snapshot, i int) error {
	ti := s.info[i]
	prog := &s.st.Tables[i]
	var q strings.Builder
	cols := make([]string, 0, len(s.physical)+len(ti.pk))
	for _, j := range s.physical {
		cols = append(cols, mysqlconn.Quote(s.schema.Fields[j].Name))
	}
	pk := make([]string, len(ti.pk))
	for j, c := range ti.pk {
		pk[j] = mysqlconn.Quote(c.name)
	}
	cols = append(cols, pk...)
	fmt.Fprintf(&q, "SELECT %s FROM %s", strings.Join(cols, ", "), ti.name.quoted())
	var args []any
	if prog.Last != nil {
		marks := make([]string, len(ti.pk))
		for j, c := range ti.pk {
			marks[j] = keyCast(c)
			args = append(args, prog.Last[j])
		}
		fmt.Fprintf(&q, " WHERE (%s) > (%s)", strings.Join(pk, ", "), strings.Join(marks, ", "))
	}
	fmt.Fprintf(&q, " ORDER BY %s", strings.Join(pk, ", "))
	// The query outlives Read's context, which ends for checkpoints.
	rows, err := sn.conn.QueryContext(s.life, q.String(), args...)
	if err != nil {
		return err
	}
	sn.table, sn.rows = i, rows
	sn.raw = make([]sql.RawBytes, len(cols))
	sn.dest = make([]any, len(cols))
	for j := range sn.raw {
		sn.dest[j] = &sn.raw[j]
	}
	if n := len(prog.Segs); n == 0 || prog.Segs[n-1].Hi != nil || prog.Segs[n-1].AsOf != sn.asOf {
		prog.Segs = append(prog.Segs, segment{AsOf: sn.asOf})
	}
	return nil
}

// snapshotRow turns a row of the snapshot's result into a row of the
// schema.
func (s *CDC) snapshotRow(raw []sql.RawBytes, asOf binlogPos, ti *tableInfo) (row.Row, error) {
	r := make(row.Row, s.schema.Len())
	for k, j := range s.physical {
		f := s.schema.Fields[j]
		v, err := parseValue(raw[k], f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		r[j] = v
	}
	s.fillMeta(r, changeMeta{table: ti.name, kind: row.Insert, pos: asOf, gtid: s.st.GTID})
	return r, nil
}

// keyText renders a primary key for a position: id=5, or id=5, k=a.
func keyText(ti *tableInfo, key []*string) string {
	parts := make([]string, len(ti.pk))
	for i, c := range ti.pk {
		v := "NULL"
		if i < len(key) && key[i] != nil {
			v = *key[i]
		}
		parts[i] = c.name + "=" + v
	}
	return strings.Join(parts, ", ")
}
