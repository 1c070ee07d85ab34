package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/pgvalue"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// statements holds the SQL text of the sink's statements, built at Open.
type statements struct {
	upsert    string // INSERT ... SELECT FROM unnest(...) ON CONFLICT ...
	delete    string // DELETE ... USING unnest(...) WHERE key matches
	deleteAll string // DELETE FROM t, for replace_table
	copy      string // COPY t (cols) FROM STDIN
}

func newStatements(table interface{ Quoted() string }, cols []column, key []int) statements {
	t := table.Quoted()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgconf.Quote(c.Name)
	}
	list := strings.Join(names, ", ")
	st := statements{
		deleteAll: "DELETE FROM " + t,
		copy:      "COPY " + t + " (" + list + ") FROM STDIN",
	}
	// unnest's columns v1..vn, each cast from text to its column's type
	// (without the modifier, which the assignment checks).
	vals, sel := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		vals[i] = fmt.Sprintf("$%d::text[]", i+1)
		sel[i] = fmt.Sprintf("u.v%d::%s", i+1, c.Cast)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) SELECT %s FROM unnest(%s) AS u(%s)",
		t, list, strings.Join(sel, ", "), strings.Join(vals, ", "), vnames(len(cols)))
	if len(key) > 0 {
		isKey := map[int]bool{}
		keyNames := make([]string, len(key))
		for i, k := range key {
			isKey[k] = true
			keyNames[i] = names[k]
		}
		fmt.Fprintf(&b, " ON CONFLICT (%s) ", strings.Join(keyNames, ", "))
		var set []string
		for i, n := range names {
			if !isKey[i] {
				set = append(set, n+" = EXCLUDED."+n)
			}
		}
		if len(set) == 0 {
			b.WriteString("DO NOTHING")
		} else {
			b.WriteString("DO UPDATE SET " + strings.Join(set, ", "))
		}
		kv, where := make([]string, len(key)), make([]string, len(key))
		for i, k := range key {
			kv[i] = fmt.Sprintf("$%d::text[]", i+1)
			where[i] = fmt.Sprintf("t0.%s = d.v%d::%s", names[k], i+1, cols[k].Cast)
		}
		st.delete = fmt.Sprintf("DELETE FROM %s AS t0 USING unnest(%s) AS d(%s) WHERE %s",
			t, strings.Join(kv, ", "), vnames(len(key)), strings.Join(where, " AND "))
	}
	st.upsert = b.String()
	return st
}

// vnames is v1, ..., vn.
func vnames(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("v%d", i+1)
	}
	return strings.Join(out, ", ")
}

// textOID is the type of the text[] parameters.
const textArrayOID = 1009

// textArray builds a one-dimensional text[] in PostgreSQL's binary
// format, element by element.
type textArray struct {
	body  []byte
	n     int
	nulls bool
}

func (a *textArray) reset() { a.body, a.n, a.nulls = a.body[:0], 0, false }

func (a *textArray) addNull() {
	a.body = binary.BigEndian.AppendUint32(a.body, 0xFFFFFFFF)
	a.n++
	a.nulls = true
}

// add appends an element whose text append writes.
func (a *textArray) add(append func([]byte) ([]byte, error)) error {
	start := len(a.body)
	a.body = binary.BigEndian.AppendUint32(a.body, 0)
	body, err := append(a.body)
	if err != nil {
		a.body = a.body[:start]
		return err
	}
	a.body = body
	binary.BigEndian.PutUint32(a.body[start:], uint32(len(a.body)-start-4))
	a.n++
	return nil
}

// encode is the array's binary form: the header, then the elements.
func (a *textArray) encode() []byte {
	if a.n == 0 {
		return []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25}
	}
	out := make([]byte, 0, 20+len(a.body))
	out = binary.BigEndian.AppendUint32(out, 1) // dimensions
	flag := uint32(0)
	if a.nulls {
		flag = 1
	}
	out = binary.BigEndian.AppendUint32(out, flag)
	out = binary.BigEndian.AppendUint32(out, 25) // text
	out = binary.BigEndian.AppendUint32(out, uint32(a.n))
	out = binary.BigEndian.AppendUint32(out, 1) // lower bound
	return append(out, a.body...)
}

// encoder turns a batch into statement parameters or COPY data; a lane
// keeps one to reuse its buffers.
type encoder struct {
	arrays []textArray
	text   []byte
	line   []byte
}

// work is a batch encoded: the COPY data (append mode) or the statements
// with their parameters (upsert mode).
type work struct {
	copy  []byte
	stmts []stmt
	bytes int
}

type stmt struct {
	sql    string
	params [][]byte
}

// refused is a change that could not be encoded (a NUL in a string), for
// on_error.
type refused struct {
	i   int
	err error
}

// encode builds the work of changes, leaving out (and listing) those
// whose values have no text form.
func (s *Sink) encode(e *encoder, changes []row.Change) (work, []refused) {
	var w work
	var bad []refused
	if s.mode != connector.Upsert {
		e.line = e.line[:0]
		data := make([]byte, 0, 64*len(changes))
		for i, c := range changes {
			line, err := s.copyLine(e, c.Row)
			if err != nil {
				bad = append(bad, refused{i, err})
				continue
			}
			data = append(data, line...)
		}
		w.copy, w.bytes = data, len(data)
		return w, bad
	}
	if len(s.key) == 0 {
		// The one-row table of a global aggregate: the buffer folded to
		// the last change.
		last := changes[len(changes)-1]
		w.stmts = append(w.stmts, stmt{sql: s.stmts.deleteAll})
		if last.Kind.IsAdd() {
			params, err := s.columnArrays(e, []row.Change{last}, nil)
			if err != nil {
				return w, []refused{{len(changes) - 1, err}}
			}
			w.stmts = append(w.stmts, stmt{sql: s.stmts.upsert, params: params})
		}
		return w, nil
	}
	var adds, dels []row.Change
	var addAt, delAt []int
	for i, c := range changes {
		if c.Kind == row.Delete {
			dels, delAt = append(dels, c), append(delAt, i)
		} else {
			adds, addAt = append(adds, c), append(addAt, i)
		}
	}
	if len(adds) > 0 {
		params, err := s.columnArrays(e, adds, func(i int, err error) { bad = append(bad, refused{addAt[i], err}) })
		if err == nil {
			w.stmts = append(w.stmts, stmt{sql: s.stmts.upsert, params: params})
		}
	}
	if len(dels) > 0 {
		params, err := s.keyArrays(e, dels, func(i int, err error) { bad = append(bad, refused{delAt[i], err}) })
		if err == nil {
			w.stmts = append(w.stmts, stmt{sql: s.stmts.delete, params: params})
		}
	}
	for _, st := range w.stmts {
		for _, p := range st.params {
			w.bytes += len(p)
		}
	}
	return w, bad
}

// columnArrays is one text[] per column holding the rows' values; a row
// with a value of no text form is left out and handed to fail (nil: it
// fails the batch). It returns an error when no row is left.
func (s *Sink) columnArrays(e *encoder, changes []row.Change, fail func(int, error)) ([][]byte, error) {
	cols := make([]int, s.schema.Len())
	for i := range cols {
		cols[i] = i
	}
	return s.arrays(e, changes, cols, fail)
}

// keyArrays is one text[] per key column.
func (s *Sink) keyArrays(e *encoder, changes []row.Change, fail func(int, error)) ([][]byte, error) {
	return s.arrays(e, changes, s.key, fail)
}

func (s *Sink) arrays(e *encoder, changes []row.Change, cols []int, fail func(int, error)) ([][]byte, error) {
	if cap(e.arrays) < len(cols) {
		e.arrays = make([]textArray, len(cols))
	}
	arrays := e.arrays[:len(cols)]
	for i := range arrays {
		arrays[i].reset()
	}
	type mark struct {
		n, body int
		nulls   bool
	}
	marks := make([]mark, len(cols))
	kept := 0
	for i, c := range changes {
		for j := range arrays {
			marks[j] = mark{arrays[j].n, len(arrays[j].body), arrays[j].nulls}
		}
		var err error
		for j, k := range cols {
			v := c.Row[k]
			if v.IsNull() {
				arrays[j].addNull()
				continue
			}
			f, col := s.schema.Fields[k], s.cols[k]
			if err = arrays[j].add(func(dst []byte) ([]byte, error) {
				return pgvalue.AppendText(dst, v, f.Type, col.target)
			}); err != nil {
				err = fmt.Errorf("column %s: %w", f.Name, err)
				break
			}
		}
		if err != nil {
			for j := range arrays {
				arrays[j].n, arrays[j].body, arrays[j].nulls = marks[j].n, arrays[j].body[:marks[j].body], marks[j].nulls
			}
			if fail == nil {
				return nil, err
			}
			fail(i, err)
			continue
		}
		kept++
	}
	if kept == 0 {
		return nil, errors.New("no row left")
	}
	out := make([][]byte, len(arrays))
	for j := range arrays {
		out[j] = arrays[j].encode()
	}
	return out, nil
}

// copyLine is a row as a line of COPY's text format.
func (s *Sink) copyLine(e *encoder, r row.Row) ([]byte, error) {
	line := e.line[:0]
	for i, v := range r {
		if i > 0 {
			line = append(line, '\t')
		}
		if v.IsNull() {
			line = append(line, '\\', 'N')
			continue
		}
		f := s.schema.Fields[i]
		text, err := pgvalue.AppendText(e.text[:0], v, f.Type, s.cols[i].target)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		e.text = text
		line = pgvalue.AppendCopy(line, text)
	}
	e.line = append(line, '\n')
	return e.line, nil
}

// writeBatch writes changes in one transaction, retrying transient
// failures; if the server refuses a row, it writes them one by one and
// rejects the refused ones.
func (s *Sink) writeBatch(ctx context.Context, l *lane, changes []row.Change) error {
	w, bad := s.encode(&l.enc, changes)
	for _, r := range bad {
		if err := s.rejectChange(r.i, changes, r.err); err != nil {
			return err
		}
	}
	if len(w.copy) == 0 && len(w.stmts) == 0 {
		return nil
	}
	err := s.execRetrying(ctx, l, w)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && pgconf.Classify(err) == pgconf.RowLevel && !isFenced(err) {
		s.logger.Info("the server refused a row of the batch; writing the batch row by row to find it", "table", s.table.String(), "changes", len(changes), "error", err.Error())
		return s.writeRows(ctx, l, changes)
	}
	return s.errorf("write %d changes: %w", len(changes), err)
}

// execRetrying runs w, retrying transient errors with backoff; a
// row-level or fatal error is returned at once.
func (s *Sink) execRetrying(ctx context.Context, l *lane, w work) error {
	err := retry.Do(ctx, s.backoff, s.logger.With("table", s.table.String(), "target", s.target), "postgres write", func(ctx context.Context) error {
		err := s.exec(ctx, l, w)
		if err != nil && (pgconf.Classify(err) != pgconf.Transient || isFenced(err)) {
			return retry.Permanent(err)
		}
		return err
	})
	if err == nil {
		s.bytes.Add(int64(w.bytes))
	}
	return err
}

// writeRows writes each change on its own, handing those the server
// refuses to on_error.
func (s *Sink) writeRows(ctx context.Context, l *lane, changes []row.Change) error {
	for i := range changes {
		w, bad := s.encode(&l.enc, changes[i:i+1])
		if len(bad) > 0 {
			continue // rejected by writeBatch already
		}
		err := s.execRetrying(ctx, l, w)
		if err == nil {
			continue
		}
		if ctx.Err() != nil || pgconf.Classify(err) != pgconf.RowLevel || isFenced(err) {
			return s.errorf("write %s: %w", s.position(i, len(changes), changes[i]), err)
		}
		if err := s.rejectChange(i, changes, err); err != nil {
			return err
		}
	}
	return nil
}

// rejectChange hands change i to on_error.
func (s *Sink) rejectChange(i int, changes []row.Change, err error) error {
	c := changes[i]
	bad := connector.BadRecord{
		Position: s.position(i, len(changes), c),
		Raw:      []byte(c.String()),
		Err:      fmt.Errorf("postgres table %s: %w", s.table, err),
	}
	if s.reject == nil {
		return s.errorf("%w", bad)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reject(bad)
}

// position names a change for on_error: by its key in upsert mode, by its
// place in the batch in append mode.
func (s *Sink) position(i, n int, c row.Change) string {
	if s.mode != connector.Upsert || len(s.key) == 0 {
		return fmt.Sprintf("sink %s, table %s, change %d of a batch of %d", s.name, s.table, i+1, n)
	}
	parts := make([]string, len(s.key))
	for j, k := range s.key {
		parts[j] = s.schema.Fields[k].Name + "=" + c.Row[k].String()
	}
	return fmt.Sprintf("sink %s, table %s, key (%s)", s.name, s.table, strings.Join(parts, ", "))
}

// exec runs w in one transaction on the lane's connection: BEGIN and
// the writes in one round trip, then COMMIT once their answers are in.
// A transaction whose process dies before it sent COMMIT can thus never
// commit, however late its writes reach the server; and a COMMIT that
// arrives late ends a transaction that holds the locks of the rows it
// wrote, so the next run's writes of those rows wait for it and land
// after it. With a fence the transaction first reads the fence row FOR
// SHARE and commits only when the row still holds this run's fence (the
// package comment's Fencing). Any failure rolls back; a connection that
// broke is dropped for the next try to replace.
func (s *Sink) exec(ctx context.Context, l *lane, w work) (err error) {
	conn, err := l.connect(ctx, s)
	if err != nil {
		return err
	}
	pc := conn.PgConn()
	defer func() {
		if err == nil || pc.IsClosed() || pc.TxStatus() == 'I' {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		if _, rerr := pc.Exec(rctx, "ROLLBACK").ReadAll(); rerr != nil {
			_ = pc.Close(rctx)
		}
	}()
	batch := &pgconn.Batch{}
	batch.ExecParams("BEGIN", nil, nil, nil, nil)
	fenced := s.fence.value != 0
	if fenced {
		batch.ExecParams(s.fence.check, [][]byte{[]byte(s.fence.id)}, nil, nil, nil)
	}
	for _, st := range w.stmts {
		oids := make([]uint32, len(st.params))
		formats := make([]int16, len(st.params))
		for i := range st.params {
			oids[i], formats[i] = textArrayOID, 1
		}
		batch.ExecParams(st.sql, st.params, oids, formats, nil)
	}
	results, err := pc.ExecBatch(ctx, batch).ReadAll()
	if err != nil {
		return err
	}
	if fenced {
		if err := s.fence.verify(results[1]); err != nil {
			return err
		}
	}
	if w.copy != nil {
		if _, err := pc.CopyFrom(ctx, bytes.NewReader(w.copy), s.stmts.copy); err != nil {
			return err
		}
	}
	res, err := pc.Exec(ctx, "COMMIT").ReadAll()
	if err != nil {
		return err
	}
	if len(res) != 1 || res[0].CommandTag.String() != "COMMIT" {
		return errors.New("COMMIT did not commit")
	}
	return nil
}
