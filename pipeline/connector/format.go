package connector

import (
	"bufio"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Decoder turns one record (a line of a file, a Kafka message value) into
// changes appended to b. Formats that carry row kinds (debezium-json)
// append one or two changes per record; the others append one +I.
// A record that cannot be decoded returns an error, preferably a
// *DecodeError naming the column, and appends nothing.
type Decoder interface {
	Decode(rec []byte, b *row.Batch) error
}

// Encoder writes one change as one record appended to dst. Formats that
// cannot express a kind (csv, json in append mode) are only ever given the
// kinds the sink's mode lets through.
type Encoder interface {
	Encode(dst []byte, k row.Kind, r row.Row) ([]byte, error)
}

// Splitter is a decoder whose records are not simply lines (CSV fields may
// hold quoted newlines). SplitFunc returns the bufio.SplitFunc that cuts a
// stream into records; a token does not include the record terminator.
//
// A record spans lines only within maxRecordBytes of its start, so that a
// malformed record (an unbalanced CSV quote) costs that record, not the
// rest of the stream. A token that comes with a *DecodeError is such a
// bad record: the reader hands it to the on_error policy with that error
// and reads on after it. Any other error ends the reading.
type Splitter interface {
	SplitFunc(maxRecordBytes int) bufio.SplitFunc
}

// LineSplitter is a Splitter that can tell when a block of whole lines
// holds one record per line (CSV without a quote in it): a reader may then
// cut the block at line breaks, as fast as memory, and leave SplitFunc to
// the blocks that need it.
type LineSplitter interface {
	Splitter
	RecordsAreLines(block []byte) bool
}

// DefaultMaxRecordBytes is the bound on a record spanning lines when a
// source sets none: 1 MiB.
const DefaultMaxRecordBytes = 1 << 20

// HeaderDecoder is a decoder that may expect a header record first (CSV
// with header: true). The file source hands the first record to
// DecodeHeader instead of Decode.
type HeaderDecoder interface {
	HasHeader() bool
	DecodeHeader(rec []byte) error
}

// ProjectingDecoder is a decoder that can leave columns undecoded:
// projection pushdown. needed parallels the decoder's schema; a column
// not needed is still counted (the record's structure is checked) but its
// value is not parsed, so a bad value there is no error, and the row holds
// NULL in its place. nil means every column. Called before any Decode.
type ProjectingDecoder interface {
	SetColumns(needed []bool)
}

// ProjectingSource is a source that passes a projection on to its
// format (ProjectingDecoder): the planner calls SetColumns with the
// physical columns the plan reads, before Open.
type ProjectingSource interface {
	SetColumns(needed []bool)
}

// FieldPath names a field of a ROW column, perhaps of a ROW inside it:
// Fields are the field indices, outermost first (bid.price is Column bid,
// Fields [price]).
type FieldPath struct {
	Column int
	Fields []int
}

// NestedDecoder is a decoder that can decode fields of its ROW columns
// into columns of their own: nested projection pushdown, for a plan that
// reads a ROW column only through field accesses (bid.price). After
// DecodePaths(paths, gap) reported true, each row it decodes has gap
// columns after its schema's columns, which it does not write (room for
// the table's computed columns, which the planner evaluates in place:
// NULL in a new batch, what the caller left there in one given back),
// then one column per path, the path's value: NULL when
// the column or a ROW on the way is NULL or missing, else the field's
// value as the ROW would hold it. The fields of such a ROW no path names
// are not parsed (a bad value there is no error, as with
// ProjectingDecoder; a record's structure is still checked), and no ROW
// value is built: the planner leaves the column itself out
// (ProjectingDecoder) when nothing else reads it. No path is a prefix of
// another. Called before any Decode, after SetColumns; Clone keeps it,
// and a decoder that decodes paths may refuse DecodeColumns.
type NestedDecoder interface {
	DecodePaths(paths []FieldPath, gap int) bool
}

// FullNestedDecoder is a NestedDecoder that, with paths, writes every
// value of each row it decodes but the gap's: its schema's columns (NULL
// for those SetColumns left out) and the paths'. A batch it decodes into
// may then hold old rows (BatchRecycler), as with a ColumnDecoder.
type FullNestedDecoder interface {
	WritesNestedRows() bool
}

// NestedSource is a source that passes nested projection pushdown on to
// its format (NestedDecoder): after SetPaths(paths, gap) reported true,
// its rows have gap columns after its schema's columns, which it does not
// write (NestedDecoder), then one more column per path. The planner
// calls it before Open, after SetColumns.
type NestedSource interface {
	SetPaths(paths []FieldPath, gap int) bool
}

// ColumnDecoder is a decoder that can decode some of its schema's columns
// only, into narrower rows: after DecodeColumns(cols) reported true,
// column j of each row it decodes is column cols[j] of its schema (a
// column may come twice). A column not in cols is not parsed, as with
// ProjectingDecoder; a record's structure is still checked. Each row it
// decodes so has every value written (a batch it decodes into may hold
// old rows: BatchRecycler). Called before any Decode; Clone keeps it.
type ColumnDecoder interface {
	DecodeColumns(cols []int) bool
}

// ProjectionKeeper is a ColumnDecoder whose DecodeColumns keeps the
// projection SetColumns set: the columns not needed stay unparsed, and
// NULL is written in each, so that its rows have every value written
// still and a batch it decodes into need not be zeroed first.
type ProjectionKeeper interface {
	KeepsProjection() bool
}

// ColumnPlaces lays out a ColumnDecoder's selection cols over a schema
// of width columns: at[i] is where column i goes in a decoded row (-1:
// not decoded), copies the (from, to) places of a column selected again.
// ok is false for an empty selection or one naming a column the schema
// lacks.
func ColumnPlaces(width int, cols []int) (at []int, copies [][2]int, ok bool) {
	if len(cols) == 0 {
		return nil, nil, false
	}
	at = make([]int, width)
	for i := range at {
		at[i] = -1
	}
	for j, i := range cols {
		switch {
		case i < 0 || i >= width:
			return nil, nil, false
		case at[i] < 0:
			at[i] = j
		default:
			copies = append(copies, [2]int{at[i], j})
		}
	}
	return at, copies, true
}

// ColumnSource is a source whose rows can be some of its columns only
// (ColumnDecoder): after SelectColumns(cols) reported true, column j of
// every row Read returns is column cols[j] of the source's schema. The
// runtime asks it for a projection that only picks columns (SELECT b, a
// FROM t), which then costs no step of its own. Called before Open.
type ColumnSource interface {
	SelectColumns(cols []int) bool
}

// BatchRecycler is a source that can reuse the memory of the batches it
// returned: the runtime gives a batch back with Recycle once nothing
// reads it any more (its reader folded it into state of its own). The
// source may then write new rows into it.
type BatchRecycler interface {
	Recycle(b *row.Batch)
}

// TextRecycler is a BatchRecycler that can also reuse the memory its
// batches' STRING values point into (a file source's read buffers): a
// batch given back with the function TextRecycle returns is one whose
// reader kept no byte of its text either (a TextCopier sink). The
// runtime calls TextRecycle once, before the first Read, and then gives
// the batches back with it instead of Recycle.
type TextRecycler interface {
	BatchRecycler
	TextRecycle() func(b *row.Batch)
}

// ParallelDecoder is a decoder whose records decode independently of each
// other, and whose DecodeHeader (if any) only checks the header: a source
// may decode one input's records on several goroutines at once, each with
// a decoder of its own from Clone, and put the rows back in input order.
// Clone returns a decoder of the same options and projection (SetColumns)
// that shares no scratch state with the original.
type ParallelDecoder interface {
	Decoder
	Clone() Decoder
}

// StringDecoder is a decoder that can decode a record held in a string
// the caller never changes: the row's string values may then be
// substrings of rec, with no copy. A source that reads a block of records
// into memory it never reuses decodes each record from one string over
// the block instead of copying each record. (A value an operator keeps
// then keeps the block in memory.)
type StringDecoder interface {
	DecodeString(rec string, b *row.Batch) error
}

// LineDecoder is a StringDecoder of records that are lines which finds
// where its record ends in the same pass that reads it, so that a reader
// of a block of lines (LineSplitter) need not look for each line break
// first. Its DecodeString reads a "\r" ending a record as no part of it.
type LineDecoder interface {
	StringDecoder
	// DecodeLine decodes the line at the start of data, up to its first
	// "\n" or the end of data, as DecodeString decodes that line without
	// its "\n", and returns the line's length with its "\n". On an error
	// n is unspecified: the caller finds the line itself.
	DecodeLine(data string, b *row.Batch) (n int, err error)
}

// MappingSource is a source that decodes on several goroutines and can
// run the runtime's stateless work on each batch there (a source's
// computed columns, the projection and filter that follow it), so that
// this work too runs in parallel. Called before the first Read.
//
// MapBatches makes Read return f(b) in place of each batch b the source
// decodes, with the position after b; f runs on the decode goroutines,
// several at once. A nil result means f cannot map b (a row's expressions
// failed: on_error must see it in order): Read then returns b itself, as
// it does a batch holding records the decoder refused. fresh says f's
// results hold none of b's rows, so that the source may reuse b's memory
// once f returned. MapBatches reports whether the source will map.
type MappingSource interface {
	MapBatches(f func(b *row.Batch) *row.Batch, fresh bool) bool
}

// MappedTextRecycler is a MappingSource whose mapped batches' STRING
// values may point into memory the source can reuse (a file source's
// read buffers), as its own batches' do (TextRecycler): a batch f made
// (not b itself) given back with the function MappedTextRecycle returns
// is one no value of which is read any more, nor of any row made from
// it (each went to a node that copied its text: a TextCopier sink). The
// runtime calls MappedTextRecycle once, after MapBatches and before the
// first Read, and only when it will give such batches back; it never
// gives back a batch b that f left as it was (those go back by
// TextRecycle, if at all).
type MappedTextRecycler interface {
	MappingSource
	MappedTextRecycle() func(b *row.Batch)
}

// HeaderEncoder is an encoder that writes a header record at the start of a
// new file.
type HeaderEncoder interface {
	// AppendHeader appends the header record, terminator included, or
	// nothing when the format is set to write none.
	AppendHeader(dst []byte) []byte
}

// DecodeError says which column of a record failed.
type DecodeError struct {
	Column string // empty when the record as a whole is malformed
	Err    error
}

func (e *DecodeError) Error() string {
	if e.Column == "" {
		return e.Err.Error()
	}
	return "column " + e.Column + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// FormatSpec is a connector's `format` option: a name (`format: csv`) or a
// mapping with a type and the format's own options (`format: {type: csv,
// delimiter: ";", header: true}`).
type FormatSpec struct {
	Type    string
	Options *yaml.Node // nil for the short form
	File    string
	Path    string
	Pos     spec.Pos
	node    *yaml.Node // the option as written, for redacting ${VAR}s
}

// IsZero reports whether the option was not given.
func (f FormatSpec) IsZero() bool { return f.Type == "" }

// DecodeNode implements spec.NodeDecoder.
func (f *FormatSpec) DecodeNode(file string, n *yaml.Node, path string) error {
	f.File, f.Path, f.Pos, f.node = file, path, spec.At(file, n), n
	switch n.Kind {
	case yaml.ScalarNode:
		f.Type = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "type" {
				f.Type = n.Content[i+1].Value
				f.Options = n
				return nil
			}
		}
		return spec.Errorf(f.Pos, path, "format mapping needs a `type` (csv, json, ...)")
	}
	return spec.Errorf(f.Pos, path, "want a format name such as csv or json, or a mapping with a type and options")
}

// UnavailableError is a record's decode or encode error that is not the
// record's fault: a service the format needs (a schema registry) could not
// be reached. A source or sink returns it as it is instead of handing the
// record to on_error, so that the run fails, is not marked a data error,
// and reads or writes the record again when it restarts.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// BinaryEncoder is an encoder of binary records (avro, protobuf): a record
// is whole as written and has no line terminator, so that a last byte '\n'
// is data and a sink writing one record per message keeps it.
type BinaryEncoder interface {
	Encoder
	BinaryRecords()
}

// TopicFormat is a decoder or encoder that names things after the Kafka
// topic it serves: a schema registry's subject is <topic>-value or
// <topic>-key by default. A Kafka source or sink of one topic tells it
// the topic after building it, and whether it is the key's format.
type TopicFormat interface {
	SetTopic(topic string, key bool)
}
