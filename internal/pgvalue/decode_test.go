package pgvalue

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// PostgreSQL holds dates and timestamps past etld's years 0000 to 9999
// (4713 BC to 294276 AD) and writes them as text. A BC year is read
// whole, as Flink's readers take any date and as etld's own writer
// (AppendText) writes it: 1 BC is the year 0000 (a leap year: its
// February 29 reads), 2 BC the year -1, an offset applying after the
// era. A year past 9999 is an error saying so. Each value read writes
// back as the text it came from.
func TestTimeRanges(t *testing.T) {
	date := row.Type{ID: row.Date}
	ts := row.Type{ID: row.Timestamp, Precision: 6}
	ltz := row.Type{ID: row.TimestampLTZ, Precision: 6}
	for _, tt := range []struct {
		text string
		t    row.Type
		want string // the value's text, or the error's end
		back string // what AppendText writes, when not text
	}{
		{"9999-12-31", date, "9999-12-31", ""},
		{"9999-12-30", date, "9999-12-30", ""},
		{"10000-01-01", date, "a year past 9999 is out of range (years 0000 to 9999)", ""},
		{"5874897-12-31", date, "a year past 9999 is out of range (years 0000 to 9999)", ""},
		{"0001-01-01", date, "0001-01-01", ""},
		{"0001-12-31 BC", date, "0000-12-31", ""}, // just inside
		{"0001-01-01 BC", date, "0000-01-01", ""}, // the end
		{"0001-02-29 BC", date, "0000-02-29", ""}, // 1 BC is a leap year
		{"0002-12-31 BC", date, "-0001-12-31", ""},
		{"0005-02-29 BC", date, "-0004-02-29", ""},
		{"0101-02-28 BC", date, "-0100-02-28", ""},
		{"4713-01-01 BC", date, "-4712-01-01", ""},
		{"0002-02-29 BC", date, `cannot parse "0002-02-29 BC" as DATE`, ""}, // -1 is no leap year
		{"infinity", date, "etld's dates and timestamps are finite", ""},

		{"9999-12-31 23:59:59.999999", ts, "9999-12-31 23:59:59.999999", ""},
		{"10000-01-01 00:00:00", ts, "a year past 9999 is out of range (years 0000 to 9999)", ""},
		{"0001-01-01 00:00:00 BC", ts, "0000-01-01 00:00:00.000000", "0001-01-01 00:00:00.000000 BC"},
		{"0001-02-29 12:00:00 BC", ts, "0000-02-29 12:00:00.000000", "0001-02-29 12:00:00.000000 BC"},
		{"0002-12-31 23:59:59.999999 BC", ts, "-0001-12-31 23:59:59.999999", ""},
		{"-infinity", ts, "etld's dates and timestamps are finite", ""},

		{"9999-12-31 23:59:59.999999+00", ltz, "9999-12-31 23:59:59.999999", ""},
		{"10000-01-01 00:00:00+00", ltz, "a year past 9999 is out of range (years 0000 to 9999)", ""},
		{"0001-01-01 01:00:00+01 BC", ltz, "0000-01-01 00:00:00.000000", "0001-01-01 00:00:00.000000+00 BC"},
		{"0001-01-01 00:59:59+01 BC", ltz, "-0001-12-31 23:59:59.000000", "0002-12-31 23:59:59.000000+00 BC"},
	} {
		v, err := Parse(tt.text, tt.t, Column{})
		if err != nil {
			if !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("Parse(%q, %s): %v, want %s", tt.text, tt.t, err, tt.want)
			}
			continue
		}
		if got := v.Text(tt.t); got != tt.want {
			t.Errorf("Parse(%q, %s) = %s, want %s", tt.text, tt.t, got, tt.want)
			continue
		}
		back, err := AppendText(nil, v, tt.t, Scalar)
		want := tt.back
		if want == "" {
			want = tt.text
		}
		if err != nil || string(back) != want {
			t.Errorf("%q read and written: %q %v, want %q", tt.text, back, err, want)
			continue
		}
		if again, err := Parse(string(back), tt.t, Column{}); err != nil || again != v {
			t.Errorf("%q written as %q reads back as %v %v", tt.text, back, again, err)
		}
	}
}
