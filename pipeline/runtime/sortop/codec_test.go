package sortop

import (
	"math"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// Every row the sort holds reads back identical, whatever its values'
// types against the layout of the side's first row (another type in a
// column, a NULL, another width, a time of the other timestamp type),
// with and without a Text for its strings; a row of the layout's types
// takes fewer bytes than row.AppendRow's encoding.
func TestSortCodecRoundTrip(t *testing.T) {
	ts := func(us int64) row.Value { return row.TimestampValue(us) }
	for _, tc := range []struct {
		name    string
		col     int
		rows    []row.Row // the first sets the layout
		smaller bool      // each row (of the layout's types) encodes in fewer bytes than AppendRow
	}{
		{"M-over's columns", 3, []row.Row{
			{row.StringValue("njp"), row.BigIntValue(1), row.BigIntValue(845412), ts(1_704_067_200_000_000)},
			{row.StringValue(""), row.BigIntValue(-7), row.BigIntValue(0), ts(-1)},
			{row.StringValue("a long name, past a varint byte's length of one: " + string(make([]byte, 200))), row.BigIntValue(math.MaxInt64), row.BigIntValue(math.MinInt64), ts(math.MaxInt64)},
		}, true},
		{"NULLs and other types in columns", 0, []row.Row{
			{ts(5), row.NullValue, row.DoubleValue(1.5), row.DecimalValue(12345, 2)},
			{ts(6), row.StringValue("late type"), row.NullValue, row.DecimalValue(-1, 0)},
			{ts(7), row.IntValue(3), row.BigIntValue(2), row.NullValue},
			{ts(8), row.BoolValue(true), row.FloatValue(2.5), row.DateValue(19000)},
		}, false},
		{"another width", 0, []row.Row{
			{ts(10), row.BigIntValue(1)},
			{ts(11), row.BigIntValue(2), row.StringValue("wider")},
			{ts(12)},
		}, false},
		{"LTZ time, then TIMESTAMP", 0, []row.Row{
			{row.TimestampLTZValue(100), row.BytesValue([]byte{0, 1, 2})},
			{row.TimestampValue(101), row.BytesValue(nil)},
			{row.TimestampLTZValue(102), row.StringValue("s")},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c sortCodec
			c.col = [2]int{tc.col, tc.col}
			for side := range 2 {
				for i, r := range tc.rows {
					at := r[tc.col].Micros()
					enc := c.appendRow(nil, side, at, r)
					if tagged := len(row.AppendRow(nil, r)); tc.smaller && len(enc) >= tagged {
						t.Errorf("row %d: %d bytes, AppendRow's %d", i, len(enc), tagged)
					}
					for _, text := range []*row.Text{nil, {}} {
						got, err := c.decodeRow(nil, side, at, enc, text)
						if err != nil {
							t.Fatalf("row %d: %v", i, err)
						}
						if len(got) != len(r) {
							t.Fatalf("row %d: %d values, want %d", i, len(got), len(r))
						}
						for k := range r {
							if got[k] != r[k] {
								t.Fatalf("row %d, column %d: %#v, want %#v", i, k, got[k], r[k])
							}
						}
					}
				}
			}
		})
	}
}
