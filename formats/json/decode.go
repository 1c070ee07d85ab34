package json

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Codec converts between rows of one schema and JSON objects. Decoding is
// not safe for concurrent use (it keeps scratch state); AppendObject is.
type Codec struct {
	schema row.Schema
	opts   Options
	// keys holds each column's `"name":` already escaped.
	keys  [][]byte
	exact map[string]int
	lower map[string]int
	// seen and lowerBuf are decoding scratch, reused across records.
	seen     []bool
	lowerBuf []byte
	// use is the projection (the decoder's SetColumns or DecodeColumns):
	// a member of a column not used is skipped, its JSON checked but its
	// value not read. nil uses every column.
	use []bool
	// outAt, when set (DecodeColumns), is where each column goes in the
	// row, -1 for nowhere; copies holds the (from, to) places of a column
	// that comes twice.
	outAt  []int
	copies [][2]int
	// paths, when set (DecodePaths), has the tree of the fields decoded
	// into columns of their own for each column with any (paths.go);
	// pathCount is their number, pathAt the row column of the first
	// (after the schema's and the gap DecodePaths was given), pathRow
	// the row being decoded.
	paths     []*pathNode
	pathCount int
	pathAt    int
	pathRow   row.Row
	// fast is the one-pass decode of the schema and the projection
	// (fast.go), nil for none; arena and ts are its scratch: the
	// strings it unescapes, and the timestamps' last minute.
	fast  *fastPlan
	arena []byte
	ts    row.TimestampReader
}

// NewCodec returns a codec for schema.
func NewCodec(schema row.Schema, opts Options) (*Codec, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if schema.Len() == 0 {
		return nil, errors.New("json: the schema has no columns")
	}
	c := &Codec{
		schema: schema,
		opts:   opts,
		exact:  make(map[string]int, schema.Len()),
		lower:  make(map[string]int, schema.Len()),
		seen:   make([]bool, schema.Len()),
	}
	for i, f := range schema.Fields {
		key := appendString(nil, f.Name)
		c.keys = append(c.keys, append(key, ':'))
		if _, dup := c.exact[f.Name]; !dup {
			c.exact[f.Name] = i
		}
		if _, dup := c.lower[strings.ToLower(f.Name)]; !dup {
			c.lower[strings.ToLower(f.Name)] = i
		}
	}
	return c, nil
}

// Width is the number of columns.
func (c *Codec) Width() int { return c.schema.Len() }

// column finds the column a member name maps to, or -1. hint is the column
// expected next: members usually come in schema order, and a string
// comparison is cheaper than a map lookup.
func (c *Codec) column(key string, hint int) int {
	if hint < len(c.schema.Fields) && c.schema.Fields[hint].Name == key {
		return hint
	}
	if i, ok := c.exact[key]; ok {
		return i
	}
	c.lowerBuf = c.lowerBuf[:0]
	for i := 0; i < len(key); i++ {
		ch := key[i]
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		} else if ch >= 0x80 {
			// Rare: non-ASCII names take the allocating path.
			if i, ok := c.lower[strings.ToLower(key)]; ok {
				return i
			}
			return -1
		}
		c.lowerBuf = append(c.lowerBuf, ch)
	}
	if i, ok := c.lower[string(c.lowerBuf)]; ok {
		return i
	}
	return -1
}

// DecodeObject reads the JSON object at s[i] (after blanks) into r, which
// has one value per column, and returns the offset after the object.
// Errors are *connector.DecodeError: with the column for a value that does
// not fit, with a *SyntaxError for malformed JSON.
func (c *Codec) DecodeObject(s string, i int, r row.Row) (int, error) {
	i = SkipSpace(s, i)
	if i >= len(s) || s[i] != '{' {
		if _, err := skipValue(s, i, 0); err != nil && i < len(s) {
			// Not JSON at all (a plain-text message on a JSON topic):
			// what its first byte would start says nothing useful.
			return i, &connector.DecodeError{Err: syntaxErr(s, i, "not a JSON value; expected a JSON object")}
		}
		return i, &connector.DecodeError{Err: syntaxErr(s, i, "expected a JSON object, got %s", describe(s, i))}
	}
	clear(c.seen)
	if c.paths != nil {
		c.clearPaths(r)
		c.pathRow = r
		defer func() { c.pathRow = nil }()
	}
	end, err := c.readMembers(s, i, func(col int, val row.Value) error {
		r[c.at(col)] = val
		c.seen[col] = true
		return nil
	})
	if err != nil {
		return end, err
	}
	for col, seen := range c.seen {
		if c.paths != nil && c.paths[col] != nil {
			if err := c.checkPathColumn(col, seen, r); err != nil {
				return end, err
			}
		}
		if c.use != nil && !c.use[col] {
			// Not read, so neither missing nor NULL (Flink's projection
			// pushdown): NULL in a row of every column.
			if c.outAt == nil {
				r[col] = row.NullValue
			}
			continue
		}
		f, at := &c.schema.Fields[col], c.at(col)
		switch {
		case !seen && c.opts.FailOnMissingField:
			return end, &connector.DecodeError{Column: f.Name, Err: errors.New("missing from the record (fail_on_missing_field is set)")}
		case !seen:
			r[at] = row.NullValue
		}
		if f.Type.NotNull && r[at].IsNull() {
			return end, &connector.DecodeError{Column: f.Name, Err: fmt.Errorf("null or missing, but the column is %s", f.Type)}
		}
	}
	for _, cp := range c.copies {
		r[cp[1]] = r[cp[0]]
	}
	return end, nil
}

// at is column col's place in a decoded row.
func (c *Codec) at(col int) int {
	if c.outAt != nil {
		return c.outAt[col]
	}
	return col
}

// readMembers walks the JSON object at s[i], which must start there,
// decoding each member that names a column and handing it to set; other
// members are skipped. Errors are *connector.DecodeError, with the column
// for a value that does not fit (set's errors included).
func (c *Codec) readMembers(s string, i int, set func(col int, val row.Value) error) (int, error) {
	next := 0
	var colErr error
	end, err := walkObject(s, i, func(key string, _, v int) (int, error) {
		col := c.column(key, next)
		if col < 0 {
			return skipValue(s, v, 1)
		}
		next = col + 1
		if c.pathRow != nil && c.paths[col] != nil && c.use != nil && !c.use[col] {
			end, err := c.readPaths(s, v, col)
			if err != nil {
				if _, ok := err.(*SyntaxError); !ok {
					colErr = err
				}
			}
			return end, err
		}
		if c.use != nil && !c.use[col] {
			return skipValue(s, v, 1)
		}
		val, end, err := c.decodeColumn(s, v, col)
		if err != nil {
			if _, ok := err.(*SyntaxError); ok {
				return end, err
			}
			if !c.opts.IgnoreParseErrors || c.schema.Fields[col].Type.NotNull {
				colErr = err
				return end, err
			}
			val = row.NullValue // Flink's ignore-parse-errors
			// The error may have stopped inside a nested value: go on
			// after all of it.
			if end, err = skipValue(s, v, 1); err != nil {
				return end, err
			}
		}
		if err := set(col, val); err != nil {
			colErr = err
			return end, err
		}
		return end, nil
	})
	if err != nil {
		if colErr != nil {
			return end, &connector.DecodeError{Column: c.schema.Fields[next-1].Name, Err: colErr}
		}
		return end, &connector.DecodeError{Err: err}
	}
	return end, nil
}

// decodeValue reads the value at s[i] into the type of column col.
func (c *Codec) decodeValue(s string, i, col int) (row.Value, int, error) {
	return decodeAs(s, i, c.schema.Fields[col].Type)
}

// decodeAs reads the value at s[i] as a value of type t.
func decodeAs(s string, i int, t row.Type) (row.Value, int, error) {
	if i >= len(s) {
		return row.NullValue, i, syntaxErr(s, i, "expected a value, got the end of the record")
	}
	switch ch := s[i]; {
	case ch == '"':
		str, end, err := ReadString(s, i)
		if err != nil {
			return row.NullValue, end, err
		}
		v, err := fromString(str, t)
		return v, end, err
	case ch == '-' || (ch >= '0' && ch <= '9'):
		lit, isFloat, end, err := readNumber(s, i)
		if err != nil {
			return row.NullValue, end, err
		}
		v, err := fromNumber(lit, isFloat, t)
		return v, end, err
	case ch == 'n':
		end, err := readLiteral(s, i, "null")
		return row.NullValue, end, err
	case ch == 't' || ch == 'f':
		word := "true"
		if ch == 'f' {
			word = "false"
		}
		end, err := readLiteral(s, i, word)
		if err != nil {
			return row.NullValue, end, err
		}
		switch t.ID {
		case row.Boolean:
			return row.BoolValue(ch == 't'), end, nil
		case row.String:
			return row.StringValue(word), end, nil
		}
		return row.NullValue, end, mismatch(word, t, "a boolean")
	case (ch == '{' || ch == '[') && t.ID.Nested():
		return decodeNested(s, i, t)
	case ch == '{' || ch == '[':
		end, err := skipValue(s, i, 1)
		if err != nil {
			return row.NullValue, end, err
		}
		if t.ID == row.String {
			// Flink puts a nested value into a STRING column as its JSON
			// text; the sidecar use case extracts from it with JSON_VALUE.
			return row.StringValue(s[i:end]), end, nil
		}
		return row.NullValue, end, mismatch(s[i:end], t, describe(s, i))
	}
	return row.NullValue, i, syntaxErr(s, i, "expected a value, got %s", describe(s, i))
}

func mismatch(text string, t row.Type, what string) error {
	return &row.ParseError{Text: text, Type: t, Err: fmt.Errorf("%s does not fit the column", what)}
}

func fromString(str string, t row.Type) (row.Value, error) {
	switch t.ID {
	case row.String:
		return row.StringValue(str), nil
	case row.Bytes:
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			if b, err2 := base64.RawStdEncoding.DecodeString(str); err2 == nil {
				return row.BytesValue(b), nil
			}
			return row.NullValue, &row.ParseError{Text: str, Type: t, Err: errors.New("not base64")}
		}
		return row.BytesValue(b), nil
	case row.Date, row.Timestamp, row.TimestampLTZ:
		if v, ok, err := fromSignedYear(str, t); ok {
			return v, err
		}
	}
	return row.ParseText(str, t)
}

func fromNumber(lit string, isFloat bool, t row.Type) (row.Value, error) {
	switch t.ID {
	case row.Int, row.BigInt, row.Timestamp, row.TimestampLTZ:
		n, err := wholeNumber(lit, isFloat, t)
		if err != nil {
			return row.NullValue, err
		}
		switch t.ID {
		case row.Int:
			return row.IntValue(int32(n)), nil
		case row.BigInt:
			return row.BigIntValue(n), nil
		}
		// Epoch milliseconds, as Kafka and most producers stamp events.
		if n > math.MaxInt64/1000 || n < math.MinInt64/1000 || !row.InTimestampRange(n*1000) {
			return row.NullValue, &row.ParseError{Text: lit, Type: t, Err: errors.New("epoch milliseconds out of range (years 0000 to 9999)")}
		}
		if t.ID == row.TimestampLTZ {
			return row.TimestampLTZValue(n * 1000), nil
		}
		return row.TimestampValue(n * 1000), nil
	case row.Float, row.Double, row.Boolean:
		return row.ParseText(lit, t)
	case row.Decimal:
		plain, ok := lit, true
		if isFloat {
			plain, ok = plainDecimal(lit)
		}
		if !ok {
			return row.NullValue, &row.ParseError{Text: lit, Type: t, Err: errors.New("out of range")}
		}
		v, err := row.ParseText(plain, t)
		if pe := (*row.ParseError)(nil); errors.As(err, &pe) {
			pe.Text = lit // the number as written, not its expansion
		}
		return v, err
	case row.Date:
		// Days since 1970-01-01: Debezium's and Avro's form of a DATE.
		n, err := wholeNumber(lit, isFloat, row.Of(row.Int))
		if pe := (*row.ParseError)(nil); errors.As(err, &pe) {
			pe.Type = t
			return row.NullValue, pe
		}
		if !row.InDateRange(n) {
			return row.NullValue, &row.ParseError{Text: lit, Type: t, Err: errors.New("days out of range (years 0000 to 9999)")}
		}
		return row.DateValue(int32(n)), nil
	case row.String:
		return row.StringValue(lit), nil
	}
	return row.NullValue, mismatch(lit, t, "a number")
}

// wholeNumber reads an integer literal into the range of t: a fraction is
// an error (Flink would truncate 1.5 to 1 silently), an integral value
// written with a fraction or an exponent (1.0, 1e3) is accepted.
func wholeNumber(lit string, isFloat bool, t row.Type) (int64, error) {
	bits := t.IntBits() // TINYINT 8, SMALLINT 16, INT 32
	if bits == 0 {
		bits = 64
	}
	if !isFloat {
		n, err := strconv.ParseInt(lit, 10, bits)
		if err != nil {
			return 0, &row.ParseError{Text: lit, Type: t, Err: errors.New("out of range")}
		}
		return n, nil
	}
	plain, ok := plainDecimal(lit)
	if !ok {
		return 0, &row.ParseError{Text: lit, Type: t, Err: errors.New("out of range")}
	}
	whole, frac, _ := strings.Cut(plain, ".")
	if strings.Trim(frac, "0") != "" {
		return 0, &row.ParseError{Text: lit, Type: t, Err: errors.New("not a whole number")}
	}
	n, err := strconv.ParseInt(whole, 10, bits)
	if err != nil {
		return 0, &row.ParseError{Text: lit, Type: t, Err: errors.New("out of range")}
	}
	return n, nil
}

// plainDecimal rewrites a JSON number with an exponent (1.25e2) as plain
// digits (125.00) so that it converts exactly. Exponents beyond what any
// etld number holds report false.
func plainDecimal(lit string) (string, bool) {
	mant, expText, hasExp := strings.Cut(strings.ToLower(lit), "e")
	if !hasExp {
		return lit, true
	}
	exp, err := strconv.Atoi(expText)
	if err != nil || exp > 400 || exp < -400 {
		return "", false
	}
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	point := len(whole) + exp
	switch {
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits, true
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)), true
	}
	return sign + digits[:point] + "." + digits[point:], true
}
