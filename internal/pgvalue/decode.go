package pgvalue

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// Parse reads s, PostgreSQL's text output of a value of column c (in the
// session settings of internal/pgconf), as the etld type t, which Gives
// allows for c.
func Parse(s string, t row.Type, c Column) (row.Value, error) {
	switch t.ID {
	case row.String:
		return row.StringValue(s), nil
	case row.Array:
		if !c.Array {
			return fromJSON([]byte(s), t)
		}
		return parseArray(s, t, c)
	case row.Map, row.Struct:
		return fromJSON([]byte(s), t)
	}
	return parseScalar(s, t)
}

// parseScalar reads the text of a value that is not nested.
func parseScalar(s string, t row.Type) (row.Value, error) {
	switch t.ID {
	case row.Bytes:
		hexText, ok := strings.CutPrefix(s, `\x`)
		if !ok {
			return row.NullValue, &row.ParseError{Text: s, Type: t, Err: errors.New(`bytea text without \x (bytea_output must be hex)`)}
		}
		b, err := hex.DecodeString(hexText)
		if err != nil {
			return row.NullValue, &row.ParseError{Text: s, Type: t, Err: err}
		}
		return row.BytesValue(b), nil
	case row.Date:
		body, shift := cutBC(s)
		d, err := time.Parse(time.DateOnly, body)
		if err != nil {
			return row.NullValue, &row.ParseError{Text: s, Type: t, Err: notFinite(s)}
		}
		return row.DateValue(int32(d.AddDate(shift, 0, 0).Unix() / 86400)), nil
	case row.Timestamp, row.TimestampLTZ:
		return parseTimestamp(s, t)
	case row.Decimal:
		if s == "NaN" || strings.HasSuffix(s, "Infinity") {
			return row.NullValue, &row.ParseError{Text: s, Type: t, Err: errors.New("a DECIMAL has no NaN or infinity")}
		}
	}
	return row.ParseText(s, t)
}

// notFinite names PostgreSQL's infinite dates and timestamps, which no
// etld value holds, and its years past 9999 (10000-01-01), which etld's
// texts do not spell.
func notFinite(s string) error {
	if strings.HasSuffix(s, "infinity") {
		return errors.New("etld's dates and timestamps are finite")
	}
	if i := strings.IndexByte(s, '-'); i > 4 && strings.Trim(s[:i], "0123456789") == "" {
		return errors.New("a year past 9999 is out of range (years 0000 to 9999)")
	}
	return nil
}

// cutBC returns s without PostgreSQL's " BC" and with a stand-in year,
// and the years to add to the stand-in's date for the astronomical year
// (1 BC is the year 0000, 2 BC the year -1). The stand-in, 0000 or 0001,
// is a leap year when the BC year is, so that February 29 parses where
// it exists; the shift applies to the wall clock before a zone offset
// does. (Flipping the parsed year after the offset moved the first hours
// of a BC year east of UTC into the year AD, and refused 1 BC's February
// 29, as the year 1 has none.) PostgreSQL's BC years are read whole, as
// Flink's readers take any date, and etld's own PostgreSQL writer writes
// them so.
func cutBC(s string) (string, int) {
	body, bc := strings.CutSuffix(s, " BC")
	if !bc || len(body) < 5 || body[4] != '-' {
		return s, 0
	}
	y, err := strconv.Atoi(body[:4])
	if err != nil || y < 1 {
		return s, 0 // not a date: the parse refuses it
	}
	a := 1 - y // astronomical
	proxy := 1
	if a%4 == 0 && (a%100 != 0 || a%400 == 0) {
		proxy = 0
	}
	return fmt.Sprintf("%04d", proxy) + body[4:], a - proxy
}

// parseTimestamp reads timestamp and timestamptz text: YYYY-MM-DD
// HH:MM:SS[.ffffff], for timestamptz with the session's zone (+00), and
// BC after it.
func parseTimestamp(s string, t row.Type) (row.Value, error) {
	body, shift := cutBC(s)
	offset := 0
	if t.ID == row.TimestampLTZ {
		var ok bool
		body, offset, ok = cutOffset(body)
		if !ok {
			return row.NullValue, &row.ParseError{Text: s, Type: t, Err: notFinite(s)}
		}
	}
	v, err := row.ParseTimestamp(body, t.ID)
	if err != nil {
		return row.NullValue, &row.ParseError{Text: s, Type: t, Err: notFinite(s)}
	}
	wall := v.Micros()
	if shift != 0 {
		wall = time.UnixMicro(wall).UTC().AddDate(shift, 0, 0).UnixMicro()
	}
	micros := wall - int64(offset)*1e6
	if t.ID == row.TimestampLTZ {
		return row.TimestampLTZValue(micros), nil
	}
	return row.TimestampValue(micros), nil
}

// cutOffset removes a zone offset (+00, -05:30, +01:02:03) from the end
// of a timestamptz's text and returns it in seconds east of UTC.
func cutOffset(s string) (string, int, bool) {
	i := strings.LastIndexAny(s, "+-")
	if i < len("2006-01-02 15:04:05") {
		return s, 0, false
	}
	sign := 1
	if s[i] == '-' {
		sign = -1
	}
	secs, mult := 0, 3600
	for _, part := range strings.Split(s[i+1:], ":") {
		if len(part) != 2 || mult == 0 {
			return s, 0, false
		}
		n := int(part[0]-'0')*10 + int(part[1]-'0')
		if part[0] < '0' || part[0] > '9' || part[1] < '0' || part[1] > '9' {
			return s, 0, false
		}
		secs += n * mult
		mult /= 60
	}
	return s[:i], sign * secs, true
}

// parseArray reads an array literal, {1,2,NULL} or {{1,2},{3,4}}, as an
// ARRAY of t's element type; a lower bound other than 1 ([0:1]={...})
// is dropped with it.
func parseArray(s string, t row.Type, c Column) (row.Value, error) {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, '='); i > 0 {
			s = s[i+1:]
		}
	}
	p := arrayParser{s: s}
	v, err := p.array(t, c)
	if err == nil && p.i != len(p.s) {
		err = fmt.Errorf("text after the array's end at byte %d", p.i)
	}
	if err != nil {
		return row.NullValue, &row.ParseError{Text: s, Type: t, Err: err}
	}
	return v, nil
}

type arrayParser struct {
	s string
	i int
}

func (p *arrayParser) array(t row.Type, c Column) (row.Value, error) {
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return row.NullValue, fmt.Errorf("want { at byte %d", p.i)
	}
	p.i++
	elem := t.Elem()
	var out []row.Value
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return row.ArrayValue(nil), nil
	}
	for {
		var v row.Value
		switch {
		case p.i < len(p.s) && p.s[p.i] == '{':
			if elem.ID != row.Array {
				return row.NullValue, fmt.Errorf("a nested array where %s was declared", t)
			}
			var err error
			if v, err = p.array(elem, c); err != nil {
				return row.NullValue, err
			}
		default:
			text, quoted, err := p.element()
			if err != nil {
				return row.NullValue, err
			}
			if !quoted && strings.EqualFold(text, "NULL") {
				v = row.NullValue
				break
			}
			if v, err = Parse(text, elem, Column{Base: c.Base, Category: c.Category}); err != nil {
				return row.NullValue, err
			}
		}
		out = append(out, v)
		if p.i >= len(p.s) {
			return row.NullValue, errors.New("the array is not closed")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return row.ArrayValue(out), nil
		default:
			return row.NullValue, fmt.Errorf("want , or } at byte %d", p.i)
		}
	}
}

// element reads one element's text, unquoting a quoted one.
func (p *arrayParser) element() (string, bool, error) {
	if p.i < len(p.s) && p.s[p.i] == '"' {
		var b strings.Builder
		for p.i++; p.i < len(p.s); p.i++ {
			switch c := p.s[p.i]; c {
			case '\\':
				p.i++
				if p.i < len(p.s) {
					b.WriteByte(p.s[p.i])
				}
			case '"':
				p.i++
				return b.String(), true, nil
			default:
				b.WriteByte(c)
			}
		}
		return "", false, errors.New("a quoted element is not closed")
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != '}' {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i]), false, nil
}

// fromJSON reads a JSON text as a value of type t: an ARRAY from an
// array, a ROW from an object by field name (missing fields NULL), a MAP
// from an object in its order, a STRING from a string's text or any
// other value's JSON, other scalars from their JSON number, boolean or
// string text.
func fromJSON(raw []byte, t row.Type) (row.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return row.NullValue, &row.ParseError{Text: "", Type: t, Err: errors.New("no JSON value")}
	}
	if string(raw) == "null" {
		return row.NullValue, nil
	}
	fail := func(err error) (row.Value, error) {
		return row.NullValue, &row.ParseError{Text: string(raw), Type: t, Err: err}
	}
	switch t.ID {
	case row.Array:
		if raw[0] != '[' {
			return fail(errors.New("not a JSON array"))
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fail(err)
		}
		out := make([]row.Value, len(items))
		for i, it := range items {
			v, err := fromJSON(it, t.Elem())
			if err != nil {
				return row.NullValue, err
			}
			out[i] = v
		}
		return row.ArrayValue(out), nil
	case row.Struct, row.Map:
		keys, vals, err := jsonObject(raw)
		if err != nil {
			return fail(err)
		}
		if t.ID == row.Struct {
			fields := t.Fields()
			out := make([]row.Value, len(fields))
			for i, k := range keys {
				j := t.FieldIndex(k)
				if j < 0 {
					continue
				}
				if out[j], err = fromJSON(vals[i], fields[j].Type); err != nil {
					return row.NullValue, err
				}
			}
			return row.StructValue(out), nil
		}
		mk, mv := make([]row.Value, len(keys)), make([]row.Value, len(keys))
		for i, k := range keys {
			if mk[i], err = parseScalar(k, t.Key()); err != nil {
				return row.NullValue, err
			}
			if mv[i], err = fromJSON(vals[i], t.Elem()); err != nil {
				return row.NullValue, err
			}
		}
		return row.MapValue(mk, mv), nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return fail(err)
		}
	}
	if t.ID == row.String {
		return row.StringValue(text), nil
	}
	return parseScalar(text, t)
}

// jsonObject reads a JSON object's keys and values in order.
func jsonObject(raw []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, nil
}
