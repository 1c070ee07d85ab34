package expr

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/etld/etld/internal/javautf8"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// JSON_OBJECT and JSON_ARRAY build JSON text as Flink does (Jackson
// nodes, written compactly): STRING values become JSON strings, numbers
// and BOOLEAN stay themselves, BYTES become base64 strings, times their
// print text ('2024-01-02T10:30:45.123'), composite values nested JSON
// (jsonWriterOf). A value computed by another JSON_OBJECT or JSON_ARRAY
// call is inserted as JSON, not as a string.
// JSON_OBJECT writes NULL values as null unless ABSENT ON NULL is given;
// JSON_ARRAY leaves them out unless NULL ON NULL is.

func init() {
	register(map[string]*funcDef{
		"JSON_OBJECT": {min: 0, max: -1, build: buildJSONObject},
		"JSON_ARRAY":  {min: 0, max: -1, build: buildJSONArray},
	})
}

// appendJSONString writes s as a JSON string, escaping what Jackson
// escapes: the quote, the backslash and control characters. Invalid UTF-8
// becomes U+FFFD as in the Java string Jackson is given in Flink (one per
// malformed sequence, javautf8).
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, javautf8.Replacement...)
				size = javautf8.MalformedLen(s[i:])
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size - 1
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// jsonWriter appends one non-NULL SQL value as JSON.
type jsonWriter func(dst []byte, v row.Value) ([]byte, error)

// errJSONNullKey is Flink's refusal of a NULL MAP key, which no JSON
// object member can have.
var errJSONNullKey = errors.New("a MAP key is NULL, which JSON cannot hold (Flink: \"Key was null. This is not supported during conversion to JSON.\")")

func jsonWriterFor(n *node) (jsonWriter, error) {
	if call, ok := n.e.(*sql.Call); ok && (strings.EqualFold(call.Name, "JSON_OBJECT") || strings.EqualFold(call.Name, "JSON_ARRAY")) {
		return func(dst []byte, v row.Value) ([]byte, error) { return append(dst, v.Str()...), nil }, nil
	}
	w, err := jsonWriterOf(n.t)
	if err != nil {
		return nil, errAt(n.e.Pos(), "%v", err)
	}
	return w, nil
}

// jsonWriterOf writes a value of type t as Flink's JsonGenerateUtils
// makes its node: an ARRAY a JSON array, a ROW an object of its field
// names, a MAP (of a string key type only) an object, to any depth, NULL
// items as null.
func jsonWriterOf(t row.Type) (jsonWriter, error) {
	switch t.ID {
	case row.String:
		return func(dst []byte, v row.Value) ([]byte, error) { return appendJSONString(dst, v.Str()), nil }, nil
	case row.Boolean:
		return func(dst []byte, v row.Value) ([]byte, error) { return strconv.AppendBool(dst, v.Bool()), nil }, nil
	case row.Bytes:
		return func(dst []byte, v row.Value) ([]byte, error) {
			return appendJSONString(dst, base64.StdEncoding.EncodeToString([]byte(v.Str()))), nil
		}, nil
	case row.Float, row.Double:
		return func(dst []byte, v row.Value) ([]byte, error) {
			// Jackson writes NaN and the infinities as strings.
			f := toFloat(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return appendJSONString(dst, v.String()), nil
			}
			return v.AppendPrint(dst), nil
		}, nil
	case row.Timestamp:
		return func(dst []byte, v row.Value) ([]byte, error) {
			return appendJSONString(dst, isoLocalDateTime(v.String())), nil
		}, nil
	case row.Array:
		return jsonListWriter(t.Elem())
	case row.Struct:
		return jsonRowWriter(t)
	case row.Map:
		if t.Key().ID != row.String {
			return nil, fmt.Errorf("cannot write %s as JSON: the key type must be a character string, as in Flink", typeName(t))
		}
		return jsonMapWriter(t.Elem())
	}
	if t.ID.Numeric() {
		return func(dst []byte, v row.Value) ([]byte, error) { return v.AppendPrint(dst), nil }, nil
	}
	return func(dst []byte, v row.Value) ([]byte, error) { return appendJSONString(dst, v.String()), nil }, nil
}

// appendJSONItem writes one item of a composite value, NULL as null.
func appendJSONItem(dst []byte, w jsonWriter, v row.Value) ([]byte, error) {
	if v.IsNull() {
		return append(dst, "null"...), nil
	}
	return w(dst, v)
}

func jsonListWriter(elem row.Type) (jsonWriter, error) {
	w, err := jsonWriterOf(elem)
	if err != nil {
		return nil, err
	}
	return func(dst []byte, v row.Value) ([]byte, error) {
		var err error
		dst = append(dst, '[')
		for i, x := range v.Items() {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendJSONItem(dst, w, x); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}, nil
}

func jsonRowWriter(t row.Type) (jsonWriter, error) {
	fields := t.Fields()
	fieldNames := make([]string, len(fields))
	for i, f := range fields {
		fieldNames[i] = f.Name
	}
	order := javaOrder(fieldNames) // Flink writes the fields by name
	names := make([][]byte, len(fields))
	ws := make([]jsonWriter, len(fields))
	for i, f := range fields {
		names[i] = append(appendJSONString(nil, f.Name), ':')
		w, err := jsonWriterOf(f.Type)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	return func(dst []byte, v row.Value) ([]byte, error) {
		var err error
		items := v.ItemSlice()
		dst = append(dst, '{')
		for n, i := range order {
			if i >= len(items) {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, names[i]...)
			if dst, err = appendJSONItem(dst, ws[i], items[i]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}, nil
}

func jsonMapWriter(value row.Type) (jsonWriter, error) {
	w, err := jsonWriterOf(value)
	if err != nil {
		return nil, err
	}
	return func(dst []byte, v row.Value) ([]byte, error) {
		var err error
		items := v.ItemSlice()
		keys := make([]string, 0, len(items)/2)
		for i := 0; i+1 < len(items); i += 2 {
			if items[i].IsNull() {
				return dst, errJSONNullKey
			}
			keys = append(keys, items[i].Str())
		}
		dst = append(dst, '{')
		for n, k := range javaOrder(keys) { // by key, as Flink writes them
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendJSONString(dst, keys[k]), ':')
			if dst, err = appendJSONItem(dst, w, items[2*k+1]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}, nil
}

// jsonValueWriters compiles the values of a construction call; they are
// evaluated every row, NULL included.
func jsonValueWriters(args []*node) ([]evalFn, []jsonWriter, error) {
	evs := make([]evalFn, len(args))
	ws := make([]jsonWriter, len(args))
	for i, a := range args {
		w, err := jsonWriterFor(a)
		if err != nil {
			return nil, nil, err
		}
		evs[i], ws[i] = a.eval, w
	}
	return evs, ws, nil
}

// buildJSONObject is JSON_OBJECT([KEY] k VALUE v, ... [{NULL | ABSENT} ON
// NULL]). Keys are constant non-NULL strings, as Flink requires; a key
// written twice keeps its last value, and the members are written sorted
// by name, as Flink's Jackson mapper (ORDER_MAP_ENTRIES_BY_KEYS) does.
func buildJSONObject(c *compiler, e *sql.Call, args []*node) (*node, error) {
	absent := e.JSON != nil && e.JSON.OnNull == "ABSENT"
	var keys []string
	var vals []*node
	at := map[string]int{}
	for i := 0; i+1 < len(args); i += 2 {
		k := args[i]
		if !k.konst || k.val.IsNull() || k.t.ID != row.String {
			return nil, errAt(k.e.Pos(), "JSON_OBJECT keys must be non-NULL string constants, not %s", exprString(k.e)())
		}
		if j, ok := at[k.val.Str()]; ok {
			vals[j] = args[i+1]
			continue
		}
		at[k.val.Str()] = len(keys)
		keys = append(keys, k.val.Str())
		vals = append(vals, args[i+1])
	}
	// Flink writes the members sorted by name (its mapper orders map
	// entries by key), whatever order the call gives them.
	order := javaOrder(keys)
	sortedKeys, sortedVals := make([]string, len(keys)), make([]*node, len(keys))
	for n, i := range order {
		sortedKeys[n], sortedVals[n] = keys[i], vals[i]
	}
	keys, vals = sortedKeys, sortedVals
	quoted := make([][]byte, len(keys))
	for i, k := range keys {
		quoted[i] = append(appendJSONString(nil, k), ':')
	}
	evs, ws, err := jsonValueWriters(vals)
	if err != nil {
		return nil, err
	}
	text := exprString(e)
	f := func(r row.Row) (row.Value, error) {
		buf := make([]byte, 0, 64)
		buf = append(buf, '{')
		first := true
		for i, ev := range evs {
			v, err := ev(r)
			if err != nil {
				return row.NullValue, err
			}
			if v.IsNull() && absent {
				continue
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(buf, quoted[i]...)
			if buf, err = appendJSONItem(buf, ws[i], v); err != nil {
				return row.NullValue, evalErr(text, err)
			}
		}
		buf = append(buf, '}')
		return row.StringValue(string(buf)), nil
	}
	return c.finish(e, row.Type{ID: row.String, NotNull: true}, f, args...)
}

// buildJSONArray is JSON_ARRAY(v, ... [{NULL | ABSENT} ON NULL]).
func buildJSONArray(c *compiler, e *sql.Call, args []*node) (*node, error) {
	keepNull := e.JSON != nil && e.JSON.OnNull == "NULL"
	evs, ws, err := jsonValueWriters(args)
	if err != nil {
		return nil, err
	}
	text := exprString(e)
	f := func(r row.Row) (row.Value, error) {
		buf := make([]byte, 0, 64)
		buf = append(buf, '[')
		first := true
		for i, ev := range evs {
			v, err := ev(r)
			if err != nil {
				return row.NullValue, err
			}
			if v.IsNull() && !keepNull {
				continue
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			if buf, err = appendJSONItem(buf, ws[i], v); err != nil {
				return row.NullValue, evalErr(text, err)
			}
		}
		buf = append(buf, ']')
		return row.StringValue(string(buf)), nil
	}
	return c.finish(e, row.Type{ID: row.String, NotNull: true}, f, args...)
}

// isoLocalDateTime turns LocalDateTime.toString's text (HH:mm when the
// seconds are zero, the fraction in groups of three digits) into what
// Java's ISO_LOCAL_DATE_TIME formatter writes, the text Flink's JSON
// functions give a TIMESTAMP: the seconds always, the fraction without
// its trailing zeros (2024-01-01T10:01:00, 1969-12-31T23:59:59.5).
func isoLocalDateTime(s string) string {
	t := strings.LastIndexByte(s, 'T')
	if t < 0 {
		return s
	}
	if len(s)-t-1 == len("HH:mm") {
		return s + ":00"
	}
	if strings.IndexByte(s[t:], '.') >= 0 {
		return strings.TrimRight(s, "0")
	}
	return s
}
