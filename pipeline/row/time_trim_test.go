package row

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// AppendTimestampTrimmed writes what Go's layout with an optional
// fraction writes, on the edges of the fast range and on random instants.
func TestAppendTimestampTrimmedMatchesLayout(t *testing.T) {
	want := func(m int64) string {
		t := time.UnixMicro(m).UTC()
		return string(appendJavaYearSign(nil, t)) + t.Format("2006-01-02 15:04:05.999999")
	}
	cases := []int64{0, -1, 1, 10, 100000, 1_000_000, -1_000_000, 86400e6 - 1, 1704067200000000, 1704067200120000,
		minFastMicros, minFastMicros - 1, endFastMicros - 1, endFastMicros, -62135596800e6, math.MaxInt64, math.MinInt64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		m := rng.Int64N(endFastMicros-minFastMicros) + minFastMicros
		switch rng.IntN(3) {
		case 0:
			m -= m % 1e6 // no fraction
		case 1:
			m -= m % 1000 // milliseconds
		}
		cases = append(cases, m)
	}
	for _, m := range cases {
		if got := string(AppendTimestampTrimmed([]byte("x"), m)); got != "x"+want(m) {
			t.Fatalf("%d: got %q, want %q", m, got, "x"+want(m))
		}
	}
}
