package avro

import (
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// benchOrder is the record of the decode benchmarks: a long, a nullable
// string, a double, a timestamp, a decimal, an array of strings.
type benchOrder struct {
	ID    int64    `avro:"id"`
	Name  *string  `avro:"name"`
	Price float64  `avro:"price"`
	At    int64    `avro:"at"`
	Qty   int32    `avro:"qty"`
	Tags  []string `avro:"tags"`
}

const benchSchema = `{"type":"record","name":"o","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"]},
{"name":"price","type":"double"},{"name":"at","type":"long"},{"name":"qty","type":"int"},{"name":"tags","type":{"type":"array","items":"string"}}]}`

func benchRecords(b *testing.B) [][]byte {
	s := avro.MustParse(benchSchema)
	recs := make([][]byte, 1024)
	for i := range recs {
		name := "customer-" + string(rune('a'+i%26))
		data, err := avro.Marshal(s, benchOrder{ID: int64(i) * 7919, Name: &name, Price: float64(i) / 3, At: 1700000000000 + int64(i),
			Qty: int32(i % 100), Tags: []string{"red", "big"}})
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = data
	}
	return recs
}

// BenchmarkDecodeRows decodes into rows, as a source does, batches of
// 1024 reused.
func BenchmarkDecodeRows(b *testing.B) {
	recs := benchRecords(b)
	schema := testenv.Schema(b, "id BIGINT", "name STRING", "price DOUBLE", "at BIGINT", "qty INT", "tags ARRAY<STRING>")
	d, err := NewDecoder(Options{Schema: benchSchema}, schema)
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

// BenchmarkDecodeHamba is the raw loop of the same library: hamba's
// decoder into a Go struct of the record's shape, its fastest path.
func BenchmarkDecodeHamba(b *testing.B) {
	recs := benchRecords(b)
	s := avro.MustParse(benchSchema)
	var o benchOrder
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := avro.Unmarshal(s, recs[i%len(recs)], &o); err != nil {
			b.Fatal(err)
		}
	}
}
