package udf

import (
	"context"
	"math"
	"math/big"
	"testing"

	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
)

// crossing are values of every SQL type, NULLs among them, as a function
// gets and returns them.
func crossing(t *testing.T) map[string][]row.Value {
	t.Helper()
	ts := func(s string, id row.TypeID) row.Value {
		v, err := row.ParseTimestamp(s, id)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	b, _ := new(big.Int).SetString("-123456789012345678901234567890123456", 10)
	wide, _ := row.Int128FromBig(b)
	return map[string][]row.Value{
		"BOOLEAN":                     {row.BoolValue(true), row.NullValue, row.BoolValue(false)},
		"TINYINT":                     {row.IntValue(-128), row.IntValue(127), row.NullValue},
		"SMALLINT":                    {row.IntValue(-32768), row.NullValue, row.IntValue(300)},
		"INT":                         {row.IntValue(math.MinInt32), row.IntValue(7), row.NullValue},
		"BIGINT":                      {row.BigIntValue(math.MaxInt64), row.NullValue, row.BigIntValue(-1)},
		"FLOAT":                       {row.FloatValue(1.5), row.FloatValue(float32(math.Inf(-1))), row.NullValue},
		"DOUBLE":                      {row.DoubleValue(math.Pi), row.NullValue, row.DoubleValue(-0.25)},
		"DECIMAL(10, 2)":              {row.DecimalValue(12345, 2), row.NullValue, row.DecimalValue(-1, 2)},
		"DECIMAL(38, 4)":              {row.Decimal128Value(wide, 4), row.DecimalValue(0, 4), row.NullValue},
		"STRING":                      {row.StringValue("héllo, wörld"), row.StringValue(""), row.NullValue},
		"VARCHAR(5)":                  {row.StringValue("abc"), row.NullValue, row.StringValue("")},
		"BYTES":                       {row.BytesValue([]byte{0, 255, 1}), row.NullValue, row.BytesValue(nil)},
		"DATE":                        {row.DateValue(-3), row.DateValue(19000), row.NullValue},
		"TIME(3)":                     {row.TimeOfDayValue(45_296_789_000), row.NullValue, row.TimeOfDayValue(0)},
		"TIMESTAMP(3)":                {ts("2024-02-29 23:59:59.123", row.Timestamp), row.NullValue, ts("1969-12-31 00:00:00", row.Timestamp)},
		"TIMESTAMP_LTZ(6)":            {ts("2024-01-01 00:00:00.000001", row.TimestampLTZ), row.NullValue, ts("2000-01-01 12:00:00", row.TimestampLTZ)},
		"ARRAY<INT>":                  {row.ArrayValue([]row.Value{row.IntValue(1), row.NullValue, row.IntValue(3)}), row.NullValue, row.ArrayValue(nil)},
		"MAP<STRING, DOUBLE>":         {row.MapValue([]row.Value{row.StringValue("a"), row.StringValue("b")}, []row.Value{row.DoubleValue(1), row.NullValue}), row.NullValue, row.MapValue(nil, nil)},
		"ROW<a INT, b ARRAY<STRING>>": {row.StructValue([]row.Value{row.IntValue(5), row.ArrayValue([]row.Value{row.StringValue("x"), row.NullValue})}), row.NullValue, row.StructValue([]row.Value{row.NullValue, row.NullValue})},
		"ARRAY<ROW<x BIGINT, y MAP<INT, BOOLEAN>>>": {row.ArrayValue([]row.Value{
			row.StructValue([]row.Value{row.BigIntValue(1), row.MapValue([]row.Value{row.IntValue(2)}, []row.Value{row.BoolValue(true)})}),
			row.NullValue,
		}), row.NullValue, row.ArrayValue(nil)},
	}
}

// TestEveryTypeCrosses passes values of every SQL type, NULLs and nested
// values among them, to a WebAssembly function that returns its argument
// (null_tolerant, so that NULLs cross too), and checks each comes back
// equal: the ABI carries every type both ways.
func TestEveryTypeCrosses(t *testing.T) {
	file := wasmbuild.Go(t, "testdata/wasm/sandbox")
	for text, vals := range crossing(t) {
		t.Run(text, func(t *testing.T) {
			typ, err := row.ParseType(text)
			if err != nil {
				t.Fatal(err)
			}
			d := decl("echo", file, []row.Type{typ}, typ.Nullable())
			d.NullTolerant = true
			f := loadOne(t, d)
			inst, err := f.NewInstance(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Close(context.Background())
			out := make([]row.Value, len(vals))
			errs := make([]error, len(vals))
			if err := inst.Scalar([][]row.Value{vals}, len(vals), out, errs); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if errs[i] != nil {
					t.Errorf("value %d (%s): %v", i, v, errs[i])
				} else if !row.Equal(out[i], v) || out[i].Type() != v.Type() {
					t.Errorf("value %d: sent %s (%s), got back %s (%s)", i, v, v.Type(), out[i], out[i].Type())
				}
			}
		})
	}
}
