package csv

import (
	"bufio"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func str(s string) *string { return &s }

func micros(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
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

var (
	null = row.NullValue
	s    = row.StringValue
)

func TestDecode(t *testing.T) {
	all := testenv.Schema(t, "b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(10,2)", "s STRING", "y BYTES", "dt DATE", "t TIMESTAMP(3)", "l TIMESTAMP_LTZ(3)")
	three := testenv.Schema(t, "a STRING", "b INT", "c STRING")
	tests := []struct {
		name   string
		opts   Options
		schema row.Schema
		rec    string
		want   row.Row // nil: nothing appended
	}{
		{"every type", Options{}, all, `TRUE,-7,9007199254740993,1.5,-2.25E3,12.345,héllo,AAEC,2024-01-02,2024-01-02 10:00:00.123,2024-01-02 10:00:00.5`,
			row.Row{row.BoolValue(true), row.IntValue(-7), row.BigIntValue(9007199254740993), row.FloatValue(1.5), row.DoubleValue(-2250), row.DecimalValue(1235, 2),
				s("héllo"), row.BytesValue([]byte{0, 1, 2}), row.DateValue(19724), row.TimestampValue(micros("2024-01-02 10:00:00.123")), row.TimestampLTZValue(micros("2024-01-02 10:00:00.5"))}},
		{"all NULL with null_literal \"\"", Options{NullLiteral: str("")}, all, `,,,,,,,,,,`, make(row.Row, 11)},
		{"quoted empty is the empty string", Options{NullLiteral: str("")}, three, `"",1,`, row.Row{s(""), row.IntValue(1), null}},
		{"Flink: an empty STRING field is the empty string", Options{}, three, `,1,""`, row.Row{s(""), row.IntValue(1), s("")}},
		{"Flink: empty BYTES are empty", Options{}, testenv.Schema(t, "y BYTES"), `""`, row.Row{row.BytesValue([]byte{})}},
		{"ignore_parse_errors: a bad field is NULL", Options{IgnoreParseErrors: true}, all, `x,1.5,,z,,1e999999,,!!,2024-13-01,x,`,
			row.Row{null, null, null, null, null, null, s(""), null, null, null, null}},
		{"ignore_parse_errors: a short record is padded", Options{IgnoreParseErrors: true}, three, `a,1`, row.Row{s("a"), row.IntValue(1), null}},
		{"escape character", Options{EscapeCharacter: `\`}, three, `a\,b,1,"say \"hi\"\n\\"`, row.Row{s("a,b"), row.IntValue(1), s("say \"hi\"\n\\")}},
		{"escape character, unquoted controls", Options{EscapeCharacter: `\`, DisableQuoteCharacter: true}, three, `\t\r\0x,1,\"`, row.Row{s("\t\r\x00x"), row.IntValue(1), s(`"`)}},
		{"escaped null literal is text", Options{EscapeCharacter: `\`, NullLiteral: str("N")}, three, `\N,N,N`, row.Row{s("N"), null, null}},
		{"comment line", Options{AllowComments: true}, three, `# a,"b`, nil},
		{"# without allow_comments", Options{}, three, `# a,1,b`, row.Row{s("# a"), row.IntValue(1), s("b")}},
		{"field_delimiter and quote_character", Options{FieldDelimiter: "|", QuoteCharacter: "'"}, three, `'a|b'|1|"`, row.Row{s("a|b"), row.IntValue(1), s(`"`)}},
		{"disable_quote_character", Options{DisableQuoteCharacter: true}, three, `"a,1,b"`, row.Row{s(`"a`), row.IntValue(1), s(`b"`)}},
		{"quoting", Options{}, three, `"a,b","2","say ""hi""` + "\r\nbye\"", row.Row{s("a,b"), row.IntValue(2), s("say \"hi\"\r\nbye")}},
		{"unicode and blanks kept in strings", Options{}, three, ` é😀 , 3 ,"  "`, row.Row{s(" é😀 "), row.IntValue(3), s("  ")}},
		{"byte order mark dropped", Options{}, three, "\uFEFFx,1,y", row.Row{s("x"), row.IntValue(1), s("y")}},
		{"terminator dropped", Options{}, three, "x,1,y\r\n", row.Row{s("x"), row.IntValue(1), s("y")}},
		{"semicolon", Options{Delimiter: ";"}, three, `a,b;1;"c;d"`, row.Row{s("a,b"), row.IntValue(1), s("c;d")}},
		{"tab", Options{Delimiter: `\t`}, three, "a\t1\tc d", row.Row{s("a"), row.IntValue(1), s("c d")}},
		{"quoting disabled", Options{Quote: str("")}, three, `"a,1,b"`, row.Row{s(`"a`), row.IntValue(1), s(`b"`)}},
		{"single quote", Options{Quote: str("'")}, three, `'a,''b',1,"c"`, row.Row{s("a,'b"), row.IntValue(1), s(`"c"`)}},
		{"null literal", Options{NullLiteral: str(`\N`)}, three, `,\N,"\N"`, row.Row{s(""), null, s(`\N`)}},
		{"blank line skipped", Options{}, three, "", nil},
		{"blank line skipped, CRLF", Options{}, three, "\r\n", nil},
		{"blank line is NULL for one column with null_literal \"\"", Options{NullLiteral: str("")}, testenv.Schema(t, "a STRING"), "", row.Row{null}},
		{"blank line is the empty string for one column, as in Flink", Options{}, testenv.Schema(t, "a STRING"), "", row.Row{s("")}},
		{"trailing delimiter is an empty last field", Options{}, testenv.Schema(t, "a STRING", "b STRING"), "x,", row.Row{s("x"), s("")}},
		{"trailing delimiter after a full record (Flink's allow-trailing-comma)", Options{}, three, "x,1,y,", row.Row{s("x"), row.IntValue(1), s("y")}},
		{"Flink's timestamp text", Options{}, testenv.Schema(t, "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(3)"), `2024-01-02 10:00:00.0001,2024-01-02 10:00:00.5Z`,
			row.Row{row.TimestampValue(micros("2024-01-02 10:00:00.0001")), row.TimestampLTZValue(micros("2024-01-02 10:00:00.5"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(tt.opts, tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			b := row.NewBatch(1, tt.schema.Len())
			if err := d.Decode([]byte(tt.rec), b); err != nil {
				t.Fatalf("Decode(%q): %v", tt.rec, err)
			}
			if tt.want == nil {
				if b.Len() != 0 {
					t.Fatalf("want no row, got %v", b)
				}
				return
			}
			if b.Len() != 1 || b.Changes[0].Kind != row.Insert {
				t.Fatalf("want one +I row, got %v", b)
			}
			assertRow(t, b.Changes[0].Row, tt.want)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	three := testenv.Schema(t, "id STRING", "ts BIGINT", "temperature DOUBLE NOT NULL")
	tests := []struct {
		opts        Options
		rec, column string
		msg         string
	}{
		{Options{}, `a,1`, "", "expected 3 fields, got 2"},
		{Options{}, `a,1,2,3`, "", "expected 3 fields, got 4"},
		{Options{}, `a,1,2,,`, "", "expected 3 fields, got 5"},
		{Options{}, `a,1,2,""`, "", "expected 3 fields, got 4"},
		{Options{}, `a,1`, "", "expected 3 fields, got 2"},
		{Options{}, `a,x,1`, "ts", `cannot parse "x" as BIGINT`},
		{Options{}, `a,99999999999999999999,1`, "ts", `cannot parse "99999999999999999999" as BIGINT: out of range`},
		{Options{NullLiteral: str("")}, `a,1,`, "temperature", "NULL, but the column is DOUBLE NOT NULL"},
		{Options{}, `a,1,`, "temperature", `cannot parse "" as DOUBLE NOT NULL`},
		{Options{}, `a,,1`, "ts", `cannot parse "" as BIGINT: an empty field is NULL only with null_literal: ""`},
		{Options{IgnoreParseErrors: true}, `a,1,x`, "temperature", `cannot parse "x" as DOUBLE NOT NULL`},
		{Options{IgnoreParseErrors: true}, `a,1`, "temperature", "missing (2 fields of 3), but the column is DOUBLE NOT NULL"},
		{Options{IgnoreParseErrors: true}, `a,1,2,3`, "", "expected 3 fields, got 4"},
		{Options{EscapeCharacter: `\`}, `a,1,2\`, "temperature", "escape character at byte 5 ends the record"},
		{Options{EscapeCharacter: `\`}, `a,1,"2\"`, "temperature", "quoted field starting at byte 4 has no closing quote"},
		{Options{}, `a,"",1`, "ts", `cannot parse "" as BIGINT`},
		{Options{NullLiteral: str("NULL")}, `a,,1`, "ts", `cannot parse "" as BIGINT`},
		{Options{}, `"abc,1,2`, "id", "quoted field starting at byte 0 has no closing quote"},
		{Options{}, `a,"1""2,3`, "ts", "quoted field starting at byte 2 has no closing quote"},
		{Options{}, `ab"c,1,2`, "id", "quote at byte 2 inside an unquoted field"},
		{Options{}, `"ab"c,1,2`, "id", `unexpected 'c' after the closing quote at byte 3`},
		{Options{}, "a,1\n2,3", "ts", "line break at byte 3 in an unquoted field"},
		{Options{Quote: str("")}, "a,1\r2,3", "ts", "line break at byte 3 in an unquoted field"},
		{Options{}, `a,1,2,"x`, "", "field 4: quoted field starting at byte 6 has no closing quote"},
	}
	for _, tt := range tests {
		t.Run(tt.rec, func(t *testing.T) {
			d, err := NewDecoder(tt.opts, three)
			if err != nil {
				t.Fatal(err)
			}
			b := row.NewBatch(1, 3)
			err = d.Decode([]byte(tt.rec), b)
			var de *connector.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want a DecodeError, got %v", err)
			}
			if de.Column != tt.column || !strings.Contains(de.Err.Error(), tt.msg) {
				t.Fatalf("got column %q error %q, want column %q containing %q", de.Column, de.Err, tt.column, tt.msg)
			}
			if b.Len() != 0 {
				t.Fatal("a failed record appended a row")
			}
		})
	}
	d, _ := NewDecoder(Options{}, testenv.Schema(t, "y BYTES"))
	if err := d.Decode([]byte("!!"), row.NewBatch(1, 1)); err == nil || err.Error() != `column y: cannot parse "!!" as BYTES: not base64` {
		t.Errorf("bad base64: got %v", err)
	}
}

func TestHeader(t *testing.T) {
	schema := testenv.Schema(t, "id STRING", "ts BIGINT", "temperature DOUBLE")
	d, err := NewDecoder(Options{Header: true}, schema)
	if err != nil {
		t.Fatal(err)
	}
	if !d.HasHeader() {
		t.Fatal("HasHeader is false")
	}
	for _, tt := range []struct{ rec, err string }{
		{"id,ts,temperature", ""},
		{"\uFEFFID,\"Ts\", temperature \r\n", ""},
		{"id,ts", "header has 2 columns (id, ts), the schema has 3 (id, ts, temperature)"},
		{"id,tss,temperature", `column ts: header column 2 is "tss" where the schema has "ts" (CSV maps columns by position; reorder the schema or the file)`},
		{`id,"ts,temperature`, "column ts: quoted field starting at byte 3 has no closing quote"},
	} {
		err := d.DecodeHeader([]byte(tt.rec))
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("DecodeHeader(%q) = %v, want %q", tt.rec, err, tt.err)
		}
	}
	e, _ := NewEncoder(Options{Header: true, Delimiter: ";"}, testenv.Schema(t, "a;b STRING", "c INT"))
	if got := string(e.AppendHeader([]byte("x"))); got != "x\"a;b\";c\n" {
		t.Errorf("AppendHeader = %q", got)
	}
	e, _ = NewEncoder(Options{}, schema)
	if got := e.AppendHeader(nil); len(got) != 0 {
		t.Errorf("header: false wrote %q", got)
	}
}

func TestOptions(t *testing.T) {
	one := testenv.Schema(t, "a STRING")
	for _, tt := range []struct {
		opts Options
		err  string
	}{
		{Options{Delimiter: "|", Quote: str("'"), NullLiteral: str("NULL")}, ""},
		{Options{Delimiter: "\t"}, ""},
		{Options{Delimiter: ";;"}, `delimiter: want one ASCII character (or \t), got ";;"`},
		{Options{Delimiter: "§"}, `delimiter: want one ASCII character (or \t), got "§"`},
		{Options{Delimiter: "\n"}, "delimiter: cannot be a line break"},
		{Options{FieldDelimiter: "\r"}, "field_delimiter: cannot be a line break"},
		{Options{FieldDelimiter: ";", Delimiter: ";"}, "delimiter: give field_delimiter or its older spelling delimiter, not both"},
		{Options{Quote: str("<>")}, `quote: want one ASCII character, got "<>"`},
		{Options{QuoteCharacter: "<>"}, `quote_character: want one ASCII character, got "<>"`},
		{Options{Quote: str(",")}, `quote: the quote character cannot be the delimiter ","`},
		{Options{QuoteCharacter: "'", Quote: str("'")}, "quote: give quote_character or its older spelling quote, not both"},
		{Options{QuoteCharacter: "'", DisableQuoteCharacter: true}, "disable_quote_character: cannot be set together with a quote character"},
		{Options{DisableQuoteCharacter: true, Quote: str("")}, ""},
		{Options{EscapeCharacter: `\\`}, `escape_character: want one ASCII character, got "\\\\"`},
		{Options{EscapeCharacter: `"`}, `escape_character: "\"" is already the delimiter or the quote`},
		{Options{ArrayElementDelimiter: "||"}, `array_element_delimiter: want one ASCII character, got "||"`},
		{Options{ArrayElementDelimiter: "|", AllowComments: true, IgnoreParseErrors: true, EscapeCharacter: `\`}, ""},
		{Options{NullLiteral: str("")}, ""},
		{Options{FieldDelimiter: `"`}, `field_delimiter: "\"" is the quote character; set another quote_character or disable_quote_character`},
		{Options{FieldDelimiter: `"`, DisableQuoteCharacter: true}, ""},
		{Options{FieldDelimiter: "t", EscapeCharacter: `\`}, `escape_character: cannot be used with the delimiter 't': escaped, it stands for a control character`},
		{Options{NullLiteral: str("a,b")}, `null_literal: "a,b" holds the delimiter, the quote, the escape or a line break, so no field can equal it`},
		// FuzzCSVDecode: delimiter # and allow_comments wrote a row whose
		// first field was '' as #NULL#NULL, which read back as a comment.
		{Options{Delimiter: "#", AllowComments: true}, "allow_comments: cannot be used with # as the delimiter: a record starting with it would read back as a comment"},
		{Options{FieldDelimiter: "#", AllowComments: true}, "allow_comments: cannot be used with # as the field_delimiter: a record starting with it would read back as a comment"},
		{Options{QuoteCharacter: "#", AllowComments: true}, "allow_comments: cannot be used with # as the quote_character: a record starting with it would read back as a comment"},
		{Options{EscapeCharacter: "#", AllowComments: true}, "allow_comments: cannot be used with # as the escape_character: a record starting with it would read back as a comment"},
		{Options{NullLiteral: str("#N"), AllowComments: true}, "allow_comments: cannot be used with a null_literal starting with #: a record starting with NULL would read back as a comment"},
		{Options{Delimiter: "#"}, ""},
		{Options{NullLiteral: str("N#"), AllowComments: true}, ""},
	} {
		_, err := NewDecoder(tt.opts, one)
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("%+v: got %v, want %q", tt.opts, err, tt.err)
		}
		var fe *connector.FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("%v is not a FieldError, so the registry cannot place it", err)
		}
	}
	if _, err := NewEncoder(Options{}, row.Schema{}); err == nil {
		t.Error("an empty schema must be refused")
	}
}

func TestEncode(t *testing.T) {
	all := testenv.Schema(t, "b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(10,2)", "s STRING", "y BYTES", "dt DATE", "t TIMESTAMP(3)", "l TIMESTAMP_LTZ(3)")
	three := testenv.Schema(t, "a STRING", "b INT", "c STRING")
	tests := []struct {
		name   string
		opts   Options
		schema row.Schema
		r      row.Row
		want   string
		err    string
	}{
		{"every type", Options{}, all, row.Row{row.BoolValue(false), row.IntValue(-7), row.BigIntValue(1 << 60), row.FloatValue(0.1), row.DoubleValue(1e7),
			row.DecimalValue(-5, 2), s("héllo"), row.BytesValue([]byte{0, 1, 2}), row.DateValue(19724), row.TimestampValue(micros("2024-01-02 10:00:00.12")), row.TimestampLTZValue(0)},
			"false,-7,1152921504606846976,0.1,1.0E7,-0.05,héllo,AAEC,2024-01-02,2024-01-02 10:00:00.12,1970-01-01 00:00:00Z\n", ""},
		{"NULLs and empty strings, Flink's default", Options{}, three, row.Row{s(""), null, null}, ",,\n", ""},
		{"NULLs and empty strings, null_literal \"\"", Options{NullLiteral: str("")}, three, row.Row{s(""), null, null}, "\"\",,\n", ""},
		{"escape character doubled in quotes", Options{EscapeCharacter: `\`}, three, row.Row{s(`a\b`), null, s(`"`)}, "\"a\\\\b\",,\"\"\"\"\n", ""},
		{"escape instead of quotes", Options{EscapeCharacter: `\`, DisableQuoteCharacter: true, NullLiteral: str("N")}, three, row.Row{s("a,\n\r\\"), null, s("N")}, `a\,\n\r\\,N,\N` + "\n", ""},
		{"comment-like first field quoted", Options{AllowComments: true}, three, row.Row{s("#x"), null, s("#y")}, "\"#x\",,#y\n", ""},
		{"quoting only where needed", Options{}, three, row.Row{s("a,b"), row.IntValue(1), s("say \"hi\"\r\n ")}, "\"a,b\",1,\"say \"\"hi\"\"\r\n \"\n", ""},
		{"spaces are not quoted", Options{}, three, row.Row{s(" x "), row.IntValue(1), s("é😀")}, " x ,1,é😀\n", ""},
		{"null literal", Options{NullLiteral: str("NULL")}, three, row.Row{s(""), null, s("NULL")}, ",NULL,\"NULL\"\n", ""},
		{"null literal colliding with a number", Options{NullLiteral: str("0")}, three, row.Row{s("a"), row.IntValue(0), null}, "a,\"0\",0\n", ""},
		{"delimiter inside a number", Options{Delimiter: "."}, testenv.Schema(t, "d DOUBLE", "s STRING"), row.Row{row.DoubleValue(1.5), s("a.b")}, "\"1.5\".\"a.b\"\n", ""},
		{"tab", Options{Delimiter: `\t`}, three, row.Row{s("a b"), row.IntValue(1), s("c\td")}, "a b\t1\t\"c\td\"\n", ""},
		{"single quote", Options{Quote: str("'")}, three, row.Row{s("it's"), row.IntValue(1), s(`"x"`)}, "'it''s',1,\"x\"\n", ""},
		{"no quoting", Options{Quote: str("")}, three, row.Row{s(`"a"`), row.IntValue(1), s("b")}, "\"a\",1,b\n", ""},
		{"no quoting, delimiter", Options{Quote: str("")}, three, row.Row{s("a,b"), null, null}, "", `csv: column a: value "a,b" holds the delimiter or a line break and quoting is disabled (set escape_character)`},
		{"no quoting, empty string", Options{Quote: str(""), NullLiteral: str("")}, three, row.Row{s(""), null, null}, "", `csv: column a: cannot write an empty string: with quoting disabled it reads back as NULL (null_literal is "")`},
		{"no quoting, empty string, Flink's default", Options{Quote: str("")}, three, row.Row{s(""), null, null}, ",,\n", ""},
		{"no quoting, null literal", Options{Quote: str(""), NullLiteral: str("-")}, three, row.Row{s("-"), null, null}, "", `csv: column a: cannot write "-": it is the null literal and quoting is disabled (set escape_character)`},
		{"wrong width", Options{}, three, row.Row{s("a")}, "", "csv: row has 1 values, schema has 3 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewEncoder(tt.opts, tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Encode([]byte("prev\n"), row.Insert, tt.r)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got %v, want error %q", err, tt.err)
				}
				if string(got) != "prev\n" {
					t.Fatalf("a failed Encode left %q behind", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prev\n"+tt.want {
				t.Fatalf("got %q, want %q", got[5:], tt.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		input string
		want  []string
	}{
		{"lines", Options{}, "a,1\nb,2\n", []string{"a,1", "b,2"}},
		{"CRLF and no final break", Options{}, "a,1\r\nb,2", []string{"a,1", "b,2"}},
		{"quoted line breaks", Options{}, "\"a\nb\",1\r\n\"c\r\n\"\"d\"\"\",2\n", []string{"\"a\nb\",1", "\"c\r\n\"\"d\"\"\",2"}},
		{"blank lines kept", Options{}, "a\n\n\r\nb\n", []string{"a", "", "", "b"}},
		{"quote inside an unquoted field opens nothing", Options{}, "a\"b,1\nc,2\n", []string{"a\"b,1", "c,2"}},
		{"quote after a delimiter opens", Options{}, "x,\"1\n2\"\n", []string{"x,\"1\n2\""}},
		{"quoting disabled", Options{Quote: str("")}, "\"a\nb\"\n", []string{"\"a", "b\""}},
		{"other quote", Options{Quote: str("'"), Delimiter: ";"}, "'a\n''b';1\n\"c\n", []string{"'a\n''b';1", "\"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(tt.opts, testenv.Schema(t, "a STRING"))
			if err != nil {
				t.Fatal(err)
			}
			// A one-byte buffer start makes the scanner call Split on every
			// prefix, so records straddling reads are exercised.
			for _, size := range []int{1, 4096} {
				sc := bufio.NewScanner(strings.NewReader(tt.input))
				sc.Buffer(make([]byte, size), 1<<20)
				sc.Split(d.Split)
				var got []string
				for sc.Scan() {
					got = append(got, sc.Text())
				}
				if err := sc.Err(); err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
					t.Fatalf("buffer %d: got %q, want %q", size, got, tt.want)
				}
			}
		})
	}
}

// TestCompositeColumns: a composite column is written as its CAST text
// and refused for reading, with the column named.
func TestCompositeColumns(t *testing.T) {
	at, _ := row.ParseType("ARRAY<STRING>")
	s := row.NewSchema(row.Field{Name: "id", Type: row.Of(row.Int)}, row.Field{Name: "tags", Type: at})
	if _, err := NewDecoder(Options{}, s); err == nil || !strings.Contains(err.Error(), "column tags is ARRAY<STRING>: the csv format does not read composite values") {
		t.Fatalf("decoder: %v", err)
	}
	e, err := NewEncoder(Options{}, s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Encode(nil, row.Insert, row.Row{row.IntValue(1), row.ArrayValue([]row.Value{row.StringValue("a"), row.NullValue})})
	if err != nil || string(out) != "1,\"[a, NULL]\"\n" {
		t.Fatalf("encoded %q, %v", out, err)
	}
}

func TestTinyIntSmallIntRange(t *testing.T) {
	formattest.IntRanges(t, func(sch row.Schema) connector.Decoder {
		d, err := NewDecoder(Options{}, sch)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}, func(ti, si string) []byte { return []byte(ti + "," + si) })
}
