package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// chunkRows is how many rows of a group the nested columns are shredded
// from at a time, a column at a time: few enough that the rows stay in
// cache. Their pages are cut between chunks, so it is part of the file's
// layout.
const chunkRows = 1024

// emptyFile is the footer of a file of no rows, whose schema, column
// orders and creator every file repeats.
func (e *Encoder) emptyFile() (fileMeta, error) {
	var buf bytes.Buffer
	w := e.newPQWriter(&buf, e.pq)
	if err := w.Close(); err != nil {
		return fileMeta{}, err
	}
	md, err := readFooter(buf.Bytes())
	if err != nil {
		return fileMeta{}, err
	}
	return fileMeta{schema: md.Schema, orders: md.ColumnOrders, createdBy: md.CreatedBy}, nil
}

// groupEncoder encodes row groups, one at a time: its buffers are reused.
type groupEncoder struct {
	e *Encoder
	// flat holds the values of each top-level scalar column (nil for a
	// nested one), which column.encode writes.
	flat  []*column
	codec compress.Codec
	// pw writes the nested columns, their values shredded into cols, as
	// a file in buf; nil when there are none.
	pw   *pq.GenericWriter[any]
	buf  bytes.Buffer
	cols [][]pq.Value
	out  []byte
}

// newGroupEncoder takes an encoder of the pool, or makes one: a file's
// encoder goes back to the pool once the file is closed, its buffers
// grown to a row group's size, for the next file.
func (e *Encoder) newGroupEncoder() *groupEncoder {
	if g, ok := e.pool.Get().(*groupEncoder); ok {
		return g
	}
	g := &groupEncoder{e: e, flat: make([]*column, len(e.cols)), codec: codecs[e.opts.codec]()}
	nested := 0
	for i, s := range e.cols {
		if s.t.ID.Nested() {
			nested = max(nested, s.last)
			continue
		}
		g.flat[i] = newColumn(e.schema.Fields[i].Name, s.t, min(e.opts.groupRows, presize))
	}
	if e.nested != nil {
		g.cols = make([][]pq.Value, nested)
		g.pw = e.newPQWriter(&g.buf, e.nested)
	}
	return g
}

// add takes r's values into the flat columns; row is its number in
// the file, for the errors.
func (g *groupEncoder) add(r row.Row, num int64) error {
	if len(r) != len(g.e.cols) {
		return fmt.Errorf("row %d has %d values, the schema %d columns", num, len(r), len(g.e.cols))
	}
	for c, col := range g.flat {
		if col == nil {
			continue
		}
		if err := g.e.cols[c].add(r[c], col); err != nil {
			return fmt.Errorf("row %d, column %s: %w", num, g.e.schema.Fields[c].Name, err)
		}
	}
	return nil
}

// reset empties the flat columns for the next row group.
func (g *groupEncoder) reset() {
	for _, c := range g.flat {
		if c != nil {
			c.reset()
		}
	}
}

// encode encodes a row group of n rows, whose flat columns' values add
// took, as one row group whose bytes start at offset base of the file:
// the bytes, and the group's metadata and page index. rows are the rows
// themselves when there are nested columns (nil otherwise), and first is
// the number of the file's rows before them, for the errors.
func (g *groupEncoder) encode(n int, rows []row.Row, first, base int64) ([]byte, splicedGroup, error) {
	var sg splicedGroup
	for _, c := range g.flat {
		if c != nil {
			defer c.forget()
		}
	}
	if g.pw != nil {
		g.buf.Reset()
		g.pw.Reset(&g.buf)
		for start := 0; start < len(rows); start += chunkRows {
			if err := g.chunk(rows[start:min(start+chunkRows, len(rows))], first+int64(start)); err != nil {
				return nil, sg, err
			}
		}
	}
	var nested []srcChunk
	if g.pw != nil {
		if err := g.pw.Close(); err != nil {
			return nil, sg, err
		}
		var err error
		if nested, err = nestedChunks(g.buf.Bytes()); err != nil {
			return nil, sg, fmt.Errorf("splicing the nested columns: %w", err)
		}
	}
	// The chunks in the order of the schema's leaves.
	out := g.out[:0]
	rg := &sg.RowGroup
	add := func(o chunkOut) {
		rg.Columns = append(rg.Columns, o.chunk)
		rg.TotalByteSize += o.chunk.MetaData.TotalUncompressedSize
		sg.ColumnIndexes = append(sg.ColumnIndexes, o.ci)
		sg.OffsetIndexes = append(sg.OffsetIndexes, o.oi)
	}
	for i, c := range g.flat {
		if c != nil {
			var o chunkOut
			var err error
			if out, o, err = c.encode(out, base, g.codec); err != nil {
				return nil, sg, fmt.Errorf("column %s: %w", c.name, err)
			}
			add(o)
			continue
		}
		s := g.e.cols[i]
		for l := s.first; l < s.last; l++ {
			n := &nested[l]
			add(n.moved(base + int64(len(out))))
			out = append(out, n.data...)
		}
	}
	g.out = out
	rg.NumRows = int64(n)
	rg.FileOffset = base
	rg.TotalCompressedSize = int64(len(out))
	return out, sg, nil
}

// chunk takes the nested columns' values of rows to parquet-go's writer
// (the flat ones add took). first is the number of the file's rows
// before them.
func (g *groupEncoder) chunk(rows []row.Row, first int64) error {
	for i := range g.cols {
		g.cols[i] = g.cols[i][:0]
	}
	for c, s := range g.e.cols {
		if g.flat[c] != nil {
			continue
		}
		for k, r := range rows {
			if err := s.shred(r[c], 0, 0, g.cols); err != nil {
				return fmt.Errorf("row %d, column %s: %w", first+int64(k)+1, g.e.schema.Fields[c].Name, err)
			}
		}
	}
	for i, w := range g.pw.ColumnWriters() {
		if _, err := w.WriteRowValues(g.cols[i]); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// newWriter makes the writer of a file whose first size bytes hold groups.
func (e *Encoder) newWriter(w io.Writer, size, last int64, groups []splicedGroup) *bulkWriter {
	var rows int64
	for _, g := range groups {
		rows += g.RowGroup.NumRows
	}
	return &bulkWriter{e: e, out: w, size: size, last: last, groups: groups, rows: rows, enc: e.newGroupEncoder()}
}

// bulkWriter writes one file (connector.BulkWriter). It fills a row
// group; a full one is encoded and appended to the file on a goroutine
// while the next fills. It waits for that goroutine before it hands it
// another group, so that Size, which counts the groups appended, is the
// same for the same rows whatever the timing.
//
// The flat columns' values are taken into the group encoder's typed
// columns as each row is written; the rows themselves are kept only when
// there are nested columns, which parquet-go's writer shreds once the
// group is full. Without nested columns the writer keeps nothing of a
// row (Encoder.CopiesRows), and the rows' memory can be used again.
type bulkWriter struct {
	e   *Encoder
	out io.Writer
	// enc takes the rows of the group being filled; spare is the encoder
	// of the group before, once it is in the file.
	enc, spare *groupEncoder
	// size is the file's length, groups its row groups, as of the last
	// group appended; rows counts their rows. last is the length of the
	// group last begun, once appended: Size leaves it out until the next
	// group begins, so that a Flush, which waits for it, changes nothing.
	size   int64
	groups []splicedGroup
	rows   int64
	last   int64
	// n is the number of rows of the group being filled, cur the rows
	// themselves when there are nested columns.
	n   int
	cur []row.Row
	// busy, while a group is in flight, delivers its result; busyRows is
	// its number of rows and busyEnc its encoder.
	busy     chan spliced
	busyRows int
	busyEnc  *groupEncoder
	err      error
	closed   bool
}

// spliced is a group appended to the file, or the error that stopped it.
type spliced struct {
	n   int64
	g   splicedGroup
	err error
}

func (w *bulkWriter) Write(r row.Row) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("write after close")
	}
	if err := w.enc.add(r, w.rows+int64(w.busyRows+w.n)+1); err != nil {
		// The row's values are partly in the columns: the file cannot
		// go on.
		w.err = err
		return err
	}
	w.n++
	if w.e.nested != nil {
		w.cur = append(w.cur, r)
	}
	if w.n < w.e.opts.groupRows {
		return nil
	}
	return w.submit()
}

// submit hands the filled group to the encoding goroutine, once the
// group before it is in the file.
func (w *bulkWriter) submit() error {
	if err := w.wait(); err != nil {
		return err
	}
	enc, n, rows, first, base := w.enc, w.n, w.cur, w.rows, w.size
	w.last = 0
	w.enc, w.spare = w.spare, nil
	if w.enc == nil {
		w.enc = w.e.newGroupEncoder()
	}
	w.n = 0
	if w.e.nested != nil {
		w.cur = make([]row.Row, 0, w.e.opts.groupRows)
	}
	w.busy, w.busyRows, w.busyEnc = make(chan spliced, 1), n, enc
	go func(done chan<- spliced) {
		var s spliced
		defer func() { done <- s }()
		data, g, err := enc.encode(n, rows, first, base)
		if err != nil {
			s.err = err
			return
		}
		s.n, s.g, s.err = int64(len(data)), g, writeAll(w.out, data)
	}(w.busy)
	return nil
}

// wait takes the result of the group in flight, if any.
func (w *bulkWriter) wait() error {
	if w.busy == nil {
		return w.err
	}
	s := <-w.busy
	w.busy = nil
	w.busyEnc.reset()
	w.spare, w.busyEnc = w.busyEnc, nil
	if s.err != nil {
		w.err = s.err
		return s.err
	}
	w.size += s.n
	w.last = s.n
	w.groups = append(w.groups, s.g)
	w.rows += int64(w.busyRows)
	w.busyRows = 0
	return w.err
}

func (w *bulkWriter) Flush() error { return w.wait() }

func (w *bulkWriter) Held() int { return w.n + w.busyRows }

func (w *bulkWriter) Size() int64 { return w.size - w.last }

func (w *bulkWriter) Checkpoint() ([]byte, int64, error) {
	if err := w.wait(); err != nil {
		return nil, 0, err
	}
	state, err := encodeResume(w.size, w.last, w.groups)
	return state, w.size, err
}

// Close encodes the rows held and writes the footer.
func (w *bulkWriter) Close() error {
	if w.closed {
		return w.err
	}
	if w.n > 0 && w.err == nil {
		if err := w.submit(); err != nil {
			return err
		}
	}
	w.closed = true
	err := w.wait()
	w.release()
	if err != nil {
		return err
	}
	b, err := footer(w.size, w.groups, w.e.template)
	if err != nil {
		return err
	}
	if err := writeAll(w.out, b); err != nil {
		w.err = err
		return err
	}
	w.size += int64(len(b))
	w.last = 0
	return nil
}

func (w *bulkWriter) Abort() {
	if w.busy != nil {
		<-w.busy
		w.busy = nil
		w.spare, w.busyEnc = w.busyEnc, nil
	}
	w.closed, w.cur, w.n = true, nil, 0
	w.release()
}

// release gives the group encoders back to the pool, emptied, once no
// group is in flight.
func (w *bulkWriter) release() {
	for _, g := range []*groupEncoder{w.enc, w.spare} {
		if g != nil {
			g.reset()
			for _, c := range g.flat {
				if c != nil {
					c.forget()
				}
			}
			w.e.pool.Put(g)
		}
	}
	w.enc, w.spare = nil, nil
}

// CopiesRows implements connector.RowCopier: the files' writers keep
// nothing of the rows written, unless nested columns, which parquet-go
// shreds once a row group is full, keep them.
func (e *Encoder) CopiesRows() bool { return e.nested == nil }

var (
	_ connector.BulkWriter = (*bulkWriter)(nil)
	_ connector.RowCopier  = (*Encoder)(nil)
)
