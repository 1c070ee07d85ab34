package cdcjson

import (
	"bytes"
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

// decoders builds each format's decoder over schema.
func decoders(t testing.TB) map[string]connector.Decoder {
	t.Helper()
	out := map[string]connector.Decoder{}
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json"} {
		out[format] = codec(t, format, schema).Decoder
	}
	return out
}

// changes renders a batch as +I[...] lines joined by |.
func changes(b *row.Batch) string {
	var parts []string
	for _, c := range b.Changes {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, " | ")
}

func TestDecode(t *testing.T) {
	tests := []struct {
		format, name, rec, want string
	}{
		// canal-json: the message shapes of Flink's canal-json documentation.
		{"canal-json", "insert", `{"data":[{"id":"111","name":"scooter","weight":"5.18"}],"database":"inventory","es":1589373560000,` +
			`"id":9,"isDdl":false,"mysqlType":{"id":"INTEGER"},"old":null,"pkNames":["id"],"sql":"","table":"products","ts":1589373560798,"type":"INSERT"}`,
			"+I[111, scooter, 5.18]"},
		{"canal-json", "update with old", `{"data":[{"id":"111","name":"scooter","weight":"5.15"}],"old":[{"weight":"5.18"}],"type":"UPDATE","table":"products"}`,
			"-U[111, scooter, 5.18] | +U[111, scooter, 5.15]"},
		{"canal-json", "update from NULL: null in old is the old value", `{"data":[{"id":1,"name":"a","weight":1}],"old":[{"name":null}],"type":"UPDATE"}`,
			"-U[1, null, 1.00] | +U[1, a, 1.00]"},
		{"canal-json", "delete", `{"data":[{"id":"111","name":"scooter","weight":"5.15"}],"old":null,"type":"DELETE"}`,
			"-D[111, scooter, 5.15]"},
		{"canal-json", "several rows a message", `{"data":[{"id":1,"name":"a","weight":1},{"id":2,"name":"b","weight":2}],"type":"INSERT"}`,
			"+I[1, a, 1.00] | +I[2, b, 2.00]"},
		{"canal-json", "several updates a message", `{"data":[{"id":1,"name":"a2","weight":1},{"id":2,"name":"b","weight":3}],` +
			`"old":[{"name":"a"},{"weight":2}],"type":"UPDATE"}`,
			"-U[1, a, 1.00] | +U[1, a2, 1.00] | -U[2, b, 2.00] | +U[2, b, 3.00]"},
		{"canal-json", "empty data", `{"data":[],"type":"DELETE"}`, ""},
		{"canal-json", "DDL: CREATE is skipped", `{"data":null,"type":"CREATE","isDdl":true,"sql":"CREATE TABLE t (id INT)"}`, ""},
		{"canal-json", "tombstone", ``, ""},
		{"canal-json", "null", " null \n", ""},

		// maxwell-json
		{"maxwell-json", "insert", `{"database":"test","table":"product","type":"insert","ts":1596684883,"xid":7125,"xoffset":0,` +
			`"data":{"id":111,"name":"scooter","weight":5.18},"primary_key_columns":["id"]}`,
			"+I[111, scooter, 5.18]"},
		{"maxwell-json", "update with old", `{"database":"test","table":"product","type":"update","ts":1596684893,"xid":7152,"commit":true,` +
			`"data":{"id":111,"name":"scooter","weight":5.15},"old":{"weight":5.18}}`,
			"-U[111, scooter, 5.18] | +U[111, scooter, 5.15]"},
		{"maxwell-json", "delete", `{"database":"test","table":"product","type":"delete","data":{"id":111,"name":"scooter","weight":5.15}}`,
			"-D[111, scooter, 5.15]"},
		{"maxwell-json", "tombstone", ``, ""},

		// ogg-json
		{"ogg-json", "insert", `{"table":"OGG.PRODUCTS","op_type":"I","op_ts":"2020-05-13 15:40:06.000000","current_ts":"2020-05-13 15:40:07.000000",` +
			`"pos":"00000000000000000000143","primary_keys":["ID"],"after":{"id":111,"name":"scooter","weight":5.18}}`,
			"+I[111, scooter, 5.18]"},
		{"ogg-json", "update", `{"table":"OGG.PRODUCTS","op_type":"U","before":{"id":111,"name":"scooter","weight":5.18},"after":{"id":111,"name":"scooter","weight":5.15}}`,
			"-U[111, scooter, 5.18] | +U[111, scooter, 5.15]"},
		{"ogg-json", "delete", `{"table":"OGG.PRODUCTS","op_type":"D","before":{"id":111,"name":"scooter","weight":5.15},"after":null}`,
			"-D[111, scooter, 5.15]"},
		{"ogg-json", "tombstone", `null`, ""},
	}
	decs := decoders(t)
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.name, func(t *testing.T) {
			b := row.NewBatch(2, schema.Len())
			if err := decs[tt.format].Decode([]byte(tt.rec), b); err != nil {
				t.Fatal(err)
			}
			if got := changes(b); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ format, rec, column, msg string }{
		{"canal-json", `[1]`, "", "invalid JSON at byte 0: expected an object, got an array"},
		{"canal-json", `{"type":"INSERT"} x`, "", "invalid JSON at byte 18: unexpected data after the message"},
		{"canal-json", `{"data":[{"id":1}]}`, "", `not a Canal message: no "type" member`},
		{"canal-json", `{"data":[{"id":1}],"type":"ALTER"}`, "", `unknown "type" value "ALTER" at byte 26 (want INSERT, UPDATE or DELETE`},
		{"canal-json", `{"data":[{"id":1}],"type":1}`, "", "expected a string, got a number"},
		{"canal-json", `{"type":"INSERT"}`, "", `type INSERT needs the rows in "data", which is null or missing`},
		{"canal-json", `{"data":{"id":1},"type":"INSERT"}`, "", `"data" at byte 8 is not an array of rows`},
		{"canal-json", `{"data":[{"id":1}],"type":"UPDATE"}`, "", `type UPDATE needs the old values in "old"`},
		{"canal-json", `{"data":[{"id":1},{"id":2}],"old":[{}],"type":"UPDATE"}`, "", `type UPDATE has 2 rows in "data" and 1 in "old"`},
		{"canal-json", `{"data":[{"id":1},{"id":"x"}],"type":"INSERT"}`, "id", `in data[1]: cannot parse "x" as BIGINT`},
		{"canal-json", `{"data":[{"id":1}],"old":[{"weight":1e30}],"type":"UPDATE"}`, "weight", `in old[0]: cannot parse "1e30" as DECIMAL(10, 2)`},
		{"canal-json", `{"data":[{"id":1},2],"type":"INSERT"}`, "", `in data[1]: invalid JSON at byte 0: expected a JSON object, got a number`},
		{"canal-json", `{"data":[{"id":1} {"id":2}],"type":"INSERT"}`, "", "invalid JSON at byte 18: expected ',' or ']' in an array"},
		{"maxwell-json", `{"data":{"id":1}}`, "", `not a Maxwell message: no "type" member`},
		{"maxwell-json", `{"data":{"id":1},"type":"bootstrap-insert"}`, "", `unknown "type" value "bootstrap-insert" at byte 24 (want insert, update or delete)`},
		{"maxwell-json", `{"type":"delete"}`, "", `type delete needs the row in "data"`},
		{"maxwell-json", `{"type":"update","data":{"id":1}}`, "", `type update needs the old values in "old"`},
		{"maxwell-json", `{"type":"insert","data":{"id":1,"name":2}}`, "", ""},
		{"maxwell-json", `{"type":"insert","data":{"id":true}}`, "id", `in "data": `},
		{"maxwell-json", `{"type":"insert","data":{"id":1}`, "", "unterminated object"},
		{"ogg-json", `{"after":{"id":1}}`, "", `not a GoldenGate record: no "op_type" member`},
		{"ogg-json", `{"op_type":"T","table":"T1"}`, "", `op_type T (a truncate) at byte 11 names no rows to delete`},
		{"ogg-json", `{"op_type":"X","after":{"id":1}}`, "", `unknown "op_type" value "X" at byte 11 (want I, U or D)`},
		{"ogg-json", `{"op_type":"I","after":null}`, "", `op_type I needs "after", which is null or missing`},
		{"ogg-json", `{"op_type":"U","after":{"id":1}}`, "", `op_type U without "before": the old row is needed to retract it`},
		{"ogg-json", `{"op_type":"D"}`, "", `op_type D needs "before"`},
		{"ogg-json", `{"op_type":"U","before":{"id":1},"after":{"id":"z"}}`, "id", `in "after": cannot parse "z" as BIGINT`},
	}
	decs := decoders(t)
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.rec, func(t *testing.T) {
			b := row.NewBatch(2, schema.Len())
			err := decs[tt.format].Decode([]byte(tt.rec), b)
			if tt.msg == "" && tt.column == "" {
				// A number for a STRING column is its text, as the json
				// format reads it.
				if err != nil || changes(b) != "+I[1, 2, null]" {
					t.Fatalf("got %v, %v", b, err)
				}
				return
			}
			var de *connector.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want a DecodeError, got %v", err)
			}
			if de.Column != tt.column || !strings.Contains(de.Err.Error(), tt.msg) {
				t.Fatalf("got column %q error %q, want column %q containing %q", de.Column, de.Err, tt.column, tt.msg)
			}
			if b.Len() != 0 {
				t.Fatalf("a failed message appended changes: %v", b)
			}
		})
	}
}

func TestCanalFilters(t *testing.T) {
	d, err := NewCanalDecoder(CanalOptions{DatabaseInclude: "inv.*", TableInclude: "products|orders"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ rec, want string }{
		{`{"data":[{"id":1}],"type":"INSERT","database":"inventory","table":"products"}`, "+I[1, null, null]"},
		{`{"data":[{"id":1}],"type":"INSERT","database":"inventory","table":"orders"}`, "+I[1, null, null]"},
		{`{"data":[{"id":1}],"type":"INSERT","database":"inventory","table":"products_old"}`, ""}, // whole name
		{`{"data":[{"id":1}],"type":"INSERT","database":"xinventory","table":"products"}`, ""},
		{`{"data":[{"id":1}],"type":"INSERT","table":"products"}`, ""}, // no database: no match
		{`{"data":"not read","type":"INSERT","database":"other","table":"products"}`, ""},
	}
	for _, tt := range tests {
		b := row.NewBatch(1, schema.Len())
		if err := d.Decode([]byte(tt.rec), b); err != nil || changes(b) != tt.want {
			t.Errorf("%s: got %v, %v; want %s", tt.rec, b, err, tt.want)
		}
	}
	if _, err := NewCanalDecoder(CanalOptions{TableInclude: "("}, schema); err == nil || !strings.Contains(err.Error(), "table_include: bad regular expression") {
		t.Errorf("a bad table_include: %v", err)
	}
}

func TestEncode(t *testing.T) {
	r := row.Row{row.BigIntValue(1), row.StringValue(`a"b`), row.DecimalValue(314, 2)}
	obj := `{"id":1,"name":"a\"b","weight":3.14}`
	tests := []struct {
		format      string
		add, remove string
	}{
		{"canal-json", `{"data":[` + obj + `],"type":"INSERT"}`, `{"data":[` + obj + `],"type":"DELETE"}`},
		{"maxwell-json", `{"data":` + obj + `,"type":"insert"}`, `{"data":` + obj + `,"type":"delete"}`},
		{"ogg-json", `{"before":null,"after":` + obj + `,"op_type":"I"}`, `{"before":` + obj + `,"after":null,"op_type":"D"}`},
	}
	for _, tt := range tests {
		c := codec(t, tt.format, schema)
		e := c.Encoder
		for _, k := range []row.Kind{row.Insert, row.UpdateAfter, row.UpdateBefore, row.Delete} {
			want := tt.add
			if !k.IsAdd() {
				want = tt.remove
			}
			got, err := e.Encode(nil, k, r)
			if err != nil || string(got) != want+"\n" {
				t.Errorf("%s %v: got %s, %v; want %s", tt.format, k, got, err, want)
			}
			b := row.NewBatch(1, schema.Len())
			if err := c.Decoder.Decode(got, b); err != nil || b.Len() != 1 || b.Changes[0].Kind.IsAdd() != k.IsAdd() ||
				string(row.AppendPrint(nil, 0, b.Changes[0].Row)) != `+I[1, a"b, 3.14]` {
				t.Errorf("%s %v: read back %v, %v", tt.format, k, b, err)
			}
		}
		if _, err := e.Encode(nil, row.Insert, row.Row{}); err == nil || !strings.Contains(err.Error(), tt.format) {
			t.Errorf("%s: a row of the wrong width: %v", tt.format, err)
		}
	}
	if _, err := NewOggDecoder(Options{TimestampFormat: "x"}, schema); err == nil {
		t.Error("a bad timestamp_format must be refused")
	}
}

// fuzzDecode runs the format kit's checks of any message on format's
// decoder, from seeds: an error says where or what, and a message gives
// at most max changes.
func fuzzDecode(f *testing.F, format string, seeds []string, max func(rec []byte) int) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		formattest.CheckRecord(t, codec(t, format, schema), rec, formattest.Check{
			Explains: func(err error) bool {
				var de *connector.DecodeError
				var se *json.SyntaxError
				var pe *row.ParseError
				return errors.As(err, &de) && de.Column != "" || errors.As(err, &se) || errors.As(err, &pe) ||
					strings.Contains(err.Error(), `"`) || strings.Contains(err.Error(), "type")
			},
			MaxChanges: max,
		})
	})
}

// codec is format's decoder and encoder over sch.
func codec(t testing.TB, format string, sch row.Schema) formattest.Codec {
	t.Helper()
	shapes := map[string]shape{"canal-json": canalEvent, "maxwell-json": maxwellEvent, "ogg-json": oggEvent}
	e, err := newEncoder(Options{}, sch, shapes[format])
	if err != nil {
		t.Fatal(err)
	}
	var d connector.Decoder
	switch format {
	case "canal-json":
		d, err = NewCanalDecoder(CanalOptions{}, sch)
	case "maxwell-json":
		d, err = NewMaxwellDecoder(Options{}, sch)
	case "ogg-json":
		d, err = NewOggDecoder(Options{}, sch)
	}
	if err != nil {
		t.Fatal(err)
	}
	return formattest.Codec{Schema: sch, Decoder: d, Encoder: e}
}

// TestRoundTrip writes random changes of every type and kind in each
// format and reads them back.
func TestRoundTrip(t *testing.T) {
	sch := formattest.AllTypes(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, format := range []string{"canal-json", "maxwell-json", "ogg-json"} {
		t.Run(format, func(t *testing.T) {
			formattest.RoundTrip(t, codec(t, format, sch), formattest.RandomChanges(rng, sch, 1000, true, nil))
		})
	}
}

func two([]byte) int { return 2 }

func FuzzCanalDecode(f *testing.F) {
	fuzzDecode(f, "canal-json", []string{
		`{"data":[{"id":"111","name":"scooter","weight":"5.18"}],"database":"inventory","old":null,"table":"products","type":"INSERT"}`,
		`{"data":[{"id":1,"name":"a2","weight":1},{"id":2,"name":"b","weight":3}],"old":[{"name":"a"},{"weight":2}],"type":"UPDATE"}`,
		`{"data":[{"id":1},{"id":2}],"type":"DELETE"}`, `{"data":null,"type":"CREATE"}`, ``, `null`,
		`{"data":[{"id":1}],"type":"ALTER"}`, `{"data":[1],"type":"INSERT"}`, `{"data":[`,
	}, func(rec []byte) int { return 2 * (bytes.Count(rec, []byte("{")) + 1) })
}

func FuzzMaxwellDecode(f *testing.F) {
	fuzzDecode(f, "maxwell-json", []string{
		`{"database":"test","table":"product","type":"insert","data":{"id":111,"name":"scooter","weight":5.18}}`,
		`{"type":"update","data":{"id":111,"name":"scooter","weight":5.15},"old":{"weight":5.18}}`,
		`{"type":"delete","data":{"id":1}}`, ``, `null`, `{"type":"update","data":{}}`, `{"type":"x"}`, `{`,
	}, two)
}

func FuzzOggDecode(f *testing.F) {
	fuzzDecode(f, "ogg-json", []string{
		`{"table":"OGG.PRODUCTS","op_type":"I","op_ts":"2020-05-13 15:40:06.000000","after":{"id":111,"name":"scooter","weight":5.18}}`,
		`{"op_type":"U","before":{"id":1,"name":"a","weight":1},"after":{"id":1,"name":"b","weight":"2.5"}}`,
		`{"op_type":"D","before":{"id":1},"after":null}`, ``, `null`, `{"op_type":"T"}`, `{"op_type":"U","after":{}}`, `[`,
	}, two)
}
