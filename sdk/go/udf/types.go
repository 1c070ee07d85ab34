// Package udf is the Go SDK for etld's WebAssembly functions: it reads the
// batch etld writes into the module's memory and writes the results back,
// in the layout docs/udf.md describes. Build a module with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o f.wasm .
//
// and export each function with //go:wasmexport, its body a call of
// Scalar, Table or Aggregate. The package imports nothing of etld's, so a
// module built on it needs only this directory.
package udf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the batch layout this SDK reads and writes.
const Version = 1

// Call kinds: what a batch asks of the function.
const (
	KindScalar     = 1
	KindTable      = 2
	KindAccumulate = 3
	KindRetract    = 4
	KindMerge      = 5
	KindResult     = 6
)

// Code is a SQL type's code on the wire.
type Code byte

// The type codes.
const (
	Boolean      Code = 1
	TinyInt      Code = 2
	SmallInt     Code = 3
	Int          Code = 4
	BigInt       Code = 5
	Float        Code = 6
	Double       Code = 7
	Decimal      Code = 8
	String       Code = 9
	Bytes        Code = 10
	Date         Code = 11
	Time         Code = 12
	Timestamp    Code = 13
	TimestampLTZ Code = 14
	Array        Code = 15
	Map          Code = 16
	Row          Code = 17
)

// Width is the bytes of one value of a fixed-width type, 0 for the others.
func (c Code) Width() int {
	switch c {
	case Boolean, TinyInt:
		return 1
	case SmallInt:
		return 2
	case Int, Float, Date:
		return 4
	case BigInt, Double, Time, Timestamp, TimestampLTZ:
		return 8
	case Decimal:
		return 16
	}
	return 0
}

// Type is a SQL type as the batch describes it.
type Type struct {
	Code Code
	// Precision and Scale of a DECIMAL; Precision is also the fractional
	// digits of TIME and the timestamps.
	Precision, Scale int
	// Elem is an ARRAY's element type or a MAP's value type, Key a MAP's
	// key type; Fields a ROW's fields.
	Elem, Key *Type
	Fields    []Field
}

// Field is a field of a ROW type.
type Field struct {
	Name string
	Type *Type
}

var errShort = errors.New("etld udf: the batch ends early")

// reader reads a batch.
type reader struct {
	b  []byte
	at int
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || r.at+n > len(r.b) || r.at+n < r.at {
		return nil, errShort
	}
	b := r.b[r.at : r.at+n]
	r.at += n
	return b, nil
}

func (r *reader) u32() (int, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(b)), nil
}

func (r *reader) u16() (int, error) {
	b, err := r.take(2)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint16(b)), nil
}

func (r *reader) byte() (byte, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// typ reads a type: its code, then a DECIMAL's precision and scale, the
// fractional digits of TIME and the timestamps, an ARRAY's element type,
// a MAP's key and value types, a ROW's u16 field count and per field a
// u16 name length, the name and the type.
func (r *reader) typ(depth int) (*Type, error) {
	if depth > 64 {
		return nil, errors.New("etld udf: a type nested too deep")
	}
	c, err := r.byte()
	if err != nil {
		return nil, err
	}
	t := &Type{Code: Code(c)}
	switch t.Code {
	case Decimal:
		p, err := r.take(2)
		if err != nil {
			return nil, err
		}
		t.Precision, t.Scale = int(p[0]), int(p[1])
	case Time, Timestamp, TimestampLTZ:
		p, err := r.byte()
		if err != nil {
			return nil, err
		}
		t.Precision = int(p)
	case Array:
		if t.Elem, err = r.typ(depth + 1); err != nil {
			return nil, err
		}
	case Map:
		if t.Key, err = r.typ(depth + 1); err != nil {
			return nil, err
		}
		if t.Elem, err = r.typ(depth + 1); err != nil {
			return nil, err
		}
	case Row:
		n, err := r.u16()
		if err != nil {
			return nil, err
		}
		for range n {
			l, err := r.u16()
			if err != nil {
				return nil, err
			}
			name, err := r.take(l)
			if err != nil {
				return nil, err
			}
			ft, err := r.typ(depth + 1)
			if err != nil {
				return nil, err
			}
			t.Fields = append(t.Fields, Field{Name: string(name), Type: ft})
		}
	case Boolean, TinyInt, SmallInt, Int, BigInt, Float, Double, String, Bytes, Date:
	default:
		return nil, fmt.Errorf("etld udf: unknown type code %d", c)
	}
	return t, nil
}

// typeCache holds the types batches have carried, with their bytes: a
// function gets batches of the same few types call after call, and
// parses each once (an allocation costs microseconds in a Go module, and
// a map lookup more than a look at a few entries).
var typeCache []cachedType

type cachedType struct {
	bytes []byte
	t     *Type
}

// cachedTyp reads a type as typ does, from the cache when it was seen.
func (r *reader) cachedTyp() (*Type, error) {
	start := r.at
	if err := r.skipType(0); err != nil {
		return nil, err
	}
	key := r.b[start:r.at]
	for _, c := range typeCache {
		if string(c.bytes) == string(key) {
			return c.t, nil
		}
	}
	t, err := (&reader{b: key}).typ(0)
	if err != nil {
		return nil, err
	}
	if len(typeCache) >= 64 {
		typeCache = typeCache[:0]
	}
	typeCache = append(typeCache, cachedType{bytes: append([]byte(nil), key...), t: t})
	return t, nil
}

// skipType reads past a type without making it.
func (r *reader) skipType(depth int) error {
	if depth > 64 {
		return errors.New("etld udf: a type nested too deep")
	}
	c, err := r.byte()
	if err != nil {
		return err
	}
	switch Code(c) {
	case Decimal:
		_, err = r.take(2)
	case Time, Timestamp, TimestampLTZ:
		_, err = r.take(1)
	case Array:
		err = r.skipType(depth + 1)
	case Map:
		if err = r.skipType(depth + 1); err == nil {
			err = r.skipType(depth + 1)
		}
	case Row:
		n, err := r.u16()
		if err != nil {
			return err
		}
		for range n {
			l, err := r.u16()
			if err != nil {
				return err
			}
			if _, err := r.take(l); err != nil {
				return err
			}
			if err := r.skipType(depth + 1); err != nil {
				return err
			}
		}
	}
	return err
}

// appendType writes t as typ reads it.
func appendType(dst []byte, t *Type) []byte {
	dst = append(dst, byte(t.Code))
	switch t.Code {
	case Decimal:
		dst = append(dst, byte(t.Precision), byte(t.Scale))
	case Time, Timestamp, TimestampLTZ:
		dst = append(dst, byte(t.Precision))
	case Array:
		dst = appendType(dst, t.Elem)
	case Map:
		dst = appendType(appendType(dst, t.Key), t.Elem)
	case Row:
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(t.Fields)))
		for _, f := range t.Fields {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(len(f.Name)))
			dst = append(dst, f.Name...)
			dst = appendType(dst, f.Type)
		}
	}
	return dst
}
