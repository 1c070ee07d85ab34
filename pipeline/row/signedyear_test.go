package row

import (
	"math"
	"testing"
)

// Years past 0000..9999 as Flink 2.3 writes them (format-range-*-out,
// fn-range-*): java.time's ISO years, +10000 and -0001, in the SQL text
// (its writers), LocalDateTime/LocalDate/Instant.toString (print).
func TestISOYearTexts(t *testing.T) {
	const day = 86400e6
	last9999 := int64(253402300799999000) // 9999-12-31 23:59:59.999
	first0 := int64(minFastMicros)        // 0000-01-01 00:00:00
	cases := []struct {
		v           Value
		typ         Type
		text, print string
	}{
		{TimestampValue(last9999), Type{ID: Timestamp, Precision: 3}, "9999-12-31 23:59:59.999", "9999-12-31T23:59:59.999"},
		{TimestampValue(last9999 + day), Type{ID: Timestamp, Precision: 3}, "+10000-01-01 23:59:59.999", "+10000-01-01T23:59:59.999"},
		{TimestampValue(last9999 + 3653*day + 1000), Type{ID: Timestamp, Precision: 6}, "+10010-01-01 00:00:00.000000", "+10010-01-01T00:00"},
		{TimestampValue(first0 - day), Type{ID: Timestamp, Precision: 3}, "-0001-12-31 00:00:00.000", "-0001-12-31T00:00"},
		{TimestampValue(first0 - 365*day), Type{ID: Timestamp, Precision: 0}, "-0001-01-01 00:00:00", "-0001-01-01T00:00"},
		{TimestampValue(first0), Type{ID: Timestamp, Precision: 0}, "0000-01-01 00:00:00", "0000-01-01T00:00"},
		{TimestampValue(math.MaxInt64), Type{ID: Timestamp, Precision: 6}, "+294247-01-10 04:00:54.775807", "+294247-01-10T04:00:54.775807"},
		{TimestampValue(math.MinInt64), Type{ID: Timestamp, Precision: 6}, "-290308-12-21 19:59:05.224192", "-290308-12-21T19:59:05.224192"},
		{TimestampLTZValue(last9999 + day), Type{ID: TimestampLTZ, Precision: 3}, "+10000-01-01 23:59:59.999", "+10000-01-01T23:59:59.999Z"},
		{TimestampLTZValue(first0 - day), Type{ID: TimestampLTZ, Precision: 3}, "-0001-12-31 00:00:00.000", "-0001-12-31T00:00:00Z"},
		{DateValue(2932897), Type{ID: Date}, "+10000-01-01", "+10000-01-01"},
		{DateValue(2932896), Type{ID: Date}, "9999-12-31", "9999-12-31"},
		{DateValue(-719529), Type{ID: Date}, "-0001-12-31", "-0001-12-31"},
		{DateValue(-719528), Type{ID: Date}, "0000-01-01", "0000-01-01"},
		{DateValue(int32(daysFromCivil(-10000, 12, 31))), Type{ID: Date}, "-10000-12-31", "-10000-12-31"},
		{DateValue(math.MaxInt32), Type{ID: Date}, "+5881580-07-11", "+5881580-07-11"},
	}
	for _, c := range cases {
		if got := c.v.Text(c.typ); got != c.text {
			t.Errorf("Text(%d) = %q, want %q", c.v.n, got, c.text)
		}
		if got := c.v.String(); got != c.print {
			t.Errorf("String(%d) = %q, want %q", c.v.n, got, c.print)
		}
	}
	trimmed := map[int64]string{
		last9999 + day: "+10000-01-01 23:59:59.999",
		first0 - day:   "-0001-12-31 00:00:00",
	}
	for m, want := range trimmed {
		if got := string(AppendTimestampTrimmed(nil, m)); got != want {
			t.Errorf("AppendTimestampTrimmed(%d) = %q, want %q", m, got, want)
		}
	}
}

// SignedYear and AtYear read back what appendISOYear writes, and refuse
// what java.time's strict EXCEEDS_PAD parse refuses.
func TestSignedYear(t *testing.T) {
	cases := []struct {
		text string
		typ  Type
		want string // "" for not a signed year, "error" for an error
	}{
		{"+10000-01-01 23:59:59.999", Type{ID: Timestamp, Precision: 3}, "+10000-01-01 23:59:59.999"},
		{"-0001-12-31 00:00:00", Type{ID: Timestamp, Precision: 0}, "-0001-12-31 00:00:00"},
		{"+10000-01-01 23:59:59.999Z", Type{ID: TimestampLTZ, Precision: 3}, "+10000-01-01 23:59:59.999"},
		{"+10000-01-01T00:30:00+01:00", Type{ID: TimestampLTZ, Precision: 0}, "9999-12-31 23:30:00"},
		{"+10000-01-01", Type{ID: Date}, "+10000-01-01"},
		{"-0001-12-31", Type{ID: Date}, "-0001-12-31"},
		{"-10000-02-29", Type{ID: Date}, "-10000-02-29"}, // -10000 is a leap year
		{"+10000-02-29", Type{ID: Date}, "+10000-02-29"},
		{"+10001-02-29", Type{ID: Date}, "error"},
		{"+290000-12-31", Type{ID: Date}, "+290000-12-31"},
		{"+300001-01-01", Type{ID: Date}, "error"},
		{"+294247-01-10 04:00:54.775807", Type{ID: Timestamp, Precision: 6}, "+294247-01-10 04:00:54.775807"},
		{"+294247-01-10 04:00:54.775808", Type{ID: Timestamp, Precision: 6}, "error"},
		{"-290308-12-21 19:59:05.224192", Type{ID: Timestamp, Precision: 6}, "-290308-12-21 19:59:05.224192"},
		{"-290308-12-21 19:59:05.224191", Type{ID: Timestamp, Precision: 6}, "error"},
		{"-290309-01-01 00:00:00", Type{ID: Timestamp}, "error"},
		{"+9999-12-31", Type{ID: Date}, ""},  // a '+' only past four digits
		{"-0000-01-01", Type{ID: Date}, ""},  // no negative zero
		{"-001-01-01", Type{ID: Date}, ""},   // four digits at least
		{"10000-01-01", Type{ID: Date}, ""},  // past four digits only with the '+'
		{"+10000/01/01", Type{ID: Date}, ""}, // the year ends at '-'
		{"+1234567890123-01-01", Type{ID: Date}, ""},
	}
	for _, c := range cases {
		year, rest, ok := SignedYear(c.text)
		if !ok {
			if c.want != "" {
				t.Errorf("SignedYear(%q) not a signed year", c.text)
			}
			continue
		}
		if c.want == "" {
			t.Errorf("SignedYear(%q) = %d, %q, want not a signed year", c.text, year, rest)
			continue
		}
		v, err := ParseText(rest, c.typ)
		if err == nil {
			v, err = AtYear(v, rest, year)
		}
		switch {
		case c.want == "error":
			if err == nil {
				t.Errorf("%q read as %s, want an error", c.text, v.Text(c.typ))
			}
		case err != nil:
			t.Errorf("%q: %v", c.text, err)
		case v.Text(c.typ) != c.want:
			t.Errorf("%q read as %s, want %s", c.text, v.Text(c.typ), c.want)
		}
	}
}
