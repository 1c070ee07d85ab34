package json

import (
	"math/rand/v2"
	"testing"
	"time"
)

// refAppendTimestamp is AppendTimestamp as it was written through
// package time, right for the years 0000..9999 only (Go writes the year
// 10000 without java.time's '+').
func refAppendTimestamp(dst []byte, micros int64, instant, iso bool) []byte {
	t := time.UnixMicro(micros).UTC()
	if iso {
		dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	} else {
		dst = t.AppendFormat(dst, time.DateTime)
	}
	if us := t.Nanosecond() / 1000; us != 0 {
		var frac [7]byte
		frac[0] = '.'
		for i := 6; i >= 1; i-- {
			frac[i] = byte('0' + us%10)
			us /= 10
		}
		n := 7
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, frac[:n]...)
	}
	if instant {
		dst = append(dst, 'Z')
	}
	return dst
}

// AppendTimestamp writes what package time wrote within the years
// 0000..9999, in both standards, and java.time's signed year past them
// (format-range-json-out, recorded on Flink 2.3).
func TestAppendTimestampText(t *testing.T) {
	const lo, hi = -62167219200e6, 253402300800e6 // 0000-01-01, 10000-01-01
	rng := rand.New(rand.NewPCG(5, 6))
	ms := []int64{0, -1, 1, lo, hi - 1, 1704067200120000}
	for range 20000 {
		m := rng.Int64N(hi-lo) + lo
		if rng.IntN(2) == 0 {
			m -= m % 1000
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		for _, iso := range []bool{false, true} {
			for _, instant := range []bool{false, true} {
				got, want := string(AppendTimestamp(nil, m, instant, iso)), string(refAppendTimestamp(nil, m, instant, iso))
				if got != want {
					t.Fatalf("AppendTimestamp(%d, %v, %v) = %q, want %q", m, instant, iso, got, want)
				}
			}
		}
	}
	for _, c := range []struct {
		micros       int64
		instant, iso bool
		want         string
	}{
		{hi + 86400e6 - 1000, false, false, "+10000-01-01 23:59:59.999"},
		{hi + 86400e6 - 1000, true, false, "+10000-01-01 23:59:59.999Z"},
		{hi, false, true, "+10000-01-01T00:00:00"},
		{lo - 86400e6, false, false, "-0001-12-31 00:00:00"},
		{lo - 86400e6, true, true, "-0001-12-31T00:00:00Z"},
	} {
		if got := string(AppendTimestamp(nil, c.micros, c.instant, c.iso)); got != c.want {
			t.Errorf("AppendTimestamp(%d, %v, %v) = %q, want %q", c.micros, c.instant, c.iso, got, c.want)
		}
	}
}

func BenchmarkAppendTimestamp(b *testing.B) {
	ts := make([]int64, 1024)
	for i := range ts {
		ts[i] = 1_700_000_000_000_000 + int64(i)*10_000_123
	}
	for _, impl := range []struct {
		name string
		f    func([]byte, int64, bool, bool) []byte
	}{{"new", AppendTimestamp}, {"old", refAppendTimestamp}} {
		b.Run(impl.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				buf = impl.f(buf[:0], ts[i&1023], false, false)
			}
		})
	}
}
