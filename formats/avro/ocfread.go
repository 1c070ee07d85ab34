package avro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Reading object container files. OpenFile reads the header and then
// walks the blocks from one to the next by their lengths (the count and
// length that start a block, and the sync marker that ends it, are all
// it reads of a block), and makes the file's pieces of runs of blocks of
// about PieceBytes. A piece is read with one ReadAt and decoded block by
// block; a position is a piece and a row in it, as for Parquet.

// PieceBytes is about how many bytes of blocks a piece of a file holds:
// the unit of parallel reading, and of positions (a piece and a row in
// it), so a checkpoint's position holds only while it stays the same. A
// variable so that tests can cut small files into several pieces.
var PieceBytes int64 = 4 << 20

const (
	// headWindow is how much is read at once for the header.
	headWindow = 64 << 10
	// indexWindow is how much is read at once while the blocks are
	// walked: the count and length that start a block, or the sync
	// marker that ends it and the next block's start, and ahead as much
	// as makes indexWindow, so that small blocks are walked inside one
	// read and a large one takes one read. On object storage each read
	// is a request with a round trip of its own: a 123 MB file of 256
	// KiB blocks took two requests a block, 4.2 s to open against 1.8 s
	// from a local file.
	indexWindow = 1 << 20
	// maxHeader bounds the header (its schema).
	maxHeader = 16 << 20
	// maxBlockCount bounds a block's count of datums.
	maxBlockCount = 1 << 40
)

// FileDecoder reads object container files into rows of its schema
// (connector.BulkDecoder and ProjectingBulkDecoder).
type FileDecoder struct {
	columns []row.Field
	// maxBlock bounds a block's datums, decompressed.
	maxBlock int
	// at places the columns read (nil: all); -1 leaves one NULL.
	at []int
	// last is the schema of the file last opened, compiled: the files of
	// one writer share it.
	mu   sync.Mutex
	last *compiled
}

// compiled is a writer schema resolved against the table.
type compiled struct {
	text   string
	writer avro.Schema
	prog   *recordDec
	skip   skipFn
}

// NewFileDecoder checks the options. They describe the files written (a
// sink reads its own parts with the same options): a file read holds its
// own schema and names its own codec.
func NewFileDecoder(o FileOptions, schema row.Schema) (*FileDecoder, error) {
	if _, err := NewFileEncoder(o, schema); err != nil {
		return nil, err
	}
	limit := o.MaxBlockBytes
	switch {
	case limit == 0:
		limit = max(defaultMaxBlockBytes, 2*o.BlockSize)
	case limit < 0 || limit > maxMaxBlockBytes:
		return nil, connector.Errorf("max_block_bytes", "%d bytes: want 1 to %d (1 GiB)", limit, maxMaxBlockBytes)
	}
	return &FileDecoder{columns: schema.Fields, maxBlock: limit}, nil
}

// SetColumns implements connector.ProjectingBulkDecoder.
func (d *FileDecoder) SetColumns(needed []bool) {
	d.at = make([]int, len(d.columns))
	for i := range d.at {
		d.at[i] = -1
		if i < len(needed) && needed[i] {
			d.at[i] = i
		}
	}
}

// OpenFile implements connector.BulkDecoder.
func (d *FileDecoder) OpenFile(r io.ReaderAt, size int64, name string) (_ connector.BulkReader, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
	}()
	fr := &fileReader{name: name, r: r, size: size, width: len(d.columns), win: window{r: r, size: size}, maxBlock: d.maxBlock}
	end, text, err := fr.readHeader()
	if err != nil {
		return nil, err
	}
	c, err := d.compile(text)
	if err != nil {
		return nil, err
	}
	fr.prog, fr.skip = c.prog, c.skip
	if err := fr.index(end); err != nil {
		return nil, err
	}
	return fr, nil
}

// compile parses a file's schema and resolves it against the table, or
// takes the last file's when it is the same.
func (d *FileDecoder) compile(text string) (*compiled, error) {
	d.mu.Lock()
	last := d.last
	d.mu.Unlock()
	if last != nil && last.text == text {
		return last, nil
	}
	c := &compiled{text: text}
	err := panics.Call(func() error {
		var err error
		c.writer, err = Parse(text)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the header's avro.schema: %s", clip(err.Error()))
	}
	if c.prog, err = compileRecord(c.writer, d.columns, d.at); err != nil {
		return nil, fmt.Errorf("the file's schema cannot be read into the table's columns: %w", err)
	}
	c.skip = compileSkip(c.writer)
	d.mu.Lock()
	d.last = c
	d.mu.Unlock()
	return c, nil
}

// clip shortens a message that quotes a whole schema.
func clip(msg string) string {
	if len(msg) > 300 {
		return msg[:300] + "..."
	}
	return msg
}

// fileReader reads the pieces of one file (connector.BulkReader).
type fileReader struct {
	name   string
	r      io.ReaderAt
	size   int64
	width  int
	win    window
	codec  *blockCodec
	sync   string
	prog   *recordDec
	skip   skipFn
	groups []group
	rows   []int64
	// maxBlock bounds a block's datums, decompressed.
	maxBlock int
}

// group is a piece: the blocks from byte start to end.
type group struct {
	start, end int64
}

var errNotOCF = errors.New("not an Avro object container file (it does not start with Obj 1)")

// readHeader reads the magic, the metadata and the sync marker, and
// returns where the first block starts.
func (fr *fileReader) readHeader() (int64, string, error) {
	for n := int64(headWindow); ; n *= 4 {
		buf, err := fr.win.at(0, int(min(n, fr.size)), 0)
		if err != nil {
			return 0, "", err
		}
		end, text, err := fr.parseHeader(string(buf))
		if err != nil && !errors.Is(err, errNotOCF) && int64(len(buf)) < min(fr.size, maxHeader) {
			// The header may go on past what was read.
			continue
		}
		return end, text, err
	}
}

func (fr *fileReader) parseHeader(s string) (int64, string, error) {
	if len(s) < len(ocfMagic) || s[:len(ocfMagic)] != ocfMagic {
		return 0, "", errNotOCF
	}
	r := reader{s: s, pos: len(ocfMagic)}
	meta := map[string]string{}
	for {
		n, err := r.blockCount()
		if err != nil {
			return 0, "", fmt.Errorf("the header's metadata: %w", err)
		}
		if n == 0 {
			break
		}
		for range n {
			k, err := r.bytes()
			if err != nil {
				return 0, "", fmt.Errorf("the header's metadata: %w", err)
			}
			v, err := r.bytes()
			if err != nil {
				return 0, "", fmt.Errorf("the header's metadata %q: %w", k, err)
			}
			meta[k] = v
		}
	}
	sync, err := r.fixed(syncSize)
	if err != nil {
		return 0, "", fmt.Errorf("the header's sync marker: %w", err)
	}
	fr.sync = sync
	name := meta["avro.codec"]
	if name == "" {
		name = "null"
	}
	if fr.codec = blockCodecs[name]; fr.codec == nil {
		return 0, "", fmt.Errorf("the file's codec %q is not one etld reads (null, deflate, snappy, zstandard, bzip2)", name)
	}
	text, ok := meta["avro.schema"]
	if !ok {
		return 0, "", errors.New("the header has no avro.schema")
	}
	return int64(r.pos), text, nil
}

// index walks the blocks from byte off on and makes the pieces.
func (fr *fileReader) index(off int64) error {
	var cur group
	var rows int64
	cur.start = off
	for off < fr.size {
		// A block's start: its count and its length, 20 bytes at most.
		head, err := fr.win.at(off, 20, indexWindow-20)
		if err != nil {
			return err
		}
		count, length, n, err := blockHead(string(head))
		if err != nil {
			return fmt.Errorf("the block at byte %d: %w", off, err)
		}
		end := off + int64(n) + length + syncSize
		if length > fr.size || end > fr.size {
			return fmt.Errorf("the block at byte %d: %d bytes of data and a sync marker, and the file ends %d bytes on", off, length, fr.size-off-int64(n))
		}
		sync, err := fr.win.at(end-syncSize, syncSize, indexWindow-syncSize)
		if err != nil {
			return err
		}
		if string(sync) != fr.sync {
			return fmt.Errorf("the block at byte %d does not end with the file's sync marker", off)
		}
		off = end
		rows += count
		if off-cur.start >= PieceBytes {
			cur.end = off
			fr.groups, fr.rows = append(fr.groups, cur), append(fr.rows, rows)
			cur, rows = group{start: off}, 0
		}
	}
	if off > cur.start {
		cur.end = off
		fr.groups, fr.rows = append(fr.groups, cur), append(fr.rows, rows)
	}
	return nil
}

// blockHead reads a block's count and length from its first bytes, and
// returns how many bytes they took.
func blockHead(s string) (count, length int64, n int, err error) {
	r := reader{s: s}
	if count, err = r.long(); err != nil {
		return 0, 0, 0, fmt.Errorf("its count: %w", err)
	}
	if length, err = r.long(); err != nil {
		return 0, 0, 0, fmt.Errorf("its length: %w", err)
	}
	switch {
	case count < 0 || count > maxBlockCount:
		return 0, 0, 0, fmt.Errorf("a count of %d datums", count)
	case length < 0:
		return 0, 0, 0, fmt.Errorf("a length of %d bytes", length)
	}
	return count, length, r.pos, nil
}

func (fr *fileReader) Groups() []int64 { return fr.rows }

// ReadGroup implements connector.BulkReader.
func (fr *fileReader) ReadGroup(ctx context.Context, g int, skip int64, max int, emit func(*row.Batch) error) error {
	if g < 0 || g >= len(fr.groups) {
		return fmt.Errorf("%s: no piece %d", fr.name, g)
	}
	gr := fr.groups[g]
	data := make([]byte, gr.end-gr.start)
	if _, err := fr.r.ReadAt(data, gr.start); err != nil && !(errors.Is(err, io.EOF) && gr.end == fr.size) {
		return fmt.Errorf("%s: read the blocks at byte %d: %w", fr.name, gr.start, err)
	}
	b := row.NewBatch(max, fr.width)
	var n int64 // rows of the piece read
	r := &reader{}
	for pos := 0; pos < len(data); {
		off := gr.start + int64(pos)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s: the block at byte %d: %s", fr.name, off, fmt.Sprintf(format, args...))
		}
		count, length, h, err := blockHead(string(data[pos:min(pos+20, len(data))]))
		if err != nil {
			return fail("%v", err)
		}
		if int64(len(data)-pos-h-syncSize) < length {
			return fail("it runs past the piece")
		}
		body := data[pos+h : pos+h+int(length)]
		pos += h + int(length) + syncSize
		if string(data[pos-syncSize:pos]) != fr.sync {
			return fail("it does not end with the file's sync marker")
		}
		if n+count <= skip {
			n += count
			continue
		}
		datums, err := fr.codec.decompress(body, fr.maxBlock)
		if err != nil {
			return fail("%v", err)
		}
		if count > int64(len(datums))+1<<16 {
			return fail("%d datums in %d bytes", count, len(datums))
		}
		// The datums are a buffer of their own (decompressed, or the
		// piece's, read for this call), never written again: the rows'
		// strings are substrings of it.
		r.reset(bytesString(datums), 0)
		for k := range count {
			if n&1023 == 1023 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if n < skip {
				if err := fr.skip(r); err != nil {
					return fail("datum %d (row %d of the piece): %v", k+1, n+1, err)
				}
				n++
				continue
			}
			out := b.NewRow()
			if err := fr.prog.decode(r, out); err != nil {
				return fail("datum %d (row %d of the piece): %v", k+1, n+1, err)
			}
			n++
			b.Append(row.Insert, out)
			if b.Len() == max {
				if err := emit(b); err != nil {
					return err
				}
				b = row.NewBatch(max, fr.width)
			}
		}
		if r.pos != len(r.s) {
			return fail("%d bytes after its last datum", len(r.s)-r.pos)
		}
	}
	if n != fr.rows[g] {
		return fmt.Errorf("%s: piece %d held %d rows when opened and %d now: the file changed", fr.name, g, fr.rows[g], n)
	}
	if b.Len() > 0 {
		return emit(b)
	}
	return nil
}

// window reads a file in windows: the bytes asked for, and ahead more
// after them in the same read, so that the starts of small blocks come
// from one read.
type window struct {
	r    io.ReaderAt
	size int64
	base int64
	buf  []byte
}

// at returns n bytes from off (fewer at the end of the file); a read
// also takes ahead bytes after them. The bytes are valid until the next
// call.
func (w *window) at(off int64, n, ahead int) ([]byte, error) {
	if off >= w.base && off+int64(n) <= w.base+int64(len(w.buf)) {
		return w.buf[off-w.base : off-w.base+int64(n)], nil
	}
	want := int64(n + ahead)
	if end := w.size - off; end < want {
		want = max(end, 0)
	}
	if cap(w.buf) < int(want) {
		w.buf = make([]byte, want)
	}
	w.buf = w.buf[:want]
	if _, err := w.r.ReadAt(w.buf, off); err != nil && !(errors.Is(err, io.EOF) && off+want == w.size) {
		w.buf = w.buf[:0]
		return nil, fmt.Errorf("read at byte %d: %w", off, err)
	}
	w.base = off
	return w.buf[:min(int64(n), want)], nil
}

var (
	_ connector.BulkDecoder           = (*FileDecoder)(nil)
	_ connector.ProjectingBulkDecoder = (*FileDecoder)(nil)
	_ connector.BulkReader            = (*fileReader)(nil)
)

// bytesString is b as a string without a copy; b is never written again.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
