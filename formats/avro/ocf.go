package avro

// Avro's object container files, the avro format's form in the file
// source and sink (connector.RegisterBulkForm), as Flink's filesystem
// connector writes them: a header (the magic "Obj" 1, a map of metadata
// holding the schema as avro.schema and the codec as avro.codec, and a
// 16-byte sync marker), then blocks, each the number of its datums, the
// length of its bytes, the datums compressed by the codec, and the sync
// marker again.
//
// The writer derives the schema from the table as the record form does
// (or takes the one given), fills a block with datums until it holds
// block_size bytes of them, and then compresses and writes it whole. So a
// block ends after the same rows whenever Flush or a checkpoint comes,
// and the sync marker is a hash of the schema and the codec, not random:
// a part resumed after a crash ends byte for byte as it would have
// (connector.BulkWriter). The rows of the block being filled are the ones
// the writer holds.
//
// The reader takes the schema from each file's header and resolves it
// against the table's columns (decode.go); a file's pieces are runs of
// consecutive blocks (ocfread.go).

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FileOptions are the options of the avro format in the file source and
// sink.
type FileOptions struct {
	// Schema is the writer schema of the files written, as JSON; not
	// given, the one derived from the table. A reader takes each file's
	// own.
	Schema string `yaml:"schema"`
	// Codec compresses the blocks: snappy (the default, as Flink's),
	// deflate, zstandard (or zstd) or null (none).
	Codec string `yaml:"codec"`
	// BlockSize is how many bytes of datums a block holds before it is
	// compressed and written; 256 KiB when not given.
	BlockSize int `yaml:"block_size"`
	// MaxBlockBytes bounds a block's datums once decompressed, in the
	// files read: a block past it (a corrupt length, a compression bomb)
	// fails, naming the file and the block, before it takes the memory.
	// 64 MiB, or twice BlockSize if more, when not given.
	MaxBlockBytes int `yaml:"max_block_bytes"`
}

const (
	defaultBlockSize = 256 << 10
	maxBlockSize     = 64 << 20
	// ocfExt is the extension of the files.
	ocfExt = ".avro"
	// ocfMagic starts every object container file.
	ocfMagic = "Obj\x01"
	syncSize = 16
)

// registerFiles adds the object container files to the avro format.
func registerFiles(r *connector.Registry) {
	connector.RegisterBulkForm(r, "avro",
		func(o FileOptions, s row.Schema) (connector.BulkDecoder, error) { return NewFileDecoder(o, s) },
		func(o FileOptions, s row.Schema) (connector.BulkEncoder, error) { return NewFileEncoder(o, s) })
}

// fileCodec checks the codec option.
func fileCodec(name string) (*blockCodec, error) {
	if name == "" {
		name = "snappy"
	}
	c, ok := codecNames[strings.ToLower(name)]
	if !ok {
		return nil, connector.UnknownValue("codec", "codec", name, "snappy", "deflate", "zstandard", "null")
	}
	return blockCodecs[c], nil
}

// FileEncoder writes object container files of one schema
// (connector.BulkEncoder).
type FileEncoder struct {
	prog      *recordEnc
	width     int
	codec     *blockCodec
	blockSize int
	given     bool
	// header is every file's first bytes; sync its marker.
	header []byte
	sync   [syncSize]byte
}

// NewFileEncoder checks the options and derives or parses the schema.
func NewFileEncoder(o FileOptions, schema row.Schema) (*FileEncoder, error) {
	codec, err := fileCodec(o.Codec)
	if err != nil {
		return nil, err
	}
	size := o.BlockSize
	switch {
	case size == 0:
		size = defaultBlockSize
	case size < 0 || size > maxBlockSize:
		return nil, connector.Errorf("block_size", "%d bytes: want 1 to %d (64 MiB)", size, maxBlockSize)
	}
	w, text, err := writerSchema(o.Schema, schema.Fields)
	if err != nil {
		return nil, err
	}
	prog, err := compileRecordEnc(w, schema.Fields)
	if err != nil {
		return nil, connector.Errorf("schema", "%v", err)
	}
	e := &FileEncoder{prog: prog, width: schema.Len(), codec: codec, blockSize: size, given: o.Schema != ""}
	sum := sha256.Sum256([]byte("etld avro sync\x00" + codec.name + "\x00" + text))
	copy(e.sync[:], sum[:])
	e.header = appendHeader(nil, map[string]string{"avro.schema": text, "avro.codec": codec.name}, e.sync)
	return e, nil
}

// appendHeader appends a file's header: the magic, the metadata (its keys
// in order, so that the bytes are the same every time) and the marker.
func appendHeader(dst []byte, meta map[string]string, sync [syncSize]byte) []byte {
	dst = append(dst, ocfMagic...)
	dst = appendLong(dst, int64(len(meta)))
	for _, k := range []string{"avro.codec", "avro.schema"} {
		if v, ok := meta[k]; ok {
			dst = appendString(appendString(dst, k), v)
		}
	}
	dst = appendLong(dst, 0)
	return append(dst, sync[:]...)
}

// Ext implements connector.BulkEncoder.
func (e *FileEncoder) Ext() string { return ocfExt }

// Create implements connector.BulkEncoder: it writes the header.
func (e *FileEncoder) Create(w io.Writer) (connector.BulkWriter, error) {
	if _, err := w.Write(e.header); err != nil {
		return nil, err
	}
	return &fileWriter{e: e, out: w, size: int64(len(e.header))}, nil
}

// Resume implements connector.BulkEncoder: the state is the length of the
// file, which ends after a whole block.
func (e *FileEncoder) Resume(w io.Writer, state []byte) (connector.BulkWriter, error) {
	var size int64
	if _, err := fmt.Sscan(string(state), &size); err != nil || size < int64(len(e.header)) {
		return nil, fmt.Errorf("avro part state %q: not the length of a file of this schema", state)
	}
	return &fileWriter{e: e, out: w, size: size}, nil
}

// fileWriter writes one file (connector.BulkWriter).
type fileWriter struct {
	e    *FileEncoder
	out  io.Writer
	size int64
	// buf holds the datums of the block being filled, rows of them.
	buf  []byte
	rows int
	// block is the block being written, reused.
	block  []byte
	err    error
	closed bool
}

func (w *fileWriter) Write(r row.Row) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("write after close")
	}
	if len(r) != w.e.width {
		return fmt.Errorf("avro: row has %d values, schema has %d columns", len(r), w.e.width)
	}
	n := len(w.buf)
	var err error
	if w.buf, err = w.e.prog.encode(w.buf, r); err != nil {
		w.buf = w.buf[:n]
		return err
	}
	w.rows++
	if len(w.buf) >= w.e.blockSize {
		return w.writeBlock()
	}
	return nil
}

// writeBlock compresses the datums held and writes them as a block.
func (w *fileWriter) writeBlock() error {
	b := appendLong(w.block[:0], int64(w.rows))
	// The length goes before the data: leave room for its varint and
	// move the data back once its length is known.
	at := len(b) + 10
	b = append(b, make([]byte, 10)...)
	b, err := w.e.codec.compress(b, w.buf)
	if err != nil {
		w.err = fmt.Errorf("avro %s codec: %w", w.e.codec.name, err)
		return w.err
	}
	n := len(b) - at
	head := appendLong(b[:at-10], int64(n))
	moved := copy(b[len(head):], b[at:])
	b = append(b[:len(head)+moved], w.e.sync[:]...)
	w.block = b
	if _, err := w.out.Write(b); err != nil {
		w.err = err
		return err
	}
	w.size += int64(len(b))
	w.buf, w.rows = w.buf[:0], 0
	return nil
}

// Flush has nothing to do: a block is written once it is full.
func (w *fileWriter) Flush() error { return w.err }

func (w *fileWriter) Held() int { return w.rows }

// Size leaves out the block being filled: it is written once full.
func (w *fileWriter) Size() int64 { return w.size }

func (w *fileWriter) Checkpoint() ([]byte, int64, error) {
	return []byte(fmt.Sprint(w.size)), w.size, w.err
}

// Close writes the rows held as the last block.
func (w *fileWriter) Close() error {
	if w.closed || w.err != nil {
		return w.err
	}
	w.closed = true
	if w.rows > 0 {
		return w.writeBlock()
	}
	return nil
}

func (w *fileWriter) Abort() { w.closed, w.buf, w.rows = true, nil, 0 }

var (
	_ connector.BulkEncoder = (*FileEncoder)(nil)
	_ connector.BulkWriter  = (*fileWriter)(nil)
)
