package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/pipeline/row"
)

// A writer schema is compiled, as for reading, into encoders that write
// each column's values in the schema's binary form.

// valueEnc appends the binary form of v.
type valueEnc func(dst []byte, v row.Value) ([]byte, error)

// recordEnc writes a row as a record of one writer schema.
type recordEnc struct {
	steps []encStep // in the schema's field order
}

type encStep struct {
	col   int // the column written; -1: the field's default, fixed
	name  string
	enc   valueEnc
	fixed []byte
}

// compileRecordEnc makes the writer of rows of columns as records of w:
// each field from the column of its name, or its default when no column
// has its name.
func compileRecordEnc(w avro.Schema, columns []row.Field) (*recordEnc, error) {
	rs, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("the schema is a %s, not a record", w.Type())
	}
	var errs []error
	e := &recordEnc{}
	used := make([]bool, len(columns))
	for _, f := range rs.Fields() {
		col := -1
		for i, c := range columns {
			if !used[i] && fieldIndex([]*avro.Field{f}, c.Name) == 0 {
				col = i
				break
			}
		}
		if col < 0 {
			if !f.HasDefault() {
				errs = append(errs, fmt.Errorf("field %s of the schema has no column of its name and no default", f.Name()))
				continue
			}
			def, err := avro.Marshal(f.Type(), f.Default())
			if err != nil {
				errs = append(errs, fmt.Errorf("field %s: its default: %w", f.Name(), err))
				continue
			}
			e.steps = append(e.steps, encStep{col: -1, name: f.Name(), fixed: def})
			continue
		}
		used[col] = true
		enc, err := compileEnc(f.Type(), columns[col].Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %s: %w", columns[col].Name, err))
			continue
		}
		e.steps = append(e.steps, encStep{col: col, name: columns[col].Name, enc: enc})
	}
	for i, u := range used {
		if !u && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("column %s has no field in the schema (its fields: %s)", columns[i].Name, fieldNames(rs)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return e, nil
}

func fieldNames(rs *avro.RecordSchema) string {
	var s string
	for i, f := range rs.Fields() {
		if i > 0 {
			s += ", "
		}
		s += f.Name()
	}
	return s
}

func (e *recordEnc) encode(dst []byte, r []row.Value) ([]byte, error) {
	for i := range e.steps {
		st := &e.steps[i]
		if st.enc == nil {
			dst = append(dst, st.fixed...)
			continue
		}
		var err error
		if dst, err = st.enc(dst, r[st.col]); err != nil {
			return dst, &fieldError{column: st.name, err: err}
		}
	}
	return dst, nil
}

// compileEnc returns the writer of values of t as the Avro type w.
func compileEnc(w avro.Schema, t row.Type) (valueEnc, error) {
	w = deref(w)
	if u, ok := w.(*avro.UnionSchema); ok {
		return compileUnionEnc(u, t)
	}
	if w.Type() == avro.Null {
		return nil, fmt.Errorf("the schema's type is null")
	}
	enc, err := compilePlainEnc(w, t)
	if err != nil {
		return nil, err
	}
	return func(dst []byte, v row.Value) ([]byte, error) {
		if v.IsNull() {
			return dst, fmt.Errorf("NULL, and the schema's %s is not nullable", describe(w))
		}
		return enc(dst, v)
	}, nil
}

func compileUnionEnc(u *avro.UnionSchema, t row.Type) (valueEnc, error) {
	null, branch := -1, -1
	var enc valueEnc
	var last error
	for i, b := range u.Types() {
		if b.Type() == avro.Null {
			if null < 0 {
				null = i
			}
			continue
		}
		if branch >= 0 {
			continue
		}
		e, err := compilePlainEnc(deref(b), t)
		if err != nil {
			last = err
			continue
		}
		branch, enc = i, e
	}
	if branch < 0 {
		if last == nil {
			last = fmt.Errorf("the union %s has no branch but null", u)
		}
		return nil, last
	}
	nullIdx, idx := appendLong(nil, int64(null)), appendLong(nil, int64(branch))
	return func(dst []byte, v row.Value) ([]byte, error) {
		if v.IsNull() {
			if null < 0 {
				return dst, fmt.Errorf("NULL, and the schema's union %s has no null", u)
			}
			return append(dst, nullIdx...), nil
		}
		return enc(append(dst, idx...), v)
	}, nil
}

// compilePlainEnc writes a non-null value of t as w, which is no union.
func compilePlainEnc(w avro.Schema, t row.Type) (valueEnc, error) {
	cannot := fmt.Errorf("%s cannot be written as the schema's %s", t, describe(w))
	lt := logical(w)
	switch w.Type() {
	case avro.Boolean:
		if t.ID == row.Boolean {
			return func(dst []byte, v row.Value) ([]byte, error) {
				if v.Bool() {
					return append(dst, 1), nil
				}
				return append(dst, 0), nil
			}, nil
		}
	case avro.Int:
		switch {
		case t.ID == row.Int, t.ID == row.Date && (lt == avro.Date || lt == ""):
			return func(dst []byte, v row.Value) ([]byte, error) { return appendLong(dst, v.Int64()), nil }, nil
		case t.ID == row.Time && (lt == avro.TimeMillis || lt == ""):
			return func(dst []byte, v row.Value) ([]byte, error) { return appendLong(dst, v.Micros()/1000), nil }, nil
		}
	case avro.Long:
		return compileLongEnc(lt, t, cannot)
	case avro.Float:
		if t.ID == row.Float {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v.Float64()))), nil
			}, nil
		}
	case avro.Double:
		if t.ID == row.Double || t.ID == row.Float {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float64())), nil
			}, nil
		}
	case avro.String, avro.Bytes:
		switch {
		case t.ID == row.String || t.ID == row.Bytes:
			return func(dst []byte, v row.Value) ([]byte, error) { return appendString(dst, v.Str()), nil }, nil
		case t.ID == row.Decimal && lt == avro.Decimal && w.Type() == avro.Bytes:
			scale := w.(*avro.PrimitiveSchema).Logical().(*avro.DecimalLogicalSchema).Scale()
			return func(dst []byte, v row.Value) ([]byte, error) {
				b, err := unscaledBytes(v, scale)
				return appendString(dst, string(b)), err
			}, nil
		}
	case avro.Fixed:
		fs := w.(*avro.FixedSchema)
		size := fs.Size()
		switch {
		case t.ID == row.Bytes:
			return func(dst []byte, v row.Value) ([]byte, error) {
				if len(v.Str()) != size {
					return dst, fmt.Errorf("%d bytes for a fixed of %d", len(v.Str()), size)
				}
				return append(dst, v.Str()...), nil
			}, nil
		case t.ID == row.Decimal && lt == avro.Decimal:
			scale := fs.Logical().(*avro.DecimalLogicalSchema).Scale()
			return func(dst []byte, v row.Value) ([]byte, error) {
				b, err := unscaledBytes(v, scale)
				if err != nil || len(b) > size {
					return dst, errors.Join(err, fmt.Errorf("decimal %s needs more than the fixed's %d bytes", v, size))
				}
				pad := byte(0)
				if b[0]&0x80 != 0 {
					pad = 0xff // the sign, extended
				}
				for range size - len(b) {
					dst = append(dst, pad)
				}
				return append(dst, b...), nil
			}, nil
		}
	case avro.Enum:
		if t.ID == row.String {
			index := map[string]int64{}
			for i, s := range w.(*avro.EnumSchema).Symbols() {
				index[s] = int64(i)
			}
			return func(dst []byte, v row.Value) ([]byte, error) {
				i, ok := index[v.Str()]
				if !ok {
					return dst, fmt.Errorf("%q is not a symbol of the enum %s", v.Str(), w.(*avro.EnumSchema).FullName())
				}
				return appendLong(dst, i), nil
			}, nil
		}
	case avro.Array:
		if t.ID == row.Array {
			item, err := compileEnc(w.(*avro.ArraySchema).Items(), t.Elem())
			if err != nil {
				return nil, fmt.Errorf("array items: %w", err)
			}
			return func(dst []byte, v row.Value) ([]byte, error) {
				if n := v.Len(); n > 0 {
					dst = appendLong(dst, int64(n))
					for _, x := range v.Items() {
						var err error
						if dst, err = item(dst, x); err != nil {
							return dst, err
						}
					}
				}
				return append(dst, 0), nil
			}, nil
		}
	case avro.Map:
		if t.ID == row.Map && t.Key().ID == row.String {
			val, err := compileEnc(w.(*avro.MapSchema).Values(), t.Elem())
			if err != nil {
				return nil, fmt.Errorf("map values: %w", err)
			}
			return func(dst []byte, v row.Value) ([]byte, error) {
				items := v.ItemSlice() // keys and values in turn
				if n := len(items) / 2; n > 0 {
					dst = appendLong(dst, int64(n))
					for i := 0; i+1 < len(items); i += 2 {
						if items[i].IsNull() {
							return dst, errors.New("a map key is NULL, which an Avro map cannot hold")
						}
						dst = appendString(dst, items[i].Str())
						var err error
						if dst, err = val(dst, items[i+1]); err != nil {
							return dst, err
						}
					}
				}
				return append(dst, 0), nil
			}, nil
		}
	case avro.Record:
		if t.ID == row.Struct {
			re, err := compileRecordEnc(w, t.Fields())
			if err != nil {
				return nil, err
			}
			return func(dst []byte, v row.Value) ([]byte, error) { return re.encode(dst, v.ItemSlice()) }, nil
		}
	}
	return nil, cannot
}

func compileLongEnc(lt avro.LogicalType, t row.Type, cannot error) (valueEnc, error) {
	switch t.ID {
	case row.BigInt, row.Int:
		return func(dst []byte, v row.Value) ([]byte, error) { return appendLong(dst, v.Int64()), nil }, nil
	case row.Timestamp, row.TimestampLTZ:
		switch lt {
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return func(dst []byte, v row.Value) ([]byte, error) { return appendLong(dst, v.Micros()), nil }, nil
		case avro.TimestampMillis, avro.LocalTimestampMillis, "":
			return func(dst []byte, v row.Value) ([]byte, error) { return appendLong(dst, floorDiv(v.Micros(), 1000)), nil }, nil
		}
	case row.Time:
		if lt == avro.TimeMicros {
			return func(dst []byte, v row.Value) ([]byte, error) { return appendLong(dst, v.Micros()), nil }, nil
		}
	}
	return nil, cannot
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// unscaledBytes is the decimal v at scale as Java's
// BigInteger.toByteArray writes its unscaled value: big-endian two's
// complement in the fewest bytes.
func unscaledBytes(v row.Value, scale int) ([]byte, error) {
	if v.Type() != row.Decimal {
		return nil, fmt.Errorf("%s is not a DECIMAL", v)
	}
	if !v.WideDecimal() && v.Scale() == scale {
		return minimalBytes(v.Unscaled()), nil
	}
	z := v.Decimal128().Big(new(big.Int))
	switch d := scale - v.Scale(); {
	case d > 0:
		z.Mul(z, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil))
	case d < 0:
		m := new(big.Int)
		z.QuoRem(z, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d)), nil), m)
		if m.Sign() != 0 {
			return nil, fmt.Errorf("%s has more than the schema's %d fraction digits", v, scale)
		}
	}
	if z.IsInt64() {
		return minimalBytes(z.Int64()), nil
	}
	// Two's complement of a big.Int: the magnitude's bytes, negated.
	n := z.BitLen()/8 + 1
	out := make([]byte, n)
	if z.Sign() >= 0 {
		z.FillBytes(out)
		return out, nil
	}
	t := new(big.Int).Add(z, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	t.FillBytes(out)
	return out, nil
}

func minimalBytes(n int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	i := 0
	for i < 7 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xff && b[i+1]&0x80 != 0) {
		i++
	}
	return b[i:]
}

// appendLong appends n as a zigzag varint.
func appendLong(dst []byte, n int64) []byte {
	u := uint64(n<<1) ^ uint64(n>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

func appendString(dst []byte, s string) []byte {
	return append(appendLong(dst, int64(len(s))), s...)
}
