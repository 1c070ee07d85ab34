package csv

import "bytes"

// Split is a bufio.SplitFunc returning one CSV record at a time, without
// its line break (\n or \r\n). Line breaks inside quoted fields belong to
// the record. At the end of the input an unterminated record, even one
// with an open quote, is returned as it is, so that Decode reports what is
// wrong with it rather than the scanner failing without a position.
func (d *Decoder) Split(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	nl := bytes.IndexByte(data, '\n')
	if d.cfg.quote == 0 || (nl >= 0 && bytes.IndexByte(data[:nl], d.cfg.quote) < 0) {
		if nl >= 0 {
			return nl + 1, dropCR(data[:nl]), nil
		}
	} else if nl >= 0 {
		if end := d.recordEnd(data); end >= 0 {
			return end + 1, dropCR(data[:end]), nil
		}
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// recordEnd returns the offset of the line feed that ends the first record
// of data, or -1 when data holds no complete record yet. A quote opens a
// quoted field only at the start of a field, as Decode reads it.
func (d *Decoder) recordEnd(data []byte) int {
	q, delim := d.cfg.quote, d.cfg.delim
	fieldStart, inQuote := true, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inQuote {
			if c == q {
				if i+1 < len(data) && data[i+1] == q {
					i++
					continue
				}
				inQuote = false
			}
			continue
		}
		switch {
		case c == '\n':
			return i
		case c == q && fieldStart:
			inQuote, fieldStart = true, false
			continue
		}
		fieldStart = c == delim
	}
	return -1
}

func dropCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
