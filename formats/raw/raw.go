// Package raw is the raw format: each record is one STRING value, the
// whole line without its terminator. It serves the sidecar use case, where
// a pipeline tails a neighbour's log and picks lines apart in SQL.
package raw

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the raw format's options: it has none.
type Options struct{}

// Register adds the raw format to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "raw", "one STRING column per record: the whole line",
		func(_ Options, s row.Schema) (connector.Decoder, error) { return NewDecoder(s) },
		func(_ Options, s row.Schema) (connector.Encoder, error) { return NewEncoder(s) })
}

func checkSchema(s row.Schema) error {
	if s.Len() != 1 || s.Fields[0].Type.ID != row.String {
		return fmt.Errorf("the raw format needs a schema of exactly one STRING column, got %s", s)
	}
	return nil
}

// Decoder makes one row per record.
type Decoder struct{}

// NewDecoder checks that schema is one STRING column.
func NewDecoder(schema row.Schema) (*Decoder, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	return &Decoder{}, nil
}

// Decode appends rec, without a trailing \n or \r\n, as a one-column row.
// An empty line is the empty string, not NULL: it is a line all the same.
func (*Decoder) Decode(rec []byte, b *row.Batch) error {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
	}
	if n := len(rec); n > 0 && rec[n-1] == '\r' {
		rec = rec[:n-1]
	}
	r := b.NewRow()
	r[0] = row.StringValue(string(rec))
	b.Append(row.Insert, r)
	return nil
}

// Encoder writes the column's text and a newline. A NULL is an empty line;
// a value holding line breaks is written as it is.
type Encoder struct{}

// NewEncoder checks that schema is one STRING column.
func NewEncoder(schema row.Schema) (*Encoder, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	return &Encoder{}, nil
}

// Encode appends the single value of r and a newline.
func (*Encoder) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	if len(r) != 1 {
		return dst, fmt.Errorf("raw: row has %d values, want 1", len(r))
	}
	dst = row.AppendText(dst, r[0], row.Of(row.String))
	return append(dst, '\n'), nil
}

var (
	_ connector.Decoder = (*Decoder)(nil)
	_ connector.Encoder = (*Encoder)(nil)
)
