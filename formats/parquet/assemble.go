package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/etld/etld/pipeline/row"
)

// assembler rebuilds the values of one column of a file, as its SQL type
// wants them, from the values of its leaf columns and their levels.
type assembler struct {
	t row.Type
	// first is the leaf column whose levels say whether the node is there:
	// any leaf under it would do.
	first int
	// def is the definition level at which an optional node is there.
	def      int
	optional bool
	// list and map: rep is the repetition level of the repeated group,
	// repDef the definition level at which it holds an entry.
	rep, repDef int
	kids        []*assembler
	// scalar reads a leaf's value (leaf is its column).
	leaf   int
	scalar func(pq.Value) (row.Value, error)
}

// newAssembler matches the file's column c to the type t; leaves gets
// the leaf columns it reads.
func newAssembler(c *pq.Column, t row.Type, leaves *[]int) (*assembler, error) {
	a := &assembler{t: t, optional: c.Optional(), def: c.MaxDefinitionLevel()}
	if c.Repeated() {
		return nil, fmt.Errorf("a repeated field outside a LIST or MAP group is not read")
	}
	switch t.ID {
	case row.Array, row.Map:
		if err := a.repeated(c, t, leaves); err != nil {
			return nil, err
		}
	case row.Struct:
		if c.Leaf() {
			return nil, fmt.Errorf("%s in the file, %s in the schema", describe(c), t)
		}
		a.first = -1
		for _, f := range t.Fields() {
			fc := columnNamed(c.Columns(), f.Name)
			if fc == nil {
				if f.Type.NotNull {
					return nil, fmt.Errorf("the file has no field %s, which is NOT NULL", f.Name)
				}
				a.kids = append(a.kids, nil)
				continue
			}
			k, err := newAssembler(fc, f.Type, leaves)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			if a.first < 0 {
				a.first = k.first
			}
			a.kids = append(a.kids, k)
		}
		if a.first < 0 {
			return nil, fmt.Errorf("the file's group has none of the fields of %s", t)
		}
	default:
		if !c.Leaf() {
			return nil, fmt.Errorf("%s in the file, %s in the schema", describe(c), t)
		}
		conv, err := converter(c, t)
		if err != nil {
			return nil, err
		}
		a.leaf, a.first, a.scalar = c.Index(), c.Index(), conv
		*leaves = append(*leaves, c.Index())
	}
	return a, nil
}

// repeated matches a LIST or MAP group of three levels, as the Parquet
// specification lays them out: group (LIST) { repeated group list {
// element } } and group (MAP) { repeated group key_value { key; value } }.
func (a *assembler) repeated(c *pq.Column, t row.Type, leaves *[]int) error {
	lt := c.Type().LogicalType()
	want, fields := "LIST", 1
	if t.ID == row.Map {
		want, fields = "MAP", 2
	}
	ok := !c.Leaf() && lt != nil && len(c.Columns()) == 1
	if ok {
		switch lt.Value.(type) {
		case *format.ListType:
			ok = t.ID == row.Array
		case *format.MapType:
			ok = t.ID == row.Map
		default:
			ok = false
		}
	}
	var rep *pq.Column
	if ok {
		rep = c.Columns()[0]
		ok = rep.Repeated() && !rep.Leaf() && len(rep.Columns()) == fields
	}
	if !ok {
		return fmt.Errorf("%s in the file, %s in the schema (a %s group of three levels)", describe(c), t, want)
	}
	a.rep, a.repDef = rep.MaxRepetitionLevel(), rep.MaxDefinitionLevel()
	kinds := []row.Type{t.Elem()}
	if t.ID == row.Map {
		kinds = []row.Type{t.Key(), t.Elem()}
	}
	for i, kt := range kinds {
		k, err := newAssembler(rep.Columns()[i], kt, leaves)
		if err != nil {
			return err
		}
		a.kids = append(a.kids, k)
	}
	a.first = a.kids[0].first
	return nil
}

// describe names a column's Parquet type for errors.
func describe(c *pq.Column) string {
	if !c.Leaf() {
		if lt := c.Type().LogicalType(); lt != nil && lt.Value != nil {
			return "a " + lt.Value.String() + " group"
		}
		return "a group"
	}
	s := c.Type().Kind().String()
	if lt := c.Type().LogicalType(); lt != nil && lt.Value != nil {
		s += " " + lt.Value.String()
	}
	return s
}

// read assembles the node's value for the current row, taking its
// values from the leaves' cursors.
func (a *assembler) read(cur cursors) (row.Value, error) {
	v, ok, err := cur[a.first].peek()
	if err != nil {
		return row.NullValue, err
	}
	if !ok {
		return row.NullValue, errors.New("a column chunk ends before its row group")
	}
	if a.optional && v.DefinitionLevel() < a.def {
		return row.NullValue, a.skip(cur)
	}
	switch a.t.ID {
	case row.Array, row.Map:
		return a.readRepeated(cur, v)
	case row.Struct:
		fields := make([]row.Value, len(a.kids))
		for i, k := range a.kids {
			if k == nil {
				continue
			}
			if fields[i], err = k.read(cur); err != nil {
				return row.NullValue, err
			}
		}
		return row.StructValue(fields), nil
	}
	pv, err := cur[a.leaf].next()
	if err != nil {
		return row.NullValue, err
	}
	return a.scalar(pv)
}

func (a *assembler) readRepeated(cur cursors, v pq.Value) (row.Value, error) {
	if v.DefinitionLevel() < a.repDef {
		// The group is there, its repeated group is not: empty.
		if err := a.skip(cur); err != nil {
			return row.NullValue, err
		}
		if a.t.ID == row.Map {
			return row.MapValue(nil, nil), nil
		}
		return row.ArrayValue(nil), nil
	}
	var items, keys []row.Value
	for {
		for i, k := range a.kids {
			x, err := k.read(cur)
			if err != nil {
				return row.NullValue, err
			}
			if i == 0 && a.t.ID == row.Map {
				if x.IsNull() {
					return row.NullValue, errors.New("a MAP key is NULL")
				}
				keys = append(keys, x)
				continue
			}
			items = append(items, x)
		}
		next, ok, err := cur[a.first].peek()
		if err != nil {
			return row.NullValue, err
		}
		if !ok || next.RepetitionLevel() < a.rep {
			break
		}
	}
	if a.t.ID == row.Map {
		return row.MapValue(keys, items), nil
	}
	return row.ArrayValue(items), nil
}

// skip takes the one value each leaf under an absent node holds.
func (a *assembler) skip(cur cursors) error {
	if a.scalar != nil {
		_, err := cur[a.leaf].next()
		return err
	}
	for _, k := range a.kids {
		if k != nil {
			if err := k.skip(cur); err != nil {
				return err
			}
		}
	}
	return nil
}

// converter is the function that reads the values of the leaf column c
// as values of the scalar type t, or an error saying why it cannot.
func converter(c *pq.Column, t row.Type) (func(pq.Value) (row.Value, error), error) {
	kind := c.Type().Kind()
	var lv format.LogicalTypeValue
	if lt := c.Type().LogicalType(); lt != nil {
		lv = lt.Value
	}
	mismatch := fmt.Errorf("%s in the file, %s in the schema", describe(c), t)
	switch t.ID {
	case row.Boolean:
		if kind == pq.Boolean {
			return func(v pq.Value) (row.Value, error) { return row.BoolValue(v.Boolean()), nil }, nil
		}
	case row.Int, row.BigInt:
		return integer(kind, lv, t, mismatch)
	case row.Float, row.Double:
		wide := t.ID == row.Double
		switch {
		case kind == pq.Float && wide:
			return func(v pq.Value) (row.Value, error) { return row.DoubleValue(float64(v.Float())), nil }, nil
		case kind == pq.Float:
			return func(v pq.Value) (row.Value, error) { return row.FloatValue(v.Float()), nil }, nil
		case kind == pq.Double && wide:
			return func(v pq.Value) (row.Value, error) { return row.DoubleValue(v.Double()), nil }, nil
		}
	case row.Decimal:
		return decimalConverter(kind, lv, t, mismatch)
	case row.String:
		if _, dec := lv.(*format.DecimalType); kind == pq.ByteArray && !dec {
			return func(v pq.Value) (row.Value, error) { return row.StringValue(string(v.ByteArray())), nil }, nil
		}
	case row.Bytes:
		if _, dec := lv.(*format.DecimalType); (kind == pq.ByteArray || kind == pq.FixedLenByteArray) && !dec {
			return func(v pq.Value) (row.Value, error) { return row.BytesValue(v.ByteArray()), nil }, nil
		}
	case row.Date:
		if _, ok := lv.(*format.DateType); ok && kind == pq.Int32 {
			return func(v pq.Value) (row.Value, error) { return row.DateValue(v.Int32()), nil }, nil
		}
	case row.Time:
		if tt, ok := lv.(*format.TimeType); ok {
			per := perSecond(tt.Unit)
			return func(v pq.Value) (row.Value, error) {
				n := int64(v.Int32())
				if kind == pq.Int64 {
					n = v.Int64()
				}
				us := scaleTo(n, per, 1e6)
				if us < 0 || us >= row.MicrosPerDay {
					return row.NullValue, fmt.Errorf("time of day %d µs is out of range", us)
				}
				return row.TimeOfDayValue(us), nil
			}, nil
		}
	case row.Timestamp, row.TimestampLTZ:
		return timestampConverter(kind, lv, t, mismatch)
	}
	return nil, mismatch
}

// integer reads INT32 and INT64 columns (signed or not) into TINYINT to
// BIGINT, refusing a value out of the type's range.
func integer(kind pq.Kind, lv format.LogicalTypeValue, t row.Type, mismatch error) (func(pq.Value) (row.Value, error), error) {
	unsigned := false
	switch it := lv.(type) {
	case nil:
	case *format.IntType:
		unsigned = !it.IsSigned
	default:
		return nil, mismatch
	}
	var get func(pq.Value) (int64, bool)
	switch {
	case kind == pq.Int32 && unsigned:
		get = func(v pq.Value) (int64, bool) { return int64(v.Uint32()), true }
	case kind == pq.Int32:
		get = func(v pq.Value) (int64, bool) { return int64(v.Int32()), true }
	case kind == pq.Int64 && unsigned:
		get = func(v pq.Value) (int64, bool) { return int64(v.Uint64()), v.Uint64() <= math.MaxInt64 }
	case kind == pq.Int64:
		get = func(v pq.Value) (int64, bool) { return v.Int64(), true }
	default:
		return nil, mismatch
	}
	if t.ID == row.BigInt {
		return func(v pq.Value) (row.Value, error) {
			n, ok := get(v)
			if !ok {
				return row.NullValue, fmt.Errorf("%d is out of the range of %s", v.Uint64(), t)
			}
			return row.BigIntValue(n), nil
		}, nil
	}
	return func(v pq.Value) (row.Value, error) {
		n, ok := get(v)
		if !ok || t.WrapInt(n) != n {
			return row.NullValue, fmt.Errorf("%s is out of the range of %s", v, t)
		}
		return row.IntValue(int32(n)), nil
	}, nil
}

// decimalConverter reads DECIMAL columns of any physical type, and plain
// integers, at the schema's scale.
func decimalConverter(kind pq.Kind, lv format.LogicalTypeValue, t row.Type, mismatch error) (func(pq.Value) (row.Value, error), error) {
	scale := 0
	switch d := lv.(type) {
	case *format.DecimalType:
		scale = int(d.Scale)
	case nil, *format.IntType:
		if kind != pq.Int32 && kind != pq.Int64 {
			return nil, mismatch
		}
	default:
		return nil, mismatch
	}
	if scale > t.Scale {
		return nil, fmt.Errorf("%w: the file's scale %d is larger", mismatch, scale)
	}
	var get func(pq.Value) (row.Int128, error)
	switch kind {
	case pq.Int32:
		get = func(v pq.Value) (row.Int128, error) { return row.Int128Of(int64(v.Int32())), nil }
	case pq.Int64:
		get = func(v pq.Value) (row.Int128, error) { return row.Int128Of(v.Int64()), nil }
	case pq.ByteArray, pq.FixedLenByteArray:
		get = func(v pq.Value) (row.Int128, error) { return bigEndian(v.ByteArray()) }
	default:
		return nil, mismatch
	}
	return func(v pq.Value) (row.Value, error) {
		x, err := get(v)
		if err == nil && scale != t.Scale {
			x, err = rescale(x, scale, t.Scale)
		}
		if err == nil && !x.DigitsFit(t.Precision) {
			err = fmt.Errorf("a value of more than %d digits", t.Precision)
		}
		if err != nil {
			return row.NullValue, fmt.Errorf("%s: %w", t, err)
		}
		return row.Decimal128Value(x, t.Scale), nil
	}, nil
}

// bigEndian reads a two's complement integer of up to 16 bytes.
func bigEndian(b []byte) (row.Int128, error) {
	if len(b) > 16 {
		for _, c := range b[:len(b)-16] {
			if c != 0 && c != 0xff {
				return row.Int128{}, fmt.Errorf("an unscaled value of %d bytes", len(b))
			}
		}
		b = b[len(b)-16:]
	}
	var full [16]byte
	if len(b) > 0 && b[0]&0x80 != 0 {
		for i := range full {
			full[i] = 0xff
		}
	}
	copy(full[16-len(b):], b)
	return row.Int128{Hi: int64(binary.BigEndian.Uint64(full[:8])), Lo: binary.BigEndian.Uint64(full[8:])}, nil
}

// timestampConverter reads INT64 TIMESTAMP columns of any unit, and the
// INT96 timestamps older writers (Flink's and Spark's default) write.
func timestampConverter(kind pq.Kind, lv format.LogicalTypeValue, t row.Type, mismatch error) (func(pq.Value) (row.Value, error), error) {
	mk := row.TimestampValue
	if t.ID == row.TimestampLTZ {
		mk = row.TimestampLTZValue
	}
	// Any instant whose microseconds fit an int64 is read, as Flink's
	// readers take any epoch; one past that is an error where it used to
	// wrap into another instant.
	if kind == pq.Int96 && lv == nil {
		return func(v pq.Value) (row.Value, error) {
			x := v.Int96()
			ns := int64(uint64(x[1])<<32 | uint64(x[0]))
			day := int64(x[2])
			us, ok := int96Micros(day, ns)
			if !ok {
				return row.NullValue, fmt.Errorf("INT96 timestamp of Julian day %d and %d ns is out of range", day, ns)
			}
			return mk(us), nil
		}, nil
	}
	ts, ok := lv.(*format.TimestampType)
	if !ok || kind != pq.Int64 {
		return nil, mismatch
	}
	per := perSecond(ts.Unit)
	if per == 1e3 {
		return func(v pq.Value) (row.Value, error) {
			n := v.Int64()
			if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
				return row.NullValue, fmt.Errorf("timestamp of %d ms is out of range", n)
			}
			return mk(n * 1000), nil
		}, nil
	}
	return func(v pq.Value) (row.Value, error) { return mk(scaleTo(v.Int64(), per, 1e6)), nil }, nil
}

// int96Micros is an INT96 timestamp, a Julian day and the nanoseconds
// of it (not held below a day's), in microseconds since the epoch;
// false when they do not fit an int64.
func int96Micros(julianDay, ns int64) (int64, bool) {
	const unixJulianDay = 2440588
	d := julianDay - unixJulianDay
	if d > math.MaxInt64/row.MicrosPerDay || d < math.MinInt64/row.MicrosPerDay {
		return 0, false
	}
	p, q := d*row.MicrosPerDay, ns/1000
	sum := p + q
	if (q > 0 && sum < p) || (q < 0 && sum > p) {
		return 0, false
	}
	return sum, true
}

func perSecond(u format.TimeUnit) int64 {
	switch u.Value.(type) {
	case *format.MilliSeconds:
		return 1e3
	case *format.MicroSeconds:
		return 1e6
	}
	return 1e9
}

// scaleTo converts n in units of 1/from seconds to 1/to, flooring.
func scaleTo(n, from, to int64) int64 {
	if from <= to {
		return n * (to / from)
	}
	q, r := n/(from/to), n%(from/to)
	if r < 0 {
		q--
	}
	return q
}
