package aggop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// The GROUP BY's key index holds its keys packed, not in row.KeyOf's
// encoding: that one spends two bytes of type and scale on every value
// and eight on every integer, so a key of a short STRING and a BIGINT
// (("g1234", 7): 18 bytes) is past the 15 bytes state.KeyTable keeps
// inline in its entry, and each lookup read a third random line, the
// key table's arena. Packed, a value is one tag byte (its type) and, for
// an integer kind, the zigzag varint of its number, for a STRING the
// varint of its length and its bytes (the key's last value its bytes
// alone): the same key takes 9 bytes, and a lookup compares the
// entry's two words. A value of any other kind, or
// with a scale, is the escape tag and its row.KeyOf bytes. Packing is a
// bijection with row.KeyOf's encoding, value by value, so snapshots,
// key groups and the decoded output keep that encoding (canonicalKey,
// packCanonical), and equal keys are equal packed.

// packedEscape tags a value kept in row.KeyOf's encoding; packedTail
// a STRING that is the key's last value, whose length is the rest of
// the key: no length byte, so a last column of 14 characters
// (sensor_1234567) still fits inline.
const (
	packedEscape = 0xff
	packedTail   = 0x80 | byte(row.String)
)

// packedInt reports whether the values of type id are a number in the
// word row.KeyOf writes, as int64: the kinds packed as a varint.
func packedInt(id row.TypeID) bool {
	switch id {
	case row.Boolean, row.Int, row.BigInt, row.Date, row.Timestamp, row.TimestampLTZ:
		return true
	}
	return false
}

// appendPacked appends the packed key of the columns idx of r. A
// length or number below 128 is one byte, written without
// binary.AppendUvarint's loop: the common key, once per row.
func appendPacked(dst []byte, r row.Row, idx []int) []byte {
	for j, i := range idx {
		v := &r[i]
		id := v.Type()
		if v.Scale() != 0 || v.WideDecimal() {
			dst = append(dst, packedEscape)
			dst = row.AppendKey(dst, *v)
			continue
		}
		switch {
		case id == row.String && j == len(idx)-1:
			dst = append(append(dst, packedTail), v.Str()...)
		case id == row.String:
			s := v.Str()
			if len(s) < 0x80 {
				dst = append(dst, byte(row.String), byte(len(s)))
			} else {
				dst = binary.AppendUvarint(append(dst, byte(row.String)), uint64(len(s)))
			}
			dst = append(dst, s...)
		case id == row.Null:
			dst = append(dst, byte(row.Null))
		case packedInt(id):
			x := v.Int64()
			if z := uint64(x<<1) ^ uint64(x>>63); z < 0x80 { // binary.AppendVarint's zigzag
				dst = append(dst, byte(id), byte(z))
			} else {
				dst = binary.AppendVarint(append(dst, byte(id)), x)
			}
		default:
			dst = append(dst, packedEscape)
			dst = row.AppendKey(dst, *v)
		}
	}
	return dst
}

// canonicalKey appends row.KeyOf's encoding of the packed key p.
func canonicalKey(dst, p []byte) ([]byte, error) {
	for len(p) > 0 {
		tag := p[0]
		p = p[1:]
		switch id := row.TypeID(tag); {
		case tag == packedEscape:
			n, err := canonicalLen(p)
			if err != nil {
				return dst, err
			}
			dst, p = append(dst, p[:n]...), p[n:]
		case tag == packedTail:
			dst = append(dst, byte(row.String), 0)
			dst = binary.AppendUvarint(dst, uint64(len(p)))
			dst, p = append(dst, p...), nil
		case id == row.Null:
			dst = append(dst, byte(row.Null), 0)
		case id == row.String:
			n, w := binary.Uvarint(p)
			if w <= 0 || n > uint64(len(p)-w) {
				return dst, fmt.Errorf("packed group key: bad string length")
			}
			dst = append(dst, byte(row.String), 0)
			dst, p = append(dst, p[:w+int(n)]...), p[w+int(n):]
		case packedInt(id):
			x, w := binary.Varint(p)
			if w <= 0 {
				return dst, fmt.Errorf("packed group key: bad number")
			}
			dst = append(dst, tag, 0)
			dst, p = binary.LittleEndian.AppendUint64(dst, uint64(x)), p[w:]
		default:
			return dst, fmt.Errorf("packed group key: unknown tag %d", tag)
		}
	}
	return dst, nil
}

// decodePacked reads the packed key p into dst: DecodeKey of its
// canonicalKey, without writing that encoding out (a streaming flush
// decodes the key of every group it emits). Its STRING values are
// copies, not views of p.
func decodePacked(dst []row.Value, p []byte) error {
	for i := range dst {
		if len(p) == 0 {
			return fmt.Errorf("packed group key truncated at column %d", i)
		}
		tag := p[0]
		p = p[1:]
		switch id := row.TypeID(tag); {
		case tag == packedTail:
			dst[i], p = row.StringValue(string(p)), nil
		case id == row.Null:
			dst[i] = row.NullValue
		case id == row.String:
			n, w := binary.Uvarint(p)
			if w <= 0 || n > uint64(len(p)-w) {
				return fmt.Errorf("packed group key: bad string length")
			}
			dst[i], p = row.StringValue(string(p[w:w+int(n)])), p[w+int(n):]
		case packedInt(id):
			x, w := binary.Varint(p)
			if w <= 0 {
				return fmt.Errorf("packed group key: bad number")
			}
			dst[i], p = valueOfWord(row.Type{ID: id}, x), p[w:] // a packed number is the word of its kind
		case tag == packedEscape:
			n, err := canonicalLen(p)
			if err != nil {
				return err
			}
			if err := DecodeKey(dst[i:i+1], string(p[:n])); err != nil {
				return err
			}
			p = p[n:]
		default:
			return fmt.Errorf("packed group key: unknown tag %d", tag)
		}
	}
	if len(p) != 0 {
		return fmt.Errorf("packed group key has %d bytes after its %d columns", len(p), len(dst))
	}
	return nil
}

// packCanonical appends the packed form of k, a key in row.KeyOf's
// encoding: canonicalKey's inverse.
func packCanonical(dst, k []byte) ([]byte, error) {
	for len(k) > 0 {
		n, err := canonicalLen(k)
		if err != nil {
			return dst, err
		}
		v := k[:n]
		k = k[n:]
		switch id := row.TypeID(v[0]); {
		case v[1] != 0:
			dst = append(append(dst, packedEscape), v...)
		case id == row.Null:
			dst = append(dst, byte(row.Null))
		case id == row.String && len(k) == 0:
			_, w := binary.Uvarint(v[2:])
			dst = append(append(dst, packedTail), v[2+w:]...)
		case id == row.String:
			dst = append(append(dst, byte(row.String)), v[2:]...)
		case packedInt(id):
			dst = append(dst, byte(id))
			dst = binary.AppendVarint(dst, int64(binary.LittleEndian.Uint64(v[2:])))
		default:
			dst = append(append(dst, packedEscape), v...)
		}
	}
	return dst, nil
}

// canonicalLen is the length of the first value of k, a key in
// row.KeyOf's encoding (row.AppendKey's layout, as DecodeKey reads it).
func canonicalLen(k []byte) (int, error) {
	if len(k) < 2 {
		return 0, fmt.Errorf("group key truncated")
	}
	id, scale := row.TypeID(k[0]), k[1]
	n := 2
	switch {
	case id == row.Decimal && scale&0x80 != 0:
		n += 16
	case id == row.Null:
	case id == row.String || id == row.Bytes || id == row.Array || id == row.Map || id == row.Struct:
		l, w := binary.Uvarint(k[2:])
		if w <= 0 || l > uint64(len(k)-2-w) {
			return 0, fmt.Errorf("group key: bad length")
		}
		n += w + int(l)
	default:
		n += 8
	}
	if n > len(k) {
		return 0, fmt.Errorf("group key truncated")
	}
	return n, nil
}
