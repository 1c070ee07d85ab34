package protobuf

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/etld/etld/pipeline/row"
)

// msgEnc writes a row as a message: each column as the field of its name.
// NULL is an absent field; a proto3 field without presence that holds its
// zero value is left out too, as proto's own encoder does.
type msgEnc struct {
	steps []encStep
}

type encStep struct {
	col    int
	column string
	enc    fieldEnc
}

// fieldEnc appends a non-NULL value of one field, tag included.
type fieldEnc func(dst []byte, v row.Value) ([]byte, error)

func compileMessageEnc(md protoreflect.MessageDescriptor, columns []row.Field) (*msgEnc, error) {
	e := &msgEnc{}
	var errs []error
	for i, c := range columns {
		fd := fieldByName(md, c.Name)
		if fd == nil {
			errs = append(errs, fmt.Errorf("column %s: message %s has no field %s", c.Name, md.FullName(), c.Name))
			continue
		}
		enc, err := compileFieldEnc(fd, c.Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %s: %w", c.Name, err))
			continue
		}
		e.steps = append(e.steps, encStep{col: i, column: c.Name, enc: enc})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *msgEnc) encode(dst []byte, r []row.Value) ([]byte, error) {
	for _, st := range e.steps {
		v := r[st.col]
		if v.IsNull() {
			continue
		}
		var err error
		if dst, err = st.enc(dst, v); err != nil {
			return dst, &fieldError{column: st.column, err: err}
		}
	}
	return dst, nil
}

func compileFieldEnc(fd protoreflect.FieldDescriptor, t row.Type) (fieldEnc, error) {
	num := fd.Number()
	switch {
	case fd.IsMap():
		if t.ID != row.Map {
			return nil, fmt.Errorf("%s cannot be written as the map field %s", t, fd.Name())
		}
		k, err := compileValueEnc(fd.MapKey(), t.Key())
		if err != nil {
			return nil, err
		}
		v, err := compileValueEnc(fd.MapValue(), t.Elem())
		if err != nil {
			return nil, err
		}
		return func(dst []byte, m row.Value) ([]byte, error) {
			items := m.ItemSlice()
			for i := 0; i+1 < len(items); i += 2 {
				var entry []byte
				var err error
				if !items[i].IsNull() {
					if entry, err = k(protowire.AppendTag(entry, 1, wireType(fd.MapKey().Kind())), items[i]); err != nil {
						return dst, err
					}
				}
				if !items[i+1].IsNull() {
					if entry, err = v(protowire.AppendTag(entry, 2, wireType(fd.MapValue().Kind())), items[i+1]); err != nil {
						return dst, err
					}
				}
				dst = protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), entry)
			}
			return dst, nil
		}, nil
	case fd.IsList():
		if t.ID != row.Array {
			return nil, fmt.Errorf("%s cannot be written as the repeated field %s", t, fd.Name())
		}
		one, err := compileValueEnc(fd, t.Elem())
		if err != nil {
			return nil, err
		}
		if fd.IsPacked() {
			return func(dst []byte, a row.Value) ([]byte, error) {
				if a.Len() == 0 {
					return dst, nil
				}
				var run []byte
				for _, x := range a.Items() {
					if x.IsNull() {
						return dst, errors.New("an element is NULL, which a repeated field cannot hold")
					}
					var err error
					if run, err = one(run, x); err != nil {
						return dst, err
					}
				}
				return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), run), nil
			}, nil
		}
		typ := wireType(fd.Kind())
		return func(dst []byte, a row.Value) ([]byte, error) {
			for _, x := range a.Items() {
				if x.IsNull() {
					return dst, errors.New("an element is NULL, which a repeated field cannot hold")
				}
				var err error
				if dst, err = one(protowire.AppendTag(dst, num, typ), x); err != nil {
					return dst, err
				}
			}
			return dst, nil
		}, nil
	}
	one, err := compileValueEnc(fd, t)
	if err != nil {
		return nil, err
	}
	typ := wireType(fd.Kind())
	implicit := !fd.HasPresence()
	zero := defaultValue(fd, t)
	return func(dst []byte, v row.Value) ([]byte, error) {
		if implicit && row.Equal(v, zero) {
			return dst, nil
		}
		return one(protowire.AppendTag(dst, num, typ), v)
	}, nil
}

// compileValueEnc returns the writer of one value of t as fd's kind,
// without the tag.
func compileValueEnc(fd protoreflect.FieldDescriptor, t row.Type) (fieldEnc, error) {
	cannot := fmt.Errorf("%s cannot be written as the field %s (%s)", t, fd.Name(), kindName(fd))
	intOK := t.ID == row.Int || t.ID == row.BigInt
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if t.ID == row.Boolean {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendVarint(dst, protowire.EncodeBool(v.Bool())), nil
			}, nil
		}
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		if intOK {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendVarint(dst, uint64(v.Int64())), nil
			}, nil
		}
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		if intOK {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendVarint(dst, protowire.EncodeZigZag(v.Int64())), nil
			}, nil
		}
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		if intOK {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendFixed32(dst, uint32(v.Int64())), nil
			}, nil
		}
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		if intOK {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendFixed64(dst, uint64(v.Int64())), nil
			}, nil
		}
	case protoreflect.FloatKind:
		if t.ID == row.Float {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendFixed32(dst, math.Float32bits(float32(v.Float64()))), nil
			}, nil
		}
	case protoreflect.DoubleKind:
		if t.ID == row.Double || t.ID == row.Float {
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendFixed64(dst, math.Float64bits(v.Float64())), nil
			}, nil
		}
	case protoreflect.StringKind, protoreflect.BytesKind:
		if t.ID == row.String || t.ID == row.Bytes {
			return func(dst []byte, v row.Value) ([]byte, error) { return protowire.AppendString(dst, v.Str()), nil }, nil
		}
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		switch t.ID {
		case row.String:
			return func(dst []byte, v row.Value) ([]byte, error) {
				ev := values.ByName(protoreflect.Name(v.Str()))
				if ev == nil {
					return dst, fmt.Errorf("%q is no value of enum %s", v.Str(), fd.Enum().FullName())
				}
				return protowire.AppendVarint(dst, uint64(int64(ev.Number()))), nil
			}, nil
		case row.Int:
			return func(dst []byte, v row.Value) ([]byte, error) {
				return protowire.AppendVarint(dst, uint64(v.Int64())), nil
			}, nil
		}
	case protoreflect.MessageKind:
		return compileMessageValueEnc(fd.Message(), t)
	}
	return nil, cannot
}

func compileMessageValueEnc(md protoreflect.MessageDescriptor, t row.Type) (fieldEnc, error) {
	switch name := md.FullName(); {
	case name == "google.protobuf.Timestamp" && (t.ID == row.TimestampLTZ || t.ID == row.Timestamp):
		return func(dst []byte, v row.Value) ([]byte, error) {
			us := v.Micros()
			secs := us / 1e6
			if us%1e6 < 0 {
				secs--
			}
			nanos := (us - secs*1e6) * 1000
			var m []byte
			if secs != 0 {
				m = protowire.AppendVarint(protowire.AppendTag(m, 1, protowire.VarintType), uint64(secs))
			}
			if nanos != 0 {
				m = protowire.AppendVarint(protowire.AppendTag(m, 2, protowire.VarintType), uint64(nanos))
			}
			return protowire.AppendBytes(dst, m), nil
		}, nil
	case strings.HasPrefix(string(name), "google.protobuf.") && strings.HasSuffix(string(name), "Value") && md.Fields().Len() == 1:
		inner, err := compileFieldEnc(md.Fields().Get(0), t)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, v row.Value) ([]byte, error) {
			m, err := inner(nil, v)
			return protowire.AppendBytes(dst, m), err
		}, nil
	}
	if t.ID != row.Struct {
		return nil, fmt.Errorf("%s cannot be written as message %s", t, md.FullName())
	}
	sub, err := compileMessageEnc(md, t.Fields())
	if err != nil {
		return nil, err
	}
	return func(dst []byte, v row.Value) ([]byte, error) {
		m, err := sub.encode(nil, v.ItemSlice())
		return protowire.AppendBytes(dst, m), err
	}, nil
}
