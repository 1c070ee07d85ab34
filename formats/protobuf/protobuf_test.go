package protobuf

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

const shopProto = "testdata/shop.proto"

// orderColumns read every field of shop.Order.
var orderColumns = []string{"id BIGINT NOT NULL", "note STRING", "b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "y BYTES",
	"state STRING", "at TIMESTAMP_LTZ(6)", "qty BIGINT", "label STRING", "nums ARRAY<BIGINT NOT NULL> NOT NULL",
	"tags ARRAY<STRING NOT NULL> NOT NULL", "attrs MAP<STRING NOT NULL, DOUBLE NOT NULL> NOT NULL",
	"buyer ROW<name STRING NOT NULL, vip BOOLEAN>", "lines ARRAY<ROW<sku STRING NOT NULL, count INT NOT NULL> NOT NULL> NOT NULL",
	"u BIGINT", "sf BIGINT"}

func codec(t testing.TB, cols ...string) formattest.Codec {
	t.Helper()
	schema := testenv.Schema(t, cols...)
	o := Options{ProtoFile: shopProto, Message: "shop.Order"}
	dec, err := NewDecoder(o, schema)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(o, schema)
	if err != nil {
		t.Fatal(err)
	}
	return formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc}
}

// randomValue makes values the message can hold as they are: NULL only
// where the field has presence, a TINYINT-free INT, a fixed32 in range,
// one of the enum's names, proto3's zero for an element.
func randomValue(rng *rand.Rand, t row.Type) row.Value {
	if t.NotNull {
		t.NotNull = false
		for {
			if v := randomValue(rng, t); !v.IsNull() {
				return v
			}
		}
	}
	switch t.ID {
	case row.Array:
		items := make([]row.Value, rng.IntN(4))
		for i := range items {
			items[i] = randomValue(rng, t.Elem())
		}
		return row.ArrayValue(items)
	case row.Map:
		var keys, vals []row.Value
		for i := range rng.IntN(4) {
			keys = append(keys, row.StringValue(strings.Repeat("k", i+1)))
			vals = append(vals, randomValue(rng, t.Elem()))
		}
		return row.MapValue(keys, vals)
	case row.Struct:
		var vals []row.Value
		for _, f := range t.Fields() {
			vals = append(vals, randomValue(rng, f.Type))
		}
		return row.StructValue(vals)
	}
	return formattest.RandomValue(rng, t)
}

// TestRoundTrip writes random rows of every field kind and reads them
// back, each value as written.
func TestRoundTrip(t *testing.T) {
	c := codec(t, orderColumns...)
	rng := rand.New(rand.NewPCG(1, 2))
	changes := formattest.RandomChanges(rng, c.Schema, 2000, false, func(r *rand.Rand, ty row.Type) row.Value {
		v := randomValue(r, ty)
		return v
	})
	for _, ch := range changes {
		// The columns whose values the message cannot hold as drawn:
		// state is one of the enum's names, u a fixed32.
		ch.Row[8] = []row.Value{row.NullValue, row.StringValue("NEW"), row.StringValue("SHIPPED")}[rng.IntN(3)]
		if !ch.Row[17].IsNull() {
			ch.Row[17] = row.BigIntValue(int64(uint32(ch.Row[17].Int64())))
		}
	}
	formattest.RoundTrip(t, c, changes)
}

// TestReadsProtoWriter: a message that the protobuf library's own
// encoder wrote, from a dynamic message, decodes to the values set; and
// what the encoder writes the library reads back.
func TestReadsProtoWriter(t *testing.T) {
	md, err := Options{ProtoFile: shopProto, Message: "shop.Order"}.message()
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(md)
	set := func(name string, v protoreflect.Value) { m.Set(md.Fields().ByName(protoreflect.Name(name)), v) }
	set("id", protoreflect.ValueOfInt64(-7))
	set("note", protoreflect.ValueOfString("héllo"))
	set("n", protoreflect.ValueOfInt64(-1<<40))
	set("state", protoreflect.ValueOfEnum(2))
	at := time.Date(2024, 3, 1, 12, 0, 0, 123456000, time.UTC)
	set("at", protoreflect.ValueOfMessage(timestamppb.New(at).ProtoReflect()))
	set("qty", protoreflect.ValueOfMessage(wrapperspb.Int64(0).ProtoReflect()))
	nums := m.Mutable(md.Fields().ByName("nums")).List()
	nums.Append(protoreflect.ValueOfInt64(3))
	nums.Append(protoreflect.ValueOfInt64(-4))
	attrs := m.Mutable(md.Fields().ByName("attrs")).Map()
	attrs.Set(protoreflect.ValueOfString("k").MapKey(), protoreflect.ValueOfFloat64(1.5))
	buyer := m.Mutable(md.Fields().ByName("buyer")).Message()
	buyer.Set(buyer.Descriptor().Fields().ByName("name"), protoreflect.ValueOfString("ann"))
	lines := m.Mutable(md.Fields().ByName("lines")).List()
	line := lines.NewElement().Message()
	line.Set(line.Descriptor().Fields().ByName("sku"), protoreflect.ValueOfString("x1"))
	line.Set(line.Descriptor().Fields().ByName("count"), protoreflect.ValueOfInt32(2))
	lines.Append(protoreflect.ValueOfMessage(line))
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	c := codec(t, orderColumns...)
	b := row.NewBatch(1, c.Schema.Len())
	if err := c.Decoder.Decode(data, b); err != nil {
		t.Fatal(err)
	}
	want := "+I[-7, héllo, null, null, -1099511627776, null, null, null, SHIPPED, 2024-03-01T12:00:00.123456Z, 0, null, [3, -4], [], {k=1.5}, +I[ann, null], [+I[x1, 2]], null, null]"
	if got := b.Changes[0].String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	out, err := c.Encoder.Encode(nil, row.Insert, b.Changes[0].Row)
	if err != nil {
		t.Fatal(err)
	}
	back := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(out, back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(m, back) {
		t.Fatalf("the library read back\n%v\nwrote\n%v", back, m)
	}
}

// TestDescriptorSet: the same message from a descriptor set reads as from
// the .proto file.
func TestDescriptorSet(t *testing.T) {
	fd, _, err := loadFile(shopProto)
	if err != nil {
		t.Fatal(err)
	}
	path := writeDescriptorSet(t, fd)
	schema := testenv.Schema(t, "id BIGINT", "note STRING", "buyer ROW<name STRING>")
	d, err := NewDecoder(Options{DescriptorSet: path, Message: "shop.Order"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := NewEncoder(Options{ProtoFile: shopProto}, schema)
	rec, _ := e.Encode(nil, row.Insert, row.Row{row.BigIntValue(1), row.StringValue("x"), row.StructValue([]row.Value{row.StringValue("b")})})
	b := row.NewBatch(1, 3)
	if err := d.Decode(rec, b); err != nil || b.String() != "+I[1, x, +I[b]]\n" {
		t.Fatalf("%v, %s", err, b)
	}
	if _, err := NewDecoder(Options{DescriptorSet: path}, schema); err == nil || !strings.Contains(err.Error(), "required with descriptor_set") {
		t.Fatalf("no message: %v", err)
	}
}

// TestBadBytes: a truncated or corrupt message fails with the column
// and byte offset and appends nothing.
func TestBadBytes(t *testing.T) {
	c := codec(t, "id BIGINT NOT NULL", "note STRING", "buyer ROW<name STRING NOT NULL, vip BOOLEAN NOT NULL>")
	for rec, msg := range map[string]string{
		"\x08":                 "column id: at byte 1: unexpected EOF",
		"\x12\x05ab":           "column note: at byte 1: unexpected EOF",
		"\x0a\x01x":            "column id: at byte 1: wire type 2 for a field of wire type 0",
		"\x82\x01\x03\x0a\x05": "column buyer: at byte 2: unexpected EOF",
		"\x07":                 "at byte 0: bad field tag",
		"\x82\x01\x00":         "column buyer: column vip: at byte 3: field vip is absent or null",
	} {
		b := row.NewBatch(1, 3)
		err := c.Decoder.Decode([]byte(rec), b)
		var de *connector.DecodeError
		if !errors.As(err, &de) || b.Len() != 0 || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%q: %v (%d rows), want %q", rec, err, b.Len(), msg)
		}
	}
}

func FuzzProtobufDecode(f *testing.F) {
	c := codec(f, orderColumns...)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ch := range formattest.RandomChanges(rng, c.Schema, 20, false, randomValue) {
		ch.Row[8] = row.StringValue("PAID")
		ch.Row[17] = row.NullValue
		rec, err := c.Encoder.Encode(nil, row.Insert, ch.Row)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, rec []byte) {
		formattest.CheckRecord(t, c, rec, formattest.Check{
			Explains:   func(err error) bool { var e *errAt; return errors.As(err, &e) },
			MaxChanges: func([]byte) int { return 1 },
			// A value the encoder leaves out (a proto3 zero) or cannot
			// write (a map key NULL) is not written back as read.
			MayRefuse: true,
		})
	})
}

// TestPickedColumns: the formats kit's property for ColumnDecoder.
func TestPickedColumns(t *testing.T) {
	var enc *Encoder
	var sch row.Schema
	formattest.PickedColumns(t, formattest.Columns{
		Types: []string{"BIGINT"},
		Decoders: func(t testing.TB, r *rand.Rand, schema row.Schema) (connector.Decoder, connector.Decoder) {
			// c0..c5 name fields of the message below.
			o := Options{ProtoFile: "testdata/columns.proto"}
			full, err := NewDecoder(o, schema)
			if err != nil {
				t.Fatal(err)
			}
			picked, _ := NewDecoder(o, schema)
			enc, _ = NewEncoder(o, schema)
			sch = schema
			return full, picked
		},
		Record: func(r *rand.Rand, n int) []byte {
			c := formattest.RandomChanges(r, sch, 1, false, randomValue)[0]
			rec, err := enc.Encode(nil, row.Insert, c.Row)
			if err != nil {
				t.Fatal(err)
			}
			if r.IntN(5) == 0 && len(rec) > 0 {
				rec = rec[:r.IntN(len(rec))]
			}
			return rec
		},
		MinCompared: 3000,
	})
}

// writeDescriptorSet writes fd and its imports as protoc
// --descriptor_set_out --include_imports does.
func writeDescriptorSet(t *testing.T, fd protoreflect.FileDescriptor) string {
	t.Helper()
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := range f.Imports().Len() {
			add(f.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(fd)
	data, err := proto.Marshal(&set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shop.pb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
