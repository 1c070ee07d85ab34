package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/pipeline/connector"
)

// Reset moves the replication slot to the server's current WAL position
// (connector.Resetter), where a slot made for a first run would be: a
// run without a checkpoint and startup: latest streams from the slot's
// confirmed position, so without this it would read the changes since
// the previous pipeline's last confirm into empty operators; with
// startup: initial the new snapshot covers everything before, and the
// move only frees the WAL the slot held. An invalidated slot (its WAL
// is gone) is dropped and made again. A slot that a session reads (a
// running pipeline) is an error: its next confirm would move it back.
// startup: snapshot reads no slot, and a slot that does not exist is
// left to the next run (create_slot).
//
// Reset is called on a source that was never opened; it connects on
// its own and closes the connection.
func (s *Source) Reset(ctx context.Context) (string, error) {
	if s.startup == startupSnapshot {
		return "", nil
	}
	conn, err := pgx.ConnectConfig(ctx, s.cc)
	if err != nil {
		return "", s.errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var active bool
	var pid *int32
	var confirmed, status *string
	err = conn.QueryRow(ctx, `SELECT active, active_pid, confirmed_flush_lsn::text, wal_status
		FROM pg_replication_slots WHERE slot_name = $1`, s.slot).Scan(&active, &pid, &confirmed, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Sprintf("replication slot %s does not exist: nothing to reset (the next run needs it, or create_slot: true)", s.slot), nil
	}
	if err != nil {
		return "", s.errorf("read replication slot %s: %w", s.slot, err)
	}
	if active {
		held := "a session"
		if pid != nil {
			held = fmt.Sprintf("the session of pid %d", *pid)
		}
		return "", s.errorf("replication slot %s is being read by %s (a running pipeline?): stop it first; its next confirm would undo the reset", s.slot, held)
	}
	next := "the next run takes a new snapshot, then streams from it"
	if s.startup == startupLatest {
		next = "the next run streams the changes from that position on"
	}
	if status != nil && *status == "lost" {
		if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", s.slot); err != nil {
			return "", s.errorf("drop the invalidated replication slot %s: %w", s.slot, err)
		}
		var lsn string
		if err := conn.QueryRow(ctx, "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')", s.slot).Scan(&lsn); err != nil {
			return "", s.errorf("create replication slot %s anew (dropped: it was invalidated): %w", s.slot, err)
		}
		return fmt.Sprintf("replication slot %s was invalidated: dropped and made anew at %s; %s", s.slot, lsn, next), nil
	}
	var to string
	if err := conn.QueryRow(ctx, "SELECT end_lsn::text FROM pg_replication_slot_advance($1, pg_current_wal_lsn())", s.slot).Scan(&to); err != nil {
		return "", s.errorf("advance replication slot %s to the current WAL position: %w", s.slot, err)
	}
	from := "?"
	if confirmed != nil {
		if l, err := pglogrepl.ParseLSN(*confirmed); err == nil {
			from = l.String()
		}
	}
	return fmt.Sprintf("advanced replication slot %s from %s to %s, the server's current WAL position; %s", s.slot, from, to, next), nil
}

var _ connector.Resetter = (*Source)(nil)
