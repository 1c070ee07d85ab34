package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Decoder reads Parquet files into rows of its schema
// (connector.BulkDecoder). A column of the schema is the file's top-level
// column of the same name (the exact name first, then without regard to
// case); one the file lacks is NULL in every row, as Flink reads it, and
// must then be nullable.
type Decoder struct {
	schema row.Schema
	// needed parallels the schema: the columns to read (SetColumns); nil
	// reads all.
	needed []bool
}

// NewDecoder checks the options; a reader takes none of them, the files
// say how they were written.
func NewDecoder(o Options, schema row.Schema) (*Decoder, error) {
	if _, err := check(o); err != nil {
		return nil, err
	}
	for _, f := range schema.Fields {
		if _, err := nodeOf(f.Type, 0); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	return &Decoder{schema: schema}, nil
}

// SetColumns implements connector.ProjectingBulkDecoder.
func (d *Decoder) SetColumns(needed []bool) { d.needed = needed }

// OpenFile implements connector.BulkDecoder: it reads the footer and
// matches the file's columns to the schema's.
func (d *Decoder) OpenFile(r io.ReaderAt, size int64, name string) (_ connector.BulkReader, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
	}()
	var f *pq.File
	cache := &chunkCache{r: r}
	err = panics.Call(func() error {
		var err error
		f, err = pq.OpenFile(cache, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(64<<10))
		return err
	})
	if err != nil {
		return nil, notParquet(err)
	}
	fr := &fileReader{name: name, file: f, cache: cache, size: size, width: d.schema.Len()}
	top := f.Root().Columns()
	for i, fd := range d.schema.Fields {
		if d.needed != nil && !d.needed[i] {
			continue
		}
		c := columnNamed(top, fd.Name)
		if c == nil {
			if fd.Type.NotNull {
				return nil, fmt.Errorf("the file has no column %s, which is NOT NULL", fd.Name)
			}
			continue
		}
		// parquet-go panics where a damaged schema contradicts itself (a
		// leaf annotated MAP: its type has no kind), so a panic here is
		// the file's fault, said as such.
		var a *assembler
		err := panics.Call(func() error {
			var err error
			a, err = newAssembler(c, fd.Type, &fr.leaves)
			return err
		})
		var p *panics.Error
		if errors.As(err, &p) {
			return nil, fmt.Errorf("column %s: not a valid Parquet file: %v", fd.Name, p.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", fd.Name, err)
		}
		fr.cols = append(fr.cols, placed{at: i, a: a})
	}
	for _, g := range f.RowGroups() {
		fr.groups = append(fr.groups, g.NumRows())
	}
	return fr, nil
}

// notParquet says what a file that does not open is.
func notParquet(err error) error {
	var p *panics.Error
	if errors.As(err, &p) {
		return fmt.Errorf("not a valid Parquet file: %v", p.Value)
	}
	return fmt.Errorf("not a valid Parquet file: %w", err)
}

// columnNamed finds the column named name, exactly or else without
// regard to case, as SQL identifiers are.
func columnNamed(cols []*pq.Column, name string) *pq.Column {
	for _, c := range cols {
		if c.Name() == name {
			return c
		}
	}
	for _, c := range cols {
		if strings.EqualFold(c.Name(), name) {
			return c
		}
	}
	return nil
}

// fileReader reads the row groups of one file (connector.BulkReader).
type fileReader struct {
	name   string
	file   *pq.File
	cache  *chunkCache
	size   int64
	width  int
	groups []int64
	// cols are the schema's columns the file has, each with the index of
	// its place in a row; leaves lists the file's leaf columns they read.
	cols   []placed
	leaves []int
}

type placed struct {
	at int
	a  *assembler
}

func (fr *fileReader) Groups() []int64 { return fr.groups }

// ReadGroup implements connector.BulkReader. The column chunks read are
// fetched whole first, each with one read (prefetch.go), their page
// headers checked, and then decoded from memory.
func (fr *fileReader) ReadGroup(ctx context.Context, g int, skip int64, max int, emit func(*row.Batch) error) (err error) {
	if g < 0 || g >= len(fr.groups) {
		return fmt.Errorf("%s: no row group %d", fr.name, g)
	}
	where := func(n int64) string { return fmt.Sprintf("%s: row group %d, row %d", fr.name, g, n+1) }
	var n int64
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: not a valid Parquet file: %v", where(n), p)
		}
	}()
	chunks := fr.file.RowGroups()[g].ColumnChunks()
	meta := fr.file.Metadata().RowGroups[g].Columns
	cur := make(cursors, len(chunks))
	starts, ends := make([]int64, len(fr.leaves)), make([]int64, len(fr.leaves))
	column := func(leaf int) string { return strings.Join(meta[leaf].MetaData.PathInSchema, ".") }
	for i, leaf := range fr.leaves {
		if leaf >= len(meta) || leaf >= len(chunks) {
			return fmt.Errorf("%s: row group %d has %d column chunks, the schema more", fr.name, g, len(meta))
		}
		if starts[i], ends[i], err = chunkRange(fr.size, &meta[leaf]); err != nil {
			return fmt.Errorf("%s: row group %d, column %s: not a valid Parquet file: %w", fr.name, g, column(leaf), err)
		}
	}
	fetched, err := fr.cache.fetch(starts, ends)
	if err != nil {
		return fmt.Errorf("%s: row group %d: %w", fr.name, g, err)
	}
	for i, leaf := range fr.leaves {
		if err := checkPages(fetched[i].data, starts[i], meta[leaf].MetaData.Codec); err != nil {
			return fmt.Errorf("%s: row group %d, column %s: not a valid Parquet file: %w", fr.name, g, column(leaf), err)
		}
	}
	fr.cache.add(fetched)
	defer fr.cache.remove(fetched)
	for _, leaf := range fr.leaves {
		cur[leaf] = &cursor{pages: chunks[leaf].Pages()}
	}
	defer cur.close()
	rows := fr.groups[g]
	b := row.NewBatch(max, fr.width)
	// Rows before skip are assembled (their values are read) into scratch.
	scratch := make(row.Row, fr.width)
	for ; n < rows; n++ {
		if n&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r := scratch
		if n >= skip {
			r = b.NewRow()
		}
		for _, p := range fr.cols {
			v, err := p.a.read(cur)
			if err != nil {
				return fmt.Errorf("%s, column %d: %w", where(n), p.at+1, err)
			}
			r[p.at] = v
		}
		if n < skip {
			continue
		}
		b.Append(row.Insert, r)
		if b.Len() == max {
			if err := emit(b); err != nil {
				return err
			}
			b = row.NewBatch(max, fr.width)
		}
	}
	if len(fr.cols) > 0 {
		if err := cur.done(); err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
	}
	if b.Len() > 0 {
		return emit(b)
	}
	return nil
}

// cursors hold the position in each leaf column read (nil for the others).
type cursors []*cursor

// cursor walks the values of one column chunk, a page at a time.
type cursor struct {
	pages pq.Pages
	buf   []pq.Value
	vals  []pq.Value
	i     int
	end   bool
}

// peek returns the next value without taking it; ok is false at the
// end of the chunk.
func (c *cursor) peek() (pq.Value, bool, error) {
	for c.i >= len(c.vals) {
		if c.end {
			return pq.Value{}, false, nil
		}
		if err := c.fill(); err != nil {
			return pq.Value{}, false, err
		}
	}
	return c.vals[c.i], true, nil
}

// next takes the next value; the chunk ending first is an error.
func (c *cursor) next() (pq.Value, error) {
	v, ok, err := c.peek()
	if err != nil {
		return v, err
	}
	if !ok {
		return v, errors.New("a column chunk ends before its row group")
	}
	c.i++
	return v, nil
}

func (c *cursor) fill() error {
	p, err := c.pages.ReadPage()
	if err == io.EOF {
		c.end = true
		return nil
	}
	if err != nil {
		return err
	}
	n := int(p.NumValues())
	if cap(c.buf) < n {
		c.buf = make([]pq.Value, n)
	}
	c.buf = c.buf[:n]
	got := 0
	vr := p.Values()
	for got < n {
		k, err := vr.ReadValues(c.buf[got:])
		got += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if k == 0 {
			return errors.New("a page yields fewer values than it holds")
		}
	}
	c.vals, c.i = c.buf[:got], 0
	return nil
}

// done checks that every chunk read ends with its row group.
func (cs cursors) done() error {
	for i, c := range cs {
		if c == nil {
			continue
		}
		if _, ok, err := c.peek(); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("column chunk %d holds more values than its row group's rows", i)
		}
	}
	return nil
}

func (cs cursors) close() {
	for _, c := range cs {
		if c != nil {
			c.pages.Close()
		}
	}
}

var (
	_ connector.BulkDecoder           = (*Decoder)(nil)
	_ connector.ProjectingBulkDecoder = (*Decoder)(nil)
	_ connector.BulkReader            = (*fileReader)(nil)
)
