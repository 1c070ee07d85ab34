// Package avro is the Avro formats, as Flink has them:
//
//   - avro: each record one datum in Avro's binary encoding, with no
//     header (a Kafka message's value, as Flink's avro format writes it),
//     of the schema given or the one derived from the table;
//   - avro-confluent: the datum framed for a schema registry (Confluent's
//     wire format: a zero byte, the writer schema's id in four bytes
//     big-endian, the datum). The reader looks each id's schema up in the
//     registry once and resolves it against the table; the writer
//     registers its schema under the subject (or checks that the subject
//     has it) and frames every datum with its id;
//   - debezium-avro-confluent: Debezium's change events in Avro, framed
//     the same way (before, after, op), read into changelog rows and
//     written as Flink writes them.
//
// Resolution, as Avro's rules have it: fields match columns by name (then
// by alias, then in any case); a writer field no column names is skipped;
// a column the writer lacks is NULL (an error at compile time for a NOT
// NULL column); int widens to long, float and double, long to float and
// double, float to double, string and bytes read as each other. Logical
// types: decimal (bytes or fixed) as DECIMAL, date as DATE, time-millis and
// time-micros as TIME, timestamp-millis/-micros and
// local-timestamp-millis/-micros as TIMESTAMP and TIMESTAMP_LTZ, uuid as
// STRING; enum as STRING, fixed as BYTES; records as ROW, arrays as ARRAY,
// maps as MAP<STRING, ...>; a union with null as a nullable value.
package avro

import (
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the avro format's options.
type Options struct {
	// Schema is the records' Avro schema, as JSON; not given, the schema
	// Flink derives from the table (DeriveSchema).
	Schema string `yaml:"schema"`
}

// Register adds avro, avro-confluent and debezium-avro-confluent to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "avro", "Avro's binary encoding, one datum per record, with the schema given or derived from the table",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return NewEncoder(o, s) })
	connector.RegisterFormat(r, "avro-confluent", "Avro framed for a schema registry (Confluent's wire format), schemas looked up and registered there",
		func(o RegistryOptions, s row.Schema) (connector.Decoder, error) {
			return NewRegistryDecoder(o, s, false)
		},
		func(o RegistryOptions, s row.Schema) (connector.Encoder, error) {
			return NewRegistryEncoder(o, s, false)
		})
	connector.RegisterFormat(r, "debezium-avro-confluent", "Debezium change events in Avro framed for a schema registry: an updating changelog",
		func(o RegistryOptions, s row.Schema) (connector.Decoder, error) {
			return NewRegistryDecoder(o, s, true)
		},
		func(o RegistryOptions, s row.Schema) (connector.Encoder, error) {
			return NewRegistryEncoder(o, s, true)
		},
		connector.FormatChangelog)
	registerFiles(r)
}

// writerSchema returns the schema given, parsed, or the one derived from
// columns, and its JSON text.
func writerSchema(given string, columns []row.Field) (avro.Schema, string, error) {
	text := given
	if strings.TrimSpace(text) == "" {
		var err error
		if text, err = DeriveSchema(row.NewSchema(columns...)); err != nil {
			return nil, "", err
		}
	}
	s, err := Parse(text)
	if err != nil {
		return nil, "", connector.Errorf("schema", "%v", err)
	}
	return s, compact(text), nil
}

// table is the table side of a decoder: its columns and which of them
// are decoded where (ColumnDecoder).
type table struct {
	columns []row.Field
	at      []int // nil: every column in its place
	copies  [][2]int
}

func (t *table) selectColumns(cols []int) bool {
	at, copies, ok := connector.ColumnPlaces(len(t.columns), cols)
	if ok {
		t.at, t.copies = at, copies
	}
	return ok
}

// finish copies the columns selected twice.
func (t *table) finish(r row.Row) {
	for _, c := range t.copies {
		r[c[1]] = r[c[0]]
	}
}

// decodeError places a failure of a record at its column.
func decodeError(err error) error {
	if fe, ok := err.(*fieldError); ok {
		return &connector.DecodeError{Column: fe.column, Err: fe.err}
	}
	return &connector.DecodeError{Err: err}
}

// Decoder reads the avro format: one datum of the schema per record. It
// is not safe for concurrent use; Clone gives another.
type Decoder struct {
	table
	writer avro.Schema
	prog   *recordDec
	given  bool // the schema option was given
	// r reads each record, its buffers reused.
	r reader
}

// NewDecoder returns a decoder of records of the schema o gives (or the
// one derived from the table) into rows of schema.
func NewDecoder(o Options, schema row.Schema) (*Decoder, error) {
	w, _, err := writerSchema(o.Schema, schema.Fields)
	if err != nil {
		return nil, err
	}
	d := &Decoder{table: table{columns: schema.Fields}, writer: w, given: o.Schema != ""}
	if d.prog, err = compileRecord(w, d.columns, nil); err != nil {
		return nil, connector.Errorf("schema", "%v", err)
	}
	return d, nil
}

// Decode appends the row of one datum to b.
func (d *Decoder) Decode(rec []byte, b *row.Batch) error {
	r := &d.r
	r.resetBytes(rec, 0)
	return d.decode(r, b)
}

// DecodeString implements connector.StringDecoder: string values are
// substrings of rec.
func (d *Decoder) DecodeString(rec string, b *row.Batch) error { return d.decodeString(rec, b) }

func (d *Decoder) decodeString(rec string, b *row.Batch) error {
	r := &d.r
	r.reset(rec, 0)
	return d.decode(r, b)
}

func (d *Decoder) decode(r *reader, b *row.Batch) error {
	rec := r.s
	out := b.NewRow()
	if err := d.prog.decode(r, out); err != nil {
		return decodeError(err)
	}
	if r.pos != len(rec) {
		return &connector.DecodeError{Err: r.fail("%d bytes after the datum", len(rec)-r.pos)}
	}
	d.finish(out)
	b.Append(row.Insert, out)
	return nil
}

// DecodeColumns implements connector.ColumnDecoder.
func (d *Decoder) DecodeColumns(cols []int) bool {
	if !d.selectColumns(cols) {
		return false
	}
	prog, err := compileRecord(d.writer, d.columns, d.at)
	if err != nil {
		return false
	}
	d.prog = prog
	return true
}

// Clone implements connector.ParallelDecoder.
func (d *Decoder) Clone() connector.Decoder {
	c := *d
	c.r = reader{}
	return &c
}

// Encoder writes the avro format. It is not safe for concurrent use.
type Encoder struct {
	prog  *recordEnc
	width int
	given bool // the schema option was given
}

// NewEncoder returns an encoder of rows of schema as datums of the schema
// o gives, or of the one derived from the table.
func NewEncoder(o Options, schema row.Schema) (*Encoder, error) {
	w, _, err := writerSchema(o.Schema, schema.Fields)
	if err != nil {
		return nil, err
	}
	prog, err := compileRecordEnc(w, schema.Fields)
	if err != nil {
		return nil, connector.Errorf("schema", "%v", err)
	}
	return &Encoder{prog: prog, width: schema.Len(), given: o.Schema != ""}, nil
}

// Encode appends the datum of r.
func (e *Encoder) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	if len(r) != e.width {
		return dst, fmt.Errorf("avro: row has %d values, schema has %d columns", len(r), e.width)
	}
	n := len(dst)
	out, err := e.prog.encode(dst, r)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// BinaryRecords implements connector.BinaryEncoder.
func (e *Encoder) BinaryRecords() {}

var (
	_ connector.ParallelDecoder = (*Decoder)(nil)
	_ connector.ColumnDecoder   = (*Decoder)(nil)
	_ connector.StringDecoder   = (*Decoder)(nil)
	_ connector.BinaryEncoder   = (*Encoder)(nil)
)
