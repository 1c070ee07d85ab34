package file

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// The formats below stand in for formats/* in these tests: just enough CSV
// (quotes, header, a splitter), JSON-ish lines and raw to drive the source
// through every path, without depending on another package's progress.

type testCSVOptions struct {
	Header bool `yaml:"header"`
}

type testCSV struct {
	schema row.Schema
	header bool
	fields []string
}

func registerTestFormats(r *connector.Registry) {
	connector.RegisterFormat(r, "csv", "test csv",
		func(o testCSVOptions, s row.Schema) (connector.Decoder, error) {
			return &testCSV{schema: s, header: o.Header}, nil
		},
		func(o testCSVOptions, s row.Schema) (connector.Encoder, error) {
			return &testCSV{schema: s, header: o.Header}, nil
		})
	connector.RegisterFormat(r, "kv", "test key=value lines, a decoder without a splitter",
		func(_ struct{}, s row.Schema) (connector.Decoder, error) { return &testKV{schema: s}, nil }, nil)
	connector.RegisterFormat(r, "raw", "test raw",
		func(_ struct{}, s row.Schema) (connector.Decoder, error) { return testRaw{}, nil }, nil)
	connector.RegisterFormat(r, "pairs", "test: every record gives two changes",
		func(_ struct{}, s row.Schema) (connector.Decoder, error) { return testPairs{}, nil }, nil)
}

// Split cuts at a newline outside quotes; the token excludes "\n" or "\r\n".
func (c *testCSV) Split(data []byte, atEOF bool) (int, []byte, error) {
	quoted := false
	for i, ch := range data {
		switch {
		case ch == '"':
			quoted = !quoted
		case ch == '\n' && !quoted:
			return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
		}
	}
	if !atEOF {
		return 0, nil, nil
	}
	if quoted {
		return 0, nil, errors.New("unclosed quote")
	}
	if len(data) == 0 {
		return 0, nil, nil
	}
	return len(data), bytes.TrimSuffix(data, []byte{'\r'}), nil
}

func (c *testCSV) HasHeader() bool { return c.header }

func (c *testCSV) DecodeHeader(rec []byte) error {
	if got, want := string(rec), strings.Join(c.schema.Names(), ","); got != want {
		return fmt.Errorf("header %q does not match the schema's columns %q", got, want)
	}
	return nil
}

func (c *testCSV) Decode(rec []byte, b *row.Batch) error {
	c.fields = c.fields[:0]
	var f []byte
	quoted := false
	for i := 0; i < len(rec); i++ {
		ch := rec[i]
		switch {
		case ch == '"' && quoted && i+1 < len(rec) && rec[i+1] == '"':
			f = append(f, '"')
			i++
		case ch == '"':
			quoted = !quoted
		case ch == ',' && !quoted:
			c.fields = append(c.fields, string(f))
			f = f[:0]
		default:
			f = append(f, ch)
		}
	}
	c.fields = append(c.fields, string(f))
	if len(c.fields) != c.schema.Len() {
		return &connector.DecodeError{Err: fmt.Errorf("%d fields, want %d", len(c.fields), c.schema.Len())}
	}
	r := b.NewRow()
	for i, s := range c.fields {
		if s == "" {
			continue
		}
		v, err := row.ParseText(s, c.schema.Fields[i].Type)
		if err != nil {
			return &connector.DecodeError{Column: c.schema.Fields[i].Name, Err: err}
		}
		r[i] = v
	}
	b.Append(row.Insert, r)
	return nil
}

func (c *testCSV) AppendHeader(dst []byte) []byte {
	if !c.header {
		return dst
	}
	return append(append(dst, strings.Join(c.schema.Names(), ",")...), '\n')
}

func (c *testCSV) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	for i, v := range r {
		if i > 0 {
			dst = append(dst, ',')
		}
		if v.IsNull() {
			continue
		}
		n := len(dst)
		dst = row.AppendText(dst, v, c.schema.Fields[i].Type)
		if bytes.ContainsAny(dst[n:], ",\"\n\r") {
			q := strings.ReplaceAll(string(dst[n:]), `"`, `""`)
			dst = append(append(append(dst[:n], '"'), q...), '"')
		}
	}
	return append(dst, '\n'), nil
}

// testKV reads "name=value name=value" lines by column name.
type testKV struct{ schema row.Schema }

func (d *testKV) Decode(rec []byte, b *row.Batch) error {
	r := b.NewRow()
	for _, kv := range strings.Fields(string(rec)) {
		k, v, ok := strings.Cut(kv, "=")
		i := d.schema.Index(k)
		if !ok || i < 0 {
			return &connector.DecodeError{Err: fmt.Errorf("bad pair %q", kv)}
		}
		val, err := row.ParseText(v, d.schema.Fields[i].Type)
		if err != nil {
			return &connector.DecodeError{Column: k, Err: err}
		}
		r[i] = val
	}
	b.Append(row.Insert, r)
	return nil
}

type testRaw struct{}

func (testRaw) Decode(rec []byte, b *row.Batch) error {
	r := b.NewRow()
	r[0] = row.StringValue(string(rec))
	b.Append(row.Insert, r)
	return nil
}

// testPairs makes -U and +U of the record's text, as an update-carrying
// format (debezium) does.
type testPairs struct{}

func (testPairs) Decode(rec []byte, b *row.Batch) error {
	old, updated := b.NewRow(), b.NewRow()
	old[0], updated[0] = row.StringValue("old "+string(rec)), row.StringValue(string(rec))
	b.Append(row.UpdateBefore, old)
	b.Append(row.UpdateAfter, updated)
	return nil
}
