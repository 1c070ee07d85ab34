package udf

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/dop251/goja"

	"github.com/etld/etld/pipeline/row"
)

// SQL values in JavaScript (docs/udf.md): NULL is null; BOOLEAN a
// boolean; the integer types, FLOAT and DOUBLE a number (a BIGINT past
// 2^53 does not fit one exactly and fails the row); DECIMAL and TIME a
// string of their SQL text; STRING a string; BYTES a Uint8Array; DATE,
// TIMESTAMP and TIMESTAMP_LTZ a Date (a TIMESTAMP's wall clock read as
// UTC; milliseconds, the precision of a Date); ARRAY an array, MAP a Map,
// ROW an object of its fields. Results convert back the same way, a
// BigInt also for the integer types, a number or string for DECIMAL, an
// object with string keys for MAP, an array by position for ROW.

const maxSafeInteger = 1<<53 - 1

func toJS(vm *goja.Runtime, v row.Value, t row.Type) (goja.Value, error) {
	if v.IsNull() {
		return goja.Null(), nil
	}
	switch t.ID {
	case row.Boolean:
		return vm.ToValue(v.Bool()), nil
	case row.Int:
		return vm.ToValue(v.Int64()), nil
	case row.BigInt:
		if i := v.Int64(); i > maxSafeInteger || i < -maxSafeInteger {
			return nil, fmt.Errorf("BIGINT %d does not fit a JavaScript number exactly", i)
		}
		return vm.ToValue(v.Int64()), nil
	case row.Float, row.Double:
		return vm.ToValue(v.Float64()), nil
	case row.Decimal, row.Time:
		return vm.ToValue(v.Text(t)), nil
	case row.String:
		return vm.ToValue(v.Str()), nil
	case row.Bytes:
		buf := vm.NewArrayBuffer([]byte(v.Str()))
		return vm.New(vm.Get("Uint8Array"), vm.ToValue(buf))
	case row.Date, row.Timestamp, row.TimestampLTZ:
		ms := v.Micros() / 1000
		if t.ID == row.Date {
			ms = int64(v.Days()) * 86_400_000
		} else if v.Micros() < 0 && v.Micros()%1000 != 0 {
			ms-- // floor, as a Date has no sub-millisecond part
		}
		return vm.New(vm.Get("Date"), vm.ToValue(ms))
	case row.Array:
		var items []any
		for _, x := range v.Items() {
			jv, err := toJS(vm, x, t.Elem())
			if err != nil {
				return nil, err
			}
			items = append(items, jv)
		}
		return vm.NewArray(items...), nil
	case row.Map:
		m, err := vm.New(vm.Get("Map"))
		if err != nil {
			return nil, err
		}
		set, _ := goja.AssertFunction(m.Get("set"))
		var key goja.Value
		for j, x := range v.Items() {
			sub := t.Key()
			if j%2 == 1 {
				sub = t.Elem()
			}
			jv, err := toJS(vm, x, sub)
			if err != nil {
				return nil, err
			}
			if j%2 == 0 {
				key = jv
			} else if _, err := set(m, key, jv); err != nil {
				return nil, err
			}
		}
		return m, nil
	case row.Struct:
		o := vm.NewObject()
		fields := t.Fields()
		for j, x := range v.Items() {
			jv, err := toJS(vm, x, fields[j].Type)
			if err != nil {
				return nil, err
			}
			if err := o.Set(fields[j].Name, jv); err != nil {
				return nil, err
			}
		}
		return o, nil
	}
	return nil, fmt.Errorf("type %s does not cross to JavaScript", t)
}

func fromJS(v goja.Value, t row.Type) (row.Value, error) {
	if v == nil || goja.IsNull(v) || goja.IsUndefined(v) {
		return row.NullValue, nil
	}
	return fromGo(v.Export(), t)
}

var errNotInteger = errors.New("not an integer")

// fromGo converts what goja exports of a result into a value of t.
func fromGo(x any, t row.Type) (row.Value, error) {
	if x == nil {
		return row.NullValue, nil
	}
	wrong := func() (row.Value, error) {
		return row.NullValue, fmt.Errorf("returned %s (%v) for a result of type %s", jsTypeName(x), x, t)
	}
	switch t.ID {
	case row.Boolean:
		if b, ok := x.(bool); ok {
			return row.BoolValue(b), nil
		}
	case row.Int, row.BigInt:
		i, err := integer(x)
		if err != nil {
			return wrong()
		}
		if t.WrapInt(i) != i {
			return row.NullValue, fmt.Errorf("returned %d, out of the range of %s", i, t)
		}
		if t.ID == row.Int {
			return row.IntValue(int32(i)), nil
		}
		return row.BigIntValue(i), nil
	case row.Float, row.Double:
		var f float64
		switch n := x.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			return wrong()
		}
		if t.ID == row.Float {
			return row.FloatValue(float32(f)), nil
		}
		return row.DoubleValue(f), nil
	case row.Decimal, row.Time:
		var s string
		switch n := x.(type) {
		case string:
			s = n
		case int64:
			s = strconv.FormatInt(n, 10)
		case float64:
			s = strconv.FormatFloat(n, 'f', -1, 64)
		default:
			return wrong()
		}
		v, err := row.ParseText(s, t)
		if err != nil {
			return row.NullValue, fmt.Errorf("returned %q for a result of type %s: %w", s, t, err)
		}
		return v, nil
	case row.String:
		if s, ok := x.(string); ok {
			return row.StringValue(s), nil
		}
	case row.Bytes:
		switch b := x.(type) {
		case []byte:
			return row.BytesValue(b), nil
		case goja.ArrayBuffer:
			return row.BytesValue(b.Bytes()), nil
		}
	case row.Date, row.Timestamp, row.TimestampLTZ:
		tm, ok := x.(time.Time)
		if !ok {
			return wrong()
		}
		tm = tm.UTC()
		switch t.ID {
		case row.Date:
			return row.DateValue(int32(math.Floor(float64(tm.Unix()) / 86400))), nil
		case row.Timestamp:
			return row.TimestampValue(tm.UnixMicro()), nil
		}
		return row.TimestampLTZValue(tm.UnixMicro()), nil
	case row.Array:
		items, ok := x.([]any)
		if !ok {
			return wrong()
		}
		out := make([]row.Value, len(items))
		for i, it := range items {
			v, err := fromGo(it, t.Elem())
			if err != nil {
				return row.NullValue, err
			}
			out[i] = v
		}
		return row.ArrayValue(out), nil
	case row.Map:
		return mapFromGo(x, t, wrong)
	case row.Struct:
		return structFromGo(x, t, wrong)
	}
	return wrong()
}

func integer(x any) (int64, error) {
	switch n := x.(type) {
	case int64:
		return n, nil
	case float64:
		if n != math.Trunc(n) || n >= math.MaxInt64 || n < math.MinInt64 {
			return 0, errNotInteger
		}
		return int64(n), nil
	case *big.Int:
		if !n.IsInt64() {
			return 0, errNotInteger
		}
		return n.Int64(), nil
	}
	return 0, errNotInteger
}

func mapFromGo(x any, t row.Type, wrong func() (row.Value, error)) (row.Value, error) {
	var keys, vals []row.Value
	add := func(k, v any) error {
		kv, err := fromGo(k, t.Key())
		if err != nil {
			return err
		}
		vv, err := fromGo(v, t.Elem())
		if err != nil {
			return err
		}
		keys, vals = append(keys, kv), append(vals, vv)
		return nil
	}
	switch m := x.(type) {
	case [][2]any: // a Map
		for _, e := range m {
			if err := add(e[0], e[1]); err != nil {
				return row.NullValue, err
			}
		}
	case map[string]any: // an object, its keys in order
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := add(k, m[k]); err != nil {
				return row.NullValue, err
			}
		}
	default:
		return wrong()
	}
	return row.MapValue(keys, vals), nil
}

func structFromGo(x any, t row.Type, wrong func() (row.Value, error)) (row.Value, error) {
	fields := t.Fields()
	out := make([]row.Value, len(fields))
	switch o := x.(type) {
	case map[string]any:
		for i, f := range fields {
			v, err := fromGo(o[f.Name], f.Type)
			if err != nil {
				return row.NullValue, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out[i] = v
		}
	case []any:
		if len(o) != len(fields) {
			return row.NullValue, fmt.Errorf("returned an array of %d values for a ROW of %d fields", len(o), len(fields))
		}
		for i, f := range fields {
			v, err := fromGo(o[i], f.Type)
			if err != nil {
				return row.NullValue, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out[i] = v
		}
	default:
		return wrong()
	}
	return row.StructValue(out), nil
}
