package udf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/etld/etld/pipeline/row"
)

// The batch ABI (docs/udf.md): what crosses between etld and a function,
// the same bytes for every language. A call hands the function one batch
// of rows in columns and reads its results back in columns; all integers
// are little-endian. This file is the host's side: it writes batches of
// row.Values and reads results into row.Values.

// ABIVersion is the version of the batch layout, the first word of every
// batch; a module's etld_abi_version export must return it.
const ABIVersion = 1

// Call kinds, the second word of a batch.
const (
	KindScalar     = 1
	KindTable      = 2
	KindAccumulate = 3
	KindRetract    = 4
	KindMerge      = 5
	KindResult     = 6
)

// Type codes on the wire.
const (
	codeBoolean      = 1
	codeTinyInt      = 2
	codeSmallInt     = 3
	codeInt          = 4
	codeBigInt       = 5
	codeFloat        = 6
	codeDouble       = 7
	codeDecimal      = 8
	codeString       = 9
	codeBytes        = 10
	codeDate         = 11
	codeTime         = 12
	codeTimestamp    = 13
	codeTimestampLTZ = 14
	codeArray        = 15
	codeMap          = 16
	codeRow          = 17
)

// typeCode is t's code on the wire; a MULTISET is the MAP of its elements
// to their counts, as etld holds it.
func typeCode(t row.Type) (byte, error) {
	switch t.ID {
	case row.Boolean:
		return codeBoolean, nil
	case row.Int:
		switch t.IntBits() {
		case 8:
			return codeTinyInt, nil
		case 16:
			return codeSmallInt, nil
		}
		return codeInt, nil
	case row.BigInt:
		return codeBigInt, nil
	case row.Float:
		return codeFloat, nil
	case row.Double:
		return codeDouble, nil
	case row.Decimal:
		return codeDecimal, nil
	case row.String:
		return codeString, nil
	case row.Bytes:
		return codeBytes, nil
	case row.Date:
		return codeDate, nil
	case row.Time:
		return codeTime, nil
	case row.Timestamp:
		return codeTimestamp, nil
	case row.TimestampLTZ:
		return codeTimestampLTZ, nil
	case row.Array:
		return codeArray, nil
	case row.Map:
		return codeMap, nil
	case row.Struct:
		return codeRow, nil
	}
	return 0, fmt.Errorf("type %s cannot cross to a function", t)
}

// fixedWidth is the bytes of one value of a fixed-width code, 0 for the
// others.
func fixedWidth(code byte) int {
	switch code {
	case codeBoolean, codeTinyInt:
		return 1
	case codeSmallInt:
		return 2
	case codeInt, codeFloat, codeDate:
		return 4
	case codeBigInt, codeDouble, codeTime, codeTimestamp, codeTimestampLTZ:
		return 8
	case codeDecimal:
		return 16
	}
	return 0
}

// CheckType reports a type that cannot cross (none today but NULL's).
func CheckType(t row.Type) error {
	_, err := appendType(nil, t)
	return err
}

// appendType writes t: its code, then DECIMAL's precision and scale, the
// fractional digits of TIME and the timestamps, an ARRAY's element type,
// a MAP's key and value types, a ROW's field count and fields (a u16
// name length, the name, the type).
func appendType(dst []byte, t row.Type) ([]byte, error) {
	code, err := typeCode(t)
	if err != nil {
		return dst, err
	}
	dst = append(dst, code)
	switch code {
	case codeDecimal:
		dst = append(dst, byte(t.Precision), byte(t.Scale))
	case codeTime, codeTimestamp, codeTimestampLTZ:
		dst = append(dst, byte(t.Precision))
	case codeArray:
		return appendType(dst, t.Elem())
	case codeMap:
		if dst, err = appendType(dst, t.Key()); err != nil {
			return dst, err
		}
		return appendType(dst, t.Elem())
	case codeRow:
		fields := t.Fields()
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(fields)))
		for _, f := range fields {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(len(f.Name)))
			dst = append(dst, f.Name...)
			if dst, err = appendType(dst, f.Type); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// encoder writes a batch.
type encoder struct{ buf []byte }

func (e *encoder) u32(v int) { e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(v)) }

// header starts a batch of n rows and m argument columns whose results
// are of the types results.
func (e *encoder) header(kind, n, m int, results []row.Type) error {
	e.buf = e.buf[:0]
	e.u32(ABIVersion)
	e.u32(kind)
	e.u32(n)
	e.u32(m)
	e.u32(len(results))
	for _, t := range results {
		var err error
		if e.buf, err = appendType(e.buf, t); err != nil {
			return err
		}
	}
	return nil
}

// column writes a column of type t: its type, then its body.
func (e *encoder) column(t row.Type, vals []row.Value) error {
	var err error
	if e.buf, err = appendType(e.buf, t); err != nil {
		return err
	}
	e.body(t, vals)
	return nil
}

// body writes n = len(vals) values of t: n null flags (1 = NULL), then the
// values: fixed-width ones n times (a NULL's slot zero), strings and bytes
// as n+1 u32 offsets then the bytes, an ARRAY as n+1 offsets into its
// element column then that column's body, a MAP as offsets then the key
// and value bodies, a ROW as one body per field, each of n values.
func (e *encoder) body(t row.Type, vals []row.Value) {
	n := len(vals)
	start := len(e.buf)
	e.buf = append(e.buf, make([]byte, n)...)
	for i, v := range vals {
		if v.IsNull() {
			e.buf[start+i] = 1
		}
	}
	code, _ := typeCode(t)
	if w := fixedWidth(code); w > 0 {
		e.fixed(code, vals, w)
		return
	}
	switch code {
	case codeString, codeBytes:
		e.varlen(vals)
	case codeArray:
		var elems []row.Value
		e.offsets(vals, func(v row.Value) int {
			k := len(elems)
			for _, x := range v.Items() {
				elems = append(elems, x)
			}
			return len(elems) - k
		})
		e.body(t.Elem(), elems)
	case codeMap:
		var keys, values []row.Value
		e.offsets(vals, func(v row.Value) int {
			k := len(keys)
			for j, x := range v.Items() {
				if j%2 == 0 {
					keys = append(keys, x)
				} else {
					values = append(values, x)
				}
			}
			return len(keys) - k
		})
		e.body(t.Key(), keys)
		e.body(t.Elem(), values)
	case codeRow:
		fields := t.Fields()
		cols := make([][]row.Value, len(fields))
		for k := range cols {
			cols[k] = make([]row.Value, n)
		}
		for i, v := range vals {
			if v.IsNull() {
				continue
			}
			for k, x := range v.Items() {
				if k < len(cols) {
					cols[k][i] = x
				}
			}
		}
		for k, f := range fields {
			e.body(f.Type, cols[k])
		}
	}
}

func (e *encoder) fixed(code byte, vals []row.Value, w int) {
	start := len(e.buf)
	e.buf = append(e.buf, make([]byte, w*len(vals))...)
	b := e.buf[start:]
	le := binary.LittleEndian
	for i, v := range vals {
		if v.IsNull() {
			continue
		}
		at := b[i*w:]
		switch code {
		case codeBoolean:
			if v.Bool() {
				at[0] = 1
			}
		case codeTinyInt:
			at[0] = byte(v.Int64())
		case codeSmallInt:
			le.PutUint16(at, uint16(v.Int64()))
		case codeInt, codeDate:
			le.PutUint32(at, uint32(v.Int64()))
		case codeFloat:
			le.PutUint32(at, math.Float32bits(float32(v.Float64())))
		case codeDouble:
			le.PutUint64(at, math.Float64bits(v.Float64()))
		case codeBigInt, codeTime, codeTimestamp, codeTimestampLTZ:
			le.PutUint64(at, uint64(v.Int64()))
		case codeDecimal:
			d := v.Decimal128()
			le.PutUint64(at, d.Lo)
			le.PutUint64(at[8:], uint64(d.Hi))
		}
	}
}

// offsets writes n+1 offsets, the count of items each value adds (0 for
// a NULL) given by items.
func (e *encoder) offsets(vals []row.Value, items func(row.Value) int) {
	total := 0
	e.u32(0)
	for _, v := range vals {
		if !v.IsNull() {
			total += items(v)
		}
		e.u32(total)
	}
}

func (e *encoder) varlen(vals []row.Value) {
	total := 0
	e.u32(0)
	for _, v := range vals {
		total += len(v.Str())
		e.u32(total)
	}
	for _, v := range vals {
		e.buf = append(e.buf, v.Str()...)
	}
}

// decoder reads a function's result.
type decoder struct {
	buf []byte
	at  int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || d.at+n > len(d.buf) || d.at+n < d.at {
		d.fail("the result ends early (%d bytes, wanted %d more at %d)", len(d.buf), n, d.at)
		d.at = len(d.buf)
		return nil
	}
	b := d.buf[d.at : d.at+n]
	d.at += n
	return b
}

func (d *decoder) u32() int {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return int(binary.LittleEndian.Uint32(b))
}

// count reads a u32 that counts items of at least min bytes each,
// refusing one the rest of the result cannot hold.
func (d *decoder) count(min int) int {
	n := d.u32()
	if left := len(d.buf) - d.at; min > 0 && n > left/min {
		d.fail("the result counts %d items in %d bytes", n, left)
		return 0
	}
	return n
}

// readType reads a type and checks it is want (ignoring VARCHAR lengths
// and nullability, which do not cross).
func (d *decoder) readType(want row.Type) {
	var err error
	exp, err := appendType(nil, want)
	if err != nil {
		d.fail("%v", err)
		return
	}
	got := d.take(len(exp))
	if got != nil && string(got) != string(exp) {
		d.fail("a result of type %s, declared %s", describeType(got), want)
	}
}

// describeType names the type a result's bytes begin with, for an error.
func describeType(b []byte) string {
	names := map[byte]string{codeBoolean: "BOOLEAN", codeTinyInt: "TINYINT", codeSmallInt: "SMALLINT", codeInt: "INT",
		codeBigInt: "BIGINT", codeFloat: "FLOAT", codeDouble: "DOUBLE", codeDecimal: "DECIMAL", codeString: "STRING",
		codeBytes: "BYTES", codeDate: "DATE", codeTime: "TIME", codeTimestamp: "TIMESTAMP", codeTimestampLTZ: "TIMESTAMP_LTZ",
		codeArray: "ARRAY", codeMap: "MAP", codeRow: "ROW"}
	if len(b) == 0 {
		return "nothing"
	}
	if s, ok := names[b[0]]; ok {
		if len(b) > 1 && (b[0] == codeDecimal || b[0] >= codeArray) {
			return s + " (of other parameters)"
		}
		return s
	}
	return fmt.Sprintf("code %d", b[0])
}

// column reads a column of n values of t into out.
func (d *decoder) column(t row.Type, out []row.Value) {
	d.readType(t)
	d.body(t, out)
}

func (d *decoder) body(t row.Type, out []row.Value) {
	n := len(out)
	nulls := d.take(n)
	if d.err != nil {
		return
	}
	code, _ := typeCode(t)
	if w := fixedWidth(code); w > 0 {
		b := d.take(w * n)
		if d.err != nil {
			return
		}
		for i := range out {
			if nulls[i] != 0 {
				out[i] = row.NullValue
				continue
			}
			out[i] = fixedValue(t, code, b[i*w:])
		}
		return
	}
	switch code {
	case codeString, codeBytes:
		offs := d.offsets(n)
		data := d.take(d.last(offs))
		if d.err != nil {
			return
		}
		// One copy of the column's bytes out of the module's memory, its
		// strings slices of it: one allocation a batch, not one a row.
		block := string(data)
		for i := range out {
			lo, hi := offs[i], offs[i+1]
			switch {
			case nulls[i] != 0:
				out[i] = row.NullValue
			case lo > hi || hi > len(data):
				d.fail("offset %d of a %s column is out of order", i, t)
				return
			case code == codeString:
				out[i] = row.StringValue(block[lo:hi])
			default:
				out[i] = row.BytesValue(data[lo:hi])
			}
		}
	case codeArray, codeMap:
		offs := d.offsets(n)
		m := d.last(offs)
		if d.err == nil && m > len(d.buf)-d.at {
			d.fail("the result counts %d items in %d bytes", m, len(d.buf)-d.at)
		}
		if d.err != nil {
			return
		}
		var keys, items []row.Value
		if code == codeMap {
			keys = make([]row.Value, m)
			d.body(t.Key(), keys)
		}
		items = make([]row.Value, m)
		d.body(t.Elem(), items)
		if d.err != nil {
			return
		}
		for i := range out {
			lo, hi := offs[i], offs[i+1]
			switch {
			case nulls[i] != 0:
				out[i] = row.NullValue
			case lo > hi || hi > m:
				d.fail("offset %d of a %s column is out of order", i, t)
				return
			case code == codeMap:
				out[i] = row.MapValue(keys[lo:hi], items[lo:hi])
			default:
				out[i] = row.ArrayValue(items[lo:hi])
			}
		}
	case codeRow:
		fields := t.Fields()
		cols := make([][]row.Value, len(fields))
		for k, f := range fields {
			cols[k] = make([]row.Value, n)
			d.body(f.Type, cols[k])
		}
		if d.err != nil {
			return
		}
		vals := make([]row.Value, len(fields))
		for i := range out {
			if nulls[i] != 0 {
				out[i] = row.NullValue
				continue
			}
			for k := range fields {
				vals[k] = cols[k][i]
			}
			out[i] = row.StructValue(vals)
		}
	}
}

func fixedValue(t row.Type, code byte, b []byte) row.Value {
	le := binary.LittleEndian
	switch code {
	case codeBoolean:
		return row.BoolValue(b[0] != 0)
	case codeTinyInt:
		return row.IntValue(int32(int8(b[0])))
	case codeSmallInt:
		return row.IntValue(int32(int16(le.Uint16(b))))
	case codeInt:
		return row.IntValue(int32(le.Uint32(b)))
	case codeDate:
		return row.DateValue(int32(le.Uint32(b)))
	case codeFloat:
		return row.FloatValue(math.Float32frombits(le.Uint32(b)))
	case codeDouble:
		return row.DoubleValue(math.Float64frombits(le.Uint64(b)))
	case codeBigInt:
		return row.BigIntValue(int64(le.Uint64(b)))
	case codeTime:
		m := int64(le.Uint64(b)) % row.MicrosPerDay
		if m < 0 {
			m += row.MicrosPerDay
		}
		return row.TimeOfDayValue(m)
	case codeTimestamp:
		return row.TimestampValue(int64(le.Uint64(b)))
	case codeTimestampLTZ:
		return row.TimestampLTZValue(int64(le.Uint64(b)))
	case codeDecimal:
		return row.Decimal128Value(row.Int128{Lo: le.Uint64(b), Hi: int64(le.Uint64(b[8:]))}, t.Scale)
	}
	return row.NullValue
}

// offsets reads n+1 u32 offsets.
func (d *decoder) offsets(n int) []int {
	b := d.take(4 * (n + 1))
	if d.err != nil {
		return nil
	}
	offs := make([]int, n+1)
	for i := range offs {
		offs[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
	}
	if offs[0] != 0 {
		d.fail("a column's first offset is %d, not 0", offs[0])
	}
	return offs
}

func (d *decoder) last(offs []int) int {
	if len(offs) == 0 {
		return 0
	}
	return offs[len(offs)-1]
}
