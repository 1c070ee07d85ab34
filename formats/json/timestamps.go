package json

import (
	"errors"
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// decodeColumn reads the value at s[i] into column col, as decodeValue
// does, but first holds a timestamp string to the one form the configured
// standard gives, when the options ask for that.
func (c *Codec) decodeColumn(s string, i, col int) (row.Value, int, error) {
	t := c.schema.Fields[col].Type
	if !c.opts.strictTimestamps || (t.ID != row.Timestamp && t.ID != row.TimestampLTZ) || i >= len(s) || s[i] != '"' {
		return c.decodeValue(s, i, col)
	}
	str, end, err := ReadString(s, i)
	if err != nil {
		return row.NullValue, end, err
	}
	// A year past 0000..9999 as Flink writes it (+10000-01-01 ...): the
	// form is checked, and the text read, at the year 2000.
	text := str
	year, rest, signed := row.SignedYear(str)
	if signed {
		str = rest
	}
	if str, err = c.timestampForm(str, t); err != nil {
		if pe := (*row.ParseError)(nil); errors.As(err, &pe) {
			pe.Text = text
		}
		return row.NullValue, end, err
	}
	v, err := fromString(str, t)
	if signed && err == nil {
		v, err = atYear(v, text, rest, year, t)
	}
	return v, end, err
}

// atYear is row.AtYear with its error a bad value of the text as written.
func atYear(v row.Value, text, rest string, year int, t row.Type) (row.Value, error) {
	v, err := row.AtYear(v, rest, year)
	if err != nil {
		return row.NullValue, &row.ParseError{Text: text, Type: t, Err: err}
	}
	return v, nil
}

// fromSignedYear reads a DATE, TIMESTAMP or TIMESTAMP_LTZ text whose
// year has java.time's sign (+10000-01-01, -0001-12-31), as Flink's json
// reader does (its formats are ISO_LOCAL_DATE's); ok is false for a
// text without one.
func fromSignedYear(str string, t row.Type) (v row.Value, ok bool, err error) {
	year, rest, ok := row.SignedYear(str)
	if !ok {
		return row.NullValue, false, nil
	}
	v, err = row.ParseText(rest, t)
	if err != nil {
		return row.NullValue, true, &row.ParseError{Text: str, Type: t}
	}
	v, err = atYear(v, str, rest, year, t)
	return v, true, err
}

// timestampForm checks that str is a timestamp in the form Flink's json
// format reads under the configured standard: yyyy-MM-dd, then a space
// (sql) or T (iso-8601), HH:mm:ss (the seconds optional in iso-8601), an
// optional fraction of up to 9 digits, and a Z for a TIMESTAMP_LTZ and
// nothing for a TIMESTAMP. It returns str with the seconds iso-8601 may
// leave out.
func (c *Codec) timestampForm(str string, t row.Type) (string, error) {
	iso := c.opts.iso()
	digits := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	noSeconds := false
	ok := func() bool {
		s := str
		if t.ID == row.TimestampLTZ {
			if !strings.HasSuffix(s, "Z") {
				return false
			}
			s = s[:len(s)-1]
		}
		sep := byte(' ')
		if iso {
			sep = 'T'
		}
		if len(s) < 16 || !digits(s[0:4]) || s[4] != '-' || !digits(s[5:7]) || s[7] != '-' || !digits(s[8:10]) ||
			s[10] != sep || !digits(s[11:13]) || s[13] != ':' || !digits(s[14:16]) {
			return false
		}
		s = s[16:]
		if s == "" {
			noSeconds = true
			return iso // ISO_LOCAL_TIME's seconds are optional
		}
		if len(s) < 3 || s[0] != ':' || !digits(s[1:3]) {
			return false
		}
		s = s[3:]
		if s == "" {
			return true
		}
		return s[0] == '.' && len(s) >= 2 && len(s) <= 10 && digits(s[1:])
	}()
	switch {
	case ok && noSeconds:
		return str[:16] + ":00" + str[16:], nil
	case ok:
		return str, nil
	}
	want, other, otherForm := "yyyy-MM-dd HH:mm:ss[.fraction]", "iso-8601", "yyyy-MM-ddTHH:mm:ss"
	if iso {
		want, other, otherForm = "yyyy-MM-ddTHH:mm[:ss[.fraction]]", "sql", "yyyy-MM-dd HH:mm:ss"
	}
	zone := ", without a zone"
	if t.ID == row.TimestampLTZ {
		want, otherForm, zone = want+"Z", otherForm+"Z", ""
	}
	return str, &row.ParseError{Text: str, Type: t, Err: fmt.Errorf("timestamp_format %s reads %s%s (timestamp_format: %s reads %s)",
		c.opts.stdName(), want, zone, other, otherForm)}
}
