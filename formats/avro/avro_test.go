package avro

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// nestedTypes are the composite columns a round trip adds to the scalar
// ones.
var nestedTypes = []string{"a ARRAY<BIGINT>", "mp MAP<STRING, DOUBLE>", "r ROW<x INT, s STRING, inner ROW<d DATE>>", "aa ARRAY<ARRAY<STRING>>"}

// TestRoundTrip writes random rows of every type, nested ones too, each as
// its own datum, and reads them back: every value must come back.
func TestRoundTrip(t *testing.T) {
	cols := []string{"b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(18,4)",
		"w DECIMAL(38,10)", "s STRING", "y BYTES", "dt DATE", "tm TIME(3)", "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(6)", "nn BIGINT NOT NULL"}
	schema := testenv.Schema(t, append(cols, nestedTypes...)...)
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	formattest.RoundTrip(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc},
		formattest.RandomChanges(rng, schema, 2000, false, randomValue))
}

// randomValue is formattest.RandomValue with nested values and no NULL in
// a NOT NULL column.
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
	case row.Decimal:
		if t.Precision > 18 {
			digits := make([]byte, 1+rng.IntN(t.Precision))
			for i := range digits {
				digits[i] = byte('0' + rng.IntN(10))
			}
			z, _ := new(big.Int).SetString(string(digits), 10)
			if rng.IntN(2) == 0 {
				z.Neg(z)
			}
			n, _ := row.Int128FromBig(z)
			return row.Decimal128Value(n, t.Scale)
		}
	}
	return formattest.RandomValue(rng, t)
}

// TestReadsHambaWriter: datums that hamba/avro's own encoder wrote, from
// Go values, with logical types, a union, an enum, a fixed and a field
// the table does not read, decode to the values written.
func TestReadsHambaWriter(t *testing.T) {
	w := avro.MustParse(`{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"long"},
		{"name":"skipped","type":{"type":"array","items":{"type":"map","values":["null","string"]}}},
		{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
		{"name":"day","type":{"type":"int","logicalType":"date"}},
		{"name":"at","type":{"type":"long","logicalType":"timestamp-micros"}},
		{"name":"local","type":{"type":"long","logicalType":"local-timestamp-millis"}},
		{"name":"tod","type":{"type":"int","logicalType":"time-millis"}},
		{"name":"uid","type":{"type":"string","logicalType":"uuid"}},
		{"name":"note","type":["null","string"],"default":null},
		{"name":"state","type":{"type":"enum","name":"State","symbols":["NEW","PAID"]}},
		{"name":"hash","type":{"type":"fixed","name":"Hash","size":4}},
		{"name":"small","type":"int"},
		{"name":"tags","type":{"type":"array","items":"string"}},
		{"name":"attrs","type":{"type":"map","values":"long"}},
		{"name":"buyer","type":{"type":"record","name":"Buyer","fields":[{"name":"name","type":"string"},{"name":"vip","type":"boolean"}]}}]}`)
	at := time.Date(2024, 3, 1, 12, 30, 45, 123456000, time.UTC)
	datum, err := avro.Marshal(w, map[string]any{
		"id": int64(42), "skipped": []any{map[string]any{"a": "b"}},
		"price": big.NewRat(-123456, 100), "day": time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),
		"at": at, "local": at.Truncate(time.Millisecond), "tod": 45*time.Second + 7*time.Millisecond,
		"uid": "5f0c3e1a-0000-4000-8000-000000000001", "note": "hi", "state": "PAID",
		"hash": [4]byte{1, 2, 3, 0x0a}, "small": int32(-5), "tags": []string{"x", "y"},
		"attrs": map[string]int64{"k": 7}, "buyer": map[string]any{"name": "ann", "vip": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	schema := testenv.Schema(t, "id BIGINT", "price DECIMAL(12,3)", "day DATE", "at TIMESTAMP_LTZ(6)", "local TIMESTAMP(3)",
		"tod TIME(3)", "uid STRING", "note STRING", "state STRING", "hash BYTES", "small DOUBLE", "tags ARRAY<STRING>",
		"attrs MAP<STRING, BIGINT>", "buyer ROW<vip BOOLEAN, name STRING>", "missing INT")
	d, err := NewDecoder(Options{Schema: w.String()}, schema)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(1, schema.Len())
	if err := d.Decode(datum, b); err != nil {
		t.Fatal(err)
	}
	want := "+I[42, -1234.560, 2024-03-01, 2024-03-01T12:30:45.123456Z, 2024-03-01T12:30:45.123, 00:00:45.007, " +
		"5f0c3e1a-0000-4000-8000-000000000001, hi, PAID, [1, 2, 3, 10], -5.0, [x, y], {k=7}, +I[true, ann], null]"
	if got := b.Changes[0].String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestHambaReadsEncoder: what the encoder writes, hamba/avro's decoder
// reads back with the derived schema, to the values written.
func TestHambaReadsEncoder(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "m DECIMAL(10,2)", "t TIMESTAMP(3)", "s STRING", "a ARRAY<INT>", "r ROW<x INT>")
	e, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(1969, 12, 31, 23, 59, 59, 999000000, time.UTC)
	rec, err := e.Encode(nil, row.Insert, row.Row{row.BigIntValue(-3), row.DecimalValue(-12345, 2), row.TimestampValue(at.UnixMicro()),
		row.NullValue, row.ArrayValue([]row.Value{row.IntValue(1), row.NullValue}), row.StructValue([]row.Value{row.IntValue(9)})})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := DeriveSchema(schema)
	var got map[string]any
	if err := avro.Unmarshal(avro.MustParse(text), rec, &got); err != nil {
		t.Fatal(err)
	}
	if got["id"] != int64(-3) || got["s"] != nil {
		t.Fatalf("id, s: %v", got)
	}
	if m, ok := got["m"].(*big.Rat); !ok || m.Cmp(big.NewRat(-12345, 100)) != 0 {
		t.Fatalf("m = %v", got["m"])
	}
	if ts, ok := got["t"].(time.Time); !ok || !ts.Equal(at) {
		t.Fatalf("t = %v, want %v", got["t"], at)
	}
	// hamba names the union's branch of a composite value: unwrap it.
	for _, k := range []string{"a", "r"} {
		if m, ok := got[k].(map[string]any); ok && len(m) == 1 {
			for branch, v := range m {
				if branch == "array" || strings.HasSuffix(branch, "record_"+k) {
					got[k] = v
				}
			}
		}
	}
	if a, ok := got["a"].([]any); !ok || len(a) != 2 || a[0] != 1 || a[1] != nil {
		t.Fatalf("a = %#v", got["a"])
	}
	if r, ok := got["r"].(map[string]any); !ok || r["x"] != 9 {
		t.Fatalf("r = %#v", got["r"])
	}
}

// TestEvolution reads datums of an older and a newer writer schema into
// one table: a field added (NULL for old records), one dropped (skipped),
// one reordered, int widened to long and float to double.
func TestEvolution(t *testing.T) {
	v1 := `{"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"b","type":"float"}]}`
	v2 := `{"type":"record","name":"r","fields":[{"name":"gone","type":"string"},{"name":"b","type":"double"},{"name":"a","type":"long"},{"name":"c","type":["null","string"]}]}`
	schema := testenv.Schema(t, "a BIGINT", "b DOUBLE", "c STRING")
	for _, tc := range []struct {
		writer string
		value  map[string]any
		want   string
	}{
		{v1, map[string]any{"a": 7, "b": float32(1.5)}, "+I[7, 1.5, null]"},
		{v2, map[string]any{"gone": "x", "b": 2.25, "a": int64(1) << 40, "c": "new"}, "+I[1099511627776, 2.25, new]"},
	} {
		datum, err := avro.Marshal(avro.MustParse(tc.writer), tc.value)
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDecoder(Options{Schema: tc.writer}, schema)
		if err != nil {
			t.Fatal(err)
		}
		b := row.NewBatch(1, 3)
		if err := d.Decode(datum, b); err != nil {
			t.Fatal(err)
		}
		if got := b.Changes[0].String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.writer, got, tc.want)
		}
	}
	// What Avro cannot resolve is refused when the decoder is made.
	for writer, msg := range map[string]string{
		`{"type":"record","name":"r","fields":[{"name":"a","type":"string"}]}`:                            "column a: the writer's string cannot be read as BIGINT",
		`{"type":"record","name":"r","fields":[{"name":"b","type":"double"}]}`:                            "column n is NOT NULL, and the writer's schema has no field n",
		`{"type":"record","name":"r","fields":[{"name":"a","type":"long"},{"name":"n","type":"double"}]}`: "column n: the writer's double cannot be read as INT NOT NULL",
	} {
		_, err := NewDecoder(Options{Schema: writer}, testenv.Schema(t, "a BIGINT", "n INT NOT NULL"))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", writer, err, msg)
		}
	}
}

// TestBadBytes: a truncated or corrupt datum fails with the column and
// the byte offset, appends nothing, and never panics.
func TestBadBytes(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT", "s STRING", "a ARRAY<INT>")
	d, _ := NewDecoder(Options{}, schema)
	for rec, msg := range map[string]string{
		"":                                 "column id: at byte 0: the record ends inside a number",
		"\x02\x02":                         "column s: at byte 2: the record ends inside a number",
		"\x02\x02\x02\x40a":                "column s: at byte 3: a length of 32 where 1 bytes are left",
		"\x00\x00\x02\x80\x80\x80\x80\x10": "column a: at byte 3: a block of 2147483648 items where 0 bytes are left",
		"\x00\x00\x00\x00":                 "at byte 3: 1 bytes after the datum",
		"\x05":                             "column id: at byte 0: union branch -3 of 2",
	} {
		b := row.NewBatch(1, 3)
		err := d.Decode([]byte(rec), b)
		var de *connector.DecodeError
		if !errors.As(err, &de) || b.Len() != 0 {
			t.Errorf("%q: %v, %d rows", rec, err, b.Len())
			continue
		}
		if want, _, _ := strings.Cut(msg, "..."); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", rec, err, msg)
		}
	}
}

func FuzzAvroDecode(f *testing.F) {
	schema := testenv.Schema(f, "b BOOLEAN", "i INT", "n BIGINT NOT NULL", "f FLOAT", "d DOUBLE", "m DECIMAL(10,2)", "s STRING",
		"y BYTES", "dt DATE", "tm TIME(3)", "t TIMESTAMP(3)", "l TIMESTAMP_LTZ(6)", "a ARRAY<STRING>", "mp MAP<STRING, INT>", "r ROW<x INT, z STRING>")
	enc, _ := NewEncoder(Options{}, schema)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range formattest.RandomChanges(rng, schema, 20, false, randomValue) {
		rec, err := enc.Encode(nil, row.Insert, c.Row)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, rec []byte) {
		dec, _ := NewDecoder(Options{}, schema)
		formattest.CheckRecord(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc}, rec, formattest.Check{
			Explains:   explains,
			MaxChanges: func([]byte) int { return 1 },
			Exact:      true,
		})
	})
}

// explains: every decode error names a byte offset.
func explains(err error) bool {
	var e *errAt
	return errors.As(err, &e)
}

// TestPickedColumns: the formats kit's property for ColumnDecoder, on
// records the encoder writes for each random schema, now and then cut
// short or with a byte changed.
func TestPickedColumns(t *testing.T) {
	var enc *Encoder // of the schema Decoders was last called with
	var sch row.Schema
	formattest.PickedColumns(t, formattest.Columns{
		Types: []string{"BIGINT", "STRING", "DOUBLE", "INT NOT NULL", "ARRAY<INT>", "ROW<a STRING>", "DECIMAL(9,3)"},
		Decoders: func(t testing.TB, r *rand.Rand, schema row.Schema) (connector.Decoder, connector.Decoder) {
			full, err := NewDecoder(Options{}, schema)
			if err != nil {
				t.Fatal(err)
			}
			picked, _ := NewDecoder(Options{}, schema)
			if enc, err = NewEncoder(Options{}, schema); err != nil {
				t.Fatal(err)
			}
			sch = schema
			return full, picked
		},
		Record: func(r *rand.Rand, n int) []byte {
			c := formattest.RandomChanges(r, sch, 1, false, randomValue)[0]
			rec, err := enc.Encode(nil, row.Insert, c.Row)
			if err != nil {
				t.Fatal(err)
			}
			switch r.IntN(6) {
			case 0:
				rec = rec[:r.IntN(len(rec)+1)]
			case 1:
				if len(rec) > 0 {
					rec[r.IntN(len(rec))] = byte(r.Uint32())
				}
			}
			return rec
		},
		SameShapeError: true,
		MinCompared:    3000,
	})
}
