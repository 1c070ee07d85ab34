package row

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// slowTimestamp is ParseTimestamp without the fast path.
func slowTimestamp(s string) (int64, bool) {
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().UnixMicro(), true
		}
	}
	return 0, false
}

// The fast path gives time.Parse's instant for every text it takes, and
// takes the common forms.
func TestParseSQLTimestampMatchesTimeParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		fast bool
	}{
		{"2024-01-02 10:00:00", true},
		{"2024-01-02T10:00:00.123", true},
		{"1969-12-31 23:59:59.5", true},
		{"0001-01-01 00:00:00", true},
		{"9999-12-31 23:59:59.999999999", true},
		{"2024-02-29 12:00:00.0000001", true},
		{"1600-02-29 00:00:00", true},
		{"1900-02-29 00:00:00", false}, // no such day
		{"2023-02-29 00:00:00", false},
		{"2024-04-31 00:00:00", false},
		{"2024-13-01 00:00:00", false},
		{"2024-01-02 24:00:00", false},
		{"2024-01-02 10:60:00", false},
		{"2024-01-02 10:00:60", false},
		{"2024-01-02 10:00:00.", false},
		{"2024-01-02 10:00:00.1234567891", false},
		{"2024-01-02 10:00:00Z", false},
		{"2024-01-02 10:00", false},
		{"2024-1-02 10:00:00", false},
		{"+024-01-02 10:00:00", false},
	} {
		got, ok := parseSQLTimestamp(tt.in)
		if ok != tt.fast {
			t.Errorf("parseSQLTimestamp(%q) ok = %v, want %v", tt.in, ok, tt.fast)
		}
		want, wantOK := slowTimestamp(tt.in)
		if ok && (!wantOK || got != want) {
			t.Errorf("parseSQLTimestamp(%q) = %d, time.Parse gives %d (%v)", tt.in, got, want, wantOK)
		}
	}
	// Random texts of the form, some characters changed: the fast path
	// agrees with time.Parse on all it takes, and takes some.
	rng := rand.New(rand.NewPCG(7, 7))
	taken := 0
	digits := "0123456789"
	for range 200_000 {
		b := []byte("2000-01-01 00:00:00.000000000")
		b = b[:19+rng.IntN(11)]
		for i := range b {
			switch {
			case rng.IntN(40) == 0:
				b[i] = "0123456789-: T.Zx"[rng.IntN(17)]
			case b[i] >= '0' && b[i] <= '9':
				b[i] = digits[rng.IntN(10)]
			}
		}
		s := string(b)
		got, ok := parseSQLTimestamp(s)
		want, wantOK := slowTimestamp(s)
		if ok && (!wantOK || got != want) {
			t.Fatalf("parseSQLTimestamp(%q) = %d, %v; time.Parse gives %d, %v", s, got, ok, want, wantOK)
		}
		if ok {
			taken++
		}
	}
	if taken < 100 {
		t.Fatalf("the fast path took %d of the random texts: the test tests nothing", taken)
	}
}

// slowDate is what ParseText did for every DATE before parseSQLDate.
func slowDate(s string) (int64, bool) {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, false
	}
	return d.Unix() / 86400, true
}

// TestParseSQLDate: on random texts of the form, some characters
// changed, parseSQLDate agrees with time.Parse on all it takes, and
// takes most valid ones (leap days, the years 0000 to 9999).
func TestParseSQLDate(t *testing.T) {
	for _, s := range []string{"1970-01-01", "1969-12-31", "2024-02-29", "2023-02-29", "0000-01-01", "9999-12-31", "2026-13-01", "2026-00-10", "2026-04-31", "2026-1-01", "+026-01-01", "2026-01-01 "} {
		got, ok := parseSQLDate(s)
		want, wantOK := slowDate(s)
		if ok != wantOK || got != want {
			t.Errorf("parseSQLDate(%q) = %d, %v; time.Parse gives %d, %v", s, got, ok, want, wantOK)
		}
	}
	rng := rand.New(rand.NewPCG(8, 8))
	taken := 0
	for range 200_000 {
		b := []byte(fmt.Sprintf("%04d-%02d-%02d", rng.IntN(10000), 1+rng.IntN(12), 1+rng.IntN(31)))
		for i := range b {
			if rng.IntN(30) == 0 {
				b[i] = "0123456789-+ x"[rng.IntN(14)]
			}
		}
		s := string(b)
		got, ok := parseSQLDate(s)
		want, wantOK := slowDate(s)
		if ok && (!wantOK || got != want) {
			t.Fatalf("parseSQLDate(%q) = %d, %v; time.Parse gives %d, %v", s, got, ok, want, wantOK)
		}
		if wantOK && !ok && !strings.ContainsAny(s, "+ x") {
			t.Fatalf("parseSQLDate(%q) left a date time.Parse reads", s)
		}
		if ok {
			taken++
		}
	}
	if taken < 100_000 {
		t.Fatalf("the fast path took %d of the random texts", taken)
	}
}

func FuzzParseSQLDate(f *testing.F) {
	f.Add("2024-02-29")
	f.Add("1969-12-31")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseSQLDate(s)
		want, wantOK := slowDate(s)
		if ok && (!wantOK || got != want) {
			t.Fatalf("parseSQLDate(%q) = %d; time.Parse gives %d, %v", s, got, want, wantOK)
		}
	})
}

func FuzzParseSQLTimestamp(f *testing.F) {
	f.Add("2024-01-02 10:00:00.123")
	f.Add("1969-12-31T23:59:59.999999999")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseSQLTimestamp(s)
		want, wantOK := slowTimestamp(s)
		if ok && (!wantOK || got != want) {
			t.Fatalf("parseSQLTimestamp(%q) = %d; time.Parse gives %d, %v", s, got, want, wantOK)
		}
	})
}

func BenchmarkParseTimestamp(b *testing.B) {
	for b.Loop() {
		if _, err := ParseTimestamp("2024-01-02 10:00:00.123", Timestamp); err != nil {
			b.Fatal(err)
		}
	}
}

// A TimestampReader reads every text as parseSQLTimestamp does (which the
// tests above hold to time.Parse), over runs of texts that share their
// minute and texts that break the run (another minute, a bad second, a
// bad fraction, another form, a cut text).
func TestTimestampReaderMatchesParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var r TimestampReader
	fast := 0
	tails := []string{"00", "59", "60", "7", "3x", "05.", "05.1", "05.123", "05.123456789", "05.1234567890", "05.12a", "05,1", "05 "}
	minutes := []string{"2024-01-01 00:00:", "2024-01-01 00:01:", "2024-02-29T23:59:", "2023-02-29 10:00:", "1969-12-31 23:59:", "2024-13-01 00:00:", "0001-01-01 00:00:"}
	for range 100_000 {
		s := minutes[rng.IntN(len(minutes))] + tails[rng.IntN(len(tails))]
		if rng.IntN(30) == 0 {
			s = "2024-01-01 00:00:05Z" // another layout
		}
		if rng.IntN(50) == 0 {
			s = s[:rng.IntN(len(s))]
		}
		if r.minute != "" && len(s) >= 17 && s[:17] == r.minute {
			fast++
		}
		got, ok := r.Micros(s)
		want, wantOK := parseSQLTimestamp(s)
		if got != want || ok != wantOK {
			t.Fatalf("TimestampReader.Micros(%q) = %d, %v; parseSQLTimestamp gives %d, %v", s, got, ok, want, wantOK)
		}
	}
	if fast < 10_000 {
		t.Fatalf("only %d texts shared the reader's minute: the test tests nothing", fast)
	}
}

func FuzzTimestampReader(f *testing.F) {
	f.Add("2024-01-02 10:00:00.123", "2024-01-02 10:00:59")
	f.Add("1969-12-31T23:59:59.999999999", "1969-12-31T23:59:60")
	f.Fuzz(func(t *testing.T, a, b string) {
		var r TimestampReader
		for _, s := range []string{a, b, a} {
			got, ok := r.Micros(s)
			want, wantOK := parseSQLTimestamp(s)
			if got != want || ok != wantOK {
				t.Fatalf("TimestampReader.Micros(%q) = %d, %v; parseSQLTimestamp gives %d, %v", s, got, ok, want, wantOK)
			}
		}
	})
}

func BenchmarkTimestampReader(b *testing.B) {
	var r TimestampReader
	for b.Loop() {
		if _, ok := r.Micros("2024-01-02 10:00:00.123"); !ok {
			b.Fatal("not read")
		}
	}
}

// parseSQLSeconds's common forms, "SS" and "SS.fff", read as its general
// loop reads them: every text of 2 and 6 bytes over digits, the bytes
// next to them, '.' and a blank.
func TestParseSQLSecondsCommonForms(t *testing.T) {
	alphabet := []byte("0123456789/:.; \x00\xff")
	var texts []string
	for _, a := range alphabet {
		for _, b := range alphabet {
			texts = append(texts, string([]byte{a, b}))
		}
	}
	for _, ss := range texts {
		for _, c := range alphabet {
			for _, f := range []string{"000", "999", "123", "9/9", "00:", "0 0", "..0", "\x0000"} {
				texts = append(texts, ss+string(c)+f)
			}
		}
	}
	for _, s := range texts {
		got, ok := parseSQLSeconds(s)
		want, wantOK := parseSQLSecondsAny(s)
		if got != want || ok != wantOK {
			t.Fatalf("parseSQLSeconds(%q) = %d, %v; the general loop gives %d, %v", s, got, ok, want, wantOK)
		}
	}
}
