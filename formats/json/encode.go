package json

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/etld/etld/internal/javautf8"
	"github.com/etld/etld/pipeline/row"
)

// AppendObject appends r as a JSON object, members in schema order.
func (c *Codec) AppendObject(dst []byte, r row.Row) []byte {
	dst = append(dst, '{')
	for i, v := range r {
		if i >= len(c.keys) {
			break
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c.keys[i]...)
		dst = c.AppendValue(dst, v, c.schema.Fields[i].Type)
	}
	return append(dst, '}')
}

// AppendValue appends v as a JSON value of column type t.
func (c *Codec) AppendValue(dst []byte, v row.Value, t row.Type) []byte {
	switch v.Type() {
	case row.Null:
		return append(dst, "null"...)
	case row.Boolean:
		return strconv.AppendBool(dst, v.Bool())
	case row.Int, row.BigInt:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case row.Float, row.Double:
		f := v.Float64()
		switch {
		case math.IsNaN(f):
			return append(dst, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(dst, `"Infinity"`...)
		case math.IsInf(f, -1):
			return append(dst, `"-Infinity"`...)
		}
		// Java's Double.toString form (1.0E7) is valid JSON and is what
		// Flink writes.
		return row.AppendText(dst, v, t)
	case row.Decimal:
		// Flink hands Jackson a number node of the BigDecimal: by
		// default one with its trailing zeros stripped, written by
		// toString (100.00 as 1E+2); with encode.decimal-as-plain-number
		// the exact value, written by toPlainString (100.00). Both
		// checked on Flink 2.3 (conformance's type-decimal-*-json).
		if c.opts.EncodeDecimalAsPlainNumber {
			return row.AppendDecimal(dst, v, true)
		}
		return row.AppendDecimalStripped(dst, v)
	case row.String:
		return appendString(dst, v.Str())
	case row.Bytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
		return append(dst, '"')
	case row.Date:
		dst = append(dst, '"')
		dst = row.AppendDate(dst, int64(v.Days()))
		return append(dst, '"')
	case row.Timestamp, row.TimestampLTZ:
		dst = append(dst, '"')
		dst = AppendTimestamp(dst, v.Micros(), v.Type() == row.TimestampLTZ, c.opts.iso())
		return append(dst, '"')
	case row.Array, row.Map, row.Struct:
		return c.appendNested(dst, v, t)
	case row.Time:
		// Flink's SQL_TIME_FORMAT: HH:mm:ss and the fraction without its
		// trailing zeros.
		dst = append(dst, '"')
		dst = row.AppendTimeTrimmed(dst, v)
		return append(dst, '"')
	}
	return append(dst, "null"...)
}

// AppendTimestamp writes a timestamp as Flink's json format does: SQL
// (2024-01-02 10:00:00.123) or ISO-8601 (2024-01-02T10:00:00.123) form,
// the fraction with as many digits as it needs and none when zero, and a
// trailing Z for an instant (TIMESTAMP_LTZ); a year past 0000..9999 as
// java.time writes it (+10000-01-01, -0001-12-31), which Flink's json
// reader, and this package's, take back.
func AppendTimestamp(dst []byte, micros int64, instant, iso bool) []byte {
	start := len(dst)
	dst = row.AppendTimestampTrimmed(dst, micros)
	if iso {
		// The date's end: the space is the first after the year's sign.
		dst[start+bytes.IndexByte(dst[start:], ' ')] = 'T'
	}
	if instant {
		dst = append(dst, 'Z')
	}
	return dst
}

// needsEscape marks the ASCII bytes a JSON string cannot hold as they are.
var needsEscape = func() (t [utf8.RuneSelf]bool) {
	for i := range 0x20 {
		t[i] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a quoted JSON string. Invalid UTF-8 becomes
// U+FFFD, one per malformed sequence as Java decodes them (javautf8), as
// in Flink's output; U+2028 and U+2029 are escaped so that the output is
// also valid JavaScript, as encoding/json does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !needsEscape[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, javautf8.Replacement...) // as the character, so that re-encoding is stable
			size = javautf8.MalformedLen(s[i:])
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
