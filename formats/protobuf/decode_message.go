package protobuf

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// compileMessageValue reads a nested message: a well-known type as its
// value, any other as a ROW.
func compileMessageValue(md protoreflect.MessageDescriptor, t row.Type) (valueDec, error) {
	inner := func(read func(r *rec, start, end int) (row.Value, error)) valueDec {
		return func(r *rec, off int, typ protowire.Type) (row.Value, int, error) {
			if typ != protowire.BytesType {
				return row.NullValue, 0, failAt(off, "wire type %d for a message field", typ)
			}
			v, n := protowire.ConsumeBytes(r.b[off:])
			if n < 0 {
				return row.NullValue, 0, failAt(off, "%v", protowire.ParseError(n))
			}
			x, err := read(r, off+n-len(v), off+n)
			return x, n, err
		}
	}
	switch name := md.FullName(); {
	case name == "google.protobuf.Timestamp" && (t.ID == row.TimestampLTZ || t.ID == row.Timestamp):
		mk := row.TimestampLTZValue
		if t.ID == row.Timestamp {
			mk = row.TimestampValue
		}
		return inner(func(r *rec, start, end int) (row.Value, error) {
			var secs, nanos int64
			if err := readWKT(r, start, end, func(num protowire.Number, x uint64) {
				if num == 1 {
					secs = int64(x)
				} else if num == 2 {
					nanos = int64(int32(x))
				}
			}); err != nil {
				return row.NullValue, err
			}
			us, ok := timestampMicros(secs, nanos)
			if !ok {
				return row.NullValue, failAt(start, "timestamp of %d seconds and %d nanos is out of range", secs, nanos)
			}
			return mk(us), nil
		}), nil
	case strings.HasPrefix(string(name), "google.protobuf.") && strings.HasSuffix(string(name), "Value") && md.Fields().Len() == 1:
		// A wrapper (Int64Value, StringValue, ...): its value, NULL when
		// the message is absent.
		val, err := compileValue(md.Fields().Get(0), t)
		if err != nil {
			return nil, err
		}
		zero := defaultValue(md.Fields().Get(0), t)
		return inner(func(r *rec, start, end int) (row.Value, error) {
			v := zero
			sub := withEnd(r, end)
			for off := start; off < end; {
				num, typ, n := protowire.ConsumeTag(sub.b[off:])
				if n < 0 {
					return row.NullValue, failAt(off, "bad field tag")
				}
				off += n
				if num == 1 {
					var err error
					if v, n, err = val(sub, off, typ); err != nil {
						return row.NullValue, err
					}
				} else if n = protowire.ConsumeFieldValue(num, typ, sub.b[off:]); n < 0 {
					return row.NullValue, failAt(off, "bad field %d", num)
				}
				off += n
			}
			return v, nil
		}), nil
	}
	if t.ID != row.Struct {
		return nil, fmt.Errorf("message %s cannot be read as %s", md.FullName(), t)
	}
	fields := t.Fields()
	sub, err := compileMessage(md, fields, nil, false)
	if err != nil {
		return nil, err
	}
	return inner(func(r *rec, start, end int) (row.Value, error) {
		vals := make([]row.Value, len(fields))
		if err := sub.decode(r, start, end, vals); err != nil {
			return row.NullValue, err
		}
		return row.StructValue(vals), nil
	}), nil
}

// timestampMicros is a Timestamp's seconds and nanos in microseconds;
// false when they do not fit an int64. Nanos is an int32 of either sign
// (the spec's 0 to 999999999 is not enforced, as protobuf's own readers
// do not), so a sum near an end is done exactly: the check on seconds
// alone let 9223372036853 s and 2147483647 ns wrap to a negative
// instant, and refused the seconds the encoder writes for the extreme
// instants.
func timestampMicros(secs, nanos int64) (int64, bool) {
	const lim = math.MaxInt64/1_000_000 - 1
	if secs > -lim && secs < lim {
		return secs*1e6 + nanos/1000, true
	}
	x := new(big.Int).Mul(big.NewInt(secs), big.NewInt(1e6))
	x.Add(x, big.NewInt(nanos/1000))
	return x.Int64(), x.IsInt64()
}

// readWKT reads the varint fields of a small well-known message.
func readWKT(r *rec, start, end int, set func(protowire.Number, uint64)) error {
	for off := start; off < end; {
		num, typ, n := protowire.ConsumeTag(r.b[off:end])
		if n < 0 {
			return failAt(off, "bad field tag")
		}
		off += n
		if typ == protowire.VarintType {
			x, m := protowire.ConsumeVarint(r.b[off:end])
			if m < 0 {
				return failAt(off, "%v", protowire.ParseError(m))
			}
			set(num, x)
			off += m
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, r.b[off:end]); n < 0 {
			return failAt(off, "bad field %d", num)
		}
		off += n
	}
	return nil
}

// defaultValue is the value of an absent field without presence: its
// declared default, or the zero of its kind; NULL for a message.
func defaultValue(fd protoreflect.FieldDescriptor, t row.Type) row.Value {
	d := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return row.BoolValue(d.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Int64Kind,
		protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return intOf(d.Int(), t)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return intOf(int64(d.Uint()), t)
	case protoreflect.FloatKind:
		if t.ID == row.Double {
			return row.DoubleValue(d.Float())
		}
		return row.FloatValue(float32(d.Float()))
	case protoreflect.DoubleKind:
		return row.DoubleValue(d.Float())
	case protoreflect.StringKind:
		if t.ID == row.Bytes {
			return row.BytesValue([]byte(d.String()))
		}
		return row.StringValue(d.String())
	case protoreflect.BytesKind:
		if t.ID == row.String {
			return row.StringValue(string(d.Bytes()))
		}
		return row.BytesValue(d.Bytes())
	case protoreflect.EnumKind:
		if t.ID == row.Int {
			return row.IntValue(int32(d.Enum()))
		}
		if v := fd.DefaultEnumValue(); v != nil {
			return row.StringValue(string(v.Name()))
		}
	}
	return row.NullValue
}

func intOf(n int64, t row.Type) row.Value {
	switch t.ID {
	case row.Int:
		return row.IntValue(int32(t.WrapInt(n)))
	case row.Double:
		return row.DoubleValue(float64(n))
	}
	return row.BigIntValue(n)
}

func kindName(fd protoreflect.FieldDescriptor) string {
	if fd.Kind() == protoreflect.MessageKind {
		return string(fd.Message().FullName())
	}
	return fd.Kind().String()
}
