package protobuf

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

func benchRecords(b *testing.B) ([][]byte, protoreflect.MessageDescriptor) {
	md, err := Options{ProtoFile: shopProto, Message: "shop.Order"}.message()
	if err != nil {
		b.Fatal(err)
	}
	recs := make([][]byte, 1024)
	for i := range recs {
		m := dynamicpb.NewMessage(md)
		m.Set(md.Fields().ByName("id"), protoreflect.ValueOfInt64(int64(i)*7919))
		m.Set(md.Fields().ByName("note"), protoreflect.ValueOfString("customer-"+string(rune('a'+i%26))))
		m.Set(md.Fields().ByName("d"), protoreflect.ValueOfFloat64(float64(i)/3))
		m.Set(md.Fields().ByName("n"), protoreflect.ValueOfInt64(1700000000000+int64(i)))
		m.Set(md.Fields().ByName("i"), protoreflect.ValueOfInt32(int32(i%100)))
		tags := m.Mutable(md.Fields().ByName("tags")).List()
		tags.Append(protoreflect.ValueOfString("red"))
		tags.Append(protoreflect.ValueOfString("big"))
		if recs[i], err = proto.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
	return recs, md
}

// BenchmarkDecodeRows decodes into rows, as a source does.
func BenchmarkDecodeRows(b *testing.B) {
	recs, _ := benchRecords(b)
	schema := testenv.Schema(b, "id BIGINT", "note STRING", "d DOUBLE", "n BIGINT", "i INT", "tags ARRAY<STRING>")
	d, err := NewDecoder(Options{ProtoFile: shopProto, Message: "shop.Order"}, schema)
	if err != nil {
		b.Fatal(err)
	}
	batch := row.NewBatch(len(recs), schema.Len())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(recs) == 0 {
			batch.Reset()
		}
		if err := d.Decode(recs[i%len(recs)], batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeDynamic is the raw loop of the same library: proto.Unmarshal
// into a dynamic message of the type, reused, as a program does that
// has no generated code for it.
func BenchmarkDecodeDynamic(b *testing.B) {
	recs, md := benchRecords(b)
	m := dynamicpb.NewMessage(md)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Reset()
		if err := proto.Unmarshal(recs[i%len(recs)], m); err != nil {
			b.Fatal(err)
		}
	}
}
