package avro

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// The decode benchmarks: the same datums decoded into rows, as a Kafka
// source does (plain avro, and registry-framed avro-confluent, its
// schema already looked up), and by hamba/avro into Go structs of the
// record's shape (its fastest path), for three shapes of record: flat
// scalars, an order with an array of strings, and a nested one (a ROW
// holding a ROW, an ARRAY of ROWs, a MAP). Compare them interleaved, in
// one run, on a quiet machine:
//
//	go test -c -o /tmp/avro.test ./formats/avro
//	for i in 1 2 3 4 5; do (cd formats/avro && /tmp/avro.test -test.run '^$' -test.bench '^BenchmarkDecode' -test.benchtime 400000x); done

// benchFlat is a record of scalars.
type benchFlat struct {
	ID     int64   `avro:"id"`
	Name   *string `avro:"name"`
	Price  float64 `avro:"price"`
	At     int64   `avro:"at"`
	Qty    int32   `avro:"qty"`
	Status string  `avro:"status"`
	Paid   bool    `avro:"paid"`
}

const benchFlatSchema = `{"type":"record","name":"f","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"]},
{"name":"price","type":"double"},{"name":"at","type":"long"},{"name":"qty","type":"int"},{"name":"status","type":"string"},{"name":"paid","type":"boolean"}]}`

var benchFlatColumns = []string{"id BIGINT", "name STRING", "price DOUBLE", "at BIGINT", "qty INT", "status STRING", "paid BOOLEAN"}

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

var benchOrderColumns = []string{"id BIGINT", "name STRING", "price DOUBLE", "at BIGINT", "qty INT", "tags ARRAY<STRING>"}

// benchNested nests records, an array of records and a map.
type benchNested struct {
	ID       int64             `avro:"id"`
	Customer benchCustomer     `avro:"customer"`
	Lines    []benchLine       `avro:"lines"`
	Attrs    map[string]string `avro:"attrs"`
}

type benchCustomer struct {
	Name    string       `avro:"name"`
	Tier    int32        `avro:"tier"`
	Address benchAddress `avro:"address"`
}

type benchAddress struct {
	City string `avro:"city"`
	Zip  string `avro:"zip"`
}

type benchLine struct {
	SKU   string  `avro:"sku"`
	Qty   int32   `avro:"qty"`
	Price float64 `avro:"price"`
}

const benchNestedSchema = `{"type":"record","name":"n","fields":[{"name":"id","type":"long"},
{"name":"customer","type":{"type":"record","name":"c","fields":[{"name":"name","type":"string"},{"name":"tier","type":"int"},
  {"name":"address","type":{"type":"record","name":"a","fields":[{"name":"city","type":"string"},{"name":"zip","type":"string"}]}}]}},
{"name":"lines","type":{"type":"array","items":{"type":"record","name":"l","fields":[{"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"double"}]}}},
{"name":"attrs","type":{"type":"map","values":"string"}}]}`

var benchNestedColumns = []string{"id BIGINT",
	"customer ROW<name STRING NOT NULL, tier INT NOT NULL, address ROW<city STRING NOT NULL, zip STRING NOT NULL> NOT NULL>",
	"lines ARRAY<ROW<sku STRING NOT NULL, qty INT NOT NULL, price DOUBLE NOT NULL> NOT NULL>", "attrs MAP<STRING, STRING>"}

// benchShape is a record shape: its schema, its table, and its datums
// made by hamba from Go values, with a decoder of them into a fresh
// value of the same Go type.
type benchShape struct {
	name    string
	schema  string
	columns []string
	value   func(i int) any
	fresh   func() any
}

var benchShapes = []benchShape{
	{"flat", benchFlatSchema, benchFlatColumns, func(i int) any {
		name := "customer-" + string(rune('a'+i%26))
		return benchFlat{ID: int64(i) * 7919, Name: &name, Price: float64(i) / 3, At: 1700000000000 + int64(i), Qty: int32(i % 100),
			Status: []string{"new", "paid", "sent"}[i%3], Paid: i%2 == 0}
	}, func() any { return new(benchFlat) }},
	{"order", benchSchema, benchOrderColumns, func(i int) any {
		name := "customer-" + string(rune('a'+i%26))
		return benchOrder{ID: int64(i) * 7919, Name: &name, Price: float64(i) / 3, At: 1700000000000 + int64(i),
			Qty: int32(i % 100), Tags: []string{"red", "big"}}
	}, func() any { return new(benchOrder) }},
	{"nested", benchNestedSchema, benchNestedColumns, func(i int) any {
		return benchNested{ID: int64(i), Customer: benchCustomer{Name: fmt.Sprint("c", i%50), Tier: int32(i % 3), Address: benchAddress{City: "Lyon", Zip: "69001"}},
			Lines: []benchLine{{SKU: "sku-1", Qty: 2, Price: 9.5}, {SKU: "sku-2", Qty: 1, Price: float64(i)}},
			Attrs: map[string]string{"channel": "web"}}
	}, func() any { return new(benchNested) }},
}

func (s benchShape) records(b *testing.B) [][]byte {
	w := avro.MustParse(s.schema)
	recs := make([][]byte, 1024)
	for i := range recs {
		data, err := avro.Marshal(w, s.value(i))
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = data
	}
	return recs
}

// decodeInto decodes recs[i%len] into batches of 1024 reused, as a source
// does.
func decodeInto(b *testing.B, d connector.Decoder, recs [][]byte, width int) {
	batch := row.NewBatch(len(recs), width)
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

// BenchmarkDecode runs each shape through the avro format, the
// avro-confluent format and hamba, one after the other.
func BenchmarkDecode(b *testing.B) {
	for _, s := range benchShapes {
		recs := s.records(b)
		schema := testenv.Schema(b, s.columns...)
		b.Run(s.name+"/avro", func(b *testing.B) {
			d, err := NewDecoder(Options{Schema: s.schema}, schema)
			if err != nil {
				b.Fatal(err)
			}
			decodeInto(b, d, recs, schema.Len())
		})
		b.Run(s.name+"/avro-confluent", func(b *testing.B) {
			d, err := NewRegistryDecoder(RegistryOptions{URL: "http://127.0.0.1:1"}, schema, false)
			if err != nil {
				b.Fatal(err)
			}
			// The schema of id 7 as the registry would have given it.
			p := d.compile(avro.MustParse(s.schema))
			if p.err != nil {
				b.Fatal(p.err)
			}
			d.progs[7] = p
			framed := make([][]byte, len(recs))
			for i, r := range recs {
				framed[i] = append(binary.BigEndian.AppendUint32([]byte{0}, 7), r...)
			}
			decodeInto(b, d, framed, schema.Len())
		})
		b.Run(s.name+"/hamba", func(b *testing.B) {
			w := avro.MustParse(s.schema)
			v := s.fresh()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := avro.Unmarshal(w, recs[i%len(recs)], v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeCPU measures what BenchmarkDecode does by CPU time rather
// than by the clock, the variants interleaved in rounds of 20000 records
// in one process, so that a machine shared with other work still gives
// fair ratios: hamba's CPU time over etld's for each shape (above 1:
// etld is faster). Run it with ETLD_BENCH_AVRO_DECODE=ROUNDS:
//
//	ETLD_BENCH_AVRO_DECODE=30 go test -count=1 -run TestDecodeCPU -v ./formats/avro
func TestDecodeCPU(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("ETLD_BENCH_AVRO_DECODE"))
	if rounds <= 0 {
		t.Skip("set ETLD_BENCH_AVRO_DECODE=ROUNDS to measure")
	}
	const chunk = 20000
	b := &testing.B{}
	for _, s := range benchShapes {
		recs := s.records(b)
		schema := testenv.Schema(t, s.columns...)
		plain, err := NewDecoder(Options{Schema: s.schema}, schema)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := NewRegistryDecoder(RegistryOptions{URL: "http://127.0.0.1:1"}, schema, false)
		if err != nil {
			t.Fatal(err)
		}
		reg.progs[7] = reg.compile(avro.MustParse(s.schema))
		framed := make([][]byte, len(recs))
		for i, r := range recs {
			framed[i] = append(binary.BigEndian.AppendUint32([]byte{0}, 7), r...)
		}
		batch := row.NewBatch(len(recs), schema.Len())
		rowsOf := func(d connector.Decoder, in [][]byte) func() {
			return func() {
				for i := range chunk {
					if i%len(in) == 0 {
						batch.Reset()
					}
					if err := d.Decode(in[i%len(in)], batch); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		w := avro.MustParse(s.schema)
		v := s.fresh()
		variants := []struct {
			name string
			run  func()
			cpu  time.Duration
		}{
			{"avro", rowsOf(plain, recs), 0},
			{"avro-confluent", rowsOf(reg, framed), 0},
			{"hamba", func() {
				for i := range chunk {
					if err := avro.Unmarshal(w, recs[i%len(recs)], v); err != nil {
						t.Fatal(err)
					}
				}
			}, 0},
		}
		for r := range rounds + 1 {
			for k := range variants {
				before := cpuTime()
				variants[k].run()
				if r > 0 { // the first round warms up
					variants[k].cpu += cpuTime() - before
				}
			}
		}
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(rounds*chunk) }
		h := per(variants[2].cpu)
		t.Logf("%-7s avro %6.0f ns (%.2fx hamba), avro-confluent %6.0f ns (%.2fx), hamba %6.0f ns CPU per record",
			s.name, per(variants[0].cpu), h/per(variants[0].cpu), per(variants[1].cpu), h/per(variants[1].cpu), h)
	}
}

// cpuTime is the CPU time of the process so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
