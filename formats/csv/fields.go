package csv

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// The general path's split of a record into fields: any quoting and
// escapes, bad quoting and unquoted line breaks reported with their byte
// offsets.

// parse splits s into fields, read with nfields and fieldAt.
func (d *Decoder) parse(s string) error {
	d.fields = d.fields[:0]
	d.ends = d.ends[:0]
	d.fast, d.src = true, s
	delim := d.cfg.delim
	// The common record, no quotes, no escapes, no line breaks, is split
	// in one pass; any other special byte starts over on the slow path.
	for j := 0; j < len(s); j++ {
		c := s[j]
		if !d.special[c] {
			continue
		}
		if c != delim {
			d.fast, d.src = false, ""
			return d.parseSlow(s)
		}
		d.ends = append(d.ends, j)
	}
	d.ends = append(d.ends, len(s))
	return nil
}

// nfields is the number of fields parse found.
func (d *Decoder) nfields() int {
	if d.fast {
		return len(d.ends)
	}
	return len(d.fields)
}

// fieldAt is field i of those parse found.
func (d *Decoder) fieldAt(i int) field {
	if !d.fast {
		return d.fields[i]
	}
	lo := 0
	if i > 0 {
		lo = d.ends[i-1] + 1
	}
	return field{text: d.src[lo:d.ends[i]]}
}

// parseSlow handles quoted fields and escapes, and reports bad quoting
// and unquoted line breaks with their byte offset.
func (d *Decoder) parseSlow(s string) error {
	delim, quote := d.cfg.delim, d.cfg.quote
	pos := 0
	for {
		if quote != 0 && pos < len(s) && s[pos] == quote {
			text, end, err := d.quoted(s, pos)
			if err != nil {
				return err
			}
			if end < len(s) && s[end] != delim {
				return d.fieldErr(fmt.Errorf("unexpected %q after the closing quote at byte %d (a quote inside a quoted field is written twice)", s[end], end-1))
			}
			d.fields = append(d.fields, field{text: text, quoted: true})
			pos = end
		} else {
			text, end, escaped, err := d.unquoted(s, pos)
			if err != nil {
				return err
			}
			// An escaped field is literal text, as a quoted one is: never
			// the null literal.
			d.fields = append(d.fields, field{text: text, quoted: escaped})
			pos = end
		}
		if pos >= len(s) {
			return nil
		}
		pos++ // the delimiter
	}
}

// unquoted reads the unquoted field starting at s[pos] and returns its
// text, the offset of the delimiter after it (or len(s)) and whether it
// held escapes. A field without escapes is a substring of s.
func (d *Decoder) unquoted(s string, pos int) (text string, end int, escaped bool, err error) {
	delim, quote, esc := d.cfg.delim, d.cfg.quote, d.cfg.escape
	buf := d.unquote[:0]
	for j := pos; j < len(s); j++ {
		switch c := s[j]; {
		case c == delim:
			if escaped {
				d.unquote = buf
				return string(buf), j, true, nil
			}
			return s[pos:j], j, false, nil
		case c == esc && esc != 0:
			if !escaped {
				buf, escaped = append(buf, s[pos:j]...), true
			}
			if j+1 >= len(s) {
				return "", 0, false, d.fieldErr(fmt.Errorf("escape character at byte %d ends the record", j))
			}
			j++
			buf = append(buf, unescape(s[j], esc))
			continue
		case c == quote && quote != 0:
			return "", 0, false, d.fieldErr(fmt.Errorf("quote at byte %d inside an unquoted field (quote the whole field and write the quote twice)", j))
		case c == '\n' || c == '\r':
			return "", 0, false, d.fieldErr(fmt.Errorf("line break at byte %d in an unquoted field (quote the field)", j))
		}
		if escaped {
			buf = append(buf, s[j])
		}
	}
	if escaped {
		d.unquote = buf
		return string(buf), len(s), true, nil
	}
	return s[pos:], len(s), false, nil
}

// unescape is the character an escaped c stands for: Jackson's CSV reader
// (Flink's) reads \n, \r, \t and \0 as control characters, anything
// else (the escape character itself included) as itself.
func unescape(c, esc byte) byte {
	if c == esc {
		return c
	}
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case '0':
		return 0
	}
	return c
}

// quoted reads the quoted field starting at s[pos] and returns its text
// and the offset after its closing quote. A field without doubled quotes
// or escapes is a substring of s.
func (d *Decoder) quoted(s string, pos int) (string, int, error) {
	q, esc := d.cfg.quote, d.cfg.escape
	i := pos + 1
	if esc == 0 {
		j := strings.IndexByte(s[i:], q)
		if j < 0 {
			return "", 0, d.fieldErr(fmt.Errorf("quoted field starting at byte %d has no closing quote", pos))
		}
		if j += i; j+1 >= len(s) || s[j+1] != q {
			return s[i:j], j + 1, nil
		}
	}
	buf := d.unquote[:0]
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case c == esc && esc != 0:
			if j+1 >= len(s) {
				j = len(s)
				continue
			}
			j++
			buf = append(buf, unescape(s[j], esc))
		case c == q && j+1 < len(s) && s[j+1] == q:
			buf = append(buf, q) // a doubled quote
			j++
		case c == q:
			d.unquote = buf
			if esc != 0 && len(buf) == j-i {
				return s[i:j], j + 1, nil // nothing was escaped
			}
			return string(buf), j + 1, nil
		default:
			buf = append(buf, c)
		}
	}
	d.unquote = buf
	return "", 0, d.fieldErr(fmt.Errorf("quoted field starting at byte %d has no closing quote", pos))
}

// fieldErr names the column of the field being parsed.
func (d *Decoder) fieldErr(err error) error {
	n := len(d.fields)
	if n < d.schema.Len() {
		return &connector.DecodeError{Column: d.schema.Fields[n].Name, Err: err}
	}
	return &connector.DecodeError{Err: fmt.Errorf("field %d: %w", n+1, err)}
}
