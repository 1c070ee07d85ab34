// Package json is the JSON lines format: one JSON object per record,
// fields matched to columns by name, as Flink's json format reads and
// writes them.
//
// Reading: members are matched to columns by exact name, then without
// regard to case; unknown members are ignored (Flink does the same and has
// no option to refuse them); a missing member or a JSON null is NULL,
// unless fail_on_missing_field is set. Numbers go into numeric columns
// exactly (a fraction for an INT column is an error), numeric strings are
// accepted too, nested objects and arrays go into a STRING column as their
// JSON text, BYTES are base64, timestamps are strings in the form
// timestamp_format names (TIMESTAMP_LTZ with a trailing Z, TIMESTAMP
// without) or epoch milliseconds, dates are strings or a number of days
// since 1970-01-01 (Debezium's form). A blank record carries no row and is
// skipped. With ignore_parse_errors, a value that does not fit its column
// is NULL, as in Flink.
//
// Writing: one object per record, members in schema order, followed by a
// newline. DOUBLE and FLOAT NaN and infinities are written as the strings
// "NaN", "Infinity" and "-Infinity", as Flink's Jackson writer does (JSON
// has no literal for them); the reader accepts those strings back. DECIMAL
// is a number with its scale in Java's BigDecimal.toString form (0E-7,
// 2.50000E-7 below 1E-6; plain with encode_decimal_as_plain_number), timestamps are strings in the configured
// standard with as many fraction digits as needed (Flink's form), BYTES is
// base64 and invalid UTF-8 in strings becomes U+FFFD, one per malformed
// sequence as Java decodes the bytes (internal/javautf8), as in Flink's
// output.
package json

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the json format's options: Flink's json options in
// etld's spelling (json.fail-on-missing-field is fail_on_missing_field).
type Options struct {
	// TimestampFormat is Flink's json.timestamp-format.standard: "sql"
	// (2024-01-02 10:00:00.123, the default) or "iso-8601"
	// (2024-01-02T10:00:00.123). TIMESTAMP_LTZ values end in Z in both.
	// It decides how timestamps are written and, in the json format, the
	// one form a timestamp string is read in (the changelog formats
	// read both).
	TimestampFormat string `yaml:"timestamp_format"`
	// FailOnMissingField makes a record without a member for some column
	// an error instead of a NULL.
	FailOnMissingField bool `yaml:"fail_on_missing_field"`
	// IgnoreParseErrors is Flink's json.ignore-parse-errors: a member
	// whose value does not fit its column is NULL. Malformed JSON is
	// still an error, for the source's on_error policy.
	IgnoreParseErrors bool `yaml:"ignore_parse_errors"`
	// MapNullKeyMode is Flink's json.map-null-key.mode, for writing a
	// MAP whose key is NULL: "fail" (the default), "drop" the entry, or
	// "literal": write the key as MapNullKeyLiteral.
	MapNullKeyMode string `yaml:"map_null_key_mode"`
	// MapNullKeyLiteral is Flink's json.map-null-key.literal: the key
	// written for NULL under map_null_key_mode: literal; "null" unset.
	MapNullKeyLiteral *string `yaml:"map_null_key_literal"`
	// EncodeDecimalAsPlainNumber is Flink's
	// json.encode.decimal-as-plain-number: DECIMAL written as
	// BigDecimal.toPlainString (0.0000000) instead of the default
	// BigDecimal.toString (0E-7), which Jackson writes unless its
	// WRITE_BIGDECIMAL_AS_PLAIN feature is on.
	EncodeDecimalAsPlainNumber bool `yaml:"encode_decimal_as_plain_number"`

	// strictTimestamps reads a timestamp string only in the form
	// TimestampFormat names, as Flink's json format does; set by
	// NewDecoder (the changelog formats, sharing the Codec, read both).
	strictTimestamps bool
}

// iso reports whether timestamps are written in ISO-8601 form; it assumes
// Validate passed.
func (o Options) iso() bool { return strings.EqualFold(o.TimestampFormat, "iso-8601") }

// stdName is the timestamp standard's name as the options spell it.
func (o Options) stdName() string {
	if o.iso() {
		return "iso-8601"
	}
	return "sql"
}

// MapNullKey is how a NULL MAP key is written: drop the entry, or write
// key; err (the default, Flink's FAIL) when neither.
func (o Options) MapNullKey() (key string, drop bool, err error) {
	switch strings.ToLower(o.MapNullKeyMode) {
	case "drop":
		return "", true, nil
	case "literal":
		if o.MapNullKeyLiteral != nil {
			return *o.MapNullKeyLiteral, false, nil
		}
		return "null", false, nil
	}
	return "", false, errors.New("a MAP key is NULL, which JSON cannot hold (set map_null_key_mode: drop or literal)")
}

// Validate checks the options; errors name the option.
func (o Options) Validate() error {
	var errs []error
	switch strings.ToLower(o.TimestampFormat) {
	case "", "sql", "iso-8601":
	default:
		errs = append(errs, connector.Errorf("timestamp_format", "want sql or iso-8601, got %q", o.TimestampFormat))
	}
	switch strings.ToLower(o.MapNullKeyMode) {
	case "", "fail", "drop":
		if o.MapNullKeyLiteral != nil {
			errs = append(errs, connector.Errorf("map_null_key_literal", "applies only with map_null_key_mode: literal"))
		}
	case "literal":
	default:
		errs = append(errs, connector.Errorf("map_null_key_mode", "want fail, drop or literal, got %q", o.MapNullKeyMode))
	}
	if o.FailOnMissingField && o.IgnoreParseErrors {
		// Flink refuses the pair too: a missing member would be both an
		// error and a NULL.
		errs = append(errs, connector.Errorf("ignore_parse_errors", "cannot be set together with fail_on_missing_field"))
	}
	return errors.Join(errs...)
}

// Register adds the json format to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "json", "JSON lines: one object per record, fields by name",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return NewEncoder(o, s) })
}

// Decoder reads one JSON object per record. It is not safe for concurrent
// use.
type Decoder struct {
	codec *Codec
}

// NewDecoder returns a decoder of records into rows of schema.
func NewDecoder(o Options, schema row.Schema) (*Decoder, error) {
	o.strictTimestamps = true
	c, err := NewCodec(schema, o)
	if err != nil {
		return nil, err
	}
	c.planFast()
	return &Decoder{codec: c}, nil
}

// Decode appends the row held by rec to b as an insert.
func (d *Decoder) Decode(rec []byte, b *row.Batch) error {
	if isBlank(rec) {
		return nil
	}
	// One copy per record: every string value without escapes is then a
	// substring of it, and the row does not alias the caller's buffer.
	return d.decode(string(rec), b)
}

// DecodeString implements connector.StringDecoder: Decode of a record
// that its caller never changes, whose substrings the row's values are.
func (d *Decoder) DecodeString(rec string, b *row.Batch) error {
	if isBlankString(rec) {
		return nil
	}
	return d.decode(rec, b)
}

// SetColumns implements connector.ProjectingDecoder: the members of the
// columns not needed are skipped (their JSON checked, their values not
// read) and the columns are NULL in the row. A bad value, a missing
// member or a NULL in them is then no error, as with Flink's projection
// pushdown; malformed JSON still is.
func (d *Decoder) SetColumns(needed []bool) {
	if needed != nil && len(needed) != d.codec.Width() {
		return // not this schema's projection: read everything
	}
	d.codec.use = slices.Clone(needed)
	d.codec.planFast()
}

// DecodeColumns implements connector.ColumnDecoder: rows hold the
// columns cols of the schema, in that order; the members of the others
// are skipped as with SetColumns.
func (d *Decoder) DecodeColumns(cols []int) bool {
	c := d.codec
	if c.paths != nil {
		return false // the rows have the paths' columns after the schema's
	}
	outAt, copies, ok := connector.ColumnPlaces(c.Width(), cols)
	if !ok {
		return false
	}
	c.use = make([]bool, len(outAt))
	for i, at := range outAt {
		c.use[i] = at >= 0
	}
	c.outAt, c.copies = outAt, copies
	c.planFast()
	return true
}

// Clone implements connector.ParallelDecoder: a decoder of the same
// options and columns, with scratch of its own.
func (d *Decoder) Clone() connector.Decoder {
	c := *d.codec
	c.seen, c.lowerBuf, c.pathRow = make([]bool, len(d.codec.seen)), nil, nil
	c.arena, c.ts = nil, row.TimestampReader{}
	return &Decoder{codec: &c}
}

func (d *Decoder) decode(s string, b *row.Batch) error {
	r := b.NewRow()
	if d.codec.fast != nil {
		if end, ok := d.codec.decodeFast(s, r); ok && SkipSpace(s, end) == len(s) {
			b.Append(row.Insert, r)
			return nil
		}
	}
	return d.decodeGeneral(s, r, b)
}

// DecodeLine implements connector.LineDecoder.
func (d *Decoder) DecodeLine(data string, b *row.Batch) (int, error) {
	if d.codec.fast == nil || len(data) == 0 || data[0] != '{' {
		// Blank lines, a byte order mark, blanks before the object:
		// DecodeString's.
		line, n := cutLine(data)
		return n, d.DecodeString(line, b)
	}
	r := b.NewRow()
	if end, ok := d.codec.decodeFast(data, r); ok {
		switch end = fastSpace(data, end); {
		case end == len(data):
			b.Append(row.Insert, r)
			return end, nil
		case data[end] == '\n':
			b.Append(row.Insert, r)
			return end + 1, nil
		}
	}
	line, n := cutLine(data)
	return n, d.decodeGeneral(line, r, b)
}

// cutLine is the line at the start of data without its line break ("\n"
// or "\r\n"), and its length with the "\n", as the file source cuts
// lines for a decoder that does not find their ends.
func cutLine(data string) (string, int) {
	line, n := data, len(data)
	if nl := strings.IndexByte(data, '\n'); nl >= 0 {
		line, n = data[:nl], nl+1
	}
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	return line, n
}

// decodeGeneral appends the row of s, read into r by DecodeObject: any
// record, the errors with their positions.
func (d *Decoder) decodeGeneral(s string, r row.Row, b *row.Batch) error {
	i := SkipSpace(s, 0)
	if strings.HasPrefix(s[i:], bom) {
		i = SkipSpace(s, i+len(bom))
	}
	end, err := d.codec.DecodeObject(s, i, r)
	if err != nil {
		return err
	}
	if end = SkipSpace(s, end); end < len(s) {
		return &connector.DecodeError{Err: syntaxErr(s, end, "unexpected %s after the object", describe(s, end))}
	}
	b.Append(row.Insert, r)
	return nil
}

// bom is the byte order mark some Windows tools put at the start of a
// UTF-8 file; Jackson skips it, and so do we.
const bom = "\uFEFF"

func isBlankString(rec string) bool {
	for i := 0; i < len(rec); i++ {
		switch rec[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

func isBlank(rec []byte) bool {
	for _, c := range rec {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// Encoder writes one JSON object and a newline per record. The row kind is
// not written: the sink only passes the kinds its mode lets through.
type Encoder struct {
	codec *Codec
}

// NewEncoder returns an encoder of rows of schema.
func NewEncoder(o Options, schema row.Schema) (*Encoder, error) {
	c, err := NewCodec(schema, o)
	if err != nil {
		return nil, err
	}
	return &Encoder{codec: c}, nil
}

// Encode appends r as a JSON object and a newline.
func (e *Encoder) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	if len(r) != e.codec.Width() {
		return dst, fmt.Errorf("json: row has %d values, schema has %d columns", len(r), e.codec.Width())
	}
	dst = e.codec.AppendObject(dst, r)
	return append(dst, '\n'), nil
}

var (
	_ connector.Decoder           = (*Decoder)(nil)
	_ connector.ParallelDecoder   = (*Decoder)(nil)
	_ connector.StringDecoder     = (*Decoder)(nil)
	_ connector.LineDecoder       = (*Decoder)(nil)
	_ connector.ProjectingDecoder = (*Decoder)(nil)
	_ connector.ColumnDecoder     = (*Decoder)(nil)
	_ connector.NestedDecoder     = (*Decoder)(nil)
	_ connector.Encoder           = (*Encoder)(nil)
)
