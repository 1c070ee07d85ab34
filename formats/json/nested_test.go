package json

import (
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

func nestedSchema(t *testing.T) row.Schema {
	return testenv.Schema(t, "tags ARRAY<STRING>", "m MAP<STRING, INT>", "r ROW<a INT, b ARRAY<DOUBLE>, ts TIMESTAMP(3)>", "mi MAP<INT, STRING>", "nn ARRAY<INT NOT NULL>")
}

func TestNestedDecodeEncode(t *testing.T) {
	schema := nestedSchema(t)
	c, err := NewCodec(schema, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, print, out, err string }{
		{in: `{"tags":["a","b"],"m":{"x":1,"y":null},"r":{"b":[1.5, 2],"a":7,"zz":{"q":1},"ts":"2024-01-02 10:00:00.5"},"mi":{"1":"one"},"nn":[]}`,
			print: "[[a, b], {x=1, y=null}, +I[7, [1.5, 2.0], 2024-01-02T10:00:00.500], {1=one}, []]",
			out:   `{"tags":["a","b"],"m":{"x":1,"y":null},"r":{"a":7,"b":[1.5,2.0],"ts":"2024-01-02 10:00:00.5"},"mi":{"1":"one"},"nn":[]}`},
		{in: `{"tags":null,"r":{}}`, print: "[null, null, +I[null, null, null], null, null]",
			out: `{"tags":null,"m":null,"r":{"a":null,"b":null,"ts":null},"mi":null,"nn":null}`},
		{in: `{"tags":[1]}`, print: "[[1], null, null, null, null]", out: `{"tags":["1"],"m":null,"r":null,"mi":null,"nn":null}`},
		{in: `{"tags":{"a":1}}`, err: `column tags: cannot parse "{\"a\":1}" as ARRAY<STRING>: an object does not fit`},
		{in: `{"m":[1]}`, err: `column m: cannot parse "[1]" as MAP<STRING, INT>: an array does not fit`},
		{in: `{"mi":{"x":"one"}}`, err: `cannot parse "x" as INT`},
		{in: `{"nn":[1,null]}`, err: "element 2 is null, but the elements are INT NOT NULL"},
		{in: `{"tags":["a",}`, err: "expected a value"},
	} {
		r := make(row.Row, schema.Len())
		_, err := c.DecodeObject(tc.in, 0, r)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := row.AppendPrint(nil, row.Insert, r); string(got) != "+I"+tc.print {
			t.Errorf("%s: decoded %s, want +I%s", tc.in, got, tc.print)
		}
		out := string(c.AppendObject(nil, r))
		if out != tc.out {
			t.Errorf("%s: encoded\n %s, want\n %s", tc.in, out, tc.out)
		}
		back := make(row.Row, schema.Len())
		if _, err := c.DecodeObject(out, 0, back); err != nil {
			t.Errorf("%s: its encoding does not decode: %v", out, err)
		}
		for i := range r {
			if !row.Equal(r[i], back[i]) {
				t.Errorf("%s: column %d reads back as %v, not %v", out, i, back[i], r[i])
			}
		}
	}
}

// TestMapNullKeyOnWrite: a NULL MAP key follows map_null_key_mode (drop the
// entry, or write the literal); etld writes "null" where Flink's default
// FAIL stops the job.
func TestMapNullKeyOnWrite(t *testing.T) {
	ty := row.MapOf(row.Type{ID: row.String}, row.Type{ID: row.Int})
	m := row.MapValue(
		[]row.Value{row.StringValue("a"), row.NullValue, row.StringValue("b")},
		[]row.Value{row.IntValue(1), row.IntValue(2), row.IntValue(3)})
	schema := row.NewSchema(row.Field{Name: "m", Type: ty})
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, `{"m":{"a":1,"null":2,"b":3}}`},
		{Options{MapNullKeyMode: "drop"}, `{"m":{"a":1,"b":3}}`},
		{Options{MapNullKeyMode: "literal", MapNullKeyLiteral: new("N/A")}, `{"m":{"a":1,"N/A":2,"b":3}}`},
	} {
		c, err := NewCodec(schema, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(c.AppendObject(nil, row.Row{m})); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.opts, got, tc.want)
		}
	}
	// A map whose only key is NULL, dropped, is an empty object.
	c, _ := NewCodec(schema, Options{MapNullKeyMode: "drop"})
	only := row.MapValue([]row.Value{row.NullValue}, []row.Value{row.IntValue(1)})
	if got := string(c.AppendObject(nil, row.Row{only})); got != `{"m":{}}` {
		t.Errorf("only a NULL key, dropped: got %s", got)
	}
}
