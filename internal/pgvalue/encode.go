// Package pgvalue is what the PostgreSQL connectors share about values
// and column types: a value as the text PostgreSQL reads for a column
// (COPY's text format and statement parameters), a value read back from
// PostgreSQL's text output (COPY TO and the logical replication stream's
// tuples), the columns of a table as the catalog describes them, which
// etld types a column takes and gives, and the type create_table makes.
//
// Text is the one form for every type: PostgreSQL parses it with the
// column type's own input function, so a DECIMAL's digits, a
// timestamp's microseconds and an array's elements arrive exact, and the
// sink needs no binary codec per column type. The sessions run with the
// settings of internal/pgconf (TimeZone UTC, DateStyle ISO), which the
// text forms here assume.
package pgvalue

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
)

// Target says how a column takes a value's text.
type Target uint8

const (
	// Scalar: the value's own text (a number, a timestamp, a string).
	Scalar Target = iota
	// JSON: a json or jsonb column: ARRAY, MAP and ROW as JSON, a STRING
	// as the JSON text it holds, other values as JSON scalars.
	JSON
	// PgArray: a PostgreSQL array column ('{1,2,NULL}').
	PgArray
)

// TargetOf is how column c takes values.
func TargetOf(c Column) Target {
	switch {
	case c.Array:
		return PgArray
	case c.Base == "json" || c.Base == "jsonb":
		return JSON
	}
	return Scalar
}

// errNUL is the error for a string with a NUL character, which no
// PostgreSQL text value holds.
var errNUL = errors.New("a string holds a NUL character (0x00), which PostgreSQL text cannot hold")

// AppendText appends v, of type t, as PostgreSQL's input text for a
// column that takes it as target says. v must not be NULL (NULL is no
// text: COPY writes \N, a parameter is absent).
func AppendText(dst []byte, v row.Value, t row.Type, target Target) ([]byte, error) {
	switch target {
	case JSON:
		if v.Type() == row.String {
			return append(dst, v.Str()...), nil
		}
		return AppendJSON(dst, v, t)
	case PgArray:
		if v.Type() != row.Array {
			return dst, fmt.Errorf("%s is not an ARRAY for an array column", t)
		}
		return appendArray(dst, v, t.Elem())
	}
	return appendScalar(dst, v, t)
}

// appendScalar writes a value that is not nested, or a nested one as
// JSON (into a text column).
func appendScalar(dst []byte, v row.Value, t row.Type) ([]byte, error) {
	switch v.Type() {
	case row.Boolean:
		if v.Bool() {
			return append(dst, 't'), nil
		}
		return append(dst, 'f'), nil
	case row.Int, row.BigInt:
		return strconv.AppendInt(dst, v.Int64(), 10), nil
	case row.Float, row.Double:
		bits := 64
		if v.Type() == row.Float {
			bits = 32
		}
		f := v.Float64()
		switch {
		case math.IsNaN(f):
			return append(dst, "NaN"...), nil
		case math.IsInf(f, 1):
			return append(dst, "Infinity"...), nil
		case math.IsInf(f, -1):
			return append(dst, "-Infinity"...), nil
		}
		return strconv.AppendFloat(dst, f, 'g', -1, bits), nil
	case row.Decimal:
		return row.AppendDecimal(dst, v, true), nil
	case row.String:
		if strings.IndexByte(v.Str(), 0) >= 0 {
			return dst, errNUL
		}
		return append(dst, v.Str()...), nil
	case row.Bytes:
		dst = append(dst, `\x`...)
		return hex.AppendEncode(dst, []byte(v.Str())), nil
	case row.Date:
		return appendDate(dst, v.Time()), nil
	case row.Time:
		return row.AppendTimeTrimmed(dst, v), nil
	case row.Timestamp:
		return appendTimestamp(dst, v.Micros()), nil
	case row.TimestampLTZ:
		dst = appendTimestamp(dst, v.Micros())
		if n := len(dst); n > 3 && string(dst[n-3:]) == " BC" {
			// The zone goes before the era: 0044-03-15 12:00:00+00 BC.
			return append(dst[:n-3], "+00 BC"...), nil
		}
		return append(dst, "+00"...), nil
	case row.Array, row.Map, row.Struct:
		return AppendJSON(dst, v, t)
	}
	return dst, fmt.Errorf("no text form for %s", v.Type())
}

// appendDate writes YYYY-MM-DD, with BC for years before 1 (PostgreSQL
// has no year 0: year 0 is 1 BC).
func appendDate(dst []byte, d time.Time) []byte {
	y, m, day := d.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = fmt.Appendf(dst, "%04d-%02d-%02d", y, int(m), day)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendTimestamp writes YYYY-MM-DD HH:MM:SS.ffffff (with BC before year
// 1): a timestamp's microseconds, all of PostgreSQL's precision.
func appendTimestamp(dst []byte, micros int64) []byte {
	t := time.UnixMicro(micros).UTC()
	if y := t.Year(); y >= 1 && y <= 9999 {
		return row.AppendText(dst, row.TimestampValue(micros), row.Type{ID: row.Timestamp, Precision: 6})
	}
	dst = appendDate(dst, t)
	bc := len(dst) > 3 && string(dst[len(dst)-3:]) == " BC"
	if bc {
		dst = dst[:len(dst)-3]
	}
	dst = fmt.Appendf(dst, " %02d:%02d:%02d.%06d", t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendArray writes an ARRAY as a PostgreSQL array literal: every
// element in double quotes (a backslash and a double quote escaped),
// NULL bare. A nested ARRAY element is a sub-array: PostgreSQL's arrays
// are rectangular, and it refuses a ragged one.
func appendArray(dst []byte, v row.Value, elem row.Type) ([]byte, error) {
	dst = append(dst, '{')
	var buf []byte
	for i, x := range v.Items() {
		if i > 0 {
			dst = append(dst, ',')
		}
		if x.IsNull() {
			dst = append(dst, "NULL"...)
			continue
		}
		if x.Type() == row.Array {
			var err error
			if dst, err = appendArray(dst, x, elem.Elem()); err != nil {
				return dst, err
			}
			continue
		}
		var err error
		buf, err = appendScalar(buf[:0], x, elem)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '"')
		for _, c := range buf {
			if c == '"' || c == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
		dst = append(dst, '"')
	}
	return append(dst, '}'), nil
}

// AppendCopy appends the text of v as a field of COPY's text format:
// backslash, tab, newline and carriage return escaped.
func AppendCopy(dst, text []byte) []byte {
	for _, c := range text {
		switch c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendJSON writes v as JSON: an ARRAY as an array, a ROW as an object
// of its field names, a MAP as an object (keys as their text), numbers
// and booleans bare, every other value as a string of its text, NULL as
// null.
func AppendJSON(dst []byte, v row.Value, t row.Type) ([]byte, error) {
	var err error
	switch v.Type() {
	case row.Null:
		return append(dst, "null"...), nil
	case row.Boolean, row.Int, row.BigInt, row.Decimal:
		return appendScalar(dst, v, t)
	case row.Float, row.Double:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// JSON has no such number: its text, as a string.
			s, _ := appendScalar(nil, v, t)
			return appendJSONString(dst, string(s)), nil
		}
		return appendScalar(dst, v, t)
	case row.Array:
		dst = append(dst, '[')
		for i, x := range v.Items() {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = AppendJSON(dst, x, t.Elem()); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case row.Struct:
		fields := t.Fields()
		dst = append(dst, '{')
		for i, x := range v.Items() {
			if i > 0 {
				dst = append(dst, ',')
			}
			name := fmt.Sprintf("f%d", i)
			ft := row.Of(x.Type())
			if i < len(fields) {
				name, ft = fields[i].Name, fields[i].Type
			}
			dst = appendJSONString(dst, name)
			dst = append(dst, ':')
			if dst, err = AppendJSON(dst, x, ft); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case row.Map:
		dst = append(dst, '{')
		for i, x := range v.Items() {
			if i%2 == 1 {
				dst = append(dst, ':')
				if dst, err = AppendJSON(dst, x, t.Elem()); err != nil {
					return dst, err
				}
				continue
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if x.IsNull() {
				return dst, fmt.Errorf("a MAP with a NULL key has no JSON form")
			}
			key, err := appendScalar(nil, x, t.Key())
			if err != nil {
				return dst, err
			}
			dst = appendJSONString(dst, string(key))
		}
		return append(dst, '}'), nil
	}
	s, err := appendScalar(nil, v, t)
	if err != nil {
		return dst, err
	}
	return appendJSONString(dst, string(s)), nil
}

// appendJSONString writes s as a JSON string; PostgreSQL refuses \u0000
// in jsonb, and invalid UTF-8 is written as U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = fmt.Appendf(dst, `\u%04x`, c)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, r)
		i += size
	}
	return append(dst, '"')
}
