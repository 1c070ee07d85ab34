// Package formattest is the kit every format's tests run, so that a new
// format gets the checks the others have by calling it:
//
//   - RoundTrip: rows written and read back, as a source cuts them into
//     records, are the rows written (and, for a changelog format, each
//     an add or a retract as written);
//   - PickedColumns and CheckColumns: a ColumnDecoder's picked columns
//     are the full decode's columns, on random schemas and records;
//   - CheckRecord and FuzzColumns: what a fuzz target asks of any record.
package formattest

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Codec is a format with one set of options over one schema.
type Codec struct {
	Schema  row.Schema
	Decoder connector.Decoder
	Encoder connector.Encoder
}

// RandomValue makes a value of type t that a format's text forms carry
// exactly: NULL now and then, the edges of each type (NaN, infinities,
// the least subnormal, the largest finite), strings of delimiters,
// quotes, escapes, line breaks, NUL and characters beyond ASCII.
func RandomValue(rng *rand.Rand, t row.Type) row.Value {
	if rng.IntN(8) == 0 {
		return row.NullValue
	}
	const day = 86400 * int64(1e6)
	switch t.ID {
	case row.Boolean:
		return row.BoolValue(rng.IntN(2) == 0)
	case row.Int:
		return row.IntValue(int32(t.WrapInt(int64(rng.Uint32()))))
	case row.BigInt:
		return row.BigIntValue(int64(rng.Uint64()))
	case row.Float:
		specials := []float32{0, float32(math.Inf(1)), float32(math.Inf(-1)), 1e-10, 3.4e38}
		if rng.IntN(4) == 0 {
			return row.FloatValue(specials[rng.IntN(len(specials))])
		}
		return row.FloatValue(float32(rng.NormFloat64() * math.Pow10(rng.IntN(20)-10)))
	case row.Double:
		specials := []float64{0, math.NaN(), math.Inf(1), math.Inf(-1), 1e-300, 5e-324, math.MaxFloat64}
		if rng.IntN(4) == 0 {
			return row.DoubleValue(specials[rng.IntN(len(specials))])
		}
		return row.DoubleValue(rng.NormFloat64() * math.Pow10(rng.IntN(40)-20))
	case row.Decimal:
		lim := int64(math.Pow10(t.Precision))
		return row.DecimalValue(rng.Int64N(2*lim-1)-(lim-1), t.Scale)
	case row.String:
		alphabet := []rune("ab ,;\t|\"'\\\n\rNUL\x00é😀\u2028{}[]:")
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
	case row.Time:
		return row.TimeOfDayValue(rng.Int64N(row.MicrosPerDay))
	case row.Timestamp:
		return row.TimestampValue(rng.Int64N(200*365*day) - 70*365*day)
	case row.TimestampLTZ:
		return row.TimestampLTZValue(rng.Int64N(200*365*day) - 70*365*day)
	}
	return row.NullValue
}

// RandomChanges makes n changes of schema with values from value
// (RandomValue when nil): inserts, or with kinds every kind in turn.
func RandomChanges(rng *rand.Rand, schema row.Schema, n int, kinds bool, value func(*rand.Rand, row.Type) row.Value) []row.Change {
	if value == nil {
		value = RandomValue
	}
	all := []row.Kind{row.Insert, row.UpdateBefore, row.UpdateAfter, row.Delete}
	out := make([]row.Change, n)
	for k := range out {
		r := make(row.Row, schema.Len())
		for i, f := range schema.Fields {
			r[i] = value(rng, f.Type)
		}
		out[k] = row.Change{Kind: row.Insert, Row: r}
		if kinds {
			out[k].Kind = all[k%len(all)]
		}
	}
	return out
}

// RoundTrip writes changes with c's encoder, after its header for a
// HeaderEncoder, cuts what it wrote into records as a source does (a
// Splitter's SplitFunc over the whole stream; otherwise each record as
// the encoder wrote it, as a Kafka message holds one) and decodes them,
// the header with DecodeHeader: each change comes back with the values
// written, an add or a retract as written (a format without kinds is
// only ever written +I).
func RoundTrip(t testing.TB, c Codec, changes []row.Change) {
	t.Helper()
	var records [][]byte
	var stream []byte
	if h, ok := c.Encoder.(connector.HeaderEncoder); ok {
		if stream = h.AppendHeader(nil); len(stream) > 0 {
			records = append(records, stream)
		}
	}
	for _, ch := range changes {
		start := len(stream)
		var err error
		if stream, err = c.Encoder.Encode(stream, ch.Kind, ch.Row); err != nil {
			t.Fatalf("encode %v: %v", ch, err)
		}
		records = append(records, stream[start:])
	}
	if sp, ok := c.Decoder.(connector.Splitter); ok {
		records = split(t, sp, stream)
	}
	if h, ok := c.Decoder.(connector.HeaderDecoder); ok && h.HasHeader() && len(records) > 0 {
		if err := h.DecodeHeader(records[0]); err != nil {
			t.Fatalf("header %q: %v", records[0], err)
		}
		records = records[1:]
	}
	b := row.NewBatch(len(changes), c.Schema.Len())
	for _, rec := range records {
		if err := c.Decoder.Decode(rec, b); err != nil {
			t.Fatalf("%q: %v", rec, err)
		}
	}
	if b.Len() != len(changes) {
		t.Fatalf("wrote %d changes, read %d", len(changes), b.Len())
	}
	for k, got := range b.Changes {
		want := changes[k]
		if got.Kind.IsAdd() != want.Kind.IsAdd() {
			t.Fatalf("change %d: wrote %v, read %v", k, want, got)
		}
		for i := range want.Row {
			if !row.Equal(got.Row[i], want.Row[i]) {
				t.Fatalf("change %d column %s: wrote %v, read %v back from %q", k, c.Schema.Fields[i].Name, want.Row[i], got.Row[i], records[k])
			}
		}
	}
}

// split cuts stream into records with sp's SplitFunc.
func split(t testing.TB, sp connector.Splitter, stream []byte) [][]byte {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 64<<10), 2*connector.DefaultMaxRecordBytes)
	sc.Split(sp.SplitFunc(connector.DefaultMaxRecordBytes))
	var out [][]byte
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("split: %v", err)
	}
	return out
}

// AllTypes is a schema of one column of each scalar type, for a round
// trip of every type a format writes.
func AllTypes(t testing.TB) row.Schema {
	t.Helper()
	return testenv.Schema(t, "b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT", "n BIGINT", "f FLOAT", "d DOUBLE", "m DECIMAL(18,4)",
		"s STRING", "y BYTES", "dt DATE", "tm TIME(3)", "t TIMESTAMP(6)", "l TIMESTAMP_LTZ(6)")
}

// RandomSchema is a schema of 1 to 6 columns c0, c1, ... of types drawn
// from types.
func RandomSchema(t testing.TB, r *rand.Rand, types []string) row.Schema {
	t.Helper()
	var cols []string
	for i := range 1 + r.IntN(6) {
		cols = append(cols, fmt.Sprintf("c%d %s", i, types[r.IntN(len(types))]))
	}
	return testenv.Schema(t, cols...)
}
