package csv

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Encoder writes rows as CSV records ending in \n, NULL as the null
// literal (an empty field without one, as Flink writes it), quoting a
// field only when it must: when it holds the delimiter, the quote, the
// escape character or a line break, when it is an empty string that
// would read back as NULL (null_literal: ""), when it equals the null
// literal, or when it is a first field starting with # under
// allow_comments. With quoting disabled, an escape character escapes
// what would need quoting.
//
// Flink's writer (Jackson's) also quotes any text holding a character
// before '-' in ASCII (a space, say); both read back the same.
type Encoder struct {
	cfg    config
	schema row.Schema
	// special is the second byte that forces quoting besides the
	// delimiter: the quote, or the delimiter again when quoting is off.
	special byte
	// quoted marks the bytes that make a field need quoting (the
	// delimiter, special, line breaks, the escape character): one look-up
	// a byte of a long text.
	quoted  [256]bool
	scratch []byte
}

// NewEncoder returns an encoder of rows of schema.
func NewEncoder(o Options, schema row.Schema) (*Encoder, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	e := &Encoder{cfg: cfg, schema: schema, special: cfg.quote}
	if cfg.quote == 0 {
		e.special = cfg.delim
	}
	e.quoted[cfg.delim], e.quoted[e.special], e.quoted['\n'], e.quoted['\r'] = true, true, true, true
	if cfg.escape != 0 {
		e.quoted[cfg.escape] = true
	}
	return e, nil
}

// AppendHeader appends the column names as a record, or nothing when the
// header option is off.
func (e *Encoder) AppendHeader(dst []byte) []byte {
	if !e.cfg.header {
		return dst
	}
	for i, f := range e.schema.Fields {
		if i > 0 {
			dst = append(dst, e.cfg.delim)
		}
		start := len(dst)
		dst = append(dst, f.Name...)
		// A name that cannot be quoted is written as is: the schema's
		// names are identifiers, so that is a corner not worth failing on.
		dst, _ = e.finish(dst, start, false, false)
	}
	return append(dst, '\n')
}

// Encode appends r as one record. The row kind is not written: the sink
// only passes the kinds its mode lets through.
func (e *Encoder) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	if len(r) != e.schema.Len() {
		return dst, fmt.Errorf("csv: row has %d values, schema has %d columns", len(r), e.schema.Len())
	}
	orig := len(dst)
	for i, v := range r {
		if i > 0 {
			dst = append(dst, e.cfg.delim)
		}
		if v.IsNull() {
			dst = append(dst, e.cfg.nullLit...)
			continue
		}
		start := len(dst)
		switch v.Type() {
		case row.Bytes:
			dst = base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
		case row.Boolean:
			// Jackson's CSV writer, Flink's, writes a boolean node as
			// true or false (CAST to STRING gives TRUE).
			dst = strconv.AppendBool(dst, v.Bool())
		case row.Timestamp, row.TimestampLTZ:
			// Flink's csv writer: the fraction with the digits it needs
			// (none when zero) whatever the precision, and a Z ending an
			// instant (2024-01-02 10:00:00.5Z).
			dst = row.AppendTimestampTrimmed(dst, v.Micros())
			if v.Type() == row.TimestampLTZ {
				dst = append(dst, 'Z')
			}
		case row.Time:
			// Flink's csv writer: SQL_TIME_FORMAT, the fraction's
			// digits up to the last that is not zero (07:05:09.1).
			dst = row.AppendTimeTrimmed(dst, v)
		case row.Decimal:
			// Flink's csv writer hands Jackson a number node of the
			// BigDecimal, which strips its trailing zeros, and writes its
			// toString (10 as 1E+1, 0E-7 as 0: conformance's
			// type-decimal-*-csv cases); Flink's csv format has no option
			// for the plain form.
			dst = row.AppendDecimalStripped(dst, v)
		default:
			dst = row.AppendText(dst, v, e.schema.Fields[i].Type)
		}
		var err error
		if dst, err = e.finish(dst, start, true, i == 0); err != nil {
			return dst[:orig], fmt.Errorf("csv: column %s: %w", e.schema.Fields[i].Name, err)
		}
	}
	return append(dst, '\n'), nil
}

// finish quotes the field text dst[start:] if it needs quoting. value
// says it is a value (not a header name), first that it starts the record.
func (e *Encoder) finish(dst []byte, start int, value, first bool) ([]byte, error) {
	text := dst[start:]
	esc := e.cfg.escape
	need := false
	for _, c := range text {
		if e.quoted[c] {
			need = true
			break
		}
	}
	literal := false // the text reads as NULL unless quoted or escaped
	switch {
	case need:
	case !value:
		return dst, nil
	case e.cfg.hasNull && string(text) == e.cfg.nullLit:
		need, literal = true, true
	case first && e.cfg.comment && len(text) > 0 && text[0] == '#':
		need = true
	}
	if !need {
		return dst, nil
	}
	q := e.cfg.quote
	if q == 0 {
		return e.escape(dst, start, literal)
	}
	e.scratch = append(e.scratch[:0], text...)
	dst = append(dst[:start], q)
	for _, c := range e.scratch {
		if c == q || (c == esc && esc != 0) {
			dst = append(dst, c) // a doubled quote; an escaped escape
		}
		dst = append(dst, c)
	}
	return append(dst, q), nil
}

// escape writes the field text dst[start:] with quoting disabled: with an
// escape character, every character that needs it is escaped (a null
// literal's first one, so that it reads back as text); without one the
// field cannot be written.
func (e *Encoder) escape(dst []byte, start int, literal bool) ([]byte, error) {
	text := dst[start:]
	esc := e.cfg.escape
	switch {
	case esc != 0 && !(literal && len(text) == 0):
	case literal && len(text) == 0:
		return dst, fmt.Errorf("cannot write an empty string: with quoting disabled it reads back as NULL (null_literal is \"\")")
	case literal:
		return dst, fmt.Errorf("cannot write %q: it is the null literal and quoting is disabled (set escape_character)", text)
	default:
		return dst, fmt.Errorf("value %q holds the delimiter or a line break and quoting is disabled (set escape_character)", text)
	}
	e.scratch = append(e.scratch[:0], text...)
	dst = dst[:start]
	for i, c := range e.scratch {
		switch {
		case c == '\n':
			dst = append(dst, esc, 'n')
		case c == '\r':
			dst = append(dst, esc, 'r')
		case c == e.cfg.delim || c == esc || (i == 0 && literal) || (i == 0 && e.cfg.comment && c == '#'):
			dst = append(dst, esc, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

var (
	_ connector.Encoder       = (*Encoder)(nil)
	_ connector.HeaderEncoder = (*Encoder)(nil)
)
