package avro

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/pipeline/row"
)

// A writer schema is compiled once into decoders that read its binary
// encoding straight into values of the table's types: the resolution of
// the writer's schema against the table (fields matched by name, Avro's
// promotions, a column the writer lacks NULL) happens at compile time, and
// decoding is a walk over closures with no intermediate Go values.

// valueDec reads one value of a writer type as a value of a column type.
type valueDec func(r *reader) (row.Value, error)

// skipFn reads past one value of a writer type.
type skipFn func(r *reader) error

// recordDec reads a record of one writer schema into a row of columns.
type recordDec struct {
	steps []fieldStep // in the writer's field order
	// nulls are the places of the columns the writer does not have.
	nulls []int
}

type fieldStep struct {
	to   int // place in the row; -1: skipped
	name string
	dec  valueDec
	// app appends the value in a nested ROW's form (nested.go).
	app  appendFn
	skip skipFn
}

// fieldError is a failure in one column's value.
type fieldError struct {
	column string
	err    error
}

func (e *fieldError) Error() string { return "column " + e.column + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// compileRecord resolves the writer's record against columns: at[i] is
// the place of column i in a decoded row, -1 for a column not decoded
// (nil: column i at place i).
func compileRecord(w avro.Schema, columns []row.Field, at []int) (*recordDec, error) {
	return resolveRecord(w, columns, at, false)
}

// resolveRecord is compileRecord, the steps' readers appenders (apps)
// rather than decoders: a ROW nested in a value compiles only those, so
// that a schema's compilation grows with its size, not with two to the
// power of its depth.
func resolveRecord(w avro.Schema, columns []row.Field, at []int, apps bool) (*recordDec, error) {
	rs, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("the schema is a %s, not a record", w.Type())
	}
	place := func(i int) int {
		if at == nil {
			return i
		}
		return at[i]
	}
	d := &recordDec{}
	fields := rs.Fields()
	col := make([]int, len(fields)) // the column of each writer field, or -1
	for i := range col {
		col[i] = -1
	}
	var errs []error
	for i, c := range columns {
		j := fieldIndex(fields, c.Name)
		switch {
		case j >= 0 && col[j] < 0:
			col[j] = i
		case place(i) < 0:
		case !c.Type.NotNull:
			d.nulls = append(d.nulls, place(i))
		default:
			errs = append(errs, fmt.Errorf("column %s is NOT NULL, and the writer's schema has no field %s", c.Name, c.Name))
		}
	}
	for j, f := range fields {
		st := fieldStep{to: -1, name: f.Name()}
		if i := col[j]; i >= 0 && place(i) >= 0 {
			var err error
			if apps {
				st.app, err = compileAppend(f.Type(), columns[i].Type)
			} else {
				st.dec, err = compileValue(f.Type(), columns[i].Type)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("column %s: %w", columns[i].Name, err))
				continue
			}
			st.to, st.name = place(i), columns[i].Name
		} else {
			st.skip = compileSkip(f.Type())
		}
		d.steps = append(d.steps, st)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

// decode reads one record into out.
func (d *recordDec) decode(r *reader, out []row.Value) error {
	for i := range d.steps {
		st := &d.steps[i]
		if st.dec == nil {
			if err := st.skip(r); err != nil {
				return &fieldError{column: st.name, err: err}
			}
			continue
		}
		v, err := st.dec(r)
		if err != nil {
			return &fieldError{column: st.name, err: err}
		}
		out[st.to] = v
	}
	for _, i := range d.nulls {
		out[i] = row.NullValue
	}
	return nil
}

// compileValue returns a reader of the writer type w as values of t.
func compileValue(w avro.Schema, t row.Type) (valueDec, error) {
	w = deref(w)
	cannot := func() error { return fmt.Errorf("the writer's %s cannot be read as %s", describe(w), t) }
	switch w.Type() {
	case avro.Union:
		return compileUnion(w.(*avro.UnionSchema), t)
	case avro.Null:
		if t.NotNull {
			return nil, fmt.Errorf("the writer's type is null, and the column is NOT NULL")
		}
		return func(*reader) (row.Value, error) { return row.NullValue, nil }, nil
	case avro.Boolean:
		if t.ID != row.Boolean {
			return nil, cannot()
		}
		return func(r *reader) (row.Value, error) {
			b, err := r.bool()
			return row.BoolValue(b), err
		}, nil
	case avro.Int:
		return compileInt(w, t, cannot)
	case avro.Long:
		return compileLong(w, t, cannot)
	case avro.Float:
		switch t.ID {
		case row.Float:
			return func(r *reader) (row.Value, error) {
				f, err := r.float()
				return row.FloatValue(f), err
			}, nil
		case row.Double:
			return func(r *reader) (row.Value, error) {
				f, err := r.float()
				return row.DoubleValue(float64(f)), err
			}, nil
		}
		return nil, cannot()
	case avro.Double:
		if t.ID != row.Double {
			return nil, cannot()
		}
		return func(r *reader) (row.Value, error) {
			f, err := r.double()
			return row.DoubleValue(f), err
		}, nil
	case avro.String, avro.Bytes, avro.Fixed:
		return compileBytes(w, t, cannot)
	case avro.Enum:
		if t.ID != row.String {
			return nil, cannot()
		}
		symbols := w.(*avro.EnumSchema).Symbols()
		return func(r *reader) (row.Value, error) {
			start := r.pos
			i, err := r.long()
			if err != nil {
				return row.NullValue, err
			}
			if i < 0 || i >= int64(len(symbols)) {
				r.pos = start
				return row.NullValue, r.fail("enum index %d of %d symbols", i, len(symbols))
			}
			return row.StringValue(symbols[i]), nil
		}, nil
	case avro.Array:
		if t.ID != row.Array {
			return nil, cannot()
		}
		fill, err := compileArrayFill(w.(*avro.ArraySchema), t)
		if err != nil {
			return nil, err
		}
		return func(r *reader) (row.Value, error) { return nestedValue(r, row.Array, fill) }, nil
	case avro.Map:
		if t.ID != row.Map || t.Key().ID != row.String {
			return nil, cannot()
		}
		fill, err := compileMapFill(w.(*avro.MapSchema), t)
		if err != nil {
			return nil, err
		}
		return func(r *reader) (row.Value, error) { return nestedValue(r, row.Map, fill) }, nil
	case avro.Record:
		if t.ID != row.Struct {
			return nil, cannot()
		}
		fill, err := compileRecordFill(w, t)
		if err != nil {
			return nil, err
		}
		return func(r *reader) (row.Value, error) { return nestedValue(r, row.Struct, fill) }, nil
	}
	return nil, cannot()
}

func compileUnion(u *avro.UnionSchema, t row.Type) (valueDec, error) {
	types := u.Types()
	decs := make([]valueDec, len(types))
	var last error
	readable := 0
	for i, b := range types {
		dec, err := compileValue(b, t)
		if err != nil {
			// Avro's resolution fails only on a record that takes this
			// branch.
			msg := fmt.Sprintf("union branch %d: %v", i, err)
			dec = func(r *reader) (row.Value, error) { return row.NullValue, r.fail("%s", msg) }
			last = err
		} else if b.Type() != avro.Null {
			readable++
		}
		decs[i] = dec
	}
	if readable == 0 && last != nil {
		return nil, fmt.Errorf("no branch of the writer's union %s can be read as %s: %w", u, t, last)
	}
	return func(r *reader) (row.Value, error) {
		start := r.pos
		i, err := r.long()
		if err != nil {
			return row.NullValue, err
		}
		if i < 0 || i >= int64(len(decs)) {
			r.pos = start
			return row.NullValue, r.fail("union branch %d of %d", i, len(decs))
		}
		return decs[i](r)
	}, nil
}

func compileInt(w avro.Schema, t row.Type, cannot func() error) (valueDec, error) {
	read := func(conv func(int32) row.Value) valueDec {
		return func(r *reader) (row.Value, error) {
			n, err := r.int()
			return conv(n), err
		}
	}
	switch lt := logical(w); {
	case t.ID == row.Int:
		// TINYINT and SMALLINT narrow as Flink's converter does (Java's
		// byteValue and shortValue).
		return read(func(n int32) row.Value { return row.IntValue(int32(t.WrapInt(int64(n)))) }), nil
	case t.ID == row.BigInt:
		return read(func(n int32) row.Value { return row.BigIntValue(int64(n)) }), nil
	case t.ID == row.Float:
		return read(func(n int32) row.Value { return row.FloatValue(float32(n)) }), nil
	case t.ID == row.Double:
		return read(func(n int32) row.Value { return row.DoubleValue(float64(n)) }), nil
	case t.ID == row.Date && (lt == avro.Date || lt == ""):
		return read(func(n int32) row.Value { return row.DateValue(n) }), nil
	case t.ID == row.Time && (lt == avro.TimeMillis || lt == ""):
		return func(r *reader) (row.Value, error) {
			start := r.pos
			n, err := r.int()
			if err == nil && (n < 0 || int64(n)*1000 >= row.MicrosPerDay) {
				r.pos = start
				err = r.fail("time of day %d ms is not within a day", n)
			}
			return row.TimeOfDayValue(int64(n) * 1000), err
		}, nil
	}
	return nil, cannot()
}

func compileLong(w avro.Schema, t row.Type, cannot func() error) (valueDec, error) {
	read := func(conv func(int64) row.Value) valueDec {
		return func(r *reader) (row.Value, error) {
			n, err := r.long()
			return conv(n), err
		}
	}
	lt := logical(w)
	switch t.ID {
	case row.BigInt:
		return read(func(n int64) row.Value { return row.BigIntValue(n) }), nil
	case row.Float:
		return read(func(n int64) row.Value { return row.FloatValue(float32(n)) }), nil
	case row.Double:
		return read(func(n int64) row.Value { return row.DoubleValue(float64(n)) }), nil
	case row.Timestamp, row.TimestampLTZ:
		mk := row.TimestampValue
		if t.ID == row.TimestampLTZ {
			mk = row.TimestampLTZValue
		}
		switch lt {
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return read(func(n int64) row.Value { return mk(n) }), nil
		case avro.TimestampMillis, avro.LocalTimestampMillis, "":
			// A plain long is milliseconds, as Flink's converter reads it.
			return func(r *reader) (row.Value, error) {
				start := r.pos
				n, err := r.long()
				if err == nil && (n > maxMillis || n < -maxMillis) {
					r.pos = start
					err = r.fail("timestamp of %d ms is out of range", n)
				}
				return mk(n * 1000), err
			}, nil
		}
	case row.Time:
		if lt == avro.TimeMicros {
			return func(r *reader) (row.Value, error) {
				start := r.pos
				n, err := r.long()
				if err == nil && (n < 0 || n >= row.MicrosPerDay) {
					r.pos = start
					err = r.fail("time of day %d µs is not within a day", n)
				}
				return row.TimeOfDayValue(n), err
			}, nil
		}
	}
	return nil, cannot()
}

// maxMillis keeps a millisecond timestamp's microseconds within an
// int64: the last millisecond the encoder writes reads back (it was one
// short, refusing the encoder's own last instant).
const maxMillis = math.MaxInt64 / 1000

func compileBytes(w avro.Schema, t row.Type, cannot func() error) (valueDec, error) {
	var read func(r *reader) (string, error)
	if w.Type() == avro.Fixed {
		size := w.(*avro.FixedSchema).Size()
		read = func(r *reader) (string, error) { return r.fixed(size) }
	} else {
		read = (*reader).bytes
	}
	switch t.ID {
	case row.String:
		if w.Type() == avro.Fixed {
			return nil, cannot()
		}
		return func(r *reader) (row.Value, error) {
			s, err := read(r)
			return row.StringValue(r.str(s)), err
		}, nil
	case row.Bytes:
		return func(r *reader) (row.Value, error) {
			s, err := read(r)
			return row.BytesValue([]byte(s)), err
		}, nil
	case row.Decimal:
		dl, ok := logicalOf(w).(*avro.DecimalLogicalSchema)
		if !ok || w.Type() == avro.String {
			return nil, cannot()
		}
		if dl.Scale() > t.Scale {
			return nil, fmt.Errorf("the writer's decimal(%d, %d) has more fraction digits than %s", dl.Precision(), dl.Scale(), t)
		}
		shift := t.Scale - dl.Scale()
		return func(r *reader) (row.Value, error) {
			start := r.pos
			s, err := read(r)
			if err != nil {
				return row.NullValue, err
			}
			v, ok := decimalOf(s, shift, t)
			if !ok {
				r.pos = start
				return row.NullValue, r.fail("decimal does not fit %s", t)
			}
			return v, nil
		}, nil
	}
	return nil, cannot()
}

func logicalOf(w avro.Schema) avro.LogicalSchema {
	if ls, ok := w.(avro.LogicalTypeSchema); ok {
		return ls.Logical()
	}
	return nil
}

// decimalOf reads a big-endian two's complement unscaled value, scaled up
// by 10^shift, as a DECIMAL of t; ok is false when it does not fit.
func decimalOf(s string, shift int, t row.Type) (row.Value, bool) {
	if len(s) == 0 {
		return row.DecimalValue(0, t.Scale), true
	}
	if len(s) <= 8 && shift == 0 {
		n := int64(int8(s[0]))
		for i := 1; i < len(s); i++ {
			n = n<<8 | int64(s[i])
		}
		if !row.Int128Of(n).DigitsFit(t.Precision) {
			return row.NullValue, false
		}
		return row.DecimalValue(n, t.Scale), true
	}
	z := new(big.Int).SetBytes([]byte(s))
	if s[0]&0x80 != 0 {
		z.Sub(z, new(big.Int).Lsh(big.NewInt(1), uint(8*len(s))))
	}
	if shift > 0 {
		z.Mul(z, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	}
	n, ok := row.Int128FromBig(z)
	if !ok || !n.DigitsFit(t.Precision) {
		return row.NullValue, false
	}
	return row.Decimal128Value(n, t.Scale), true
}

func compileMap(m *avro.MapSchema, t row.Type) (valueDec, error) {
	val, err := compileValue(m.Values(), t.Elem())
	if err != nil {
		return nil, fmt.Errorf("map values: %w", err)
	}
	return func(r *reader) (row.Value, error) {
		var keys, vals []row.Value
		for {
			n, err := r.blockCount()
			if err != nil || n == 0 {
				if err != nil {
					return row.NullValue, err
				}
				return row.MapValue(keys, vals), nil
			}
			for range n {
				k, err := r.bytes()
				if err != nil {
					return row.NullValue, err
				}
				v, err := val(r)
				if err != nil {
					return row.NullValue, err
				}
				keys, vals = append(keys, row.StringValue(k)), append(vals, v)
			}
		}
	}, nil
}

// compileSkip returns a reader that reads past a value of w.
func compileSkip(w avro.Schema) skipFn {
	w = deref(w)
	switch w.Type() {
	case avro.Null:
		return func(*reader) error { return nil }
	case avro.Boolean:
		return func(r *reader) error { _, err := r.bool(); return err }
	case avro.Int, avro.Long, avro.Enum:
		return func(r *reader) error { _, err := r.long(); return err }
	case avro.Float:
		return func(r *reader) error { _, err := r.fixed(4); return err }
	case avro.Double:
		return func(r *reader) error { _, err := r.fixed(8); return err }
	case avro.String, avro.Bytes:
		return func(r *reader) error { _, err := r.bytes(); return err }
	case avro.Fixed:
		size := w.(*avro.FixedSchema).Size()
		return func(r *reader) error { _, err := r.fixed(size); return err }
	case avro.Array:
		return skipBlocks(compileSkip(w.(*avro.ArraySchema).Items()), false)
	case avro.Map:
		return skipBlocks(compileSkip(w.(*avro.MapSchema).Values()), true)
	case avro.Union:
		types := w.(*avro.UnionSchema).Types()
		skips := make([]skipFn, len(types))
		for i, b := range types {
			skips[i] = compileSkip(b)
		}
		return func(r *reader) error {
			start := r.pos
			i, err := r.long()
			if err != nil {
				return err
			}
			if i < 0 || i >= int64(len(skips)) {
				r.pos = start
				return r.fail("union branch %d of %d", i, len(skips))
			}
			return skips[i](r)
		}
	case avro.Record:
		fields := w.(*avro.RecordSchema).Fields()
		skips := make([]skipFn, len(fields))
		for i, f := range fields {
			// A recursive record refers to itself by name: its fields'
			// skippers are made when first needed.
			skips[i] = lazySkip(f.Type())
		}
		return func(r *reader) error {
			for _, s := range skips {
				if err := s(r); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return func(r *reader) error { return r.fail("cannot read the writer's type %s", w.Type()) }
}

func lazySkip(w avro.Schema) skipFn {
	if _, named := w.(*avro.RefSchema); !named {
		return compileSkip(w)
	}
	s := sync.OnceValue(func() skipFn { return compileSkip(w) })
	return func(r *reader) error { return s()(r) }
}

func skipBlocks(item skipFn, keyed bool) skipFn {
	return func(r *reader) error {
		for {
			n, err := r.blockCount()
			if err != nil || n == 0 {
				return err
			}
			for range n {
				if keyed {
					if _, err := r.bytes(); err != nil {
						return err
					}
				}
				if err := item(r); err != nil {
					return err
				}
			}
		}
	}
}

// describe names a writer type with its logical type.
func describe(w avro.Schema) string {
	if lt := logical(w); lt != "" {
		return fmt.Sprintf("%s (%s)", w.Type(), lt)
	}
	return string(w.Type())
}
