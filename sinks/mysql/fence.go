package mysql

// Fencing earlier lives.
//
// A statement that a killed (or frozen) process had sent can reach the
// server after the restarted run started. Every batch is a transaction,
// so a late write runs in a transaction whose COMMIT never comes and is
// rolled back when the dead session ends; but a late COMMIT commits, and
// a frozen process woken up writes new transactions. In a run with a
// state directory the sink therefore keeps a fence row per sink, state
// directory and table, in the table etld_fences of the connection's
// database (created when missing):
//
//	sink   VARCHAR(255) PRIMARY KEY   <pipeline>/<sink>@<instance>:<table>
//	fence  BIGINT UNSIGNED            the newest life's number
//
// (the instance names the state directory, as the Kafka sink's producer
// does: a state directory made anew starts a row of its own, and does not
// fence off the lives of the removed one; the key is a hash when it would
// not fit or holds other characters than letters, digits and _-./@:).
//
// At Open the life raises the row to its fence from the state directory
// (larger in every life); every transaction of the life first reads the
// row with a shared lock and goes on only while it still holds the life's
// fence. An earlier life's transaction that is still open holds that
// shared lock, so the new life's raise waits for it to end: a late COMMIT
// lands before the new life has started, never after, and a late write
// is rolled back. A frozen life's next transaction finds the newer fence
// and the sink stops. The wait lasts as long as the server keeps the
// dead session (a killed process's connection ends at once; one cut off
// by the network, until the server notices); the sink logs it while it
// waits (innodb_lock_wait_timeout each time).
//
// A user without the right to create or write etld_fences gets a warning
// and an unfenced run: late COMMITs may then land after the restarted
// run's first writes (rows it writes too wait for them, row locks
// ordering the two), and a frozen process is not stopped.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
)

// fenceTable is the table of fence rows, in the connection's database.
const fenceTable = "etld_fences"

// errTakenOver: a later life of the sink raised the fence.
var errTakenOver = errors.New("a later run of this pipeline took the table over")

// SetRun implements connector.RunAware: a run with a state directory
// fences its earlier lives off.
func (s *Sink) SetRun(r connector.RunInfo) { s.run = r }

// fenceKey names the sink's fence row. It goes into the statements as
// text (so that a statement's prepared execution is always a write);
// pipeline and sink names hold no quote, but the table may.
func (s *Sink) fenceKey() string {
	key := s.run.Pipeline + "/" + s.name + "@" + s.run.Instance + ":" + s.table
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/' || c == '@' || c == ':') || len(key) > 255 {
			sum := sha256.Sum256([]byte(key))
			return hex.EncodeToString(sum[:])
		}
	}
	return key
}

// takeFence raises the sink's fence row to a new fence of the run, at
// Open; s.fence stays 0 when the run has no state directory or the server
// refuses.
func (s *Sink) takeFence(ctx context.Context) error {
	if !s.run.Resumable || s.run.Fence == nil {
		return nil
	}
	f, err := s.run.Fence()
	if err != nil {
		return err
	}
	key := s.fenceKey()
	what := "mysql sink: raise the fence row of this run (it waits while a transaction of an earlier run is still open on the server)"
	var refused error
	err = retry.Do(ctx, retry.Backoff{Initial: s.backoff.Initial, Max: s.backoff.Max}, s.logger.With("table", s.table, "target", s.target), what, func(ctx context.Context) error {
		err := s.raiseFence(ctx, key, f)
		var me *mysql.MySQLError
		switch {
		case errors.As(err, &me) && deniedCodes[me.Number]:
			refused = err
			return nil
		case err != nil && (errors.Is(err, errTakenOver) || classify(err) != transient):
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("fence row %s in %s: %w", key, fenceTable, err)
	}
	if refused != nil {
		s.logger.Warn("the server does not let the sink keep its fence row; a COMMIT of a killed run that arrives late may land after this run's first writes, and a frozen process is not stopped",
			"table", s.table, "fence_table", fenceTable, "error", refused.Error())
		return nil
	}
	s.fence = f
	s.fenceRead = "SELECT fence FROM " + fenceTable + " WHERE sink = '" + key + "' LOCK IN SHARE MODE"
	s.logger.Info("the sink fences earlier runs' late writes", "table", s.table, "life", f)
	return nil
}

// deniedCodes are the server's refusals of a statement to this user.
var deniedCodes = map[uint16]bool{
	1044: true, // access denied to the database
	1142: true, // command denied for the table
	1143: true, // command denied for a column
}

// raiseFence creates the fence table when missing and sets the row to f,
// unless it holds f or more already (errTakenOver).
func (s *Sink) raiseFence(ctx context.Context, key string, f uint64) error {
	insert := "INSERT IGNORE INTO " + fenceTable + " (sink, fence) VALUES ('" + key + "', 0)"
	_, err := s.db.ExecContext(ctx, insert)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1146 { // no such table
		_, err = s.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+fenceTable+
			" (sink VARCHAR(255) CHARACTER SET ascii NOT NULL PRIMARY KEY, fence BIGINT UNSIGNED NOT NULL)")
		if err == nil {
			_, err = s.db.ExecContext(ctx, insert)
		}
	}
	if err != nil {
		return err
	}
	fence := strconv.FormatUint(f, 10)
	res, err := s.db.ExecContext(ctx, "UPDATE "+fenceTable+" SET fence = "+fence+" WHERE sink = '"+key+"' AND fence < "+fence)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: its fence row holds %d or more (another process runs the pipeline on this state directory, or the state directory was made anew while the clock was behind)", errTakenOver, f)
	}
	return nil
}

// checkFence reads the fence row in tx, with a shared lock that a later
// life's takeFence waits for, and says errTakenOver when it no longer
// holds this life's fence.
func (s *Sink) checkFence(ctx context.Context, tx *sql.Tx) error {
	var cur uint64
	err := tx.QueryRowContext(ctx, s.fenceRead).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: its fence row in %s is gone", errTakenOver, fenceTable)
	}
	if err != nil {
		return err
	}
	if cur != s.fence {
		return fmt.Errorf("%w (its fence is %d, this run's %d); this run stops rather than write over it", errTakenOver, cur, s.fence)
	}
	return nil
}
