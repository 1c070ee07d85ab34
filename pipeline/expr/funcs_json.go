package expr

import (
	"errors"
	"strconv"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// The SQL/JSON query functions JSON_VALUE, JSON_QUERY and JSON_EXISTS
// follow Flink (Calcite's JsonFunctions over Jayway JsonPath): the path
// is a constant, in strict mode unless it starts with the word lax
// ("strict" may be written too). A path that leads nowhere is empty in
// lax mode and an error in strict mode, and so is text that is not JSON
// (Calcite reads it as nothing in lax mode). JSON null at the path counts as empty. What happens
// then is the ON EMPTY / ON ERROR clause's business, NULL by default
// (FALSE for JSON_EXISTS). Paths are $, .key, ."quoted key", ['key'],
// ["key"] and [n], and Jayway's steps that select several values
// (funcs_jsonpath.go): .*, [*], ..key, [1,3], [0:2], [?(filter)]. The construction
// functions JSON_OBJECT and JSON_ARRAY are in funcs_jsonbuild.go.

func init() {
	register(map[string]*funcDef{
		"JSON_VALUE":  {min: 2, max: 4, lazyFrom: 2, build: buildJSONValue},
		"JSON_QUERY":  {min: 2, max: 2, build: buildJSONQuery},
		"JSON_EXISTS": {min: 2, max: 2, build: buildJSONExists},
	})
}

// jsonScalarText is the text of a JSON scalar as Flink hands it on:
// strings decoded, booleans as written, numbers as Java's BigDecimal (or
// BigInteger) writes the number read (Flink's Jackson reads them with
// USE_BIG_DECIMAL_FOR_FLOATS): 123456789.98765433 stays as it is, 1.5e3
// gives 1.5E+3. ok is false for an object or array.
func jsonScalarText(raw string) (string, bool) {
	switch raw[0] {
	case '{', '[':
		return "", false
	case '"':
		return jsonString(raw), true
	case 't', 'f':
		return raw, true
	}
	return javaNumberText(raw), true
}

// jsonValue is JSON_VALUE(doc, path) with the default clauses, for the
// fuzz test: the scalar as text, or NULL.
func jsonValue(doc string, path []jsonStep) row.Value {
	raw, found := jsonLocate(doc, path, false)
	if found != jsonHit {
		return row.NullValue
	}
	if s, ok := jsonScalarText(raw); ok {
		return row.StringValue(s)
	}
	return row.NullValue
}

// jsonPathArg reads the constant path argument; nil steps with a nil
// error mean the path is NULL.
func jsonPathArg(e *sql.Call, args []*node) ([]jsonStep, bool, bool, error) {
	pv, err := constArg(e, args, 1, "the JSON path")
	if err != nil {
		return nil, false, false, err
	}
	if pv.IsNull() {
		return nil, false, true, nil
	}
	path, lax, err := parseJSONPathMode(pv.Str())
	if err != nil {
		return nil, false, false, errAt(args[1].e.Pos(), "%v", err)
	}
	return path, lax, false, nil
}

func jsonClauses(e *sql.Call) *sql.JSONClauses {
	if e.JSON == nil {
		return &sql.JSONClauses{}
	}
	return e.JSON
}

// jsonValueTypes are the types JSON_VALUE ... RETURNING gives.
func jsonReturnable(id row.TypeID) bool {
	switch id {
	case row.String, row.Boolean, row.Int, row.BigInt, row.Float, row.Double, row.Decimal, row.Date, row.Timestamp, row.TimestampLTZ:
		return true
	}
	return false
}

var (
	errJSONEmpty  = errors.New("no value at the JSON path (ERROR ON EMPTY)")
	errJSONNotDoc = errors.New("the text is not JSON, or the strict path leads nowhere (ERROR ON ERROR)")
)

// buildJSONValue is JSON_VALUE(doc, path [RETURNING t] [... ON EMPTY]
// [... ON ERROR]): the scalar at path, converted to t (STRING by default).
// An object or array there, or a value that does not convert to t, is an
// error. DEFAULT values are converted to t when compiled.
func buildJSONValue(c *compiler, e *sql.Call, args []*node) (*node, error) {
	j := jsonClauses(e)
	if err := check(e, args, "a STRING", isStringy, 0, 1); err != nil {
		return nil, err
	}
	t := row.Type{ID: row.String}
	if j.ReturningText != "" {
		t = j.Returning.Nullable()
		if !jsonReturnable(t.ID) {
			return nil, errAt(j.ReturningAt, "JSON_VALUE cannot return %s; use STRING, BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, DATE or TIMESTAMP", t)
		}
	}
	path, lax, null, err := jsonPathArg(e, args)
	if err != nil {
		return nil, err
	}
	if null {
		return constNode(e, t, row.NullValue), nil
	}
	conv := func(v row.Value) (row.Value, error) { return v, nil }
	if t.ID != row.String {
		k, err := castKernel(row.Type{ID: row.String}, t, c.zone)
		if err != nil {
			return nil, errAt(j.ReturningAt, "%v", err)
		}
		conv = k
	}
	behave := func(b sql.JSONBehavior, why error) (evalFn, error) {
		switch b.Kind {
		case "", "NULL":
			return constEval(row.NullValue), nil
		case "ERROR":
			text := exprString(e)
			return func(row.Row) (row.Value, error) { return row.NullValue, evalErr(text, why) }, nil
		}
		// The DEFAULT value is CAST to the RETURNING type, as in Flink
		// (DEFAULT FALSE gives 'false' when the type is STRING).
		d := args[b.Arg]
		if d.t.ID == row.Null {
			return nullEval(d), nil
		}
		k, err := castKernel(d.t, t, c.zone)
		if err != nil {
			return nil, errAt(d.e.Pos(), "JSON_VALUE DEFAULT: %v", err)
		}
		if d.t.ID == row.Boolean && t.ID == row.String {
			// Flink hands the value on as Java's toString: false, not FALSE.
			k = func(v row.Value) (row.Value, error) { return row.StringValue(strconv.FormatBool(v.Bool())), nil }
		}
		de, dtext := d.eval, exprString(d.e)
		return func(r row.Row) (row.Value, error) {
			v, err := de(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			out, err := k(v)
			if err != nil {
				return row.NullValue, evalErr(dtext, err)
			}
			return out, nil
		}, nil
	}
	onEmpty, err := behave(j.OnEmpty, errJSONEmpty)
	if err != nil {
		return nil, err
	}
	onError, err := behave(j.OnError, errJSONNotDoc)
	if err != nil {
		return nil, err
	}
	doc := args[0].eval
	f := func(r row.Row) (row.Value, error) {
		v, err := doc(r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		raw, found := jsonLocate(v.Str(), path, lax)
		switch found {
		case jsonEmpty:
			// A DEFAULT ON EMPTY that fails falls through to the ON
			// ERROR behaviour, as Flink documents.
			if out, err := onEmpty(r); err == nil || j.OnEmpty.Kind != "DEFAULT" {
				return out, err
			}
			return onError(r)
		case jsonError:
			return onError(r)
		}
		s, ok := jsonScalarText(raw)
		if !ok || (t.ID == row.Boolean && raw[0] == '"') {
			return onError(r)
		}
		out, err := conv(row.StringValue(s))
		if err != nil {
			return onError(r)
		}
		return out, nil
	}
	return c.finish(e, t, f, args...)
}

// buildJSONQuery is JSON_QUERY(doc, path [wrapper] [... ON EMPTY] [... ON
// ERROR]): the JSON text of the object or array at path. WITHOUT WRAPPER
// (the default) makes a scalar there an error; WITH [UNCONDITIONAL]
// ARRAY WRAPPER wraps whatever is found in an array, WITH CONDITIONAL only
// what is not an array already.
func buildJSONQuery(c *compiler, e *sql.Call, args []*node) (*node, error) {
	j := jsonClauses(e)
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t := row.Type{ID: row.String}
	asArray := false
	if j.ReturningText != "" && j.Returning.ID != row.String {
		if j.Returning.ID != row.Array || j.Returning.Elem().ID != row.String {
			return nil, errAt(j.ReturningAt, "JSON_QUERY returns STRING or ARRAY<STRING>, not %s", typeName(j.Returning))
		}
		if j.OnEmpty.Kind == "EMPTY OBJECT" || j.OnError.Kind == "EMPTY OBJECT" {
			return nil, errAt(j.ReturningAt, "EMPTY OBJECT cannot stand for an ARRAY<STRING>")
		}
		t, asArray = row.ArrayOf(row.Type{ID: row.String}), true
	}
	path, lax, null, err := jsonPathArg(e, args)
	if err != nil {
		return nil, err
	}
	if null {
		return constNode(e, t, row.NullValue), nil
	}
	behave := func(b sql.JSONBehavior, why error) func() (row.Value, error) {
		switch b.Kind {
		case "ERROR":
			return func() (row.Value, error) { return row.NullValue, why }
		case "EMPTY ARRAY":
			if asArray {
				return func() (row.Value, error) { return row.ArrayValue(nil), nil }
			}
			return func() (row.Value, error) { return row.StringValue("[]"), nil }
		case "EMPTY OBJECT":
			return func() (row.Value, error) { return row.StringValue("{}"), nil }
		}
		return func() (row.Value, error) { return row.NullValue, nil }
	}
	onEmpty, onError := behave(j.OnEmpty, errJSONEmpty), behave(j.OnError, errJSONNotDoc)
	wrapper := j.Wrapper
	return c.fn1(e, t, args[0], func(v row.Value) (row.Value, error) {
		raw, found := jsonLocate(v.Str(), path, lax)
		switch found {
		case jsonEmpty:
			return onEmpty()
		case jsonError:
			return onError()
		}
		out := compactJSON(raw)
		switch {
		case wrapper == "WITH UNCONDITIONAL", wrapper == "WITH CONDITIONAL" && raw[0] != '[':
			out = "[" + out + "]"
		case wrapper == "" || wrapper == "WITHOUT":
			if raw[0] != '{' && raw[0] != '[' {
				return onError()
			}
		}
		if asArray {
			if out[0] != '[' {
				return onError()
			}
			return jsonStringArray(out), nil
		}
		return row.StringValue(out), nil
	})
}

// jsonStringArray is the ARRAY<STRING> of JSON_QUERY ... RETURNING
// ARRAY<STRING> from the (valid, compact) JSON array raw: a scalar item as
// its text (a string unquoted, a number as Flink writes it), an object or
// array as JSON, null as NULL.
func jsonStringArray(raw string) row.Value {
	var items []row.Value
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		end := skipValue(raw, i)
		item := raw[i:end]
		switch {
		case item == "null":
			items = append(items, row.NullValue)
		case item[0] == '{' || item[0] == '[':
			items = append(items, row.StringValue(item))
		default:
			text, _ := jsonScalarText(item)
			items = append(items, row.StringValue(text))
		}
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return row.ArrayValue(items)
}

// buildJSONExists is JSON_EXISTS(doc, path [{TRUE | FALSE | UNKNOWN |
// ERROR} ON ERROR]): whether a value other than JSON null is at path (as
// in Flink, '{"a": null}' has no $.a). Errors (text that is not JSON, a
// strict path that leads nowhere) give the ON ERROR value, FALSE by
// default.
func buildJSONExists(c *compiler, e *sql.Call, args []*node) (*node, error) {
	j := jsonClauses(e)
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t := row.Type{ID: row.Boolean, NotNull: args[0].t.NotNull}
	path, lax, null, err := jsonPathArg(e, args)
	if err != nil {
		return nil, err
	}
	if null {
		return constNode(e, t, row.NullValue), nil
	}
	onError := func() (row.Value, error) { return row.BoolValue(false), nil }
	switch j.OnError.Kind {
	case "TRUE":
		onError = func() (row.Value, error) { return row.BoolValue(true), nil }
	case "UNKNOWN":
		t.NotNull = false
		onError = func() (row.Value, error) { return row.NullValue, nil }
	case "ERROR":
		onError = func() (row.Value, error) { return row.NullValue, errJSONNotDoc }
	}
	return c.fn1(e, t, args[0], func(v row.Value) (row.Value, error) {
		switch _, found := jsonLocate(v.Str(), path, lax); found {
		case jsonError:
			return onError()
		case jsonEmpty:
			return row.BoolValue(false), nil
		}
		return row.BoolValue(true), nil
	})
}
