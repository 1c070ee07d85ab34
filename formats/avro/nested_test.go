package avro

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// TestNestedForms: nested values appended straight into their encoding
// (nested.go) equal the values row's constructors build, in the cases
// that take another path: a head longer than the room left for it (200
// items, items of 300 bytes), a ROW whose writer fields come in another
// order than the table's (read into a row first), a map with a key given
// twice (read again through row.MapValue), maps inside maps.
func TestNestedForms(t *testing.T) {
	writer := avro.MustParse(`{"type":"record","name":"t","fields":[
		{"name":"many","type":{"type":"array","items":"long"}},
		{"name":"big","type":{"type":"array","items":"string"}},
		{"name":"swapped","type":{"type":"array","items":{"type":"record","name":"s","fields":[{"name":"b","type":"string"},{"name":"a","type":"int"}]}}},
		{"name":"dup","type":{"type":"array","items":{"type":"map","values":"int"}}},
		{"name":"mm","type":{"type":"map","values":{"type":"map","values":"string"}}}]}`)
	schema := testenv.Schema(t, "many ARRAY<BIGINT>", "big ARRAY<STRING>", "swapped ARRAY<ROW<a INT, b STRING, c DOUBLE>>",
		"dup ARRAY<MAP<STRING, INT>>", "mm MAP<STRING, MAP<STRING, STRING>>")
	var many, big []row.Value
	var manyGo []int64
	var bigGo []string
	for i := range 200 {
		many, manyGo = append(many, row.BigIntValue(int64(i)<<40)), append(manyGo, int64(i)<<40)
	}
	for i := range 3 {
		s := strings.Repeat(fmt.Sprint(i), 300)
		big, bigGo = append(big, row.StringValue(s)), append(bigGo, s)
	}
	// A datum by hand: hamba writes a Go map's keys once, so the map
	// with a key given twice is spliced in as Avro's binary form: one
	// block of three entries, k=1, j=2, k=3.
	head, err := avro.Marshal(writer, map[string]any{"many": manyGo, "big": bigGo,
		"swapped": []any{map[string]any{"b": "x", "a": 1}, map[string]any{"b": "y", "a": 2}},
		"dup":     []any{}, "mm": map[string]any{"outer": map[string]any{"in": "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Cut the empty dup array (a lone 0) out and put one map in it.
	dupAt := strings.Index(string(head), "\x02y\x04\x00") + 4
	if dupAt < 4 || head[dupAt] != 0 {
		t.Fatalf("cannot find the dup array in %q", head)
	}
	dupMap := []byte{0x02, 0x06, 0x02, 'k', 0x02, 0x02, 'j', 0x04, 0x02, 'k', 0x06, 0x00, 0x00}
	datum := append(append(append([]byte{}, head[:dupAt]...), dupMap...), head[dupAt+1:]...)

	d, err := NewDecoder(Options{Schema: writer.String()}, schema)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(1, schema.Len())
	if err := d.Decode(datum, b); err != nil {
		t.Fatal(err)
	}
	want := row.Row{
		row.ArrayValue(many), row.ArrayValue(big),
		row.ArrayValue([]row.Value{
			row.StructValue([]row.Value{row.IntValue(1), row.StringValue("x"), row.NullValue}),
			row.StructValue([]row.Value{row.IntValue(2), row.StringValue("y"), row.NullValue})}),
		row.ArrayValue([]row.Value{row.MapValue([]row.Value{row.StringValue("k"), row.StringValue("j"), row.StringValue("k")},
			[]row.Value{row.IntValue(1), row.IntValue(2), row.IntValue(3)})}),
		row.MapValue([]row.Value{row.StringValue("outer")}, []row.Value{row.MapValue([]row.Value{row.StringValue("in")}, []row.Value{row.StringValue("v")})}),
	}
	for i, f := range schema.Fields {
		if got := b.Changes[0].Row[i]; !row.Equal(got, want[i]) {
			t.Errorf("%s: %v, want %v", f.Name, got, want[i])
		}
	}
	if got := b.Changes[0].Row[3].String(); got != "[{k=3, j=2}]" {
		t.Errorf("dup: %s, want [{k=3, j=2}]", got)
	}
}

// TestDecodeCopiesStrings: Decode's record may be reused by the caller
// once it returns (a Kafka message's buffer): the rows' strings, at the
// top and nested, must not point into it.
func TestDecodeCopiesStrings(t *testing.T) {
	schema := testenv.Schema(t, "s STRING", "a ARRAY<STRING>", "m MAP<STRING, STRING>", "r ROW<x STRING>")
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	in := row.Row{row.StringValue("top"), row.ArrayValue([]row.Value{row.StringValue("item")}),
		row.MapValue([]row.Value{row.StringValue("key")}, []row.Value{row.StringValue("val")}), row.StructValue([]row.Value{row.StringValue("field")})}
	rec, err := enc.Encode(nil, row.Insert, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []interface {
		Decode([]byte, *row.Batch) error
	}{mustDecoder(t, schema)} {
		b := row.NewBatch(1, schema.Len())
		if err := d.Decode(rec, b); err != nil {
			t.Fatal(err)
		}
		for i := range rec {
			rec[i] = 'X'
		}
		for i, f := range schema.Fields {
			if got := b.Changes[0].Row[i]; !row.Equal(got, in[i]) {
				t.Errorf("%s: %v after the record was overwritten, want %v", f.Name, got, in[i])
			}
		}
	}
}

func mustDecoder(t *testing.T, schema row.Schema) *Decoder {
	d, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
