package csv

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/etld/etld/pipeline/connector"
)

// Split is a bufio.SplitFunc returning one CSV record at a time, without
// its line break (\n or \r\n): SplitFunc with
// connector.DefaultMaxRecordBytes. A bufio.Scanner stops at a bad record.
func (d *Decoder) Split(data []byte, atEOF bool) (advance int, token []byte, err error) {
	return d.split(data, atEOF, connector.DefaultMaxRecordBytes)
}

// SplitFunc returns a bufio.SplitFunc returning one CSV record at a time,
// without its line break (\n or \r\n).
//
// Line breaks inside a quoted field belong to the record, but a quoted
// field holding line breaks must close within maxRecordBytes of the
// record's start, and its closing quote must end the field (a delimiter or
// a line break follows it). A quote that does not, or that is still open
// at the end of the input, is taken for a stray one (an unbalanced quote
// in the data): the record then ends with the line where that quote
// opened, and comes with a *connector.DecodeError saying so, to be set
// aside as a bad record while reading goes on with the next line. One
// stray quote so costs one record, not the rest of the file.
//
// Before the end of the input, a quote still open within the bound asks
// for more data, as a followed file that is still being written needs.
// Records without quotes are cut at their line break, as before.
func (d *Decoder) SplitFunc(maxRecordBytes int) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		return d.split(data, atEOF, maxRecordBytes)
	}
}

func (d *Decoder) split(data []byte, atEOF bool, maxRecordBytes int) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	nl := bytes.IndexByte(data, '\n')
	// A comment line is a line, whatever quotes it holds.
	comment := d.cfg.comment && len(data) > 0 && data[0] == '#'
	if d.cfg.quote == 0 || comment || (nl >= 0 && bytes.IndexByte(data[:nl], d.cfg.quote) < 0) {
		if nl >= 0 {
			return nl + 1, dropCR(data[:nl]), nil
		}
		if atEOF {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
	return d.quotedRecord(data, atEOF, maxRecordBytes)
}

// quotedRecord cuts the first record of data, which holds a quote. It
// returns 0, nil, nil when data does not yet tell where the record ends. A
// quote opens a quoted field only at the start of a field, as Decode reads
// it: in `ab"c` it is a character like any other.
func (d *Decoder) quotedRecord(data []byte, atEOF bool, maxRecordBytes int) (int, []byte, error) {
	q, delim := d.cfg.quote, d.cfg.delim
	i := 0
	if bytes.HasPrefix(data, []byte(bom)) {
		i = len(bom) // Decode drops it: the field starts after it
	}
	field, fieldStart := 0, true
	for i < len(data) {
		c := data[i]
		if c == q && fieldStart {
			open := i
			end, crossed := -1, false
			for j := i + 1; ; {
				k := bytes.IndexByte(data[j:], q)
				if esc := d.cfg.escape; esc != 0 {
					// An escaped character, a quote included, is text.
					limit := len(data)
					if k >= 0 {
						limit = j + k
					}
					if e := bytes.IndexByte(data[j:limit], esc); e >= 0 {
						if j+e+1 < len(data) {
							crossed = crossed || bytes.IndexByte(data[j:j+e+2], '\n') >= 0
							j += e + 2
							continue
						}
						k = -1 // the escape ends the data
					}
				}
				if k < 0 {
					crossed = crossed || bytes.IndexByte(data[j:], '\n') >= 0
					switch {
					case crossed && len(data) > maxRecordBytes:
						return d.stray(data, open, field, fmt.Sprintf("within %d bytes (max_record_bytes)", maxRecordBytes))
					case atEOF:
						return d.stray(data, open, field, "before the end of the input")
					}
					return 0, nil, nil
				}
				k += j
				crossed = crossed || bytes.IndexByte(data[j:k], '\n') >= 0
				if crossed && k >= maxRecordBytes {
					return d.stray(data, open, field, fmt.Sprintf("within %d bytes (max_record_bytes)", maxRecordBytes))
				}
				switch {
				case k+1 < len(data) && data[k+1] == q:
					j = k + 2 // a doubled quote
					continue
				case k+1 == len(data) && !atEOF:
					return 0, nil, nil // a doubled quote, or the end?
				}
				end = k
				break
			}
			if crossed {
				// A quote that closes on a later line must end its field:
				// otherwise it more likely opens a field of its own line,
				// and the quote this field began with is a stray one.
				switch n := end + 1; {
				case n == len(data), data[n] == delim, data[n] == '\n':
				case data[n] == '\r' && n+1 == len(data) && !atEOF:
					return 0, nil, nil
				case data[n] == '\r' && (n+1 == len(data) || data[n+1] == '\n'):
				default:
					return d.stray(data, open, field, fmt.Sprintf("on its line (the quote on a later line is followed by %q, not a delimiter or a line break)", data[n:n+1]))
				}
			}
			i, fieldStart = end+1, false
			continue
		}
		switch c {
		case '\n':
			return i + 1, dropCR(data[:i]), nil
		case delim:
			field++
		}
		fieldStart = c == delim
		i++
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// stray returns the bad record of a quote at data[open], in field number
// field, that does not close as it should: the record up to the end of
// the line where the quote opened.
func (d *Decoder) stray(data []byte, open, field int, why string) (int, []byte, error) {
	adv := len(data)
	if nl := bytes.IndexByte(data[open:], '\n'); nl >= 0 {
		adv = open + nl + 1
	}
	tok := data[:adv]
	if n := len(tok); n > 0 && tok[n-1] == '\n' {
		tok = tok[:n-1]
	}
	err := fmt.Errorf("quoted field starting at byte %d has no closing quote %s: taken for a stray quote, the record ends with its line", open, why)
	if field < d.schema.Len() {
		return adv, dropCR(tok), &connector.DecodeError{Column: d.schema.Fields[field].Name, Err: err}
	}
	return adv, dropCR(tok), &connector.DecodeError{Err: fmt.Errorf("field %d: %w", field+1, err)}
}

func dropCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
