package csv

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestRoundTrip writes random rows as a CSV stream, splits it back into
// records and decodes them: every value must come back.
func TestRoundTrip(t *testing.T) {
	schema := testenv.Schema(t, "b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(18,4)",
		"s STRING", "s2 STRING", "y BYTES", "dt DATE", "tm TIME(3)", "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(6)")
	rng := rand.New(rand.NewPCG(3, 4))
	for i, opts := range []Options{
		// Without a null literal, NULL is written as an empty field and
		// reads back as '' or not at all (Flink's csv format does the
		// same): every case that must bring NULLs back names one.
		{NullLiteral: str("")}, {Header: true, NullLiteral: str("")}, {NullLiteral: str("NULL")}, {Delimiter: `\t`, NullLiteral: str("")},
		{Delimiter: "|", Quote: str("'"), NullLiteral: str("")}, {Delimiter: ".", NullLiteral: str(`\N`)}, {Delimiter: " ", NullLiteral: str("")},
		{FieldDelimiter: ";", QuoteCharacter: "'", EscapeCharacter: `\`, NullLiteral: str("NULL")},
		{EscapeCharacter: `\`, DisableQuoteCharacter: true, NullLiteral: str("NULL")},
		{AllowComments: true, NullLiteral: str(""), Header: true}, {IgnoreParseErrors: true, NullLiteral: str("")},
	} {
		enc, err := NewEncoder(opts, schema)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := NewDecoder(opts, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("options %d", i), func(t *testing.T) {
			formattest.RoundTrip(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc},
				formattest.RandomChanges(rng, schema, 1000, false, nil))
		})
	}
}

// FuzzCSVDecode's mode bits: which options a case sets.
const (
	fuzzNullLit   = 1 << iota // null_literal: NULL
	fuzzEmptyNull             // null_literal: ""
	fuzzEscape                // escape_character: \
	fuzzNoQuote               // disable_quote_character
	fuzzComments              // allow_comments
	fuzzIgnore                // ignore_parse_errors
)

func FuzzCSVDecode(f *testing.F) {
	for _, seed := range []string{
		"a,1,2.5,x", `"a,b","2","3.5","say ""hi"""`, "\"a\r\nb\",1,2,", ",,,", `"",,,""`,
		`"abc,1,2,3`, `ab"c,1,2,3`, `"ab"c,1,2,3`, "a,1\n2,3,4", "é😀,-0,NaN,\xff", "a,1", "a,1,2,3,4,5",
	} {
		for _, mode := range []byte{0, fuzzNullLit, fuzzEmptyNull, fuzzEscape | fuzzNullLit, fuzzEscape | fuzzNoQuote | fuzzEmptyNull, fuzzComments | fuzzIgnore} {
			f.Add([]byte(seed), byte(','), mode)
		}
		f.Add([]byte(seed), byte(';'), byte(fuzzNullLit))
	}
	for _, seed := range []string{`a\,b,1,2,"c\"d"`, `\N,\,,\t,\`, `#"comment,1,2,3`, `"a\`, `x,,,`, `x,1`} {
		f.Add([]byte(seed), byte(','), byte(fuzzEscape|fuzzIgnore|fuzzComments))
	}
	schema := testenv.Schema(f, "s STRING", "n BIGINT", "d DOUBLE", "s2 STRING")
	f.Fuzz(func(t *testing.T, rec []byte, delim byte, mode byte) {
		opts := Options{Delimiter: string([]byte{delim}), AllowComments: mode&fuzzComments != 0, IgnoreParseErrors: mode&fuzzIgnore != 0,
			DisableQuoteCharacter: mode&fuzzNoQuote != 0}
		switch {
		case mode&fuzzNullLit != 0:
			opts.NullLiteral = str("NULL")
		case mode&fuzzEmptyNull != 0:
			opts.NullLiteral = str("")
		}
		if mode&fuzzEscape != 0 {
			opts.EscapeCharacter = `\`
		}
		dec, err := NewDecoder(opts, schema)
		if err != nil {
			return // a delimiter the options refuse
		}
		enc, _ := NewEncoder(opts, schema)
		formattest.CheckRecord(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc}, rec, formattest.Check{
			Exact: true,
			// Without a null literal, NULL is written as an empty field,
			// which reads back as ''.
			Lossy: func(r row.Row) bool { return opts.NullLiteral == nil && slices.ContainsFunc(r, row.Value.IsNull) },
			// Without quoting or escaping, a value that needs either is
			// refused, and the error says so.
			MayRefuse: opts.DisableQuoteCharacter && opts.EscapeCharacter == "",
		})
	})
}

func FuzzCSVSplit(f *testing.F) {
	for _, seed := range []string{"a,1\nb,2\n", "\"a\nb\",1\r\n", "\"x", "a\"b\n\"c\n", "\r\n\r\n", "",
		"\"a,1\nb\"x\n\"c\nd\",2\r\n", "x,\"\n\"\"\n\"\r", "\uFEFF\"a\nb\"\n", "#\"a\nb\"\n", "\"a\\\"\nb\",\\\n", "\"\\"} {
		f.Add([]byte(seed), "x\ny", "\"q\"")
	}
	schema := testenv.Schema(f, "a STRING", "b STRING")
	dec, _ := NewDecoder(Options{NullLiteral: str("")}, schema)
	enc, _ := NewEncoder(Options{NullLiteral: str("")}, schema)
	other, _ := NewDecoder(Options{AllowComments: true, EscapeCharacter: `\`}, schema)
	f.Fuzz(func(t *testing.T, input []byte, v1, v2 string) {
		// Any input: every byte belongs to exactly one record or one bad
		// record, their lines only grow (splitAll checks both), and the
		// records are the same whether the input comes whole or in pieces, with a small bound or the default.
		for k, max := range []int{8, connector.DefaultMaxRecordBytes, 8, connector.DefaultMaxRecordBytes} {
			split := dec.SplitFunc(max)
			if k >= 2 {
				split = other.SplitFunc(max) // comments and escapes
			}
			whole := splitAll(t, split, string(input), len(input)+1)
			// (In small pieces rather than bytes for a long input, as
			// splitAll's rescans make it quadratic.)
			if piecewise := splitAll(t, split, string(input), 1+len(input)/128); !slices.Equal(whole, piecewise) {
				t.Fatalf("max %d: whole %v, piece by piece %v", max, whole, piecewise)
			}
		}
		// What Split decides before the end of the input, it decides the
		// same way at the end.
		for data := input; len(data) > 0; {
			adv, tok, err := dec.Split(data, true)
			if adv <= 0 || adv > len(data) || !bytes.HasPrefix(data, tok) {
				t.Fatalf("Split(%q) = %d, %q, %v", data, adv, tok, err)
			}
			if adv2, tok2, err2 := dec.Split(data, false); adv2 > 0 && (adv2 != adv || !bytes.Equal(tok, tok2) || (err == nil) != (err2 == nil)) {
				t.Fatalf("Split(%q): %d, %q, %v before the end, %d, %q, %v at the end", data, adv2, tok2, err2, adv, tok, err)
			}
			data = data[adv:]
		}
		// Records we write split and decode back to the same values.
		rows := []row.Row{{row.StringValue(v1), row.StringValue(v2)}, {row.NullValue, row.StringValue(v1)}}
		var buf []byte
		for _, r := range rows {
			buf, _ = enc.Encode(buf, row.Insert, r)
		}
		sc := bufio.NewScanner(bytes.NewReader(buf))
		sc.Buffer(make([]byte, 1), 1<<20)
		sc.Split(dec.Split)
		b := row.NewBatch(2, 2)
		for sc.Scan() {
			if err := dec.Decode(sc.Bytes(), b); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
		}
		if b.Len() != len(rows) {
			t.Fatalf("wrote %d rows as %q, read %d", len(rows), buf, b.Len())
		}
		for k, c := range b.Changes {
			for i := range c.Row {
				if !row.Equal(c.Row[i], rows[k][i]) {
					t.Fatalf("row %d value %d: wrote %v, read %v from %q", k, i, rows[k][i], c.Row[i], buf)
				}
			}
		}
	})
}
