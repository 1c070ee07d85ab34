package row

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// The binary codec below is how operator state and checkpoints hold rows
// and values: compact (a BIGINT 7 is two bytes), exact (a decoded value is
// identical to the encoded one, float bits and all) and safe to decode
// from a damaged file (every length is checked; errors, never panics).
//
// A value is its type byte followed by a payload:
//
//	NULL                          nothing
//	BOOLEAN                       uvarint 0 or 1
//	INT BIGINT DATE TIMESTAMP(_LTZ) zig-zag varint
//	FLOAT DOUBLE                  8 bytes, the float64 bits little-endian
//	DECIMAL                       scale byte, zig-zag varint unscaled; for an
//	                              unscaled value wider than int64, the scale
//	                              byte | 0x80, then the low and the high word,
//	                              8 bytes each, little-endian (so state written
//	                              before DECIMAL(38) reads back unchanged)
//	STRING BYTES                  uvarint length, the bytes
//	ARRAY MAP ROW                 uvarint length, the nested encoding
//	                              (nested.go: a count, then values)
//
// A row is its uvarint width followed by its values.

// AppendValue appends v's encoding to dst.
func AppendValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.id))
	switch v.id {
	case Null:
	case Boolean:
		dst = binary.AppendUvarint(dst, v.n)
	case Int, BigInt, Date, Timestamp, TimestampLTZ, Time:
		dst = binary.AppendVarint(dst, int64(v.n))
	case Float, Double:
		dst = binary.LittleEndian.AppendUint64(dst, v.n)
	case Decimal:
		if v.s != "" {
			dst = append(dst, v.scale|wideKeyBit)
			dst = binary.LittleEndian.AppendUint64(dst, v.n)
			return append(dst, v.s...)
		}
		dst = append(dst, v.scale)
		dst = binary.AppendVarint(dst, int64(v.n))
	case String, Bytes, Array, Map, Struct:
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	}
	return dst
}

// AppendRow appends r's encoding to dst.
func AppendRow(dst []byte, r Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	for _, v := range r {
		dst = AppendValue(dst, v)
	}
	return dst
}

// AppendString appends a uvarint length and s.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// ErrCorrupt is wrapped by every Decoder error.
var ErrCorrupt = errors.New("corrupt encoding")

// Decoder reads what the Append functions wrote. Its first error sticks:
// later reads return zero values, and Err reports where it went wrong, so
// that a caller checks once at the end.
type Decoder struct {
	buf []byte
	off int
	err error
	// alias makes Str return strings that share buf: set only when buf
	// is an immutable string's bytes (a nested value's items).
	alias bool
	// src, when not nil, is the stream buf is a window of
	// (codec_stream.go): reads past buf's end refill it.
	src *stream
	// widen, when not nil, retags every value (and key, WidenKey) of a
	// type it names as the type it maps it to: SetWiden.
	widen map[TypeID]TypeID
	// rowTo and keyTo, when not nil, retag by column instead
	// (SetWidenCols): a row's i-th value to rowTo[i], a key's i-th value
	// to keyTo[i].
	rowTo, keyTo []TypeID
}

// SetWidenCols makes the decoder retag by column instead of by type,
// for the state of an operator whose columns did not all widen: the
// i-th value of each row Row reads to rowTo[i], the i-th value of each
// key KeyStr, KeyBytes and WidenKey read to keyTo[i], Null (or a place
// past the end) leaving the value as saved. Values read on their own
// (Value) are not retagged. It replaces a SetWiden mapping.
func (d *Decoder) SetWidenCols(rowTo, keyTo []TypeID) {
	d.widen, d.rowTo, d.keyTo = nil, rowTo, keyTo
}

// retagAt retags v, the value at a row's place pos, as SetWidenCols
// asked.
func (d *Decoder) retagAt(v Value, pos int) Value {
	if pos >= len(d.rowTo) || d.rowTo[pos] == Null || v.IsNull() || v.id == d.rowTo[pos] {
		return v
	}
	to := d.rowTo[pos]
	if !(v.id == Int && to == BigInt) && !(v.id == Float && to == Double) {
		d.Fail("cannot widen %s to %s in place at column %d", v.id, to, pos)
		return v
	}
	v.id = to
	return v
}

// SetWiden makes the decoder read every value of a type w maps as the
// type w maps it to, for state saved under narrower column types: INT
// to BIGINT (an INT is held as its int64) and FLOAT to DOUBLE (a FLOAT
// as its float64), whose payloads are the same and only the tag
// differs. Other mappings fail the decoder at their first value.
func (d *Decoder) SetWiden(w map[TypeID]TypeID) { d.widen = w }

// Widening reports whether SetWiden set a mapping.
func (d *Decoder) Widening() bool { return d.widen != nil }

// retag applies the SetWiden mapping to a value's type.
func (d *Decoder) retag(id TypeID) TypeID {
	to, ok := d.widen[id]
	if !ok {
		return id
	}
	if !(id == Int && to == BigInt) && !(id == Float && to == Double) {
		d.Fail("cannot widen %s to %s in place", id, to)
		return id
	}
	return to
}

// WidenKey returns key, a run of AppendKey encodings, with the SetWiden
// mapping applied to each value's type; key itself without a mapping,
// else a new slice. A key that does not parse fails the decoder.
func (d *Decoder) WidenKey(key []byte) []byte {
	if d.keyTo != nil {
		return d.WidenKeyCols(key, d.keyTo)
	}
	if d.widen == nil || d.err != nil {
		return key
	}
	return d.widenKey(key, func(_ int, id TypeID) TypeID { return d.retag(id) })
}

// WidenKeyCols returns key, a run of AppendKey encodings, with the value
// at position i retagged to to[i] where that is not Null (INT to BIGINT,
// FLOAT to DOUBLE, as SetWiden's mapping), the others as they are: the
// key of an operator whose key columns did not all widen. key itself
// when to is nil, else a new slice. A key that does not parse, or a
// retag that is no widening, fails the decoder.
func (d *Decoder) WidenKeyCols(key []byte, to []TypeID) []byte {
	if to == nil || d.err != nil {
		return key
	}
	return d.widenKey(key, func(pos int, id TypeID) TypeID {
		if pos >= len(to) || to[pos] == Null || id == Null {
			return id
		}
		if !(id == Int && to[pos] == BigInt) && !(id == Float && to[pos] == Double) {
			d.Fail("cannot widen %s to %s in place at key position %d", id, to[pos], pos)
			return id
		}
		return to[pos]
	})
}

// widenKey rewrites key's type tags with retag(position, tag).
func (d *Decoder) widenKey(key []byte, retag func(int, TypeID) TypeID) []byte {
	out := make([]byte, 0, len(key))
	for i, pos := 0, 0; i < len(key); pos++ {
		if i+2 > len(key) {
			d.Fail("key of %d bytes cut at %d", len(key), i)
			return key
		}
		id, scale := TypeID(key[i]), key[i+1]
		n := 8
		switch {
		case id == Null:
			n = 0
		case id == Decimal && scale&wideKeyBit != 0:
			n = 16
		case id == String || id == Bytes || id == Array || id == Map || id == Struct:
			l, w := binary.Uvarint(key[i+2:])
			if w <= 0 || uint64(len(key)-i-2-w) < l {
				d.Fail("key of %d bytes: a bad length at %d", len(key), i)
				return key
			}
			n = w + int(l)
		}
		if i+2+n > len(key) {
			d.Fail("key of %d bytes cut at %d", len(key), i)
			return key
		}
		out = append(out, byte(retag(pos, id)), scale)
		out = append(out, key[i+2:i+2+n]...)
		i += 2 + n
	}
	return out
}

// KeyStr reads a string that holds a key (a run of AppendKey
// encodings: row.KeyOf) with the SetWiden mapping applied, as WidenKey
// does; Str without a mapping.
func (d *Decoder) KeyStr() string {
	s := d.Str()
	if d.widen == nil && d.keyTo == nil {
		return s
	}
	return string(d.WidenKey([]byte(s)))
}

// KeyBytes is KeyStr's key as bytes of its own (Bytes without a mapping).
func (d *Decoder) KeyBytes() []byte { return d.WidenKey(d.Bytes()) }

// NewDecoder reads b; strings it returns are copies, b may be reused.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Err is the first error, or nil.
func (d *Decoder) Err() error { return d.err }

// Len is the number of bytes not yet read; for a stream, at most that
// many.
func (d *Decoder) Len() int {
	if d.src != nil {
		return len(d.buf) - d.off + d.src.left()
	}
	return len(d.buf) - d.off
}

// Fail records err (the first one wins), e.g. a value the caller finds
// out of range, with the offset it was found at.
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w at byte %d: %s", ErrCorrupt, d.pos(), fmt.Sprintf(format, args...))
	}
}

// End reports an error if bytes are left over or one occurred.
func (d *Decoder) End() error {
	if d.src != nil {
		return d.endStream()
	}
	if d.err == nil && d.off != len(d.buf) {
		d.Fail("%d bytes after the end", len(d.buf)-d.off)
	}
	return d.err
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	if n == 0 && d.fill(binary.MaxVarintLen64) > 0 {
		v, n = binary.Uvarint(d.buf[d.off:])
	}
	if n <= 0 || (n > 1 && d.buf[d.off+n-1] == 0) {
		// An overlong varint is refused too: the encoding stays canonical.
		d.Fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

// Varint reads a zig-zag varint: binary.AppendVarint's encoding is the
// zig-zag mapping over a uvarint, so the same checks apply.
func (d *Decoder) Varint() int64 {
	u := d.Uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// Count reads a uvarint that counts items of at least min bytes each and
// checks that many could still follow, so that a damaged count cannot
// make the caller allocate gigabytes.
func (d *Decoder) Count(min int) int {
	n := d.Uvarint()
	if d.err == nil && n > uint64(d.Len()/max(min, 1)) {
		d.Fail("count %d exceeds the %d bytes left", n, d.Len())
		return 0
	}
	return int(n)
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.buf) && d.fill(1) < 1 {
		d.Fail("truncated")
		return 0
	}
	b := d.buf[d.off]
	d.off++
	return b
}

// Uint64 reads 8 bytes little-endian.
func (d *Decoder) Uint64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.buf)-d.off < 8 && d.fill(8) < 8 {
		d.Fail("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.buf[d.off:])
	d.off += 8
	return v
}

// Bytes reads a length-prefixed byte string; the result aliases the
// decoder's buffer, except for a stream's, which refills it: then it is
// a copy.
func (d *Decoder) Bytes() []byte {
	b := d.BytesView()
	if d.src != nil && b != nil {
		return append([]byte{}, b...)
	}
	return b
}

// BytesView reads a length-prefixed byte string that aliases the
// decoder's buffer until its next read: what a caller copies anyway
// costs no copy of its own.
func (d *Decoder) BytesView() []byte {
	n := d.Count(1)
	if d.err != nil {
		return nil
	}
	if len(d.buf)-d.off < n && d.fill(n) < n {
		d.Fail("truncated")
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

// Str reads a length-prefixed string.
func (d *Decoder) Str() string {
	b := d.BytesView()
	if d.alias {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return string(b)
}

// Value reads a value.
func (d *Decoder) Value() Value {
	v := d.value()
	if d.widen != nil && !v.IsNull() {
		v.id = d.retag(v.id)
	}
	return v
}

func (d *Decoder) value() Value {
	if d.err == nil && d.src == nil {
		if v, ok := d.quickValue(); ok {
			return v
		}
	}
	id := TypeID(d.Byte())
	if d.err != nil {
		return NullValue
	}
	switch id {
	case Null:
		return NullValue
	case Boolean:
		n := d.Uvarint()
		if n > 1 {
			d.Fail("boolean %d", n)
			return NullValue
		}
		return Value{id: id, n: n}
	case Int:
		v := d.Varint()
		if v != int64(int32(v)) {
			d.Fail("INT %d out of range", v)
			return NullValue
		}
		return Value{id: id, n: uint64(v)}
	case Date:
		v := d.Varint()
		if v != int64(int32(v)) {
			d.Fail("DATE %d out of range", v)
			return NullValue
		}
		return Value{id: id, n: uint64(v)}
	case BigInt, Timestamp, TimestampLTZ:
		return Value{id: id, n: uint64(d.Varint())}
	case Time:
		v := d.Varint()
		if v < 0 || v >= MicrosPerDay {
			d.Fail("TIME %d out of range", v)
			return NullValue
		}
		return Value{id: id, n: uint64(v)}
	case Float, Double:
		return Value{id: id, n: d.Uint64()}
	case Decimal:
		scale := d.Byte()
		if scale&wideKeyBit != 0 {
			lo := d.Uint64()
			hi := d.Uint64()
			scale &^= wideKeyBit
			if d.err == nil && scale > MaxDecimalPrecision {
				d.Fail("DECIMAL scale %d out of range", scale)
			}
			if d.err != nil {
				return NullValue
			}
			return Decimal128Value(Int128{Hi: int64(hi), Lo: lo}, int(scale))
		}
		return Value{id: id, scale: scale, n: uint64(d.Varint())}
	case String, Bytes, Array, Map, Struct:
		return Value{id: id, s: d.Str()}
	}
	d.Fail("unknown type %d", id)
	return NullValue
}

// quickValue reads a NULL, an integer-like value or a string held whole
// in buf (no stream to refill it) in one go, not a call per byte and a
// check of the error each: a sort's rows, decoded back, are mostly
// these. ok false leaves d as it was, for value's general path and its
// errors (a damaged or overlong encoding).
func (d *Decoder) quickValue() (Value, bool) {
	b := d.buf[d.off:]
	if len(b) == 0 {
		return NullValue, false
	}
	switch id := TypeID(b[0]); id {
	case Null:
		d.off++
		return NullValue, true
	case BigInt, Timestamp, TimestampLTZ:
		u, n := binary.Uvarint(b[1:])
		if n <= 0 || n > 1 && b[n] == 0 {
			return NullValue, false
		}
		d.off += 1 + n
		v := int64(u >> 1)
		if u&1 != 0 {
			v = ^v
		}
		return Value{id: id, n: uint64(v)}, true
	case String, Bytes, Array, Map, Struct:
		l, n := binary.Uvarint(b[1:])
		if n <= 0 || n > 1 && b[n] == 0 || l > uint64(len(b)-1-n) {
			return NullValue, false
		}
		str := b[1+n : 1+n+int(l) : 1+n+int(l)]
		d.off += 1 + n + int(l)
		if d.alias {
			return Value{id: id, s: unsafe.String(unsafe.SliceData(str), len(str))}, true
		}
		return Value{id: id, s: string(str)}, true
	}
	return NullValue, false
}

// skipValue reads past a value without making it: its length is checked
// as Value checks it, its content is not (Value checks the value read).
func (d *Decoder) skipValue() {
	id := TypeID(d.Byte())
	if d.err != nil {
		return
	}
	switch id {
	case Null:
	case Boolean, Int, Date, BigInt, Timestamp, TimestampLTZ, Time:
		d.Uvarint()
	case Float, Double:
		d.Uint64()
	case Decimal:
		if d.Byte()&wideKeyBit != 0 {
			d.Uint64()
			d.Uint64()
			return
		}
		d.Uvarint()
	case String, Bytes, Array, Map, Struct:
		n := d.Count(1)
		d.off += n
	default:
		d.Fail("unknown type %d", id)
	}
}

// CopyRow decodes the one row encoded in b (AppendRow) into a new slice
// whose strings share a single copy of b: two allocations whatever the
// row's width, and b may be reused.
func CopyRow(b []byte) (Row, error) {
	d := itemDecoder(string(b))
	r := d.Row()
	if err := d.End(); err != nil {
		return nil, err
	}
	return r, nil
}

// Row reads a row into a new slice.
func (d *Decoder) Row() Row {
	n := d.Count(1)
	if d.err != nil {
		return nil
	}
	r := make(Row, n)
	for i := range r {
		r[i] = d.Value()
		if d.rowTo != nil {
			r[i] = d.retagAt(r[i], i)
		}
	}
	if d.err != nil {
		return nil
	}
	return r
}
