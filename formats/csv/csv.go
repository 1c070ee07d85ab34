// Package csv is the CSV format (RFC 4180), with PostgreSQL COPY's NULL
// convention: by default an unquoted empty field is NULL and a quoted empty
// field ("") is the empty string.
//
// Fields map to columns by position. Values are in SQL text form (CAST AS
// STRING), except BYTES, which are base64 as in Flink's csv format. A
// record's line break may be \n or \r\n; a quoted field may hold line
// breaks, delimiters and doubled quotes. A blank line is skipped when the
// schema has several columns (it cannot be a record of theirs) and is one
// NULL field when it has one (that is how a NULL is written then).
package csv

import (
	"errors"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the csv format's options.
type Options struct {
	// Delimiter is the field separator, one character; default ",". The
	// two characters \t stand for a tab.
	Delimiter string `yaml:"delimiter"`
	// Quote is the quote character, default "; an empty string disables
	// quoting (fields then cannot hold the delimiter or line breaks).
	Quote *string `yaml:"quote"`
	// Header: the decoder expects a first record naming the columns and
	// checks it against the schema; the encoder writes one.
	Header bool `yaml:"header"`
	// NullLiteral, when set, is the unquoted field text that means NULL;
	// an empty field of a STRING column is then the empty string.
	NullLiteral *string `yaml:"null_literal"`
}

// config is Options checked and resolved.
type config struct {
	delim   byte
	quote   byte // 0: quoting disabled
	header  bool
	nullLit string
	hasNull bool // NullLiteral set (and not empty)
}

func (o Options) config() (config, error) {
	c := config{delim: ',', quote: '"', header: o.Header}
	var errs []error
	switch d := o.Delimiter; {
	case d == "":
	case d == `\t`:
		c.delim = '\t'
	case len(d) != 1 || d[0] >= 0x80:
		errs = append(errs, connector.Errorf("delimiter", "want one ASCII character (or \\t), got %q", d))
	case d == "\n" || d == "\r":
		errs = append(errs, connector.Errorf("delimiter", "a line break cannot separate fields"))
	default:
		c.delim = d[0]
	}
	if o.Quote != nil {
		switch q := *o.Quote; {
		case q == "":
			c.quote = 0
		case len(q) != 1 || q[0] >= 0x80 || q == "\n" || q == "\r":
			errs = append(errs, connector.Errorf("quote", "want one ASCII character, or \"\" to disable quoting, got %q", q))
		case q[0] == c.delim:
			errs = append(errs, connector.Errorf("quote", "the quote character cannot be the delimiter %q", q))
		default:
			c.quote = q[0]
		}
	}
	if o.NullLiteral != nil && *o.NullLiteral != "" {
		c.nullLit, c.hasNull = *o.NullLiteral, true
		for i := 0; i < len(c.nullLit); i++ {
			if ch := c.nullLit[i]; ch == c.delim || (ch == c.quote && c.quote != 0) || ch == '\n' || ch == '\r' {
				errs = append(errs, connector.Errorf("null_literal", "%q holds the delimiter, the quote or a line break, so no field can equal it", c.nullLit))
				break
			}
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
