package parquet

import (
	"errors"
	"math"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/etld/etld/pipeline/row"
)

// A TIMESTAMP column of milliseconds or INT96 is read whenever its
// instant fits microseconds in an int64, as Flink's parquet reader takes
// any epoch (a binary value, no text to spell it): the years 0000 and
// 9999 at their ends, and the last instants, read; one past an int64 is
// an error where it used to wrap into another instant.
func TestTimestampRange(t *testing.T) {
	ltz := row.Type{ID: row.TimestampLTZ, Precision: 6}
	millis := &format.TimestampType{IsAdjustedToUTC: true, Unit: format.TimeUnit{Value: &format.MilliSeconds{}}}
	msConv, err := timestampConverter(pq.Int64, millis, ltz, errors.New("mismatch"))
	if err != nil {
		t.Fatal(err)
	}
	int96Conv, err := timestampConverter(pq.Int96, nil, ltz, errors.New("mismatch"))
	if err != nil {
		t.Fatal(err)
	}
	int96 := func(day uint32, ns uint64) pq.Value {
		return pq.Int96Value(deprecated.Int96{uint32(ns), uint32(ns >> 32), day})
	}
	const unixDay = 2440588
	for _, tt := range []struct {
		name string
		conv func(pq.Value) (row.Value, error)
		v    pq.Value
		want int64 // micros
		bad  bool
	}{
		{"ms 0000-01-01", msConv, pq.Int64Value(-62167219200000), -62167219200000000, false},
		{"ms 9999-12-31 23:59:59.999", msConv, pq.Int64Value(253402300799999), 253402300799999000, false},
		{"ms 10000-01-01", msConv, pq.Int64Value(253402300800000), 253402300800000000, false},
		{"ms last", msConv, pq.Int64Value(math.MaxInt64 / 1000), math.MaxInt64 / 1000 * 1000, false},
		{"ms first", msConv, pq.Int64Value(math.MinInt64 / 1000), math.MinInt64 / 1000 * 1000, false},
		{"ms past the last", msConv, pq.Int64Value(math.MaxInt64/1000 + 1), 0, true},
		{"ms past the first", msConv, pq.Int64Value(math.MinInt64/1000 - 1), 0, true},
		{"int96 epoch", int96Conv, int96(unixDay, 1500), 1, false},
		{"int96 0000-01-01", int96Conv, int96(unixDay-719528, 0), -62167219200000000, false},
		{"int96 9999-12-31 23:59:59.999999", int96Conv, int96(unixDay+2932896, 86399999999000), 253402300799999999, false},
		{"int96 last day", int96Conv, int96(unixDay+106751991, 0), 106751991 * row.MicrosPerDay, false},
		{"int96 past the last day", int96Conv, int96(unixDay+106751992, 0), 0, true},
		{"int96 last day, nanos past the int64", int96Conv, int96(unixDay+106751991, 1<<62), 0, true},
		{"int96 day 0, negative nanos", int96Conv, int96(0, 1<<63), -220090175236854775, false},
		{"int96 largest day", int96Conv, int96(math.MaxUint32, 0), 0, true},
	} {
		v, err := tt.conv(tt.v)
		if tt.bad {
			if err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("%s: got %v (%d µs), want out of range", tt.name, err, v.Micros())
			}
			continue
		}
		if err != nil || v.Micros() != tt.want || v.Type() != row.TimestampLTZ {
			t.Errorf("%s: got %v %v, want %d µs", tt.name, v, err, tt.want)
		}
	}
}
