package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unsafe"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// snapChunk is a piece of one table's snapshot, in key order: its rows
// as inserts, the records that did not become rows (each before the row
// at its place), each record's key texts (flat, len(key) a record, when
// the table is orderable), read in the snapshot of lsn; done marks the
// table's end.
type snapChunk struct {
	table   int
	changes []row.Change
	bad     []snapBad
	keys    []string
	lsn     pglogrepl.LSN
	done    bool
	err     error
	// stale: changes are +I/-D pairs of rows deleted before a resumed
	// snapshot (stale.go), handed on before its rows, a pair never split.
	stale bool
}

// snapBad is a record that did not become a row: it comes before
// changes[at].
type snapBad struct {
	at  int
	rec connector.BadRecord
}

// snapTable is a table the snapshot reads, from after the key after (nil:
// from its start).
type snapTable struct {
	table int
	after []string
}

// snapshotter reads the tables' snapshots on a goroutine of its own.
type snapshotter struct {
	s      *Source
	tables []snapTable
	q      *queue[snapChunk]
	// export is a snapshot a slot created by this run exported, to read
	// first (a new slot's consistent point needs no slot of its own);
	// exportConn holds it open.
	export     string
	exportLSN  pglogrepl.LSN
	exportConn *pgconn.PgConn
	// scan: the next snapshot reads the rest of tables some run may have
	// handed on more of (stale.go).
	scan bool
}

// run reads every table, taking a new snapshot (and going on after the
// last key read) when the connection breaks; it ends by queuing an
// error or the last table's end.
func (sn *snapshotter) run(ctx context.Context) {
	s := sn.s
	err := retry.Do(ctx, s.backoff, s.logger, "postgres snapshot", func(ctx context.Context) error {
		err := sn.read(ctx)
		if err != nil && (pgconf.Classify(err) != pgconf.Transient || isFatal(err)) {
			return retry.Permanent(err)
		}
		return err
	})
	if sn.exportConn != nil {
		_ = sn.exportConn.Close(context.WithoutCancel(ctx))
	}
	if err != nil && ctx.Err() == nil {
		sn.q.put(ctx, snapChunk{err: err})
	}
}

// read takes a snapshot and reads the tables left.
func (sn *snapshotter) read(ctx context.Context) error {
	s := sn.s
	name, lsn, release, err := sn.snapshot(ctx)
	if err != nil {
		return err
	}
	defer release()
	conn, err := pgx.ConnectConfig(ctx, s.cc)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return err
	}
	if name != "" {
		if _, err := conn.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+name+"'"); err != nil {
			return fmt.Errorf("import the snapshot of LSN %s: %w", lsn, err)
		}
	} else if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()").Scan(&lsn); err != nil {
		return err
	}
	// The snapshot is the transaction's now: the slot that exported it
	// may go.
	release()
	if sn.scan && s.startup != startupSnapshot {
		stale, err := sn.staleRows(ctx, lsn)
		if err != nil {
			return fmt.Errorf("read the slot's changes before the snapshot of LSN %s, for the rows deleted meanwhile: %w", lsn, err)
		}
		s.logger.Info("snapshot resumed", "lsn", lsn.String(), "deleted_meanwhile", len(stale)/2)
		if len(stale) > 0 && !sn.q.put(ctx, snapChunk{stale: true, changes: stale}) {
			return ctx.Err()
		}
	}
	// A later attempt goes on after rows this one handed on.
	sn.scan = true
	for len(sn.tables) > 0 {
		t := &sn.tables[0]
		if err := sn.readTable(ctx, conn, t, lsn); err != nil {
			return err
		}
		sn.tables = sn.tables[1:]
	}
	_, err = conn.Exec(ctx, "COMMIT")
	return err
}

// snapshot returns the name of an exported snapshot and its LSN, and a
// release that ends what holds it open; "" in a snapshot-only run, which
// reads in a snapshot of its own transaction.
func (sn *snapshotter) snapshot(ctx context.Context) (string, pglogrepl.LSN, func(), error) {
	s := sn.s
	if sn.export != "" {
		name, lsn, rc := sn.export, sn.exportLSN, sn.exportConn
		sn.export, sn.exportConn = "", nil
		return name, lsn, func() { _ = rc.Close(context.WithoutCancel(ctx)) }, nil
	}
	if s.startup == startupSnapshot {
		return "", 0, func() {}, nil
	}
	// A temporary slot exports a snapshot and its exact LSN, the point
	// from which its changes would stream: what the permanent slot's
	// stream is then filtered by. It is dropped with its connection.
	rc, err := s.replicationConn(ctx)
	if err != nil {
		return "", 0, nil, err
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, rc, fmt.Sprintf("%s_snap_%d", truncate(s.slot, 40), rc.PID()), "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		_ = rc.Close(context.WithoutCancel(ctx))
		return "", 0, nil, fmt.Errorf("create a temporary slot for the snapshot: %w", err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		_ = rc.Close(context.WithoutCancel(ctx))
		return "", 0, nil, err
	}
	closed := false
	return res.SnapshotName, lsn, func() {
		if !closed {
			closed = true
			_ = rc.Close(context.WithoutCancel(ctx))
		}
	}, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// readTable copies one table's rows after t.after, in key order, into
// the queue.
func (sn *snapshotter) readTable(ctx context.Context, conn *pgx.Conn, t *snapTable, lsn pglogrepl.LSN) error {
	s := sn.s
	c := s.caps[t.table]
	ordered := c.orderable()
	if t.after != nil && !ordered {
		return fatalf("the snapshot of table %s was cut part way, and the table has no primary key (or unique NOT NULL index) of a type the source can order, so it cannot go on from where it was: read it again from the start (reset the pipeline's state (etld state reset))", c.table)
	}
	w := &copyWriter{sn: sn, ctx: ctx, c: c, t: t, lsn: lsn, ordered: ordered, fetch: s.fetch}
	if _, err := conn.PgConn().CopyTo(ctx, w, copySQL(c, t.after)); err != nil {
		if w.err != nil {
			return w.err
		}
		return fmt.Errorf("read table %s: %w", c.table, err)
	}
	if w.err != nil {
		return w.err
	}
	return w.flush(true)
}

// copySQL is the COPY of a table's snapshot: its columns, after the key
// after (as literals: COPY takes no parameters; quoted, PostgreSQL's
// text of each key value cast to its column's type), in key order (text
// by its bytes) when the table has an orderable key.
func copySQL(c *capture, after []string) string {
	cols := make([]string, len(c.selects))
	for i, col := range c.selects {
		cols[i] = pgconf.Quote(col.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "COPY (SELECT %s FROM %s", strings.Join(cols, ", "), c.table.Quoted())
	if c.orderable() {
		keys := make([]string, len(c.key))
		for i, k := range c.key {
			keys[i] = pgconf.Quote(k.Name)
			if collated(k) {
				keys[i] += ` COLLATE "C"`
			}
		}
		if after != nil {
			lits := make([]string, len(after))
			for i, v := range after {
				lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'::" + c.key[i].Cast
			}
			fmt.Fprintf(&b, " WHERE (%s) > (%s)", strings.Join(keys, ", "), strings.Join(lits, ", "))
		}
		fmt.Fprintf(&b, " ORDER BY %s", strings.Join(keys, ", "))
	}
	b.WriteString(") TO STDOUT")
	return b.String()
}

// copyWriter takes COPY's text output, one row per Write, and queues the
// rows in chunks. A row's values share one string, its line.
type copyWriter struct {
	sn      *snapshotter
	ctx     context.Context
	c       *capture
	t       *snapTable
	lsn     pglogrepl.LSN
	ordered bool
	fetch   int
	chunk   snapChunk
	slab    *row.Batch // the rows of the chunk being filled
	// buf holds the lines, which the rows' values share: appended to,
	// never changed (a new one when full).
	buf     []byte
	texts   []string
	present []bool
	keyAt   []int    // where each key column is among the selects
	rowKey  []string // a row's key texts, of a table the source cannot order
	err     error
	n       int64
	// last is the key of the last row written, which t.after becomes
	// once its chunk is queued.
	last []string
}

func (w *copyWriter) Write(p []byte) (int, error) {
	s := w.sn.s
	c := w.c
	p = bytes.TrimSuffix(p, []byte{'\n'})
	if cap(w.buf)-len(w.buf) < len(p) {
		w.buf = make([]byte, 0, max(64<<10, 2*len(p)))
	}
	start := len(w.buf)
	w.buf = append(w.buf, p...)
	line := unsafe.String(unsafe.SliceData(w.buf[start:]), len(p))
	w.n++
	// The fields' texts go to arrays on the stack (the heap's slices
	// past 32 columns): storing a string in a heap slice costs a write
	// barrier while the GC marks, which is often.
	var textArr [32]string
	var presentArr [32]bool
	texts, present := textArr[:0], presentArr[:0]
	if len(c.selects) > len(textArr) {
		if w.texts == nil {
			w.texts, w.present = make([]string, len(c.selects)+1), make([]bool, len(c.selects)+1)
		}
		texts, present = w.texts[:0], w.present[:0]
	}
	// A line without a backslash has no NULL and no escape: its fields
	// are its text between tabs.
	plain := strings.IndexByte(line, '\\') < 0
	for rest := line; ; {
		i := strings.IndexByte(rest, '\t')
		f := rest
		if i >= 0 {
			f = rest[:i]
		}
		text, null := f, false
		if !plain {
			text, null = unescapeCopy(f)
		}
		texts, present = append(texts, text), append(present, !null)
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	if len(texts) != len(c.selects) {
		w.err = fmt.Errorf("table %s: a COPY row of %d fields, want %d", c.table, len(texts), len(c.selects))
		return 0, w.err
	}
	if w.keyAt == nil {
		w.keyAt = keyPositions(c)
	}
	if w.slab == nil {
		// The chunk's rows and its list of changes come from one batch;
		// its key texts from one slice, made to size.
		w.slab = row.NewBatch(w.fetch, s.build.width)
		w.chunk.changes = w.slab.Changes[:0]
		if w.ordered {
			w.chunk.keys = make([]string, 0, w.fetch*len(w.keyAt))
		}
	}
	var keys []string
	switch {
	case w.ordered:
		start := len(w.chunk.keys)
		for _, j := range w.keyAt {
			w.chunk.keys = append(w.chunk.keys, texts[j])
		}
		keys = w.chunk.keys[start:]
	case s.hasRowKey:
		// Only for the row_key metadata: the chunk keeps no keys of a
		// table it cannot order (Read takes keys for its last key).
		w.rowKey = w.rowKey[:0]
		for _, j := range w.keyAt {
			w.rowKey = append(w.rowKey, texts[j])
		}
		keys = w.rowKey
	}
	r, err := s.build.build(w.slab.NewRow(), origin{c: c, lsn: uint64(w.lsn)}, texts[:len(c.fields)], present[:len(c.fields)], keys)
	if err != nil {
		w.chunk.bad = append(w.chunk.bad, snapBad{at: len(w.chunk.changes), rec: connector.BadRecord{
			Position: fmt.Sprintf("postgres table %s, snapshot row %d", c.table, w.n),
			Raw:      []byte(line),
			Err:      err,
		}})
	} else {
		w.chunk.changes = append(w.chunk.changes, row.Change{Kind: row.Insert, Row: r})
	}
	if w.ordered {
		w.last = keys
	}
	if len(w.chunk.changes)+len(w.chunk.bad) >= w.fetch {
		if err := w.flush(false); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// keyPositions is where each key column is among the selects.
func keyPositions(c *capture) []int {
	at := make([]int, len(c.key))
	for i, k := range c.key {
		for j, sel := range c.selects {
			if sel.Name == k.Name {
				at[i] = j
				break
			}
		}
	}
	return at
}

// flush queues the rows read, and with done the table's end.
func (w *copyWriter) flush(done bool) error {
	if len(w.chunk.changes)+len(w.chunk.bad) == 0 && !done {
		return nil
	}
	w.chunk.table, w.chunk.lsn, w.chunk.done = w.t.table, w.lsn, done
	if !w.sn.q.put(w.ctx, w.chunk) {
		w.err = w.ctx.Err()
		return w.err
	}
	if w.last != nil {
		w.t.after = w.last
	}
	// The next chunk's rows go on sharing buf: its bytes, once written,
	// never change.
	w.chunk, w.slab = snapChunk{}, nil
	return nil
}

// unescapeCopy reads one field of COPY's text format: \N is NULL, and a
// backslash escapes the next character (\t, \n, \\, an octal or hex
// byte).
func unescapeCopy(f string) (string, bool) {
	if f == `\N` {
		return "", true
	}
	if strings.IndexByte(f, '\\') < 0 {
		return f, false
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '\\' || i+1 == len(f) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := f[i]; e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(f) && isHex(f[i+1]) {
				i++
				v = v*16 + hexVal(f[i])
				n++
			}
			b.WriteByte(byte(v))
		default:
			if e >= '0' && e <= '7' {
				v, n := int(e-'0'), 1
				for n < 3 && i+1 < len(f) && f[i+1] >= '0' && f[i+1] <= '7' {
					i++
					v = v*8 + int(f[i]-'0')
					n++
				}
				b.WriteByte(byte(v))
				continue
			}
			b.WriteByte(e)
		}
	}
	return b.String(), false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}
