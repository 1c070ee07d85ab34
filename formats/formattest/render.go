package formattest

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/etld/etld/pipeline/row"
)

// Render gives v of type t as the interop scripts of the formats'
// testdata print what another library read (pyarrow and DuckDB for
// Parquet, fastavro for Avro), for comparing in JSON: integers, unscaled decimals and float bits as strings,
// dates as days, times as microseconds, bytes as hex, maps as pairs and
// rows as lists.
func Render(v row.Value, t row.Type) any {
	if v.IsNull() {
		return nil
	}
	switch t.ID {
	case row.Boolean:
		return v.Bool()
	case row.Int, row.BigInt, row.Date, row.Time, row.Timestamp, row.TimestampLTZ:
		n := v.Int64()
		if t.ID == row.Time || t.ID == row.Timestamp || t.ID == row.TimestampLTZ {
			n = v.Micros()
		}
		return strconv.FormatInt(n, 10)
	case row.Float, row.Double:
		f := v.Float64()
		if math.IsNaN(f) {
			return "nan"
		}
		return fmt.Sprintf("%016x", math.Float64bits(f))
	case row.Decimal:
		return v.Decimal128().Big(new(big.Int)).String()
	case row.String:
		return v.Str()
	case row.Bytes:
		return hex.EncodeToString([]byte(v.Str()))
	case row.Array:
		out := []any{}
		for _, x := range v.Items() {
			out = append(out, Render(x, t.Elem()))
		}
		return out
	case row.Map:
		out := []any{}
		var key any
		for i, x := range v.Items() {
			if i%2 == 0 {
				key = Render(x, t.Key())
				continue
			}
			out = append(out, []any{key, Render(x, t.Elem())})
		}
		return out
	case row.Struct:
		out := []any{}
		for i, x := range v.Items() {
			out = append(out, Render(x, t.Fields()[i].Type))
		}
		return out
	}
	panic("no rendering of " + t.String())
}
