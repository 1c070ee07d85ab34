package json

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// Composite columns as Flink's json format has them: an ARRAY is a JSON
// array, a MAP an object whose member names are the keys, a ROW an object
// with a member per field (by name; a missing one is NULL, others are
// skipped).

// decodeNested reads the array or object at s[i] as a value of the
// composite type t.
func decodeNested(s string, i int, t row.Type) (row.Value, int, error) {
	switch {
	case t.ID == row.Array && s[i] == '[':
		var items []row.Value
		end, err := walkArray(s, i, func(v int) (int, error) {
			x, end, err := decodeAs(s, v, t.Elem())
			if err != nil {
				return end, err
			}
			if x.IsNull() && t.Elem().NotNull {
				return end, &row.ParseError{Text: "null", Type: t, Err: fmt.Errorf("element %d is null, but the elements are %s", len(items)+1, t.Elem())}
			}
			items = append(items, x)
			return end, nil
		})
		if err != nil {
			return row.NullValue, end, err
		}
		return row.ArrayValue(items), end, nil
	case t.ID == row.Map && s[i] == '{':
		var keys, vals []row.Value
		end, err := walkObject(s, i, func(key string, _, v int) (int, error) {
			k, err := fromString(key, t.Key())
			if err != nil {
				return v, err
			}
			x, end, err := decodeAs(s, v, t.Elem())
			if err != nil {
				return end, err
			}
			if x.IsNull() && t.Elem().NotNull {
				return end, &row.ParseError{Text: "null", Type: t, Err: fmt.Errorf("the value of %q is null, but the values are %s", key, t.Elem())}
			}
			keys, vals = append(keys, k), append(vals, x)
			return end, nil
		})
		if err != nil {
			return row.NullValue, end, err
		}
		return row.MapValue(keys, vals), end, nil
	case t.ID == row.Struct && s[i] == '{':
		fields := t.Fields()
		vals := make([]row.Value, len(fields))
		end, err := walkObject(s, i, func(key string, _, v int) (int, error) {
			f := t.FieldIndex(key)
			if f < 0 {
				return skipValue(s, v, 1)
			}
			x, end, err := decodeAs(s, v, fields[f].Type)
			if err != nil {
				return end, err
			}
			vals[f] = x
			return end, nil
		})
		if err != nil {
			return row.NullValue, end, err
		}
		for f, x := range vals {
			if x.IsNull() && fields[f].Type.NotNull {
				return row.NullValue, end, &row.ParseError{Text: s[i:end], Type: t, Err: fmt.Errorf("field %q is null or missing, but it is %s", fields[f].Name, fields[f].Type)}
			}
		}
		return row.StructValue(vals), end, nil
	}
	end, err := skipValue(s, i, 1)
	if err != nil {
		return row.NullValue, end, err
	}
	return row.NullValue, end, mismatch(s[i:end], t, describe(s, i))
}

// appendNested writes a composite value: an array, or an object for a
// MAP (keys as their text) and a ROW (fields by name).
func (c *Codec) appendNested(dst []byte, v row.Value, t row.Type) []byte {
	switch v.Type() {
	case row.Array:
		dst = append(dst, '[')
		for i, x := range v.Items() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = c.AppendValue(dst, x, t.Elem())
		}
		return append(dst, ']')
	case row.Map:
		dst = append(dst, '{')
		first, skip := true, false
		for i, x := range v.Items() {
			if i%2 == 1 {
				if !skip {
					dst = c.AppendValue(dst, x, t.Elem())
				}
				continue
			}
			name := ""
			if x.IsNull() {
				// map_null_key_mode: drop skips the entry, literal writes
				// map_null_key_literal; Flink's default, FAIL, stops the
				// job, where etld writes the literal "null" (a named
				// difference: the encoder has no error path per value).
				key, drop, err := c.opts.MapNullKey()
				if skip = drop; skip {
					continue
				}
				if err != nil {
					key = "null"
				}
				name = key
			} else {
				skip = false
				name = x.Text(t.Key())
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, name)
			dst = append(dst, ':')
		}
		return append(dst, '}')
	}
	fields := t.Fields()
	dst = append(dst, '{')
	for i, x := range v.Items() {
		if i > 0 {
			dst = append(dst, ',')
		}
		name, ft := fmt.Sprintf("f%d", i), row.Type{}
		if i < len(fields) {
			name, ft = fields[i].Name, fields[i].Type
		}
		dst = appendString(dst, name)
		dst = append(dst, ':')
		dst = c.AppendValue(dst, x, ft)
	}
	return append(dst, '}')
}
