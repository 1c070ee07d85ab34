package connector

import (
	"context"
	"io"

	"github.com/etld/etld/pipeline/row"
)

// Bulk formats (Flink's name) write and read whole files. A columnar
// format (Parquet) is not a sequence of records: a file holds row groups,
// each a run of column chunks, and a footer that locates them, written
// once the last row group is. No record can be appended to such a file,
// and none read without its footer. Such a format registers with
// RegisterBulkFormat and has a BulkEncoder and a BulkDecoder instead of an
// Encoder and a Decoder; the file source and the file sink are the
// connectors that take it.

// BulkEncoder writes files of one format over one schema.
type BulkEncoder interface {
	// Ext is the extension of the format's file names, dot included
	// (".parquet").
	Ext() string
	// Create starts a file written to w, which is empty.
	Create(w io.Writer) (BulkWriter, error)
	// Resume goes on writing a file after a crash: w ends where the file
	// ended when Checkpoint returned state (the writer cut it back
	// there), and the writer is given the rows it then held again.
	Resume(w io.Writer, state []byte) (BulkWriter, error)
}

// BulkWriter writes one file; its methods are called from one goroutine.
//
// A writer may hold the last rows written in memory (a Parquet row group
// being filled), and encode them when it has enough. Which rows it holds,
// and what it writes, depend only on the rows and their order, not on
// when Flush or Checkpoint are called: a file resumed from a checkpoint
// ends byte for byte as the file of a run without a crash.
type BulkWriter interface {
	// Write adds r to the file. The writer may keep r until it is
	// encoded; the caller does not change it.
	Write(r row.Row) error
	// Flush writes out what the writer encoded and waits for the work it
	// has in flight. After it the file's bytes are those Checkpoint
	// describes and Size counts.
	Flush() error
	// Held is the number of the last rows written that the bytes written
	// so far do not hold.
	Held() int
	// Size is how large the file has grown, for rolling: it depends on
	// the rows written alone, not on when Flush was called (a Parquet
	// writer counts the row groups before the one it last began to
	// encode).
	Size() int64
	// Checkpoint, after a Flush, returns what Resume needs to go on
	// writing after the bytes written so far, and their number: the
	// length to cut the file back to before resuming.
	Checkpoint() (state []byte, length int64, err error)
	// Close encodes the rows held and ends the file (a footer): it is
	// complete. Abort drops them instead and stops the work in flight.
	Close() error
	Abort()
}

// BulkDecoder reads files of one format into rows of its schema.
type BulkDecoder interface {
	// OpenFile reads the layout of the file name of size bytes, read
	// through r: its pieces (Parquet row groups) and the rows of each.
	// An error names the file.
	OpenFile(r io.ReaderAt, size int64, name string) (BulkReader, error)
}

// BulkReader reads the pieces of one file. Groups and ReadGroup may be
// called from several goroutines at once, each reading its own piece.
type BulkReader interface {
	// Groups returns the number of rows of each piece.
	Groups() []int64
	// ReadGroup decodes the rows of piece g from row skip on, in
	// batches of at most max rows handed to emit in order. An error names
	// the file and the piece.
	ReadGroup(ctx context.Context, g int, skip int64, max int, emit func(*row.Batch) error) error
}

// ProjectingBulkDecoder is a BulkDecoder that can leave columns unread
// (connector.ProjectingDecoder's contract): a column not needed is NULL
// in every row, and its bytes are not read. Called before any OpenFile.
type ProjectingBulkDecoder interface {
	SetColumns(needed []bool)
}
