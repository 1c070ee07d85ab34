package debezium

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/formats/json"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

var schema = row.NewSchema(
	row.Field{Name: "id", Type: row.Of(row.BigInt)},
	row.Field{Name: "name", Type: row.Of(row.String)},
	row.Field{Name: "weight", Type: row.Type{ID: row.Decimal, Precision: 10, Scale: 2}},
)

func r(id int64, name string, weight int64) row.Row {
	return row.Row{row.BigIntValue(id), row.StringValue(name), row.DecimalValue(weight, 2)}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		rec  string
		want []row.Change
	}{
		{"create", `{"before":null,"after":{"id":1,"name":"scooter","weight":3.14},"op":"c","ts_ms":1589355606100,"source":{"db":"inventory"}}`,
			[]row.Change{{Kind: row.Insert, Row: r(1, "scooter", 314)}}},
		{"snapshot read", `{"after":{"id":1,"name":"a","weight":1},"op":"r"}`,
			[]row.Change{{Kind: row.Insert, Row: r(1, "a", 100)}}},
		{"update", `{"op":"u","before":{"id":1,"name":"a","weight":1},"after":{"id":1,"name":"b","weight":"2.5"}}`,
			[]row.Change{{Kind: row.UpdateBefore, Row: r(1, "a", 100)}, {Kind: row.UpdateAfter, Row: r(1, "b", 250)}}},
		{"delete", `{"before":{"id":1,"name":"b","weight":2.5},"after":null,"op":"d"}`,
			[]row.Change{{Kind: row.Delete, Row: r(1, "b", 250)}}},
		{"schema envelope", `{"schema":{"type":"struct","fields":[{"field":"op"}]},"payload":{"before":null,"after":{"id":2,"name":"c","weight":0.5},"op":"c"}}`,
			[]row.Change{{Kind: row.Insert, Row: r(2, "c", 50)}}},
		{"payload before schema", `{"payload":{"before":{"id":2,"name":"c","weight":0.5},"op":"d"},"schema":{}}`,
			[]row.Change{{Kind: row.Delete, Row: r(2, "c", 50)}}},
		{"big schema envelope", `{"schema":{"fields":"` + strings.Repeat("x", 1000) + `"},"payload":{"after":{"id":3,"name":"n","weight":1},"op":"c"}}`,
			[]row.Change{{Kind: row.Insert, Row: r(3, "n", 100)}}},
		{"tombstone: empty", ``, nil},
		{"tombstone: blank", " \n", nil},
		{"tombstone: null", "null\n", nil},
		{"tombstone: null payload", `{"schema":null,"payload":null}`, nil},
	}
	d, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := row.NewBatch(2, schema.Len())
			if err := d.Decode([]byte(tt.rec), b); err != nil {
				t.Fatal(err)
			}
			if b.Len() != len(tt.want) {
				t.Fatalf("got %v, want %v", b, tt.want)
			}
			for i, c := range b.Changes {
				if c.String() != tt.want[i].String() {
					t.Errorf("change %d: got %v, want %v", i, c, tt.want[i])
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ rec, column, msg string }{
		{`[1]`, "", "invalid JSON at byte 0: expected an object, got an array"},
		{`nullx`, "", "expected an object"},
		{`{"op":"c"} {}`, "", "invalid JSON at byte 11: unexpected data after the event"},
		{`{"after":{"id":1}}`, "", `not a Debezium event: no "op" member`},
		{`{"after":{"id":1},"op":"t"}`, "", `unknown "op" value "t" at byte 23 (want c, r, u or d)`},
		{`{"after":{"id":1},"op":1}`, "", "expected a string, got a number"},
		{`{"after":null,"op":"c"}`, "", `op "c" needs "after", which is null or missing`},
		{`{"before":null,"after":{"id":1},"op":"u"}`, "", `update event without "before"`},
		{`{"after":{"id":1},"op":"u"}`, "", "REPLICA IDENTITY to FULL"},
		{`{"before":{"id":1},"op":"u"}`, "", `op "u" needs "after"`},
		{`{"op":"d"}`, "", `op "d" needs "before"`},
		{`{"after":{"id":"x"},"op":"c"}`, "id", `in "after": cannot parse "x" as BIGINT`},
		{`{"before":{"id":1},"after":{"id":2,"weight":1e30},"op":"u"}`, "weight", `in "after": cannot parse "1e30" as DECIMAL(10, 2)`},
		{`{"payload":{"after":{"id":1},"op":"x"}}`, "", `unknown "op" value "x"`},
		{`{"payload":{"after":{"id":1},"op":"c",}}`, "", "invalid JSON at byte 38: expected a quoted member name, got '}'"},
		{`{"after":{"id":1},"op":"c"`, "", "unterminated object"},
	}
	d, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.rec, func(t *testing.T) {
			b := row.NewBatch(2, schema.Len())
			err := d.Decode([]byte(tt.rec), b)
			var de *connector.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want a DecodeError, got %v", err)
			}
			if de.Column != tt.column || !strings.Contains(de.Err.Error(), tt.msg) {
				t.Fatalf("got column %q error %q, want column %q containing %q", de.Column, de.Err, tt.column, tt.msg)
			}
			if b.Len() != 0 {
				t.Fatal("a failed event appended changes")
			}
		})
	}
}

func TestEncode(t *testing.T) {
	e, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewDecoder(Options{}, schema)
	add := `{"before":null,"after":{"id":1,"name":"a\"b","weight":3.14},"op":"c"}` + "\n"
	retract := `{"before":{"id":1,"name":"a\"b","weight":3.14},"after":null,"op":"d"}` + "\n"
	for k, want := range map[row.Kind]string{row.Insert: add, row.UpdateAfter: add, row.UpdateBefore: retract, row.Delete: retract} {
		got, err := e.Encode(nil, k, r(1, `a"b`, 314))
		if err != nil || string(got) != want {
			t.Errorf("%v: got %s, %v; want %s", k, got, err, want)
		}
		b := row.NewBatch(1, schema.Len())
		if err := d.Decode(got, b); err != nil || b.Len() != 1 || b.Changes[0].Kind.IsAdd() != k.IsAdd() ||
			string(row.AppendPrint(nil, 0, b.Changes[0].Row)) != "+I[1, a\"b, 3.14]" {
			t.Errorf("%v: read back %v, %v", k, b, err)
		}
	}
	if _, err := e.Encode(nil, row.Insert, row.Row{}); err == nil {
		t.Error("a row of the wrong width must be refused")
	}
	if _, err := NewEncoder(Options{TimestampFormat: "x"}, schema); err == nil {
		t.Error("a bad timestamp_format must be refused")
	}
}

func FuzzDebeziumDecode(f *testing.F) {
	for _, seed := range []string{
		`{"before":null,"after":{"id":1,"name":"scooter","weight":3.14},"op":"c","ts_ms":1589355606100,"source":{"db":"inventory"}}`,
		`{"op":"u","before":{"id":1,"name":"a","weight":1},"after":{"id":1,"name":"b","weight":"2.5"}}`,
		`{"before":{"id":1,"name":"b","weight":2.5},"after":null,"op":"d"}`,
		`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":2,"name":"c","weight":0.5},"op":"r"}}`,
		``, `null`, `{"schema":null,"payload":null}`, `{"after":{"id":1},"op":"t"}`, `[`, `{"op":"u","after":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		formattest.CheckRecord(t, codec(t, schema), rec, formattest.Check{
			Explains: func(err error) bool {
				var de *connector.DecodeError
				var se *json.SyntaxError
				var pe *row.ParseError
				return errors.As(err, &de) && de.Column != "" || errors.As(err, &se) || errors.As(err, &pe) ||
					strings.Contains(err.Error(), "op") || strings.Contains(err.Error(), "before")
			},
			MaxChanges: func([]byte) int { return 2 },
		})
	})
}

// codec is the format with its default options over sch.
func codec(t testing.TB, sch row.Schema) formattest.Codec {
	t.Helper()
	d, err := NewDecoder(Options{}, sch)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEncoder(Options{}, sch)
	if err != nil {
		t.Fatal(err)
	}
	return formattest.Codec{Schema: sch, Decoder: d, Encoder: e}
}

// TestRoundTrip writes random changes of every type and kind as events
// and reads them back.
func TestRoundTrip(t *testing.T) {
	sch := formattest.AllTypes(t)
	formattest.RoundTrip(t, codec(t, sch), formattest.RandomChanges(rand.New(rand.NewPCG(9, 10)), sch, 1000, true, nil))
}

func TestSchemaInclude(t *testing.T) {
	yes, no := true, false
	bare := `{"before":null,"after":{"id":1,"name":"a","weight":1},"op":"c"}`
	wrapped := `{"schema":{"type":"struct","optional":false},"payload":` + bare + `}`
	tests := []struct {
		name    string
		include *bool
		rec     string
		wantErr string
	}{
		{"unset reads bare", nil, bare, ""},
		{"unset reads wrapped", nil, wrapped, ""},
		{"true reads wrapped", &yes, wrapped, ""},
		{"true refuses bare", &yes, bare, `schema_include is true, but the event has no "payload" member`},
		{"false reads bare", &no, bare, ""},
		{"false refuses wrapped", &no, wrapped, `and schema_include is false; set schema_include: true`},
		{"true, tombstone", &yes, ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(Options{SchemaInclude: tt.include}, schema)
			if err != nil {
				t.Fatal(err)
			}
			b := row.NewBatch(1, schema.Len())
			err = d.Decode([]byte(tt.rec), b)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr == "" && tt.rec != "" && (b.Len() != 1 || b.Changes[0].String() != "+I[1, a, 1.00]"):
				t.Fatalf("got %v", b)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
			case tt.wantErr != "" && b.Len() != 0:
				t.Fatal("a refused event appended changes")
			}
		})
	}
	_, err := NewEncoder(Options{SchemaInclude: &yes}, schema)
	var fe *connector.FieldError
	if !errors.As(err, &fe) || fe.Field != "schema_include" || !strings.Contains(fe.Msg, "is for reading only") {
		t.Errorf("schema_include: true for writing: %v", err)
	}
	if _, err := NewEncoder(Options{SchemaInclude: &no}, schema); err != nil {
		t.Errorf("schema_include: false for writing: %v", err)
	}
}

// Flink's debezium-json.encode.decimal-as-plain-number, as json's.
func TestEncodeDecimalForms(t *testing.T) {
	small := row.NewSchema(row.Field{Name: "d", Type: row.Type{ID: row.Decimal, Precision: 10, Scale: 7}})
	for _, tc := range []struct {
		plain bool
		want  string
	}{
		{false, `{"before":null,"after":{"d":0},"op":"c"}` + "\n"},
		{true, `{"before":null,"after":{"d":0.0000000},"op":"c"}` + "\n"},
	} {
		e, err := NewEncoder(Options{EncodeDecimalAsPlainNumber: tc.plain}, small)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Encode(nil, row.Insert, row.Row{row.DecimalValue(0, 7)})
		if err != nil || string(got) != tc.want {
			t.Errorf("plain=%v: got %s, %v; want %s", tc.plain, got, err, tc.want)
		}
	}
}
