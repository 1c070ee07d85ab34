package avro

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Avro's timestamps and dates are read at any epoch, as Flink's
// converter reads them (TimestampData.fromEpochMillis, the int as the
// day): a binary value needs no text, and round-trips past the years
// 0000 to 9999 too. The ends of those years and just inside read and
// round-trip; only milliseconds whose microseconds pass an int64 are a
// bad record, where they would wrap.
func TestTimeRanges(t *testing.T) {
	writer := `{"type":"record","name":"r","fields":[
		{"name":"ms","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
		{"name":"d","type":{"type":"int","logicalType":"date"}}]}`
	schema := testenv.Schema(t, "ms TIMESTAMP_LTZ(3)", "us TIMESTAMP(6)", "d DATE")
	dec, err := NewDecoder(Options{Schema: writer}, schema)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(Options{Schema: writer}, schema)
	if err != nil {
		t.Fatal(err)
	}
	c := formattest.Codec{Schema: schema, Decoder: dec, Encoder: enc}
	for _, tt := range []struct {
		ms, us int64
		d      int32
		want   string // the row's text, or the bad column
	}{
		{-62167219200000, -62167219200000000, -719528, "+I[0000-01-01T00:00:00Z, 0000-01-01T00:00, 0000-01-01]"},
		{-62167219199999, -62167219199999999, -719527, "+I[0000-01-01T00:00:00.001Z, 0000-01-01T00:00:00.000001, 0000-01-02]"},
		{253402300799999, 253402300799999999, 2932896, "+I[9999-12-31T23:59:59.999Z, 9999-12-31T23:59:59.999999, 9999-12-31]"},
		{253402300799998, 253402300799999998, 2932895, "+I[9999-12-31T23:59:59.998Z, 9999-12-31T23:59:59.999998, 9999-12-30]"},
		// Past the years: read as Flink does, and written back the same.
		{253402300800000, 253402300800000000, 2932897, ""},
		{-62167219200001, -62167219200000001, -719529, ""},
		{math.MaxInt64 / 1000, math.MaxInt64, math.MaxInt32, ""},
		{math.MinInt64 / 1000, math.MinInt64, math.MinInt32, ""},
		{math.MaxInt64/1000 + 1, 0, 0, "ms"},
		{math.MinInt64/1000 - 1, 0, 0, "ms"},
	} {
		rec := binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(nil, tt.ms), tt.us), int64(tt.d))
		b := row.NewBatch(1, 3)
		err := dec.Decode(rec, b)
		if tt.want == "ms" {
			var de *connector.DecodeError
			if !errors.As(err, &de) || de.Column != "ms" || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("%d ms: got %v, want a bad record in column ms", tt.ms, err)
			}
			continue
		}
		if err != nil || b.Len() != 1 {
			t.Errorf("%d ms, %d µs, day %d: %v", tt.ms, tt.us, tt.d, err)
			continue
		}
		got := b.Changes[0]
		if tt.want != "" && got.String() != tt.want {
			t.Errorf("read %s, want %s", got, tt.want)
		}
		if got.Row[0].Micros() != tt.ms*1000 || got.Row[1].Micros() != tt.us || got.Row[2].Days() != tt.d {
			t.Errorf("%d ms, %d µs, day %d read as %v", tt.ms, tt.us, tt.d, got)
		}
		formattest.CheckRecord(t, c, rec, formattest.Check{Exact: true})
	}
}
