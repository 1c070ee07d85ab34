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

// A message descriptor is compiled once, against the table's columns,
// into field readers that take the wire format straight into values:
// no dynamic message stands between the bytes and the row.

// rec is the record being decoded: its bytes, and the same as a string so
// that string values are substrings of it.
type rec struct {
	b []byte
	s string
}

// errAt is a decode error at a byte offset of the record.
type errAt struct {
	off int
	msg string
}

func (e *errAt) Error() string { return fmt.Sprintf("at byte %d: %s", e.off, e.msg) }

func failAt(off int, format string, args ...any) error {
	return &errAt{off: off, msg: fmt.Sprintf(format, args...)}
}

// fieldError is a failure in one column's value.
type fieldError struct {
	column string
	err    error
}

func (e *fieldError) Error() string { return "column " + e.column + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// msgDec reads a message into a row of columns.
type msgDec struct {
	fields []*fieldDec // the fields that have a column, decoded or not
	small  []*fieldDec // by field number, when the numbers are small
	byNum  map[protowire.Number]*fieldDec
	// readDefaults: an absent field with presence is its default value
	// rather than NULL.
	readDefaults bool
}

// fieldDec reads one field into its column.
type fieldDec struct {
	to       int // place in the row; -1: read past
	column   string
	fd       protoreflect.FieldDescriptor
	one      valueDec // one occurrence: the value, or an element of a list
	repeated bool
	mapKey   valueDec // a map's key and value readers (one is the entry)
	mapVal   valueDec
	absent   row.Value
	notNull  bool // the column is NOT NULL: a field absent (with presence) fails
}

// valueDec reads one value of wire type typ at off (b is the record from
// off on) and returns it and the bytes it took.
type valueDec func(r *rec, off int, typ protowire.Type) (row.Value, int, error)

func compileMessage(md protoreflect.MessageDescriptor, columns []row.Field, at []int, readDefaults bool) (*msgDec, error) {
	d := &msgDec{byNum: map[protowire.Number]*fieldDec{}, readDefaults: readDefaults}
	var errs []error
	maxNum := 0
	for i, c := range columns {
		to := i
		if at != nil {
			to = at[i]
		}
		fd := fieldByName(md, c.Name)
		if fd == nil {
			if to >= 0 && c.Type.NotNull {
				errs = append(errs, fmt.Errorf("column %s is NOT NULL, and message %s has no field %s", c.Name, md.FullName(), c.Name))
			}
			if to >= 0 {
				d.fields = append(d.fields, &fieldDec{to: to, column: c.Name})
			}
			continue
		}
		f, err := compileField(fd, c.Type, readDefaults)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %s: %w", c.Name, err))
			continue
		}
		f.to, f.column = to, c.Name
		d.fields = append(d.fields, f)
		if to >= 0 {
			d.byNum[fd.Number()] = f
			maxNum = max(maxNum, int(fd.Number()))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if maxNum < 256 {
		d.small = make([]*fieldDec, maxNum+1)
		for n, f := range d.byNum {
			d.small[n] = f
		}
	}
	return d, nil
}

// fieldByName finds a column's field: by name, JSON name, or either in
// any case.
func fieldByName(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fs := md.Fields()
	if fd := fs.ByName(protoreflect.Name(name)); fd != nil {
		return fd
	}
	if fd := fs.ByJSONName(name); fd != nil {
		return fd
	}
	for i := range fs.Len() {
		if strings.EqualFold(string(fs.Get(i).Name()), name) {
			return fs.Get(i)
		}
	}
	return nil
}

func compileField(fd protoreflect.FieldDescriptor, t row.Type, readDefaults bool) (*fieldDec, error) {
	f := &fieldDec{fd: fd}
	switch {
	case fd.IsMap():
		if t.ID != row.Map {
			return nil, fmt.Errorf("the map field %s cannot be read as %s", fd.Name(), t)
		}
		k, err := compileValue(fd.MapKey(), t.Key())
		if err != nil {
			return nil, err
		}
		v, err := compileValue(fd.MapValue(), t.Elem())
		if err != nil {
			return nil, err
		}
		f.mapKey, f.mapVal, f.repeated = k, v, true
		f.absent = row.MapValue(nil, nil)
		return f, nil
	case fd.IsList():
		if t.ID != row.Array {
			return nil, fmt.Errorf("the repeated field %s cannot be read as %s", fd.Name(), t)
		}
		one, err := compileValue(fd, t.Elem())
		if err != nil {
			return nil, err
		}
		f.one, f.repeated, f.absent = one, true, row.ArrayValue(nil)
		return f, nil
	}
	one, err := compileValue(fd, t)
	if err != nil {
		return nil, err
	}
	f.one = one
	// An absent field without presence (a proto3 scalar) holds its zero
	// value; one with presence is NULL, or with read_default_values its
	// default.
	if !fd.HasPresence() || (readDefaults && fd.Kind() != protoreflect.MessageKind) {
		f.absent = defaultValue(fd, t)
	}
	f.notNull = t.NotNull
	return f, nil
}

// decode reads the message in r.b[start:end] into out.
func (d *msgDec) decode(r *rec, start, end int, out []row.Value) error {
	for _, f := range d.fields {
		if f.to >= 0 {
			out[f.to] = f.absent
		}
	}
	var lists map[*fieldDec][]row.Value
	for off := start; off < end; {
		num, typ, n := protowire.ConsumeTag(r.b[off:end])
		if n < 0 {
			return failAt(off, "bad field tag: %v", protowire.ParseError(n))
		}
		off += n
		var f *fieldDec
		if d.small != nil {
			if int(num) < len(d.small) {
				f = d.small[num]
			}
		} else {
			f = d.byNum[num]
		}
		if f == nil {
			n := protowire.ConsumeFieldValue(num, typ, r.b[off:end])
			if n < 0 {
				return failAt(off, "field %d: %v", num, protowire.ParseError(n))
			}
			off += n
			continue
		}
		var err error
		if f.repeated {
			if lists == nil {
				lists = map[*fieldDec][]row.Value{}
			}
			var items []row.Value
			items, n, err = f.readRepeated(r, off, end, typ, lists[f])
			lists[f] = items
		} else {
			var v row.Value
			v, n, err = f.one(withEnd(r, end), off, typ)
			out[f.to] = v
		}
		if err != nil {
			return &fieldError{column: f.column, err: err}
		}
		off += n
	}
	for _, f := range d.fields {
		if f.notNull && f.to >= 0 && out[f.to].IsNull() {
			return &fieldError{column: f.column, err: failAt(start, "field %s is absent or null, and the column is NOT NULL", f.fd.Name())}
		}
	}
	for f, items := range lists {
		if f.mapKey != nil {
			keys, vals := make([]row.Value, 0, len(items)/2), make([]row.Value, 0, len(items)/2)
			for i := 0; i+1 < len(items); i += 2 {
				keys, vals = append(keys, items[i]), append(vals, items[i+1])
			}
			out[f.to] = row.MapValue(keys, vals)
		} else {
			out[f.to] = row.ArrayValue(items)
		}
	}
	return nil
}

// withEnd returns r cut at end, so that a value reader cannot read past
// its message.
func withEnd(r *rec, end int) *rec {
	if end == len(r.b) {
		return r
	}
	return &rec{b: r.b[:end], s: r.s[:end]}
}

// readRepeated reads one occurrence of a repeated field: an element, a
// packed run of elements, or a map entry (key and value appended).
func (f *fieldDec) readRepeated(r *rec, off, end int, typ protowire.Type, items []row.Value) ([]row.Value, int, error) {
	r = withEnd(r, end)
	if f.mapKey != nil {
		if typ != protowire.BytesType {
			return items, 0, failAt(off, "a map entry of wire type %d", typ)
		}
		v, n := protowire.ConsumeBytes(r.b[off:])
		if n < 0 {
			return items, 0, failAt(off, "map entry: %v", protowire.ParseError(n))
		}
		k, val, err := f.readEntry(r, off+n-len(v), off+n)
		return append(items, k, val), n, err
	}
	if typ == protowire.BytesType && packable(f.fd.Kind()) {
		v, n := protowire.ConsumeBytes(r.b[off:])
		if n < 0 {
			return items, 0, failAt(off, "packed field: %v", protowire.ParseError(n))
		}
		start, stop := off+n-len(v), off+n
		elem := wireType(f.fd.Kind())
		sub := withEnd(r, stop)
		for p := start; p < stop; {
			x, m, err := f.one(sub, p, elem)
			if err != nil {
				return items, 0, err
			}
			items, p = append(items, x), p+m
		}
		return items, n, nil
	}
	x, n, err := f.one(r, off, typ)
	return append(items, x), n, err
}

// readEntry reads a map entry message: key 1, value 2, each its zero
// value when absent.
func (f *fieldDec) readEntry(r *rec, start, end int) (k, v row.Value, err error) {
	sub := withEnd(r, end)
	k, v = defaultValue(f.fd.MapKey(), row.Type{}), defaultValue(f.fd.MapValue(), row.Type{})
	if f.fd.MapValue().Kind() == protoreflect.MessageKind {
		v = row.NullValue
	}
	for off := start; off < end; {
		num, typ, n := protowire.ConsumeTag(sub.b[off:])
		if n < 0 {
			return k, v, failAt(off, "map entry: bad field tag")
		}
		off += n
		switch num {
		case 1:
			k, n, err = f.mapKey(sub, off, typ)
		case 2:
			v, n, err = f.mapVal(sub, off, typ)
		default:
			n = protowire.ConsumeFieldValue(num, typ, sub.b[off:])
			if n < 0 {
				err = failAt(off, "map entry field %d: %v", num, protowire.ParseError(n))
			}
		}
		if err != nil {
			return k, v, err
		}
		off += n
	}
	return k, v, nil
}

func packable(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return false
	}
	return true
}

// wireType is the wire type of one value of kind k.
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// compileValue returns the reader of one value of fd's kind as t.
func compileValue(fd protoreflect.FieldDescriptor, t row.Type) (valueDec, error) {
	k := fd.Kind()
	cannot := fmt.Errorf("the field %s (%s) cannot be read as %s", fd.Name(), kindName(fd), t)
	want := wireType(k)
	raw := func(conv func(x uint64) (row.Value, error)) valueDec {
		return func(r *rec, off int, typ protowire.Type) (row.Value, int, error) {
			if typ != want {
				return row.NullValue, 0, failAt(off, "wire type %d for a field of wire type %d", typ, want)
			}
			var x uint64
			var n int
			switch want {
			case protowire.VarintType:
				x, n = protowire.ConsumeVarint(r.b[off:])
			case protowire.Fixed32Type:
				var y uint32
				y, n = protowire.ConsumeFixed32(r.b[off:])
				x = uint64(y)
			default:
				x, n = protowire.ConsumeFixed64(r.b[off:])
			}
			if n < 0 {
				return row.NullValue, 0, failAt(off, "%v", protowire.ParseError(n))
			}
			v, err := conv(x)
			if err != nil {
				return row.NullValue, 0, failAt(off, "%v", err)
			}
			return v, n, nil
		}
	}
	integer := func(signed func(uint64) int64) (valueDec, error) {
		switch t.ID {
		case row.Int:
			return raw(func(x uint64) (row.Value, error) { return row.IntValue(int32(t.WrapInt(signed(x)))), nil }), nil
		case row.BigInt:
			return raw(func(x uint64) (row.Value, error) { return row.BigIntValue(signed(x)), nil }), nil
		case row.Double:
			return raw(func(x uint64) (row.Value, error) { return row.DoubleValue(float64(signed(x))), nil }), nil
		}
		return nil, cannot
	}
	switch k {
	case protoreflect.BoolKind:
		if t.ID == row.Boolean {
			return raw(func(x uint64) (row.Value, error) { return row.BoolValue(x != 0), nil }), nil
		}
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return integer(func(x uint64) int64 { return int64(x) })
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return integer(func(x uint64) int64 { return int64(uint32(x)) })
	case protoreflect.Sfixed32Kind:
		return integer(func(x uint64) int64 { return int64(int32(x)) })
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return integer(protowire.DecodeZigZag)
	case protoreflect.FloatKind:
		switch t.ID {
		case row.Float:
			return raw(func(x uint64) (row.Value, error) { return row.FloatValue(math.Float32frombits(uint32(x))), nil }), nil
		case row.Double:
			return raw(func(x uint64) (row.Value, error) {
				return row.DoubleValue(float64(math.Float32frombits(uint32(x)))), nil
			}), nil
		}
	case protoreflect.DoubleKind:
		if t.ID == row.Double {
			return raw(func(x uint64) (row.Value, error) { return row.DoubleValue(math.Float64frombits(x)), nil }), nil
		}
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		switch t.ID {
		case row.String:
			return raw(func(x uint64) (row.Value, error) {
				if v := values.ByNumber(protoreflect.EnumNumber(int32(x))); v != nil {
					return row.StringValue(string(v.Name())), nil
				}
				return row.NullValue, fmt.Errorf("%d is no value of enum %s", int32(x), fd.Enum().FullName())
			}), nil
		case row.Int:
			return raw(func(x uint64) (row.Value, error) { return row.IntValue(int32(x)), nil }), nil
		}
	case protoreflect.StringKind, protoreflect.BytesKind:
		if t.ID != row.String && t.ID != row.Bytes {
			break
		}
		str := t.ID == row.String
		return func(r *rec, off int, typ protowire.Type) (row.Value, int, error) {
			if typ != protowire.BytesType {
				return row.NullValue, 0, failAt(off, "wire type %d for a string or bytes field", typ)
			}
			v, n := protowire.ConsumeBytes(r.b[off:])
			if n < 0 {
				return row.NullValue, 0, failAt(off, "%v", protowire.ParseError(n))
			}
			if str {
				at := off + n - len(v)
				return row.StringValue(r.s[at : at+len(v)]), n, nil
			}
			return row.BytesValue(v), n, nil
		}, nil
	case protoreflect.MessageKind:
		return compileMessageValue(fd.Message(), t)
	}
	return nil, cannot
}
