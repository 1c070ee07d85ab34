package csv

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Decoder reads CSV records into rows. It is not safe for concurrent use.
type Decoder struct {
	cfg    config
	schema row.Schema
	// fields and unquote are per-record scratch, reused.
	fields  []field
	unquote []byte
	// On the fast path of parse, fast is set and the fields are
	// src[ends[i-1]+1 : ends[i]]: offsets, which the hot loop writes
	// without the GC write barrier that strings cost.
	fast bool
	src  string
	ends []int
	// needed is the projection (SetColumns): nil reads every column.
	needed []bool
	// outAt, when set (DecodeColumns), is where each column goes in the
	// row, -1 for nowhere (not parsed); copies holds the (from, to)
	// places of a column that comes twice.
	outAt  []int
	copies [][2]int
	// special marks the bytes that end the fast path of parse and of
	// decodeFast: the delimiter, the quote, the escape and the line
	// breaks.
	special [256]bool
	// ops is what decodeFast does with each column (planColumns);
	// fieldEnds marks the bytes that end a field there: the delimiter and the
	// line breaks.
	ops       []colOp
	fieldEnds [256]bool
	// skip is skipBytesOf(cfg), made once.
	skip [3]uint64
	// ts reads the timestamps: a file's rows share their minute;
	// tsMin is its last minute, for fastTimestamp.
	ts    row.TimestampReader
	tsMin tsMinute
}

type field struct {
	text   string
	quoted bool
}

// NewDecoder returns a decoder of records into rows of schema.
func NewDecoder(o Options, schema row.Schema) (*Decoder, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	for _, f := range schema.Fields {
		if f.Type.ID.Nested() {
			// Flink's csv reads an ARRAY from array-element-delimiter
			// separated text; etld reads composite values from json.
			return nil, fmt.Errorf("csv: column %s is %s: the csv format does not read composite values; use format: json", f.Name, f.Type)
		}
	}
	d := &Decoder{cfg: cfg, schema: schema, fields: make([]field, 0, schema.Len())}
	for _, c := range []byte{cfg.delim, cfg.quote, cfg.escape, '\n', '\r'} {
		d.special[c] = true
	}
	for _, c := range []byte{cfg.delim, '\n', '\r'} {
		d.fieldEnds[c] = true
	}
	// An unset quote or escape is 0: a NUL byte then takes the slow
	// path, which reads it as the plain character it is.
	d.skip = skipBytesOf(cfg)
	d.planColumns()
	return d, nil
}

// SetColumns implements connector.ProjectingDecoder: the columns not
// needed are split off their record but not parsed, and are NULL in the
// row. A bad value in them is then no error, as with Flink's projection
// pushdown; a record with the wrong number of fields still is.
func (d *Decoder) SetColumns(needed []bool) {
	if needed != nil && len(needed) != d.schema.Len() {
		return // not this schema's projection: read everything
	}
	d.needed = needed
	d.planColumns()
}

// DecodeColumns implements connector.ColumnDecoder: rows hold the
// columns cols of the schema, in that order; the others are split off
// their record but not parsed.
func (d *Decoder) DecodeColumns(cols []int) bool {
	outAt, copies, ok := connector.ColumnPlaces(d.schema.Len(), cols)
	if !ok {
		return false
	}
	d.outAt, d.copies = outAt, copies
	d.planColumns()
	return true
}

// KeepsProjection implements connector.ProjectionKeeper: planColumns
// reads both, and a column SetColumns left out is NULL (opNull) at its
// place in the row.
func (d *Decoder) KeepsProjection() bool { return true }

// intern copies rec into a string of its own, which the row's string
// values share. One allocation per record, not per field; and a value an
// operator keeps in its state (a Top-N's rows, a deduplication's) pins its
// own record only. (Records packed into a shared arena cost less, but a
// kept value then pins the whole arena: a Top-N's rows spread over a file
// would keep the file in memory.)
func (d *Decoder) intern(rec []byte) string { return string(rec) }

// HasHeader reports whether the first record is a header.
func (d *Decoder) HasHeader() bool { return d.cfg.header }

// DecodeHeader checks a header record against the schema: the same number
// of columns with the same names, compared without regard to case (fields
// map by position, so a header in another order would silently swap
// columns).
func (d *Decoder) DecodeHeader(rec []byte) error {
	s := strings.TrimPrefix(string(trimTerminator(rec)), bom)
	if err := d.parse(s); err != nil {
		return err
	}
	names := make([]string, d.nfields())
	for i := range names {
		names[i] = d.fieldAt(i).text
	}
	want := d.schema.Names()
	if len(names) != len(want) {
		return &connector.DecodeError{Err: fmt.Errorf("header has %d columns (%s), the schema has %d (%s)",
			len(names), strings.Join(names, ", "), len(want), strings.Join(want, ", "))}
	}
	for i, name := range names {
		if !strings.EqualFold(strings.TrimSpace(name), want[i]) {
			return &connector.DecodeError{Column: want[i], Err: fmt.Errorf(
				"header column %d is %q where the schema has %q (CSV maps columns by position; reorder the schema or the file)",
				i+1, name, want[i])}
		}
	}
	return nil
}

// Decode appends the row held by rec to b as an insert. rec may end with
// its line break.
func (d *Decoder) Decode(rec []byte, b *row.Batch) error {
	rec = trimTerminator(rec)
	if d.skips(len(rec), len(rec) > 0 && rec[0] == '#') {
		return nil
	}
	// One copy per record; unquoted and simply quoted
	// fields are then substrings of it and the row does not alias the
	// caller's buffer.
	return d.decode(d.intern(rec), b)
}

// DecodeString implements connector.StringDecoder: Decode of a record
// that its caller never changes, whose substrings the row's values are.
func (d *Decoder) DecodeString(rec string, b *row.Batch) error {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
	}
	if n := len(rec); n > 0 && rec[n-1] == '\r' {
		rec = rec[:n-1]
	}
	if d.skips(len(rec), len(rec) > 0 && rec[0] == '#') {
		return nil
	}
	return d.decode(rec, b)
}

// skips reports whether a record of n bytes, starting with a '#' or not,
// holds no row: a blank line of a schema of several columns (of one
// column it is a NULL), or a comment when comments are on.
func (d *Decoder) skips(n int, hash bool) bool {
	return (n == 0 && d.schema.Len() > 1) || (d.cfg.comment && hash)
}

// Clone implements connector.ParallelDecoder: a decoder of the same
// options and projection, with scratch of its own.
func (d *Decoder) Clone() connector.Decoder {
	c := *d
	c.fields, c.unquote, c.ends, c.src, c.fast, c.ts, c.tsMin = make([]field, 0, d.schema.Len()), nil, nil, "", false, row.TimestampReader{}, tsMinute{}
	return &c
}

// RecordsAreLines implements connector.LineSplitter: a block without a
// quote holds one record per line.
func (d *Decoder) RecordsAreLines(block []byte) bool {
	return d.cfg.quote == 0 || bytes.IndexByte(block, d.cfg.quote) < 0
}

// decode appends the row of s, a record without its terminator.
func (d *Decoder) decode(s string, b *row.Batch) error {
	if len(s) >= 3 && s[:3] == bom {
		s = s[3:]
	}
	r := b.NewRow()
	if end, ok := d.decodeFast(s, r); ok && end == len(s) {
		d.appendRow(r, b)
		return nil
	}
	return d.decodeGeneral(s, r, b)
}

// appendRow appends r, the row of a record, after the copies of its
// columns that come twice.
func (d *Decoder) appendRow(r row.Row, b *row.Batch) {
	for _, c := range d.copies {
		r[c[1]] = r[c[0]]
	}
	b.Append(row.Insert, r)
}

// DecodeLine implements connector.LineDecoder.
func (d *Decoder) DecodeLine(data string, b *row.Batch) (int, error) {
	line, n := data, len(data)
	if len(data) > 0 {
		// Not a blank line, a comment or the byte order mark, which the
		// general path handles.
		if c := data[0]; c != '\n' && c != '\r' && c != bom[0] && (c != '#' || !d.cfg.comment) {
			r := b.NewRow()
			end, ok := d.decodeFast(data, r)
			switch {
			case !ok:
			case end == len(data):
				d.appendRow(r, b)
				return end, nil
			case data[end] == '\n':
				d.appendRow(r, b)
				return end + 1, nil
			case end+1 == len(data): // a "\r" ending data
				d.appendRow(r, b)
				return end + 1, nil
			default: // "\r\n"
				d.appendRow(r, b)
				return end + 2, nil
			}
			if nl := strings.IndexByte(data, '\n'); nl >= 0 {
				line, n = data[:nl], nl+1
			}
			if k := len(line); line[k-1] == '\r' {
				line = line[:k-1]
			}
			return n, d.decodeGeneral(line, r, b)
		}
	}
	if nl := strings.IndexByte(data, '\n'); nl >= 0 {
		line, n = data[:nl], nl+1
	}
	return n, d.DecodeString(line, b)
}

// decodeGeneral appends r, the row of s, read by parse and the column
// loop: any record, the errors with their positions.
func (d *Decoder) decodeGeneral(s string, r row.Row, b *row.Batch) error {
	if err := d.parse(s); err != nil {
		return err
	}
	nf := d.nfields()
	if nf == d.schema.Len()+1 && d.fieldAt(nf-1) == (field{}) {
		// Flink 2.3's allow-trailing-comma (on by default): a delimiter
		// ending a full record is no extra field.
		nf--
	}
	if n := nf; n != d.schema.Len() {
		// Flink's ignore-parse-errors reads the fields a short record
		// has and leaves the others NULL; a long one is refused.
		if !d.cfg.ignore || n > d.schema.Len() {
			return &connector.DecodeError{Err: fmt.Errorf("expected %d fields, got %d", d.schema.Len(), n)}
		}
	}
	// Column i goes to r[at], nowhere when at < 0; the columns are read
	// in the schema's order whatever the row's, so that a record's first
	// error is the same in either.
	for i := range d.schema.Fields {
		at := i
		if d.outAt != nil {
			at = d.outAt[i]
		}
		if i >= nf {
			if t := &d.schema.Fields[i].Type; t.NotNull {
				return &connector.DecodeError{Column: d.schema.Fields[i].Name, Err: fmt.Errorf("missing (%d fields of %d), but the column is %s", nf, d.schema.Len(), t)}
			}
			if at >= 0 {
				r[at] = row.NullValue
			}
			continue
		}
		if at < 0 {
			continue
		}
		if d.needed != nil && !d.needed[i] {
			r[at] = row.NullValue // projected away: not parsed
			continue
		}
		v, err := d.value(i, d.fieldAt(i))
		if err != nil {
			return &connector.DecodeError{Column: d.schema.Fields[i].Name, Err: err}
		}
		r[at] = v
	}
	for _, c := range d.copies {
		r[c[1]] = r[c[0]]
	}
	b.Append(row.Insert, r)
	return nil
}

func (d *Decoder) value(i int, f field) (row.Value, error) {
	t := &d.schema.Fields[i].Type
	if d.cfg.hasNull && !f.quoted && f.text == d.cfg.nullLit {
		if t.NotNull {
			return row.NullValue, fmt.Errorf("NULL, but the column is %s", t)
		}
		return row.NullValue, nil
	}
	v, err := d.parseValue(f.text, t)
	if err != nil {
		switch {
		case d.cfg.ignore && !t.NotNull:
			return row.NullValue, nil
		case f.text == "" && !d.cfg.hasNull && !t.NotNull:
			// Flink's rule, which surprises users of etld's former one.
			return row.NullValue, &row.ParseError{Text: "", Type: *t, Err: errors.New(`an empty field is NULL only with null_literal: ""`)}
		}
	}
	return v, err
}

// parseValue reads the text of a field that is not the null literal.
func (d *Decoder) parseValue(text string, t *row.Type) (row.Value, error) {
	// Fast paths for the common numbers; anything unusual (blanks, errors)
	// goes through ParseText, which gives the same values and the errors.
	switch t.ID {
	case row.String:
		return row.StringValue(text), nil
	case row.BigInt:
		if n, ok := shortInt(text); ok {
			return row.BigIntValue(n), nil
		}
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return row.BigIntValue(n), nil
		}
	case row.Int:
		// TINYINT and SMALLINT too: a number outside their range falls
		// through to ParseText, which refuses it as Flink's Byte.parseByte
		// and Short.parseShort do.
		if n, ok := shortInt(text); ok && n == t.WrapInt(n) {
			return row.IntValue(int32(n)), nil
		}
		if n, err := strconv.ParseInt(text, 10, t.IntBits()); err == nil {
			return row.IntValue(int32(n)), nil
		}
	case row.Double:
		if x, ok := shortFloat(text); ok {
			return row.DoubleValue(x), nil
		}
		if x, err := strconv.ParseFloat(text, 64); err == nil {
			return row.DoubleValue(x), nil
		}
	case row.Decimal:
		if u, ok := shortDecimal(text, t.Precision, t.Scale); ok {
			return row.DecimalValue(u, t.Scale), nil
		}
	case row.Date:
		if days, ok := d.ts.Days(text); ok {
			return row.DateValue(days), nil
		}
	case row.Timestamp:
		if m, ok := d.ts.Micros(text); ok {
			return row.TimestampValue(m), nil
		}
		return parseTimestamp(text, *t)
	case row.TimestampLTZ:
		if m, ok := d.ts.Micros(text); ok {
			return row.TimestampLTZValue(m), nil
		}
		return parseTimestamp(text, *t)
	case row.Bytes:
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return row.NullValue, &row.ParseError{Text: text, Type: *t, Err: errors.New("not base64")}
		}
		return row.BytesValue(b), nil
	}
	return row.ParseText(text, *t)
}

// shortInt reads an optional sign and 1 to 18 decimal digits, which
// cannot overflow an int64: strconv.ParseInt(s, 10, 64)'s value for
// them, at a third of its cost. ok is false for any other text (longer,
// empty, another byte), which strconv then reads.
func shortInt(s string) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if neg {
		n = -n
	}
	return n, true
}

// bom is the byte order mark Excel and other Windows tools put at the start
// of a UTF-8 file: dropped at the start of a record, where it can only be
// the file's first bytes, so that it does not end up in the first value.
const bom = "\uFEFF"

// trimTerminator drops a trailing \n, \r\n or \r: records from Split have
// none, but a Kafka message or a line from another splitter may.
func trimTerminator(rec []byte) []byte {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
	}
	if n := len(rec); n > 0 && rec[n-1] == '\r' {
		rec = rec[:n-1]
	}
	return rec
}

var (
	_ connector.Decoder          = (*Decoder)(nil)
	_ connector.HeaderDecoder    = (*Decoder)(nil)
	_ connector.Splitter         = (*Decoder)(nil)
	_ connector.LineSplitter     = (*Decoder)(nil)
	_ connector.ParallelDecoder  = (*Decoder)(nil)
	_ connector.StringDecoder    = (*Decoder)(nil)
	_ connector.LineDecoder      = (*Decoder)(nil)
	_ connector.ColumnDecoder    = (*Decoder)(nil)
	_ connector.ProjectionKeeper = (*Decoder)(nil)
)

// parseTimestamp reads a TIMESTAMP or TIMESTAMP_LTZ text as ParseText
// does, and one whose year has java.time's sign (+10000-01-01 00:00:00,
// -0001-12-31 00:00:00), as this package's writer and Flink's write a
// year past 0000..9999 and Flink's csv reader takes back. A DATE's is
// not read: Flink's reader (java.sql.Date.valueOf) refuses it.
func parseTimestamp(text string, t row.Type) (row.Value, error) {
	year, rest, ok := row.SignedYear(text)
	if !ok {
		return row.ParseText(text, t)
	}
	v, err := row.ParseText(rest, t)
	if err != nil {
		return row.NullValue, &row.ParseError{Text: text, Type: t}
	}
	if v, err = row.AtYear(v, rest, year); err != nil {
		return row.NullValue, &row.ParseError{Text: text, Type: t, Err: err}
	}
	return v, nil
}
