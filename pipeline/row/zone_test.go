package row

import (
	"testing"
	"time"
)

// TestAtZone: a wall clock's instant in a zone follows
// LocalDateTime.atZone (AtZone) or GregorianCalendar (AtZoneLater) at
// both kinds of DST shift, and OffsetMicros inverts it where the wall
// clock exists once.
func TestAtZone(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	wall := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	inst := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	for _, tc := range []struct {
		wall, earlier, later string
	}{
		{"2024-03-10 01:59:59", "2024-03-10T09:59:59Z", "2024-03-10T09:59:59Z"},
		{"2024-03-10 02:00:00", "2024-03-10T10:00:00Z", "2024-03-10T10:00:00Z"}, // the gap's start: 03:00 PDT
		{"2024-03-10 02:30:00", "2024-03-10T10:30:00Z", "2024-03-10T10:30:00Z"}, // skipped
		{"2024-03-10 02:59:59", "2024-03-10T10:59:59Z", "2024-03-10T10:59:59Z"},
		{"2024-03-10 03:00:00", "2024-03-10T10:00:00Z", "2024-03-10T10:00:00Z"},
		{"2024-11-03 00:59:59", "2024-11-03T07:59:59Z", "2024-11-03T07:59:59Z"},
		{"2024-11-03 01:00:00", "2024-11-03T08:00:00Z", "2024-11-03T09:00:00Z"}, // repeated: PDT, then PST
		{"2024-11-03 01:30:00", "2024-11-03T08:30:00Z", "2024-11-03T09:30:00Z"},
		{"2024-11-03 01:59:59", "2024-11-03T08:59:59Z", "2024-11-03T09:59:59Z"},
		{"2024-11-03 02:00:00", "2024-11-03T10:00:00Z", "2024-11-03T10:00:00Z"},
		{"2024-07-01 12:00:00", "2024-07-01T19:00:00Z", "2024-07-01T19:00:00Z"},
		{"1900-01-01 00:00:00", "1900-01-01T08:00:00Z", "1900-01-01T08:00:00Z"}, // PST since 1883
	} {
		if got, want := AtZone(la, wall(tc.wall)), inst(tc.earlier); got != want {
			t.Errorf("AtZone %s: %s, want %s", tc.wall, time.UnixMicro(got).UTC(), tc.earlier)
		}
		if got, want := AtZoneLater(la, wall(tc.wall)), inst(tc.later); got != want {
			t.Errorf("AtZoneLater %s: %s, want %s", tc.wall, time.UnixMicro(got).UTC(), tc.later)
		}
	}
	for _, w := range []string{"2024-03-10 01:59:59", "2024-03-10 03:00:00", "2024-11-03 00:59:59", "2024-11-03 02:00:00"} {
		at := AtZone(la, wall(w))
		if got := at + OffsetMicros(la, at); got != wall(w) {
			t.Errorf("%s: back to %s", w, time.UnixMicro(got).UTC())
		}
	}
}
