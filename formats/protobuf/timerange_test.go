package protobuf

import (
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A google.protobuf.Timestamp is read whenever its instant fits
// microseconds in an int64, as a binary format round-trips any instant
// (Flink's avro and parquet readers take any epoch too; no text is
// involved): the years 0000 and 9999 at their ends, and the extreme
// instants the encoder writes, read and round-trip. One past an int64 is
// a bad record, where it used to wrap into another instant.
func TestTimestampRange(t *testing.T) {
	c := codec(t, "id BIGINT NOT NULL", "at TIMESTAMP_LTZ(6)")
	record := func(secs, nanos int64) []byte {
		var ts []byte
		ts = protowire.AppendVarint(protowire.AppendTag(ts, 1, protowire.VarintType), uint64(secs))
		ts = protowire.AppendVarint(protowire.AppendTag(ts, 2, protowire.VarintType), uint64(nanos))
		b := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7)
		return protowire.AppendBytes(protowire.AppendTag(b, 10, protowire.BytesType), ts)
	}
	for _, tt := range []struct {
		secs, nanos int64
		want        int64 // micros
		bad         bool
	}{
		{secs: -62167219200, want: -62167219200000000},                      // 0000-01-01
		{secs: -62167219201, nanos: 999999000, want: -62167219200000001},    // just before it
		{secs: 253402300799, nanos: 999999000, want: 253402300799999999},    // 9999-12-31 23:59:59.999999
		{secs: 253402300800, want: 253402300800000000},                      // 10000-01-01
		{secs: 9223372036854, nanos: 775807000, want: math.MaxInt64},        // the encoder's last instant
		{secs: -9223372036855, nanos: 224192000, want: math.MinInt64},       // and its first
		{secs: 9223372036852, nanos: 2147483647, want: 9223372036854147483}, // nanos past a second, within
		{secs: 9223372036853, nanos: 2147483647, bad: true},                 // wrapped before
		{secs: 9223372036854, nanos: 775808000, bad: true},                  // MaxInt64 + 1
		{secs: -9223372036855, nanos: 224191000, bad: true},                 // MinInt64 - 1
		{secs: math.MaxInt64, bad: true},
		{secs: math.MinInt64, bad: true},
	} {
		rec := record(tt.secs, tt.nanos)
		b := row.NewBatch(1, 2)
		err := c.Decoder.Decode(rec, b)
		if tt.bad {
			var de *connector.DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "out of range") || b.Len() != 0 {
				t.Errorf("%d s %d ns: got %v, want a bad record, out of range", tt.secs, tt.nanos, err)
			}
			continue
		}
		if err != nil || b.Len() != 1 {
			t.Errorf("%d s %d ns: %v", tt.secs, tt.nanos, err)
			continue
		}
		if got := b.Changes[0].Row[1].Micros(); got != tt.want {
			t.Errorf("%d s %d ns read as %d µs, want %d", tt.secs, tt.nanos, got, tt.want)
		}
		formattest.CheckRecord(t, c, rec, formattest.Check{Exact: true})
	}
}
