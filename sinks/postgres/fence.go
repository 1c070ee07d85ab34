package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/retry"
)

// fenceTable holds one row per pipeline and sink: the fence of the run
// that writes now (the package comment's Fencing).
const fenceTable = "etld_sink_fences"

const (
	// fenceLockTimeout bounds one wait for an earlier run's transaction
	// to end while taking the fence; the wait is tried again, with a
	// warning, until the pipeline stops.
	fenceLockTimeout = 5 * time.Second
	// rollbackTimeout bounds the ROLLBACK after a failed batch.
	rollbackTimeout = 5 * time.Second
)

// fence is this run's fence and the statement that checks it.
type fence struct {
	value uint64 // 0: no fence (a run without a state directory)
	id    string // the row's key: pipeline/sink
	check string // SELECT fence ... FOR SHARE
}

// errFenced marks a batch refused because a later run took the fence.
var errFenced = errors.New("fenced")

// isFenced reports whether err is a fencing failure, which no retry
// fixes.
func isFenced(err error) bool { return errors.Is(err, errFenced) }

// takeFence stores this run's fence in the fence table, made when
// missing, unless a later run's is there; it waits, with a warning, for
// the transactions of earlier runs that still hold the row.
func (s *Sink) takeFence(ctx context.Context) error {
	value, err := s.run.Fence()
	if err != nil {
		return fmt.Errorf("take a fence: %w", err)
	}
	table := pgconf.Quote(s.table.Schema) + "." + pgconf.Quote(fenceTable)
	id := s.run.Pipeline + "/" + s.name
	logger := s.logger.With("table", s.table.String(), "target", s.target)
	err = retry.Do(ctx, s.backoff, logger, "postgres fence (waiting for a transaction of an earlier run to end)", func(ctx context.Context) error {
		conn, err := s.lanes[0].connect(ctx, s)
		if err != nil {
			return err
		}
		err = storeFence(ctx, conn, table, id, value)
		if err != nil && (pgconf.Classify(err) != pgconf.Transient || isFenced(err)) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return err
	}
	s.fence = fence{value: value, id: id,
		check: "SELECT fence FROM " + table + " WHERE sink = $1 FOR SHARE"}
	return nil
}

// storeFence makes the fence table when missing and stores value in the
// row of id, unless that holds a larger one.
func storeFence(ctx context.Context, conn *pgx.Conn, table, id string, value uint64) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		_, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+
			" (sink text PRIMARY KEY, fence bigint NOT NULL, taken_at timestamptz NOT NULL DEFAULT now())")
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
			// Another sink made it at the same moment.
			err = nil
		}
		if err != nil {
			return fmt.Errorf("create the fence table %s: %w", table, err)
		}
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", fenceLockTimeout.Milliseconds())); err != nil {
		return err
	}
	var stored int64
	err = tx.QueryRow(ctx, "INSERT INTO "+table+" AS f (sink, fence) VALUES ($1, $2) ON CONFLICT (sink) DO UPDATE"+
		" SET fence = EXCLUDED.fence, taken_at = now() WHERE f.fence < EXCLUDED.fence RETURNING fence", id, int64(value)).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		// A larger fence is there: a later run took it.
		if err := tx.QueryRow(ctx, "SELECT fence FROM "+table+" WHERE sink = $1", id).Scan(&stored); err != nil {
			return err
		}
		return fmt.Errorf("%w: table %s holds fence %d for %s, above this run's %d: a later run of the pipeline writes the table (two processes on one state directory, or one whose state directory was made anew while the clock was behind); this run stops", errFenced, table, stored, id, value)
	}
	if err != nil {
		return fmt.Errorf("store the fence in %s: %w", table, err)
	}
	return tx.Commit(ctx)
}

// verify checks the fence row a batch's transaction read.
func (f *fence) verify(res *pgconn.Result) error {
	if res.Err != nil {
		return res.Err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return fmt.Errorf("%w: the fence row of %s is gone: this run stops rather than write unfenced", errFenced, f.id)
	}
	got, err := strconv.ParseUint(string(res.Rows[0][0]), 10, 64)
	if err != nil {
		return fmt.Errorf("the fence row of %s holds %q: %w", f.id, res.Rows[0][0], err)
	}
	if got != f.value {
		return fmt.Errorf("%w: a later run of the pipeline took fence %d over this run's %d (%s): this run's batch is rolled back and the run stops", errFenced, got, f.value, f.id)
	}
	return nil
}
