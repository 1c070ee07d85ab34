package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/pgconf"
)

// preparePublication makes sure the publication exists and publishes
// every captured table's inserts, updates, deletes and truncates (a
// truncate is reported as an error rather than missed), creating it or
// adding the tables with create_publication.
func (s *Source) preparePublication(ctx context.Context, conn *pgx.Conn) error {
	var ins, upd, del, trunc bool
	err := conn.QueryRow(ctx, "SELECT pubinsert, pubupdate, pubdelete, pubtruncate FROM pg_publication WHERE pubname = $1", s.publication).
		Scan(&ins, &upd, &del, &trunc)
	missing := errors.Is(err, pgx.ErrNoRows)
	if err != nil && !missing {
		return fmt.Errorf("read publication %s: %w", s.publication, err)
	}
	tables := make([]string, len(s.caps))
	for i, c := range s.caps {
		tables[i] = c.table.Quoted()
	}
	if missing {
		if !s.cfg.CreatePublication {
			return fmt.Errorf("publication %s does not exist; create it (CREATE PUBLICATION %s FOR TABLE %s), or set create_publication: true", s.publication, pgconf.Quote(s.publication), strings.Join(tables, ", "))
		}
		if _, err := conn.Exec(ctx, "CREATE PUBLICATION "+pgconf.Quote(s.publication)+" FOR TABLE "+strings.Join(tables, ", ")); err != nil {
			return fmt.Errorf("create publication %s: %w", s.publication, err)
		}
		s.logger.Info("created publication", "publication", s.publication, "tables", strings.Join(tables, ", "))
		return nil
	}
	if !ins || !upd || !del || !trunc {
		return fmt.Errorf("publication %s does not publish every change (insert %t, update %t, delete %t, truncate %t): the source needs all four, a truncate to report it; ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate')", s.publication, ins, upd, del, trunc, pgconf.Quote(s.publication))
	}
	for _, c := range s.caps {
		var in bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)",
			s.publication, c.table.Schema, c.table.Name).Scan(&in); err != nil {
			return fmt.Errorf("read publication %s: %w", s.publication, err)
		}
		if in {
			continue
		}
		if !s.cfg.CreatePublication {
			return fmt.Errorf("publication %s does not publish table %s; ALTER PUBLICATION %s ADD TABLE %s, or set create_publication: true", s.publication, c.table, pgconf.Quote(s.publication), c.table.Quoted())
		}
		if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+pgconf.Quote(s.publication)+" ADD TABLE "+c.table.Quoted()); err != nil {
			return fmt.Errorf("add table %s to publication %s: %w", c.table, s.publication, err)
		}
		s.logger.Info("added a table to the publication", "publication", s.publication, "table", c.name)
	}
	return nil
}

// slotInfo is what pg_replication_slots says of the slot.
type slotInfo struct {
	exists    bool
	plugin    string
	database  string
	confirmed pglogrepl.LSN
	lost      bool
}

func (s *Source) readSlot(ctx context.Context, conn *pgx.Conn) (slotInfo, error) {
	var si slotInfo
	var plugin, database, confirmed, status *string
	err := conn.QueryRow(ctx, `SELECT plugin, database, confirmed_flush_lsn::text, wal_status
		FROM pg_replication_slots WHERE slot_name = $1`, s.slot).Scan(&plugin, &database, &confirmed, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return si, nil
	}
	if err != nil {
		return si, fmt.Errorf("read replication slot %s: %w", s.slot, err)
	}
	si.exists = true
	if plugin != nil {
		si.plugin = *plugin
	}
	if database != nil {
		si.database = *database
	}
	if confirmed != nil {
		if si.confirmed, err = pglogrepl.ParseLSN(*confirmed); err != nil {
			return si, err
		}
	}
	si.lost = status != nil && *status == "lost"
	return si, nil
}

// prepareSlot checks the slot, or creates it with create_slot when the
// run starts from nothing; a slot that is gone while a checkpoint says
// the run read from it is an error, never a silent new start. It
// returns the LSN of a slot it created (its consistent point).
func (s *Source) prepareSlot(ctx context.Context, conn *pgx.Conn, resumed bool, need pglogrepl.LSN) (pglogrepl.LSN, error) {
	si, err := s.readSlot(ctx, conn)
	if err != nil {
		return 0, err
	}
	switch {
	case !si.exists && resumed:
		return 0, s.slotGone(need)
	case !si.exists && !s.cfg.CreateSlot:
		return 0, fmt.Errorf("replication slot %s does not exist; create it (SELECT pg_create_logical_replication_slot('%s', 'pgoutput')), or set create_slot: true", s.slot, s.slot)
	case !si.exists:
		return s.createSlot(ctx)
	case si.plugin != "pgoutput":
		return 0, fmt.Errorf("replication slot %s uses output plugin %q; the source reads pgoutput's", s.slot, si.plugin)
	case si.database != s.cc.Database:
		return 0, fmt.Errorf("replication slot %s is of database %q, not %q", s.slot, si.database, s.cc.Database)
	case si.lost:
		return 0, fmt.Errorf("replication slot %s is invalidated (wal_status lost: the server removed WAL it still needed, max_slot_wal_keep_size): the changes since it was last read are gone; reset the pipeline (etld state reset makes the slot anew)", s.slot)
	case resumed && si.confirmed > need:
		return 0, fmt.Errorf("replication slot %s was confirmed up to %s, past %s where this run's checkpoint resumes: the changes between are gone (another reader used the slot, or the checkpoint is older than the last one confirmed); use a slot of this pipeline's own, or start the pipeline anew (etld state reset)", s.slot, si.confirmed, need)
	}
	return 0, nil
}

// slotGone is the error for a slot that a checkpoint read from and that
// no longer exists.
func (s *Source) slotGone(from pglogrepl.LSN) error {
	return fmt.Errorf("replication slot %s does not exist, though this pipeline's checkpoint reads from it at %s: it was dropped, and the changes since are gone; the source does not start again from nothing by itself: to start anew, reset the pipeline's state with etld state reset (and recreate the slot, or set create_slot: true)", s.slot, from)
}

// createSlot creates the permanent slot on a replication connection.
func (s *Source) createSlot(ctx context.Context) (pglogrepl.LSN, error) {
	rc, err := s.replicationConn(ctx)
	if err != nil {
		return 0, err
	}
	defer rc.Close(context.WithoutCancel(ctx))
	res, err := pglogrepl.CreateReplicationSlot(ctx, rc, s.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "NOEXPORT_SNAPSHOT"})
	if err != nil {
		return 0, fmt.Errorf("create replication slot %s: %w", s.slot, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, err
	}
	s.logger.Info("created replication slot", "slot", s.slot, "lsn", lsn.String())
	return lsn, nil
}

// replicationConn opens a logical replication connection.
func (s *Source) replicationConn(ctx context.Context) (*pgconn.PgConn, error) {
	cfg := s.cc.Config.Copy()
	cfg.RuntimeParams["replication"] = "database"
	return pgconn.ConnectConfig(ctx, cfg)
}
