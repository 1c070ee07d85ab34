package json

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// randomValue makes a value of type t that its text forms can carry
// exactly.
func randomValue(rng *rand.Rand, t row.Type) row.Value {
	if rng.IntN(8) == 0 {
		return row.NullValue
	}
	const day = 86400 * int64(1e6)
	switch t.ID {
	case row.Boolean:
		return row.BoolValue(rng.IntN(2) == 0)
	case row.Int:
		return row.IntValue(int32(rng.Uint32()))
	case row.BigInt:
		return row.BigIntValue(int64(rng.Uint64()))
	case row.Float:
		specials := []float32{0, float32(math.Inf(1)), float32(math.Inf(-1)), 1e-10, 3.4e38}
		if rng.IntN(4) == 0 {
			return row.FloatValue(specials[rng.IntN(len(specials))])
		}
		return row.FloatValue(float32(rng.NormFloat64() * 1e3))
	case row.Double:
		specials := []float64{0, math.NaN(), math.Inf(1), math.Inf(-1), 1e-300, math.MaxFloat64, 5e-324}
		if rng.IntN(4) == 0 {
			return row.DoubleValue(specials[rng.IntN(len(specials))])
		}
		return row.DoubleValue(rng.NormFloat64() * math.Pow10(rng.IntN(20)-10))
	case row.Decimal:
		lim := int64(math.Pow10(t.Precision))
		return row.DecimalValue(rng.Int64N(2*lim-1)-(lim-1), t.Scale)
	case row.String:
		alphabet := []rune("ab ,;\"'\\\n\r\t\x00é😀\u2028{}[]:")
		rs := make([]rune, rng.IntN(12))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return row.StringValue(string(rs))
	case row.Bytes:
		b := make([]byte, rng.IntN(10))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return row.BytesValue(b)
	case row.Date:
		return row.DateValue(int32(rng.IntN(100000) - 30000))
	case row.Timestamp:
		return row.TimestampValue(rng.Int64N(200*365*day) - 70*365*day)
	case row.TimestampLTZ:
		return row.TimestampLTZValue(rng.Int64N(200*365*day) - 70*365*day)
	}
	return row.NullValue
}

func TestRoundTrip(t *testing.T) {
	schema := schemaOf(t, "b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(18,4)", "m0 DECIMAL(5,0)",
		"s STRING", "y BYTES", "dt DATE", "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(6)")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, opts := range []Options{{}, {TimestampFormat: "iso-8601"}} {
		enc, err := NewEncoder(opts, schema)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := NewDecoder(opts, schema)
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			r := make(row.Row, schema.Len())
			for i, f := range schema.Fields {
				r[i] = randomValue(rng, f.Type)
			}
			line, err := enc.Encode(nil, row.Insert, r)
			if err != nil {
				t.Fatal(err)
			}
			b := row.NewBatch(1, schema.Len())
			if err := dec.Decode(line, b); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			got := b.Changes[0].Row
			for i := range r {
				if !row.Equal(got[i], r[i]) {
					t.Fatalf("column %s: wrote %v, read %v back from %s", schema.Fields[i].Name, r[i], got[i], line)
				}
			}
		}
	}
}

func FuzzJSONDecode(f *testing.F) {
	for _, seed := range []string{
		`{"b":true,"i":-7,"n":9007199254740993,"f":1.5,"d":-2.25e3,"m":12.345,"s":"héllo","y":"AAEC","dt":"2024-01-02","t":"2024-01-02 10:00:00.123","l":"2024-01-02T10:00:00.123456Z"}`,
		`{"I":1,"extra":{"deep":[1,2,{"x":null}]},"S":"a"}`,
		`{"s":"a\"b\\c\/\n\u00e9\ud83d\ude00\ud800"}`,
		`{"i":1.0,"n":1e3,"m":1.2345e2,"t":1704189600123}`,
		`{"s":{"a": [1, "x"]}, "d":"NaN", "f":"-Infinity"}`,
		`[1]`, `{"n":1,}`, `{"n"`, ` `, `{"x":[[[[`, "{\"s\":\"\xff\"}",
		`{"t":"2024-01-02 10:00:00.123","l":"2024-01-02 10:00:00.123456Z"}`, `{"t":"2024-01-02T10:00","l":"2024-01-02T10:00:00.5Z"}`,
		`{"i":"x","m":1e400,"y":"!","dt":"2024-02-30","b":{}}`,
	} {
		for mode := range byte(4) { // bit 0: iso-8601, bit 1: ignore_parse_errors
			f.Add([]byte(seed), mode)
		}
	}
	schema := schemaOf(f, "b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(10,2)", "s STRING",
		"y BYTES", "dt DATE", "t TIMESTAMP(3)", "l TIMESTAMP_LTZ(6)")
	f.Fuzz(func(t *testing.T, rec []byte, mode byte) {
		opts := Options{IgnoreParseErrors: mode&2 != 0}
		if mode&1 != 0 {
			opts.TimestampFormat = "iso-8601"
		}
		dec, _ := NewDecoder(opts, schema)
		enc, _ := NewEncoder(opts, schema)
		b := row.NewBatch(1, schema.Len())
		err := dec.Decode(rec, b)
		if err != nil {
			var de *connector.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a DecodeError: %v", err)
			}
			var se *SyntaxError
			var pe *row.ParseError
			if !errors.As(err, &se) && !errors.As(err, &pe) && de.Column == "" {
				t.Fatalf("error has neither a byte offset nor a column: %v", err)
			}
			if b.Len() != 0 {
				t.Fatal("a failed record appended a row")
			}
			return
		}
		if b.Len() == 0 {
			return
		}
		// What we read, we can write, and reading that back is stable.
		once, err := enc.Encode(nil, row.Insert, b.Changes[0].Row)
		if err != nil {
			t.Fatal(err)
		}
		if !stdjson.Valid(once) {
			t.Fatalf("wrote invalid JSON %s", once)
		}
		b2 := row.NewBatch(1, schema.Len())
		if err := dec.Decode(once, b2); err != nil {
			t.Fatalf("cannot read back %s: %v", once, err)
		}
		twice, _ := enc.Encode(nil, row.Insert, b2.Changes[0].Row)
		if !bytes.Equal(once, twice) {
			t.Fatalf("unstable: %s then %s", once, twice)
		}
	})
}
