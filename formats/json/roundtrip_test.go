package json

import (
	stdjson "encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestRoundTrip writes random rows, each as its own record, and reads
// them back: every value must come back, with either timestamp format.
func TestRoundTrip(t *testing.T) {
	schema := testenv.Schema(t, "b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(18,4)", "m0 DECIMAL(5,0)",
		"s STRING", "y BYTES", "dt DATE", "tm TIME(3)", "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(6)")
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
		formattest.RoundTrip(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc},
			formattest.RandomChanges(rng, schema, 2000, false, nil))
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
	schema := testenv.Schema(f, "b BOOLEAN", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(10,2)", "s STRING",
		"y BYTES", "dt DATE", "t TIMESTAMP(3)", "l TIMESTAMP_LTZ(6)")
	f.Fuzz(func(t *testing.T, rec []byte, mode byte) {
		opts := Options{IgnoreParseErrors: mode&2 != 0}
		if mode&1 != 0 {
			opts.TimestampFormat = "iso-8601"
		}
		dec, _ := NewDecoder(opts, schema)
		enc, _ := NewEncoder(opts, schema)
		formattest.CheckRecord(t, formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc}, rec, formattest.Check{
			// A byte offset or a column.
			Explains: func(err error) bool {
				var se *SyntaxError
				var pe *row.ParseError
				var de *connector.DecodeError
				return errors.As(err, &se) || errors.As(err, &pe) || errors.As(err, &de) && de.Column != ""
			},
			MaxChanges: func([]byte) int { return 1 },
			Valid:      stdjson.Valid,
		})
	})
}
