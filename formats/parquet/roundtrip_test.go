package parquet

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// typeGroups are the columns of allTypes in groups of a few related
// types: FuzzRead's seeds are files of one group each.
var typeGroups = [][]string{
	{"b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT NOT NULL", "n BIGINT", "f FLOAT", "d DOUBLE"},
	{"m4 DECIMAL(9,2)", "m DECIMAL(18,4)", "mw DECIMAL(38,10)", "mx DECIMAL(20,0)"},
	{"s STRING", "y BYTES", "dt DATE", "tm TIME(3)"},
	{"t3 TIMESTAMP(3)", "t6 TIMESTAMP(6)", "t9 TIMESTAMP(9)", "l3 TIMESTAMP_LTZ(3)", "l6 TIMESTAMP_LTZ(6) NOT NULL"},
	{"a ARRAY<INT>", "an ARRAY<STRING NOT NULL> NOT NULL", "aa ARRAY<ARRAY<BIGINT>>"},
	{"mp MAP<STRING, DOUBLE>", "mm MAP<INT, ARRAY<STRING>>"},
	{"r ROW<x INT NOT NULL, y STRING, z ARRAY<ROW<p DECIMAL(10,3), q TIMESTAMP(3)>>>", "ms MULTISET<STRING>"},
}

// allTypes is a column of every SQL type, scalar and nested, nullable
// and NOT NULL.
func allTypes(t testing.TB) row.Schema {
	return testenv.Schema(t, slices.Concat(typeGroups...)...)
}

// value draws values a Parquet column keeps exactly: a TIMESTAMP(3)'s
// in whole milliseconds, a wide DECIMAL of up to 38 digits.
func value(rng *rand.Rand, t row.Type) row.Value {
	if t.ID == row.Decimal && t.Precision > 18 {
		return wideDecimal(rng, t)
	}
	if t.ID.Nested() {
		return nested(rng, t)
	}
	v := formattest.RandomNested(rng, t)
	switch {
	case v.IsNull():
	case (t.ID == row.Timestamp || t.ID == row.TimestampLTZ) && t.Precision <= 3:
		us := v.Micros() - ((v.Micros()%1000)+1000)%1000
		if t.ID == row.Timestamp {
			return row.TimestampValue(us)
		}
		return row.TimestampLTZValue(us)
	}
	return v
}

// wideDecimal draws a DECIMAL of more than 18 digits: small ones, and
// ones of up to 38 digits.
func wideDecimal(rng *rand.Rand, t row.Type) row.Value {
	if !t.NotNull && rng.IntN(8) == 0 {
		return row.NullValue
	}
	x := row.Int128Of(rng.Int64N(2000) - 1000)
	for bits := int64(40); rng.IntN(2) == 0; bits-- {
		if y := (row.Int128{Hi: rng.Int64N(1<<bits) - 1<<(bits-1), Lo: rng.Uint64()}); y.DigitsFit(t.Precision) {
			x = y
			break
		}
	}
	return row.Decimal128Value(x, t.Scale)
}

// nested draws a nested value whose leaves are value's.
func nested(rng *rand.Rand, t row.Type) row.Value {
	if !t.NotNull && rng.IntN(8) == 0 {
		return row.NullValue
	}
	switch t.ID {
	case row.Array:
		items := make([]row.Value, rng.IntN(4))
		for i := range items {
			items[i] = value(rng, t.Elem())
		}
		return row.ArrayValue(items)
	case row.Map:
		key := t.Key()
		key.NotNull = true
		n := rng.IntN(4)
		keys, vals := make([]row.Value, n), make([]row.Value, n)
		for i := range keys {
			keys[i], vals[i] = value(rng, key), value(rng, t.Elem())
		}
		return row.MapValue(keys, vals)
	}
	fields := make([]row.Value, len(t.Fields()))
	for i, f := range t.Fields() {
		fields[i] = value(rng, f.Type)
	}
	return row.StructValue(fields)
}

func randomRows(rng *rand.Rand, schema row.Schema, n int) []row.Row {
	rows := make([]row.Row, n)
	for k := range rows {
		r := make(row.Row, schema.Len())
		for i, f := range schema.Fields {
			r[i] = value(rng, f.Type)
		}
		rows[k] = r
	}
	return rows
}

func bulk(t *testing.T, schema row.Schema, o Options) formattest.Bulk {
	enc, err := NewEncoder(o, schema)
	if err != nil {
		t.Fatal(err)
	}
	return formattest.Bulk{Schema: schema, Encoder: enc, Decoder: func() connector.BulkDecoder {
		d, err := NewDecoder(o, schema)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}}
}

// TestRoundTrip writes every type, with each codec, in row groups of a
// few rows, resumed after a checkpoint every few rows: the file is
// byte-identical to one written at once, and reads back as written.
func TestRoundTrip(t *testing.T) {
	schema := allTypes(t)
	for _, codec := range []string{"snappy", "zstd", "gzip", "none"} {
		t.Run(codec, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(codec))))
			c := bulk(t, schema, Options{Compression: codec, RowGroupSize: 7})
			formattest.BulkRoundTrip(t, c, randomRows(rng, schema, 100), 5)
		})
	}
}
