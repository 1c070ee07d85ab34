// Package parquet is the parquet format: a bulk format (connector's
// BulkEncoder and BulkDecoder) that the file sink writes whole files of
// and the file source reads, with typed columns for every SQL type
// (schema.go), NULLs, nested ARRAY, MAP and ROW, compression and row
// groups of a fixed number of rows.
//
// # Writing
//
// A file is written one row group at a time: the writer takes the values
// of each top-level scalar column into typed buffers as each row comes
// (flat.go), keeping the rows themselves only for the nested columns, and
// once it has row_group_size rows encodes the group's column chunks, in
// memory, on a goroutine of its own while the next group fills. A top-level scalar column's
// chunk is written here (chunk.go: data pages v2, PLAIN values or a
// STRING's dictionary, definition levels, statistics, the page index);
// the nested columns' chunks by parquet-go, as a file of those columns
// alone whose chunks are copied out (splice.go). The chunks are appended
// to the output with the group's metadata at the offsets where they
// land; the footer, written when the file is closed, lists every group.
// So the bytes a file gets depend only on its rows: a row group ends
// after row_group_size rows, whenever Flush or Checkpoint are called,
// and a file the sink resumes after a crash from the groups' metadata in
// its checkpoint (Checkpoint, Resume) ends byte for byte as it would
// have.
//
// # Reading
//
// A file's row groups are its pieces: read.go decodes the columns the
// plan needs of one row group into batches, and the file source reads
// several row groups at once.
package parquet

import (
	"fmt"
	"io"
	"strings"
	"sync"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the format's options.
type Options struct {
	// Compression is the codec of the pages: snappy (the default), zstd,
	// gzip or none.
	Compression string `yaml:"compression"`
	// RowGroupSize is the number of rows of a row group; 122880 when not
	// given, as DuckDB writes.
	RowGroupSize int `yaml:"row_group_size"`
	// TimestampUnit fixes the unit of every TIMESTAMP column: millis,
	// micros or nanos. By default each column's precision picks it.
	TimestampUnit string `yaml:"timestamp_unit"`
}

const (
	defaultRowGroupSize = 122880
	// maxRowGroupSize bounds the rows a writer holds in memory.
	maxRowGroupSize = 64 << 20
	// ext is the extension of the files.
	ext = ".parquet"
)

// Register adds the parquet format to r.
func Register(r *connector.Registry) {
	connector.RegisterBulkFormat(r, "parquet", "Parquet files: typed columns, nested types, compression; the file source and sink only",
		func(o Options, s row.Schema) (connector.BulkDecoder, error) { return NewDecoder(o, s) },
		func(o Options, s row.Schema) (connector.BulkEncoder, error) { return NewEncoder(o, s) })
}

// codecs are the compression option's values.
var codecs = map[string]func() compress.Codec{
	"snappy": func() compress.Codec { return snappyCodec{} },
	"zstd":   func() compress.Codec { return new(zstd.Codec) },
	"gzip":   func() compress.Codec { return new(gzip.Codec) },
	"none":   func() compress.Codec { return new(uncompressed.Codec) },
}

var units = map[string]unit{"millis": millis, "micros": micros, "nanos": nanos}

// checked is what both directions take of the options.
type checked struct {
	codec     string
	groupRows int
	unit      unit
}

func check(o Options) (checked, error) {
	c := checked{codec: strings.ToLower(o.Compression), groupRows: o.RowGroupSize}
	if c.codec == "" {
		c.codec = "snappy"
	}
	if _, ok := codecs[c.codec]; !ok {
		return c, connector.UnknownValue("compression", "compression", o.Compression, "snappy", "zstd", "gzip", "none")
	}
	switch {
	case o.RowGroupSize == 0:
		c.groupRows = defaultRowGroupSize
	case o.RowGroupSize < 0 || o.RowGroupSize > maxRowGroupSize:
		return c, connector.Errorf("row_group_size", "%d rows: want 1 to %d", o.RowGroupSize, maxRowGroupSize)
	}
	if o.TimestampUnit != "" {
		u, ok := units[strings.ToLower(o.TimestampUnit)]
		if !ok {
			return c, connector.UnknownValue("timestamp_unit", "unit", o.TimestampUnit, "millis", "micros", "nanos")
		}
		c.unit = u
	}
	return c, nil
}

// Encoder writes Parquet files of one schema (connector.BulkEncoder).
type Encoder struct {
	opts   checked
	schema row.Schema
	pq     *pq.Schema
	// cols are the shredders of the schema's columns (shred.go); a
	// nested one's leaves are numbered in nested, the schema of the
	// nested columns alone, which parquet-go writes (nil if none is).
	cols   []*shredder
	nested *pq.Schema
	leaves int
	// pool holds the group encoders of the files closed (write.go).
	pool sync.Pool
	// template is the footer of a file of no rows: its schema, column
	// orders and creator, which every file's footer repeats.
	template fileMeta
}

// NewEncoder checks the options and the schema.
func NewEncoder(o Options, schema row.Schema) (*Encoder, error) {
	opts, err := check(o)
	if err != nil {
		return nil, err
	}
	root, err := groupOf(schema.Fields, opts.unit)
	if err != nil {
		return nil, err
	}
	e := &Encoder{opts: opts, schema: schema, pq: pq.NewSchema("etld", root)}
	nested, leaf := 0, 0
	var nestedFields []row.Field
	for _, f := range schema.Fields {
		at := &leaf
		if f.Type.ID.Nested() {
			at = &nested
			nestedFields = append(nestedFields, f)
		}
		s, err := newShredder(f.Type, opts.unit, at)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		e.cols = append(e.cols, s)
	}
	e.leaves = leaf + nested
	if len(nestedFields) > 0 {
		g, err := groupOf(nestedFields, opts.unit)
		if err != nil {
			return nil, err
		}
		e.nested = pq.NewSchema("etld", g)
	}
	if e.template, err = e.emptyFile(); err != nil {
		return nil, err
	}
	return e, nil
}

// Ext implements connector.BulkEncoder.
func (e *Encoder) Ext() string { return ext }

// newPQWriter is a parquet-go writer of schema s, which encodes one row
// group.
func (e *Encoder) newPQWriter(w io.Writer, s *pq.Schema) *pq.GenericWriter[any] {
	return pq.NewGenericWriter[any](w, s,
		pq.Compression(codecs[e.opts.codec]()),
		pq.CreatedBy("etld", "", ""),
		pq.PageBufferSize(1<<20),
		pq.WriteBufferSize(0),
	)
}

// Create implements connector.BulkEncoder.
func (e *Encoder) Create(w io.Writer) (connector.BulkWriter, error) {
	if _, err := io.WriteString(w, magic); err != nil {
		return nil, err
	}
	return e.newWriter(w, int64(len(magic)), 0, nil), nil
}

// Resume implements connector.BulkEncoder.
func (e *Encoder) Resume(w io.Writer, state []byte) (connector.BulkWriter, error) {
	st, err := decodeResume(state, e.leaves)
	if err != nil {
		return nil, err
	}
	return e.newWriter(w, st.Size, st.Last, st.Groups), nil
}

var _ connector.BulkEncoder = (*Encoder)(nil)
