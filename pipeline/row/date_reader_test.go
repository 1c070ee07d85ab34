package row

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTimestampReaderDays: a run of dates read with one reader, months
// repeating and changing, leap days and days past a month's end among
// them, gives parseSQLDate's answer for each.
func TestTimestampReaderDays(t *testing.T) {
	var r TimestampReader
	rng := rand.New(rand.NewPCG(1, 2))
	year, month, taken := 2024, 1, 0
	for range 200_000 {
		if rng.IntN(20) == 0 {
			year, month = 1900+rng.IntN(300), 1+rng.IntN(12)
		}
		s := fmt.Sprintf("%04d-%02d-%02d", year, month, rng.IntN(33))
		if rng.IntN(50) == 0 {
			s = s[:8] + "x" + s[9:]
		}
		checkDays(t, &r, s)
		if _, ok := r.Days(s); ok {
			taken++
		}
	}
	if taken < 100_000 {
		t.Fatalf("Days read %d of the texts", taken)
	}
	for _, s := range []string{"2024-02-30", "2023-02-29", "2024-13-01", "2024-00-10", "2024/01-01", "2024-01-1", ""} {
		if _, ok := r.Days(s); ok {
			t.Errorf("Days read %q", s)
		}
	}
}

func checkDays(t *testing.T, r *TimestampReader, s string) {
	got, ok := r.Days(s)
	want, wantOK := parseSQLDate(s)
	if ok != wantOK || (ok && int64(got) != want) {
		t.Fatalf("Days(%q) = %d, %v; parseSQLDate %d, %v", s, got, ok, want, wantOK)
	}
}

func FuzzTimestampReaderDays(f *testing.F) {
	f.Add("2024-02-29", "2024-02-30")
	f.Add("1969-12-31", "1970-01-01")
	f.Fuzz(func(t *testing.T, a, b string) {
		var r TimestampReader
		checkDays(t, &r, a)
		checkDays(t, &r, b)
	})
}
