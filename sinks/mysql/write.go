package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// buffer holds the changes not yet written. In upsert mode it keeps one
// change per key, the last, at the place of the key's first change: the
// table ends the same whatever order a batch's statements run in, since
// no two of them touch one key.
type buffer struct {
	upsert  bool
	key     []int
	changes []row.Change
	index   map[string]int
	kb      []byte
	// since is when the oldest buffered change arrived.
	since time.Time
}

func newBuffer(upsert bool, key []int) buffer {
	b := buffer{upsert: upsert, key: key}
	if upsert {
		b.index = map[string]int{}
	}
	return b
}

func (b *buffer) len() int { return len(b.changes) }

func (b *buffer) add(c row.Change) {
	if !b.upsert {
		b.changes = append(b.changes, c)
		return
	}
	b.kb = row.KeyOf(b.kb[:0], c.Row, b.key)
	if i, ok := b.index[string(b.kb)]; ok {
		b.changes[i] = c
		return
	}
	b.index[string(b.kb)] = len(b.changes)
	b.changes = append(b.changes, c)
}

func (b *buffer) reset() {
	clear(b.changes) // drop the references to the runtime's rows
	b.changes = b.changes[:0]
	clear(b.index)
}

// op is a statement's shape, with its row count the key of the prepared
// statement cache.
type op uint8

const (
	opInsert op = iota
	opUpsert
	opDelete
	opDeleteAll
)

type stmtKey struct {
	op op
	n  int
}

// stmt is one statement of a batch, its arguments built once and reused
// when the batch is retried.
type stmt struct {
	key   stmtKey
	query string
	args  []any
	bytes int
}

// writeBatch writes changes in one transaction, retrying transient
// failures; if the server refuses a row, it writes them one by one and
// rejects the refused ones.
func (s *Sink) writeBatch(ctx context.Context, changes []row.Change) error {
	plan := s.plan(changes)
	err := s.execRetrying(ctx, plan)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && classify(err) == rowLevel {
		s.logger.Info("the server refused a row of the batch; writing the batch row by row to find it", "table", s.table, "changes", len(changes), "error", err.Error())
		return s.writeRows(ctx, changes)
	}
	return s.errorf("write %d changes: %w", len(changes), err)
}

// execRetrying runs plan, retrying transient errors with backoff; a
// row-level or fatal error is returned at once.
func (s *Sink) execRetrying(ctx context.Context, plan []stmt) error {
	err := retry.Do(ctx, s.backoff, s.logger.With("table", s.table, "target", s.target), "mysql write", func(ctx context.Context) error {
		err := s.exec(ctx, plan)
		if err != nil && classify(err) != transient {
			return retry.Permanent(err)
		}
		return err
	})
	if err == nil {
		n := 0
		for _, st := range plan {
			n += st.bytes
		}
		s.bytes.Add(int64(n))
	}
	return err
}

// writeRows writes each change on its own, handing those the server
// refuses to on_error.
func (s *Sink) writeRows(ctx context.Context, changes []row.Change) error {
	for i, c := range changes {
		err := s.execRetrying(ctx, s.plan(changes[i:i+1]))
		if err == nil {
			continue
		}
		if ctx.Err() != nil || classify(err) != rowLevel {
			return s.errorf("write %s: %w", s.position(i, len(changes), c), err)
		}
		bad := connector.BadRecord{
			Position: s.position(i, len(changes), c),
			Raw:      []byte(c.String()),
			Err:      fmt.Errorf("mysql table %s: %w", quote(s.table), err),
		}
		if s.reject == nil {
			return s.errorf("%w", bad)
		}
		s.mu.Lock()
		err = s.reject(bad)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// position names a change for on_error: by its key in upsert mode, by its
// place in the batch in append mode.
func (s *Sink) position(i, n int, c row.Change) string {
	if s.mode != connector.Upsert {
		return fmt.Sprintf("sink %s, table %s, change %d of a batch of %d", s.name, quote(s.table), i+1, n)
	}
	parts := make([]string, len(s.key))
	for j, k := range s.key {
		parts[j] = s.schema.Fields[k].Name + "=" + c.Row[k].String()
	}
	return fmt.Sprintf("sink %s, table %s, key (%s)", s.name, quote(s.table), strings.Join(parts, ", "))
}

// exec runs the statements of a batch in a transaction, a single one
// too. Under autocommit a statement commits by itself wherever it runs:
// one that a killed process had sent, held up on its way, would commit
// when it arrives, over what the next run wrote meanwhile. In a
// transaction it only commits with the COMMIT that follows its answer,
// which a dead process never sends (the server rolls it back when the
// session ends). A fenced life's transaction starts with the fence check
// (fence.go), whose shared lock makes a later life's start wait for a
// COMMIT that arrives late.
func (s *Sink) exec(ctx context.Context, plan []stmt) error {
	// Prepare before BEGIN: with one connection in the pool, the
	// transaction holds it.
	prepared := make([]*sql.Stmt, len(plan))
	for i, st := range plan {
		ps, err := s.prepared(ctx, st)
		if err != nil {
			return err
		}
		prepared[i] = ps
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if s.fence != 0 {
		if err := s.checkFence(ctx, tx); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	for i, st := range plan {
		if prepared[i] != nil {
			_, err = tx.StmtContext(ctx, prepared[i]).ExecContext(ctx, st.args...)
		} else {
			_, err = tx.ExecContext(ctx, st.query, st.args...)
		}
		if err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// prepared returns the cached prepared statement for st's shape, preparing
// it the first time, or nil for shapes not worth keeping: only full
// chunks and single rows recur.
func (s *Sink) prepared(ctx context.Context, st stmt) (*sql.Stmt, error) {
	if st.key.op == opDeleteAll || (st.key.n != 1 && st.key.n != s.chunkRows(st.key.op)) {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps, ok := s.cache[st.key]; ok {
		return ps, nil
	}
	ps, err := s.db.PrepareContext(ctx, st.query)
	if err != nil {
		return nil, err
	}
	s.cache[st.key] = ps
	return ps, nil
}

// chunkRows is the most rows one statement of op carries: batch_size,
// within the placeholder limit.
func (s *Sink) chunkRows(o op) int {
	per := s.schema.Len()
	if o == opDelete {
		per = len(s.key)
	}
	return max(1, min(s.batchSize, maxPlaceholders/max(per, 1)))
}

// plan turns a batch of changes into statements: multi-row inserts or
// upserts and deletes, each cut to the placeholder and packet limits.
func (s *Sink) plan(changes []row.Change) []stmt {
	if s.mode != connector.Upsert {
		return s.chunk(opInsert, changes)
	}
	if len(s.key) == 0 {
		// The one-row table of a global aggregate: the buffer folded to
		// the last change.
		last := changes[len(changes)-1]
		out := []stmt{{key: stmtKey{op: opDeleteAll}, query: s.stmts.deleteAll()}}
		if last.Kind.IsAdd() {
			out = append(out, s.chunk(opInsert, []row.Change{last})...)
		}
		return out
	}
	var adds, dels []row.Change
	for _, c := range changes {
		if c.Kind == row.Delete {
			dels = append(dels, c)
		} else {
			adds = append(adds, c)
		}
	}
	return append(s.chunk(opUpsert, adds), s.chunk(opDelete, dels)...)
}

// chunk builds the statements of op for changes, a new one whenever the
// rows reach chunkRows or their parameters 3/4 of max_allowed_packet.
func (s *Sink) chunk(o op, changes []row.Change) []stmt {
	var out []stmt
	limit := s.chunkRows(o)
	cols := s.key
	if o != opDelete {
		cols = nil
	}
	var cur stmt
	rows := 0
	emit := func() {
		if rows == 0 {
			return
		}
		cur.key = stmtKey{op: o, n: rows}
		switch o {
		case opDelete:
			cur.query = s.stmts.delete(rows)
		default:
			cur.query = s.stmts.insert(rows, o == opUpsert)
		}
		out = append(out, cur)
		cur, rows = stmt{}, 0
	}
	for _, c := range changes {
		rowBytes := 0
		start := len(cur.args)
		if cols == nil {
			for _, v := range c.Row {
				a, n := arg(v)
				cur.args = append(cur.args, a)
				rowBytes += n + 2
			}
		} else {
			for _, k := range cols {
				a, n := arg(c.Row[k])
				cur.args = append(cur.args, a)
				rowBytes += n + 2
			}
		}
		if rows > 0 && s.maxPacket > 0 && cur.bytes+rowBytes > s.maxPacket {
			// This row would make the statement too big: it starts the
			// next one.
			moved := append([]any(nil), cur.args[start:]...)
			cur.args = cur.args[:start]
			emit()
			cur.args = moved
		}
		cur.bytes += rowBytes
		rows++
		if rows >= limit {
			emit()
		}
	}
	emit()
	return out
}
