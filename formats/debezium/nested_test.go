package debezium

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestNestedValues: debezium-json's before and after images carry
// composite columns as the json format does, both ways.
func TestNestedValues(t *testing.T) {
	tags, _ := row.ParseType("ARRAY<STRING>")
	attrs, _ := row.ParseType("ROW<color STRING, sizes MAP<STRING, INT>>")
	s := row.NewSchema(row.Field{Name: "id", Type: row.Of(row.BigInt)}, row.Field{Name: "tags", Type: tags}, row.Field{Name: "attrs", Type: attrs})
	d, err := NewDecoder(Options{}, s)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(2, s.Len())
	rec := `{"op":"u","before":{"id":1,"tags":["a"],"attrs":{"color":"red","sizes":{"S":1}}},"after":{"id":1,"tags":["a","b"],"attrs":{"color":"blue","sizes":{}}}}`
	if err := d.Decode([]byte(rec), b); err != nil {
		t.Fatal(err)
	}
	const want = "-U[1, [a], +I[red, {S=1}]]\n+U[1, [a, b], +I[blue, {}]]\n"
	if got := b.String(); got != want {
		t.Fatalf("decoded\n%swant\n%s", got, want)
	}
	e, err := NewEncoder(Options{}, s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Encode(nil, row.UpdateAfter, b.Changes[1].Row)
	if err != nil {
		t.Fatal(err)
	}
	const wantOut = `{"before":null,"after":{"id":1,"tags":["a","b"],"attrs":{"color":"blue","sizes":{}}},"op":"c"}`
	if string(out) != wantOut+"\n" {
		t.Fatalf("encoded\n %s, want\n %s", out, wantOut)
	}
}
