package row

import (
	"strings"
	"testing"
)

// The years 0000 to 9999 at both ends and just inside: the epoch
// readers' bounds (InTimestampRange, InDateRange), and a zoned text,
// which an offset can carry past them, read by ParseTimestamp and
// ParseText.
func TestTimestampRangeEnds(t *testing.T) {
	for _, tt := range []struct {
		micros int64
		in     bool
	}{
		{-62167219200000000 - 1, false}, // 0000-01-01 00:00:00 less 1 µs
		{-62167219200000000, true},      // 0000-01-01 00:00:00
		{-62167219200000000 + 1, true},
		{253402300800000000 - 1, true}, // 9999-12-31 23:59:59.999999
		{253402300800000000, false},    // 10000-01-01 00:00:00
	} {
		if got := InTimestampRange(tt.micros); got != tt.in {
			t.Errorf("InTimestampRange(%d) = %v, want %v", tt.micros, got, tt.in)
		}
	}
	for _, tt := range []struct {
		days int64
		in   bool
	}{
		{-719529, false}, // -0001-12-31
		{-719528, true},  // 0000-01-01
		{-719527, true},
		{2932896, true}, // 9999-12-31
		{2932897, false},
	} {
		if got := InDateRange(tt.days); got != tt.in {
			t.Errorf("InDateRange(%d) = %v, want %v", tt.days, got, tt.in)
		}
	}
	for _, tt := range []struct {
		text string
		id   TypeID
		want string // the value's text, or the error's end
	}{
		{"9999-12-31T23:59:59.999999Z", TimestampLTZ, "9999-12-31 23:59:59.999999"},
		{"9999-12-31T22:59:59.999999-01:00", TimestampLTZ, "9999-12-31 23:59:59.999999"},
		{"9999-12-31T23:00:00-01:00", TimestampLTZ, "out of range (years 0000 to 9999)"},
		{"9999-12-31 23:30:00-00:30", Timestamp, "out of range (years 0000 to 9999)"},
		{"0000-01-01T00:00:00Z", Timestamp, "0000-01-01 00:00:00.000000"},
		{"0000-01-01T00:59:59+00:59", TimestampLTZ, "0000-01-01 00:00:59.000000"},
		{"0000-01-01T00:00:00+00:01", TimestampLTZ, "out of range (years 0000 to 9999)"},
		{"0000-01-01 00:00:00+01:00", Timestamp, "out of range (years 0000 to 9999)"},
		// No zone: always within the years.
		{"9999-12-31 23:59", Timestamp, "9999-12-31 23:59:00.000000"},
		{"0000-01-01", Timestamp, "0000-01-01 00:00:00.000000"},
	} {
		v, err := ParseTimestamp(tt.text, tt.id)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = v.Text(Type{ID: tt.id, Precision: 6})
		}
		if got != tt.want {
			t.Errorf("ParseTimestamp(%q) = %s, want %s", tt.text, got, tt.want)
		}
		// ParseText (CAST, csv) says why it refused.
		_, err = ParseText(tt.text, Type{ID: tt.id, Precision: 6})
		if refused := strings.HasPrefix(tt.want, "out of range"); refused != (err != nil) ||
			refused && !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("ParseText(%q) = %v, want refused %v (%s)", tt.text, err, refused, tt.want)
		}
	}
}
