package javatime

import (
	"strings"
	"testing"
	"time"
)

func TestDateFormatRoundTrip(t *testing.T) {
	tm := time.Date(2024, 3, 9, 14, 5, 7, 89e6, time.UTC)
	cases := []struct{ pattern, text string }{
		{"yyyy-MM-dd HH:mm:ss", "2024-03-09 14:05:07"},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-03-09 14:05:07.089"},
		{"yyyyMMddHHmmssSSS", "20240309140507089"},
		{"dd MMM yyyy hh:mm:ss a", "09 Mar 2024 02:05:07 PM"},
		{"EEEE, MMMM d, yyyy H:m:s", "Saturday, March 9, 2024 14:5:7"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSX", "2024-03-09T14:05:07.089Z"},
		{"yyyy-MM-dd HH:mm:ss.SSS Z", "2024-03-09 14:05:07.089 +0000"},
		{"'o''clock' yyyy", "o'clock 2024"},
		{"yyyy-DDD HH:mm:ss.SSS", "2024-069 14:05:07.089"},
	}
	for _, tc := range cases {
		f, err := Compile(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := string(f.Format(nil, tm)); got != tc.text {
			t.Errorf("format %s = %q, want %q", tc.pattern, got, tc.text)
		}
		back, err := f.Parse(tc.text)
		if err != nil {
			t.Errorf("parse %s %q: %v", tc.pattern, tc.text, err)
			continue
		}
		want := tm
		if !strings.Contains(tc.pattern, "S") {
			want = tm.Truncate(time.Second)
		}
		if !strings.Contains(tc.pattern, "s") {
			want = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		if !back.Equal(want) {
			t.Errorf("parse %s %q = %v, want %v", tc.pattern, tc.text, back, want)
		}
	}
	for _, bad := range []struct{ pattern, text string }{
		{"yyyy-MM-dd", "2024-13-01"},
		{"yyyy-MM-dd", "2024-02-30"},
		{"yyyy-MM-dd", "2024-01-01 trailing"},
		{"HH:mm", "25:00"},
		{"yyyy-MM-dd", ""},
	} {
		f, _ := Compile(bad.pattern)
		if _, err := f.Parse(bad.text); err == nil {
			t.Errorf("%s accepted %q", bad.pattern, bad.text)
		}
	}
	if _, err := Compile("yyyy 'unclosed"); err == nil {
		t.Error("unclosed quote accepted")
	}
}

func FuzzDateFormat(f *testing.F) {
	for _, s := range []string{"yyyy-MM-dd HH:mm:ss", "yyyyMMdd", "EEE MMM d ''yy", "hh a", "SSS X", "DDD"} {
		f.Add(s, "2024-01-02 10:30:45")
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		df, err := Compile(pattern)
		if err != nil {
			return
		}
		df.Format(nil, time.Unix(1704191445, 0).UTC())
		df.Parse(text)
	})
}

// TestHasZone: only the zone and offset letters make a pattern name its
// instant.
func TestHasZone(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    bool
	}{
		{"yyyy-MM-dd HH:mm:ss", false},
		{"yyyy-MM-dd'T'HH:mm:ss'Z'", false},
		{"yyyy-MM-dd HH:mm:ssXXX", true},
		{"yyyy-MM-dd HH:mm:ss Z", true},
		{"yyyy-MM-dd HH:mm:ss z", true},
		{"yyyy-MM-dd HH:mm:ssx", true},
	} {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.HasZone(); got != tc.want {
			t.Errorf("%q: HasZone %v, want %v", tc.pattern, got, tc.want)
		}
	}
}
