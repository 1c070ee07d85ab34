package javatime

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// referenceFormat is Format written field by field from t's own methods,
// the plain reading of each letter: Format takes the date and the clock
// once and pads small numbers itself, and must write the same text.
func referenceFormat(f Pattern, t time.Time) string {
	pad := func(v, w int) string {
		neg := v < 0
		if neg {
			v = -v
		}
		s := strconv.Itoa(v)
		for len(s) < w {
			s = "0" + s
		}
		if neg {
			s = "-" + s
		}
		return s
	}
	var out string
	for _, fl := range f {
		n := fl.n
		switch fl.letter {
		case 0:
			out += fl.lit
		case 'G':
			out += "AD"
		case 'y', 'Y', 'u':
			if n == 2 {
				out += pad(t.Year()%100, 2)
			} else {
				if n >= 4 && t.Year() > 0 && len(strconv.Itoa(t.Year())) > n {
					out += "+"
				}
				out += pad(t.Year(), n)
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				out += t.Month().String()
			case n == 3:
				out += t.Month().String()[:3]
			default:
				out += pad(int(t.Month()), n)
			}
		case 'd':
			out += pad(t.Day(), n)
		case 'D':
			out += pad(t.YearDay(), n)
		case 'E', 'e':
			if n >= 4 {
				out += t.Weekday().String()
			} else {
				out += t.Weekday().String()[:3]
			}
		case 'a':
			if t.Hour() < 12 {
				out += "AM"
			} else {
				out += "PM"
			}
		case 'H':
			out += pad(t.Hour(), n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			out += pad(h, n)
		case 'K':
			out += pad(t.Hour()%12, n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			out += pad(h, n)
		case 'm':
			out += pad(t.Minute(), n)
		case 's':
			out += pad(t.Second(), n)
		case 'S':
			out += pad(t.Nanosecond(), 9)[:n]
		case 'n':
			out += pad(t.Nanosecond(), n)
		case 'z':
			out += "UTC"
		case 'Z':
			out += "+0000"
		case 'X':
			out += "Z"
		case 'x':
			out += "+00"
			if n >= 2 {
				out += "00"
			}
		}
	}
	return out
}

func TestFormatMatchesReference(t *testing.T) {
	patterns := []string{
		"yyyy-MM-dd", "HH:mm", "yyyy-MM-dd HH:mm:ss.SSS", "y-M-d H:m:s", "yy/MM/dd", "yyyyy", "MMM MMMM LL",
		"d D DDD", "E EEEE e", "h:mm a", "hh K KK k kk", "H HH HHH", "m mm mmm s ss sss", "S SS SSSSSS SSSSSSSSS",
		"n nnnnnnnnn", "z Z X x xx", "G yyyy", "'at' HH'h'mm", "yyyyMMddHHmmssSSS", "YYYY uuuu",
	}
	instants := []time.Time{
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(2023, 12, 31, 12, 0, 0, 1000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 7, 4, 9, 5, 3, 7e6, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-44, 3, 15, 11, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		instants = append(instants, time.UnixMicro(rng.Int64N(2e17)-1e17).UTC())
	}
	for _, p := range patterns {
		f, err := Compile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, tm := range instants {
			if got, want := string(f.Format([]byte{}, tm)), referenceFormat(f, tm); got != want {
				t.Fatalf("%s of %v: %q, want %q", p, tm, got, want)
			}
		}
	}
}

// The patterns a partitioned sink's DATE_FORMAT columns use, as Flink's
// SimpleDateFormat writes them.
func TestFormatPartitionPatterns(t *testing.T) {
	cases := []struct {
		pattern string
		t       time.Time
		want    string
	}{
		{"yyyy-MM-dd", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "2024-01-01"},
		{"HH:mm", time.Date(2024, 1, 1, 0, 0, 59, 999e6, time.UTC), "00:00"},
		{"HH:mm", time.Date(2024, 1, 1, 23, 59, 0, 0, time.UTC), "23:59"},
		{"yyyy-MM-dd", time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), "2024-02-29"},
		{"yyyy-MM-dd", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), "1969-12-31"},
		{"H", time.Date(2024, 1, 1, 7, 0, 0, 0, time.UTC), "7"},
		{"yyyyMMdd'T'HH", time.Date(2024, 10, 5, 7, 0, 0, 0, time.UTC), "20241005T07"},
		{"y", time.Date(12, 1, 1, 0, 0, 0, 0, time.UTC), "12"},
		{"yyyy", time.Date(12, 1, 1, 0, 0, 0, 0, time.UTC), "0012"},
	}
	for _, c := range cases {
		f, err := Compile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(f.Format(nil, c.t)); got != c.want {
			t.Errorf("%s of %v = %q, want %q", c.pattern, c.t, got, c.want)
		}
	}
}

func BenchmarkFormatPartition(b *testing.B) {
	f, _ := Compile("yyyy-MM-dd")
	g, _ := Compile("HH:mm")
	tm := time.Date(2024, 1, 1, 12, 34, 56, 0, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = f.Format(buf[:0], tm)
		buf = g.Format(buf[:0], tm)
	}
}

// A year wider than four or more pattern letters has Java's
// EXCEEDS_PAD '+' (Flink's DATE_FORMAT of the year 10000 in yyyy-MM-dd,
// fn-range-convert-past); one as wide as the letters has none.
func TestFormatWideYear(t *testing.T) {
	y10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		pattern string
		t       time.Time
		want    string
	}{
		{"yyyy-MM-dd", y10000, "+10000-01-01"},
		{"uuuu", y10000, "+10000"},
		{"yyyyy", y10000, "10000"},
		{"y", y10000, "10000"},
		{"yyyy", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), "9999"},
		{"yyyy", time.Date(123456, 1, 1, 0, 0, 0, 0, time.UTC), "+123456"},
	} {
		f, err := Compile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(f.Format(nil, c.t)); got != c.want {
			t.Errorf("%s of %v: %q, want %q", c.pattern, c.t, got, c.want)
		}
	}
}
