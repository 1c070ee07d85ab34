package json

import (
	stdjson "encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func ts(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

var allTypes = []string{
	"b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(10,2)",
	"s STRING", "y BYTES", "dt DATE", "t TIMESTAMP(3)", "l TIMESTAMP_LTZ(6)",
}

func TestDecode(t *testing.T) {
	schema := testenv.Schema(t, allTypes...)
	null := row.NullValue
	tests := []struct {
		name string
		rec  string
		want row.Row // nil: nothing appended
	}{
		{"every type", `{"b":true,"i":-7,"n":9007199254740993,"f":1.5,"d":-2.25e3,"m":12.345,"s":"héllo","y":"AAEC","dt":"2024-01-02","t":"2024-01-02 10:00:00.123","l":"2024-01-02 10:00:00.123456Z"}`,
			row.Row{row.BoolValue(true), row.IntValue(-7), row.BigIntValue(9007199254740993), row.FloatValue(1.5), row.DoubleValue(-2250),
				row.DecimalValue(1235, 2), row.StringValue("héllo"), row.BytesValue([]byte{0, 1, 2}), row.DateValue(19724),
				row.TimestampValue(ts("2024-01-02 10:00:00.123")), row.TimestampLTZValue(ts("2024-01-02 10:00:00.123456"))}},
		{"missing and null", `{"i":null, "s":"x"}`,
			row.Row{null, null, null, null, null, null, row.StringValue("x"), null, null, null, null}},
		{"case-insensitive names, unknown skipped", `{"I":1,"extra":{"deep":[1,2,{"x":null}]},"S":"a"}`,
			row.Row{null, row.IntValue(1), null, null, null, null, row.StringValue("a"), null, null, null, null}},
		{"numeric strings", `{"i":" 42 ","n":"-1","d":"NaN","m":"1.5","b":"false"}`,
			row.Row{row.BoolValue(false), row.IntValue(42), row.BigIntValue(-1), null, row.DoubleValue(math.NaN()), row.DecimalValue(150, 2), null, null, null, null, null}},
		{"integral floats into INT", `{"i":1.0,"n":1e3}`,
			row.Row{null, row.IntValue(1), row.BigIntValue(1000), null, null, null, null, null, null, null, null}},
		{"decimal exponent", `{"m":1.2345e2}`,
			row.Row{null, null, null, null, null, row.DecimalValue(12345, 2), null, null, null, null, null}},
		{"nested into STRING", `{"s":{"a": [1, "x"]}}`,
			row.Row{null, null, null, null, null, null, row.StringValue(`{"a": [1, "x"]}`), null, null, null, null}},
		{"scalars into STRING", `{"s":1.50}`,
			row.Row{null, null, null, null, null, null, row.StringValue("1.50"), null, null, null, null}},
		{"escapes", `{"s":"a\"b\\c\/\n\u00e9\ud83d\ude00\ud800"}`,
			row.Row{null, null, null, null, null, null, row.StringValue("a\"b\\c/\né😀\uFFFD"), null, null, null, null}},
		{"epoch millis", `{"t":1704189600123,"l":0}`,
			row.Row{null, null, null, null, null, null, null, null, null, row.TimestampValue(ts("2024-01-02 10:00:00.123")), row.TimestampLTZValue(0)}},
		{"epoch days into DATE", `{"dt":19724}`,
			row.Row{null, null, null, null, null, null, null, null, row.DateValue(19724), null, null}},
		{"epoch millis at the range's ends", `{"t":253402300799999,"l":-62167219200000}`,
			row.Row{null, null, null, null, null, null, null, null, null, row.TimestampValue(ts("9999-12-31 23:59:59.999")), row.TimestampLTZValue(ts("0000-01-01 00:00:00"))}},
		{"epoch days at the range's end", `{"dt":2932896}`,
			row.Row{null, null, null, null, null, null, null, null, row.DateValue(2932896), null, null}},
		{"sql timestamp with zone into LTZ", `{"l":"2024-01-02 10:00:00Z"}`,
			row.Row{null, null, null, null, null, null, null, null, null, null, row.TimestampLTZValue(ts("2024-01-02 10:00:00"))}},
		{"duplicate member: last wins", `{"i":1,"i":2}`,
			row.Row{null, row.IntValue(2), null, null, null, null, null, null, null, null, null}},
		{"blank record", " \r\n", nil},
		{"byte order mark", "\uFEFF{\"i\":3}",
			row.Row{null, row.IntValue(3), null, null, null, null, null, null, null, null, null}},
		{"surrounding blanks", " {\"i\" : 3 }\n",
			row.Row{null, row.IntValue(3), null, null, null, null, null, null, null, null, null}},
	}
	d, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := row.NewBatch(1, schema.Len())
			if err := d.Decode([]byte(tt.rec), b); err != nil {
				t.Fatalf("Decode(%s): %v", tt.rec, err)
			}
			if tt.want == nil {
				if b.Len() != 0 {
					t.Fatalf("want no row, got %v", b)
				}
				return
			}
			if b.Len() != 1 {
				t.Fatalf("want one row, got %d", b.Len())
			}
			assertRow(t, b.Changes[0].Row, tt.want)
			if b.Changes[0].Kind != row.Insert {
				t.Errorf("kind %v, want +I", b.Changes[0].Kind)
			}
		})
	}
}

func assertRow(t *testing.T, got, want row.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if !row.Equal(got[i], want[i]) {
			t.Errorf("value %d: got %v (%v), want %v (%v)", i, got[i], got[i].Type(), want[i], want[i].Type())
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	schema := testenv.Schema(t, "i INT", "n BIGINT NOT NULL", "s STRING", "y BYTES", "m DECIMAL(4,2)", "t TIMESTAMP(3)", "d DATE")
	tests := []struct {
		rec, column, msg string
	}{
		{`[1,2]`, "", "invalid JSON at byte 0: expected a JSON object, got an array"},
		{`42`, "", "expected a JSON object, got a number"},
		{`{"n":1} x`, "", `invalid JSON at byte 8: unexpected 'x' after the object`},
		{`{"n":1,}`, "", "byte 7: expected a quoted member name"},
		{`{"n":1`, "", "unterminated object"},
		{`{"n":1 "s":"x"}`, "", "expected ',' or '}' after a member"},
		{`{"n" 1}`, "", `expected ':' after member name "n"`},
		{`{"n":01}`, "", "expected ',' or '}'"},
		{`{"n":-}`, "", "invalid number: expected a digit"},
		{`{"n":1.}`, "", "expected a digit after '.'"},
		{`{"n":tru}`, "", `invalid JSON at byte 5: invalid value: not true, nor any other JSON value (near "tru}")`},
		// Plain text on a JSON topic is said to be not JSON, not a broken
		// null (both texts start with n).
		{`not json`, "", `invalid JSON at byte 0: not a JSON value; expected a JSON object (near "not json")`},
		{`nothing to see here, really not JSON`, "", `invalid JSON at byte 0: not a JSON value; expected a JSON object (near "nothing to see here, rea...")`},
		{`null`, "", `invalid JSON at byte 0: expected a JSON object, got null (near "null")`},
		{`{"n":1,"s":nix}`, "", `invalid JSON at byte 11: invalid value: not null, nor any other JSON value (near "nix}")`},
		{`{"n":1,"s":"` + "éééééééééééé" + "\x01" + `"}`, "", `control character 0x01 in a string (escape it) (near "\x01\"}")`},
		{`{"n":1} ` + "ééééééééééééé", "", `(near "` + "éééééééééééé" + `...")`},
		{`{"s":"a` + "\x01" + `"}`, "", "control character 0x01 in a string"},
		{`{"s":"\x"}`, "", `invalid escape \x`},
		{`{"s":"\u12"}`, "", "four hex digits"},
		{`{"s":"abc`, "", "unterminated string"},
		{`{"x":[[[` + strings.Repeat("[", 2000), "", "nested deeper than 1000 levels"},
		{`{"i":1.5,"n":1}`, "i", `cannot parse "1.5" as INT: not a whole number`},
		{`{"i":3000000000,"n":1}`, "i", `cannot parse "3000000000" as INT: out of range`},
		{`{"i":"x","n":1}`, "i", `cannot parse "x" as INT`},
		{`{"i":{"a":1},"n":1}`, "i", `cannot parse "{\"a\":1}" as INT: an object does not fit the column`},
		{`{"i":true,"n":1}`, "i", "a boolean does not fit the column"},
		{`{"n":null}`, "n", "null or missing, but the column is BIGINT NOT NULL"},
		{`{"i":1}`, "n", "null or missing"},
		{`{"n":1,"y":"!!"}`, "y", "not base64"},
		{`{"n":1,"m":123.4}`, "m", "does not fit DECIMAL(4, 2)"},
		{`{"n":1,"t":"yesterday"}`, "t", `cannot parse "yesterday" as TIMESTAMP(3)`},
		{`{"n":1,"t":1.5}`, "t", "not a whole number"},
		{`{"n":1,"d":1.5}`, "d", `cannot parse "1.5" as DATE: not a whole number`},
		// Past the years 0000-9999 an epoch number has no text a reader
		// takes back (a round trip read it, then refused its own output).
		{`{"n":1,"t":253402300800000}`, "t", "epoch milliseconds out of range (years 0000 to 9999)"},
		{`{"n":1,"t":-62167219200001}`, "t", "epoch milliseconds out of range"},
		{`{"n":1,"t":1000000000000000}`, "t", "epoch milliseconds out of range"},
		{`{"n":1,"d":2932897}`, "d", "days out of range (years 0000 to 9999)"},
		{`{"n":1,"d":-719529}`, "d", "days out of range"},
	}
	d, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.rec, func(t *testing.T) {
			b := row.NewBatch(1, schema.Len())
			err := d.Decode([]byte(tt.rec), b)
			var de *connector.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want a DecodeError, got %v", err)
			}
			if de.Column != tt.column || !strings.Contains(de.Err.Error(), tt.msg) {
				t.Fatalf("got column %q error %q, want column %q containing %q", de.Column, de.Err, tt.column, tt.msg)
			}
			if b.Len() != 0 {
				t.Fatalf("a failed record appended %d rows", b.Len())
			}
		})
	}
}

func TestFailOnMissingField(t *testing.T) {
	d, err := NewDecoder(Options{FailOnMissingField: true}, testenv.Schema(t, "a INT", "b STRING"))
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(2, 2)
	if err := d.Decode([]byte(`{"a":1,"b":null}`), b); err != nil {
		t.Fatalf("a null member is present: %v", err)
	}
	err = d.Decode([]byte(`{"a":1}`), b)
	if err == nil || err.Error() != "column b: missing from the record (fail_on_missing_field is set)" {
		t.Fatalf("got %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		err  string
	}{
		{Options{}, ""},
		{Options{TimestampFormat: "SQL"}, ""},
		{Options{TimestampFormat: "ISO-8601"}, ""},
		{Options{TimestampFormat: "iso"}, `timestamp_format: want sql or iso-8601, got "iso"`},
		{Options{IgnoreParseErrors: true, MapNullKeyMode: "LITERAL", MapNullKeyLiteral: new("")}, ""},
		{Options{MapNullKeyMode: "drop"}, ""},
		{Options{MapNullKeyMode: "skip"}, `map_null_key_mode: want fail, drop or literal, got "skip"`},
		{Options{MapNullKeyLiteral: new("n")}, "map_null_key_literal: applies only with map_null_key_mode: literal"},
		{Options{FailOnMissingField: true, IgnoreParseErrors: true}, "ignore_parse_errors: cannot be set together with fail_on_missing_field"},
	} {
		err := tt.opts.Validate()
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("%+v: got %v, want %q", tt.opts, err, tt.err)
		}
	}
	if _, err := NewCodec(row.Schema{}, Options{}); err == nil {
		t.Error("an empty schema must be refused")
	}
}

func TestEncode(t *testing.T) {
	schema := testenv.Schema(t, allTypes...)
	r := row.Row{row.BoolValue(true), row.IntValue(-7), row.BigIntValue(1 << 60), row.FloatValue(0.1), row.DoubleValue(1e7),
		row.DecimalValue(-5, 2), row.StringValue("q\"\\\n\x01é\xff\u2028"), row.BytesValue([]byte{0, 1, 2}), row.DateValue(19724),
		row.TimestampValue(ts("2024-01-02 10:00:00.120")), row.TimestampLTZValue(ts("2024-01-02 10:00:00"))}
	tests := []struct {
		opts Options
		r    row.Row
		want string
	}{
		{Options{}, r, `{"b":true,"i":-7,"n":1152921504606846976,"f":0.1,"d":1.0E7,"m":-0.05,"s":"q\"\\\n\u0001é�\u2028","y":"AAEC","dt":"2024-01-02","t":"2024-01-02 10:00:00.12","l":"2024-01-02 10:00:00Z"}` + "\n"},
		{Options{TimestampFormat: "iso-8601"}, r, `{"b":true,"i":-7,"n":1152921504606846976,"f":0.1,"d":1.0E7,"m":-0.05,"s":"q\"\\\n\u0001é�\u2028","y":"AAEC","dt":"2024-01-02","t":"2024-01-02T10:00:00.12","l":"2024-01-02T10:00:00Z"}` + "\n"},
		{Options{}, make(row.Row, len(allTypes)), `{"b":null,"i":null,"n":null,"f":null,"d":null,"m":null,"s":null,"y":null,"dt":null,"t":null,"l":null}` + "\n"},
		{Options{}, row.Row{9: row.TimestampValue(ts("1969-12-31 23:59:59.000001")), 3: row.FloatValue(float32(math.Inf(-1))), 4: row.DoubleValue(math.NaN()), 10: row.NullValue},
			`{"b":null,"i":null,"n":null,"f":"-Infinity","d":"NaN","m":null,"s":null,"y":null,"dt":null,"t":"1969-12-31 23:59:59.000001","l":null}` + "\n"},
	}
	for _, tt := range tests {
		e, err := NewEncoder(tt.opts, schema)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Encode([]byte("prefix:"), row.Insert, tt.r)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix:"+tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
		if !stdjson.Valid(got[len("prefix:"):]) {
			t.Errorf("not valid JSON: %s", got)
		}
	}
	e, _ := NewEncoder(Options{}, schema)
	if _, err := e.Encode(nil, row.Insert, row.Row{row.NullValue}); err == nil {
		t.Error("a row of the wrong width must be refused")
	}
}

// TestStringsAgainstEncodingJSON checks the string codec against the
// standard library on awkward inputs, both ways.
func TestStringsAgainstEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", "\x00\x1f\x7f", "\"\\/", "é😀", "\xff\xfe", "a\u2028b\u2029", "\ud7ff\ue000", strings.Repeat("x\n", 100)}
	for _, in := range inputs {
		enc := appendString(nil, in)
		var std string
		if err := stdjson.Unmarshal(enc, &std); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", in, enc, err)
		}
		want := strings.Map(func(r rune) rune { return r }, in) // each of \xff \xfe is one malformed sequence
		if std != want {
			t.Errorf("%q: encoding/json reads back %q, want %q", in, std, want)
		}
		stdEnc, _ := stdjson.Marshal(in)
		got, end, err := ReadString(string(stdEnc), 0)
		if err != nil || end != len(stdEnc) || got != want {
			t.Errorf("ReadString(%s) = %q, %d, %v; want %q", stdEnc, got, end, err, want)
		}
	}
}

// Invalid UTF-8 in a STRING is written as Flink writes it: Flink decodes
// the bytes as Java does (one U+FFFD per malformed sequence as the JDK
// cuts them) and Jackson writes the text, so that the output is valid
// JSON with as many U+FFFD as Flink's.
func TestInvalidUTF8AsFlinkWritesIt(t *testing.T) {
	for in, want := range map[string]string{
		"a\xe2\x82b":       "a\uFFFDb",                 // a truncated sequence: one
		"\xed\xa0\x80z":    "\uFFFDz",                  // a UTF-16 surrogate: one
		"\xf0\x80\x80\x80": "\uFFFD\uFFFD\uFFFD\uFFFD", // an overlong lead, then three lone continuations
		"\xc0\xaf":         "\uFFFD\uFFFD",
		"ok\xf0\x9f\x98":   "ok\uFFFD", // cut at the end
		"é\xff😀":           "é\uFFFD😀",
	} {
		enc := appendString(nil, in)
		var got string
		if err := stdjson.Unmarshal(enc, &got); err != nil || got != want {
			t.Errorf("%q encodes to %s, read back as %q (%v); want %q", in, enc, got, err, want)
		}
	}
}

func TestPlainDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"1.5": "1.5", "1e3": "1000", "1.25E2": "125", "-1.5e-3": "-0.0015", "12.5e1": "125", "1.234e2": "123.4", "0e0": "0",
	} {
		if got, ok := plainDecimal(in); !ok || got != want {
			t.Errorf("plainDecimal(%s) = %s, %v; want %s", in, got, ok, want)
		}
	}
	if _, ok := plainDecimal("1e999"); ok {
		t.Error("a huge exponent must be refused")
	}
}

// TestTimestampStandard: timestamp_format decides the one form a
// timestamp string is read in, as Flink's json.timestamp-format.standard
// does, for TIMESTAMP (no zone) and TIMESTAMP_LTZ (a trailing Z).
func TestTimestampStandard(t *testing.T) {
	schema := testenv.Schema(t, "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(6)")
	want := row.Row{row.TimestampValue(ts("2024-01-02 10:00:00.123456")), row.TimestampLTZValue(ts("2024-01-02 10:00:00.5"))}
	minute := row.Row{row.TimestampValue(ts("2024-01-02 10:00:00")), row.TimestampLTZValue(ts("2024-01-02 10:00:00"))}
	tests := []struct {
		std, rec string
		want     row.Row
		err      string
	}{
		{"sql", `{"t":"2024-01-02 10:00:00.123456","l":"2024-01-02 10:00:00.5Z"}`, want, ""},
		{"iso-8601", `{"t":"2024-01-02T10:00:00.123456","l":"2024-01-02T10:00:00.5Z"}`, want, ""},
		{"iso-8601", `{"t":"2024-01-02T10:00","l":"2024-01-02T10:00Z"}`, minute, ""},
		{"sql", `{"t":"2024-01-02 10:00:00.123456000"}`, row.Row{want[0], row.NullValue}, ""},
		{"sql", `{"t":1704189600000,"l":1704189600000}`, minute, ""}, // epoch millis, an etld extension
		{"sql", `{"t":"2024-01-02T10:00:00"}`, nil, `column t: cannot parse "2024-01-02T10:00:00" as TIMESTAMP(6): timestamp_format sql reads yyyy-MM-dd HH:mm:ss[.fraction], without a zone (timestamp_format: iso-8601 reads yyyy-MM-ddTHH:mm:ss)`},
		{"sql", `{"l":"2024-01-02 10:00:00"}`, nil, `column l: cannot parse "2024-01-02 10:00:00" as TIMESTAMP_LTZ(6): timestamp_format sql reads yyyy-MM-dd HH:mm:ss[.fraction]Z (timestamp_format: iso-8601 reads yyyy-MM-ddTHH:mm:ssZ)`},
		{"sql", `{"t":"2024-01-02 10:00:00Z"}`, nil, "column t: cannot parse"},
		{"sql", `{"t":"2024-01-02 10:00"}`, nil, "column t: cannot parse"},
		{"sql", `{"t":"2024-01-02 10:00:00."}`, nil, "column t: cannot parse"},
		{"sql", `{"t":"2024-01-02 10:00:00.1234567890"}`, nil, "column t: cannot parse"},
		{"iso-8601", `{"t":"2024-01-02 10:00:00"}`, nil, `column t: cannot parse "2024-01-02 10:00:00" as TIMESTAMP(6): timestamp_format iso-8601 reads yyyy-MM-ddTHH:mm[:ss[.fraction]], without a zone (timestamp_format: sql reads yyyy-MM-dd HH:mm:ss)`},
		{"iso-8601", `{"l":"2024-01-02T10:00:00+01:00"}`, nil, "column l: cannot parse"},
	}
	for _, tt := range tests {
		t.Run(tt.std+" "+tt.rec, func(t *testing.T) {
			d, err := NewDecoder(Options{TimestampFormat: tt.std}, schema)
			if err != nil {
				t.Fatal(err)
			}
			b := row.NewBatch(1, 2)
			err = d.Decode([]byte(tt.rec), b)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error starting %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertRow(t, b.Changes[0].Row, tt.want)
		})
	}
}

// TestIgnoreParseErrors: a value that does not fit its column is NULL, as
// in Flink; malformed JSON and a NOT NULL column still fail the record.
func TestIgnoreParseErrors(t *testing.T) {
	schema := testenv.Schema(t, "i INT", "m DECIMAL(4,2)", "t TIMESTAMP(3)", "y BYTES", "b BOOLEAN", "s STRING", "n INT NOT NULL")
	d, err := NewDecoder(Options{IgnoreParseErrors: true}, schema)
	if err != nil {
		t.Fatal(err)
	}
	b := row.NewBatch(1, schema.Len())
	if err := d.Decode([]byte(`{"i":1.5,"m":12345,"t":"yesterday","y":"!!","b":{},"s":"ok","n":7}`), b); err != nil {
		t.Fatal(err)
	}
	null := row.NullValue
	assertRow(t, b.Changes[0].Row, row.Row{null, null, null, null, null, row.StringValue("ok"), row.IntValue(7)})
	for rec, msg := range map[string]string{
		`{"n":"x"}`:    `column n: cannot parse "x" as INT NOT NULL`,
		`{"n":1,"i":}`: "invalid JSON",
	} {
		if err := d.Decode([]byte(rec), b); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want %q", rec, err, msg)
		}
	}
	if b.Len() != 1 {
		t.Errorf("failed records appended rows: %v", b)
	}
}

func TestMapNullKey(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		key  string
		drop bool
		err  bool
	}{
		{Options{}, "", false, true},
		{Options{MapNullKeyMode: "FAIL"}, "", false, true},
		{Options{MapNullKeyMode: "drop"}, "", true, false},
		{Options{MapNullKeyMode: "literal"}, "null", false, false},
		{Options{MapNullKeyMode: "Literal", MapNullKeyLiteral: new("N/A")}, "N/A", false, false},
	} {
		key, drop, err := tt.opts.MapNullKey()
		if key != tt.key || drop != tt.drop || (err != nil) != tt.err {
			t.Errorf("%+v: got %q, %v, %v", tt.opts, key, drop, err)
		}
	}
}

func TestTinyIntSmallIntRange(t *testing.T) {
	formattest.IntRanges(t, func(sch row.Schema) connector.Decoder {
		d, err := NewDecoder(Options{}, sch)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}, func(ti, si string) []byte { return []byte(`{"ti":` + ti + `,"si":"` + si + `"}`) })
}
