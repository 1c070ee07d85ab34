// Package csv is the CSV format (RFC 4180) with Flink's csv options and
// defaults: an unquoted empty field is the empty string in a STRING
// column and a parse error in any other (BYTES: empty bytes), unless
// null_literal names the text of a NULL. null_literal: "" is etld's
// former rule (PostgreSQL COPY's): an unquoted empty field is NULL and a
// quoted one ("") the empty string.
//
// Fields map to columns by position. Values are in SQL text form (CAST AS
// STRING), except BYTES, which are base64 as in Flink's csv format. A
// record's line break may be \n or \r\n; a quoted field may hold line
// breaks, delimiters and doubled quotes. A blank line is skipped when the
// schema has several columns (it cannot be a record of theirs) and is one
// empty field when it has one, as Flink reads it.
//
// ignore_parse_errors is Flink's ignore-parse-errors at the field level:
// a field that does not parse becomes NULL and a record with too few
// fields is padded with NULLs. A record that cannot be read as a whole
// (too many fields, bad quoting) is still an error, for the source's
// on_error policy.
package csv

import (
	"errors"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the csv format's options, Flink's csv options in etld's
// spelling (field-delimiter is field_delimiter). Each character option
// takes one ASCII character.
type Options struct {
	// FieldDelimiter is Flink's field-delimiter, default ",". The two
	// characters \t stand for a tab.
	FieldDelimiter string `yaml:"field_delimiter"`
	// Delimiter is the older etld spelling of FieldDelimiter.
	Delimiter string `yaml:"delimiter"`
	// QuoteCharacter is Flink's quote-character, default ".
	QuoteCharacter string `yaml:"quote_character"`
	// Quote is the older etld spelling of QuoteCharacter; an empty
	// string disables quoting, as DisableQuoteCharacter does.
	Quote *string `yaml:"quote"`
	// DisableQuoteCharacter is Flink's disable-quote-character: fields
	// are never quoted, so they cannot hold the delimiter or line breaks.
	DisableQuoteCharacter bool `yaml:"disable_quote_character"`
	// EscapeCharacter is Flink's escape-character (none by default): it
	// makes the character after it literal, in quoted and unquoted
	// fields; \n, \r, \t and \0 after it are the control characters, as
	// Jackson's CSV reader (Flink's) reads them.
	EscapeCharacter string `yaml:"escape_character"`
	// AllowComments is Flink's allow-comments: a record whose first
	// character is # is a comment and carries no row.
	AllowComments bool `yaml:"allow_comments"`
	// IgnoreParseErrors is Flink's ignore-parse-errors: a field that
	// does not parse is NULL, a record with too few fields is padded
	// with NULLs.
	IgnoreParseErrors bool `yaml:"ignore_parse_errors"`
	// ArrayElementDelimiter is Flink's array-element-delimiter (";"),
	// checked and kept for ARRAY columns.
	ArrayElementDelimiter string `yaml:"array_element_delimiter"`
	// Header: the decoder expects a first record naming the columns and
	// checks it against the schema; the encoder writes one.
	Header bool `yaml:"header"`
	// NullLiteral is Flink's null-literal: the unquoted field text that
	// means NULL, written for NULL. Unset, no text is NULL and a NULL is
	// written as an empty field (Flink's default); "" makes unquoted
	// empty fields NULL.
	NullLiteral *string `yaml:"null_literal"`
}

// config is Options checked and resolved.
type config struct {
	delim   byte
	quote   byte // 0: quoting disabled
	escape  byte // 0: none
	header  bool
	comment bool // allow_comments
	ignore  bool // ignore_parse_errors
	nullLit string
	hasNull bool // NullLiteral set, possibly to ""
	arrayEl byte
}

// oneChar checks a character option: one ASCII character, or \t for a
// tab when tab is set.
func oneChar(field, v string, tab bool) (byte, error) {
	switch {
	case tab && v == `\t`:
		return '\t', nil
	case len(v) != 1 || v[0] >= 0x80:
		if tab {
			return 0, connector.Errorf(field, "want one ASCII character (or \\t), got %q", v)
		}
		return 0, connector.Errorf(field, "want one ASCII character, got %q", v)
	case v == "\n" || v == "\r":
		return 0, connector.Errorf(field, "cannot be a line break")
	}
	return v[0], nil
}

func (o Options) config() (config, error) {
	c := config{delim: ',', quote: '"', header: o.Header, comment: o.AllowComments, ignore: o.IgnoreParseErrors, arrayEl: ';'}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	delimField, delim := "field_delimiter", o.FieldDelimiter
	switch {
	case o.FieldDelimiter != "" && o.Delimiter != "":
		add(connector.Errorf("delimiter", "give field_delimiter or its older spelling delimiter, not both"))
	case o.Delimiter != "":
		delimField, delim = "delimiter", o.Delimiter
	}
	if delim != "" {
		d, err := oneChar(delimField, delim, true)
		add(err)
		if err == nil {
			c.delim = d
		}
	}
	quoteField := "quote_character"
	switch {
	case o.Quote != nil && o.QuoteCharacter != "":
		add(connector.Errorf("quote", "give quote_character or its older spelling quote, not both"))
	case o.DisableQuoteCharacter && (o.QuoteCharacter != "" || (o.Quote != nil && *o.Quote != "")):
		// Flink: "Format cannot define a quote character and disabled
		// quote character at the same time."
		add(connector.Errorf("disable_quote_character", "cannot be set together with a quote character"))
	case o.DisableQuoteCharacter || (o.Quote != nil && *o.Quote == ""):
		c.quote = 0
	case o.Quote != nil:
		quoteField = "quote"
		fallthrough
	case o.QuoteCharacter != "":
		v := o.QuoteCharacter
		if o.Quote != nil {
			v = *o.Quote
		}
		q, err := oneChar(quoteField, v, false)
		switch {
		case err != nil:
			add(err)
		case q == c.delim:
			add(connector.Errorf(quoteField, "the quote character cannot be the delimiter %q", v))
		default:
			c.quote = q
		}
	}
	if c.quote != 0 && c.quote == c.delim && len(errs) == 0 {
		add(connector.Errorf(delimField, "%q is the quote character; set another quote_character or disable_quote_character", delim))
	}
	if o.EscapeCharacter != "" {
		e, err := oneChar("escape_character", o.EscapeCharacter, false)
		switch {
		case err != nil:
			add(err)
		case e == c.delim || (e == c.quote && c.quote != 0):
			add(connector.Errorf("escape_character", "%q is already the delimiter or the quote", o.EscapeCharacter))
		case strings.IndexByte("nrt0", c.delim) >= 0:
			// The escape makes n, r, t and 0 control characters.
			add(connector.Errorf("escape_character", "cannot be used with the delimiter %q: escaped, it stands for a control character", c.delim))
		default:
			c.escape = e
		}
	}
	if o.ArrayElementDelimiter != "" {
		a, err := oneChar("array_element_delimiter", o.ArrayElementDelimiter, false)
		add(err)
		c.arrayEl = a
	}
	if o.NullLiteral != nil {
		c.nullLit, c.hasNull = *o.NullLiteral, true
		for i := 0; i < len(c.nullLit); i++ {
			if ch := c.nullLit[i]; ch == c.delim || (ch == c.quote && c.quote != 0) || (ch == c.escape && c.escape != 0) || ch == '\n' || ch == '\r' {
				add(connector.Errorf("null_literal", "%q holds the delimiter, the quote, the escape or a line break, so no field can equal it", c.nullLit))
				break
			}
		}
	}
	if c.comment {
		// A record whose first byte is # reads as a comment: one that
		// starts with an empty or NULL field before the delimiter #, with
		// a quote # or an escape #, or with a null literal starting with
		// #, would be written so and lost on reading back.
		for _, ch := range []struct {
			name string
			c    byte
			on   bool
		}{{delimField, c.delim, true}, {"quote_character", c.quote, c.quote != 0}, {"escape_character", c.escape, c.escape != 0}} {
			if ch.on && ch.c == '#' {
				add(connector.Errorf("allow_comments", "cannot be used with # as the %s: a record starting with it would read back as a comment", ch.name))
			}
		}
		if c.hasNull && strings.HasPrefix(c.nullLit, "#") {
			add(connector.Errorf("allow_comments", "cannot be used with a null_literal starting with #: a record starting with NULL would read back as a comment"))
		}
	}
	return c, errors.Join(errs...)
}

// Register adds the csv format to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "csv", "CSV (RFC 4180): fields by position, optional header",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return NewEncoder(o, s) })
}

func checkSchema(s row.Schema) error {
	if s.Len() == 0 {
		return errors.New("csv: the schema has no columns")
	}
	return nil
}
