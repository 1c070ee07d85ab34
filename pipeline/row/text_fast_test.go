package row

import (
	"math"
	"math/rand/v2"
	"testing"
)

// floatSamples are values that exercise every branch of appendJavaFloat:
// the bounds of the fixed range, integers, powers of ten, the ends of the
// exponent range, subnormals, and random bit patterns.
func floatSamples(r *rand.Rand, n int) []float64 {
	fs := []float64{
		0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
		1, -1, 0.1, 35.8, 1e-3, math.Nextafter(1e-3, 0), math.Nextafter(1e-3, 1),
		1e7, math.Nextafter(1e7, 0), math.Nextafter(1e7, 2e7), 9999999, 9999999.5, 1234567.0, -7654321.0,
		1e-4, 1.5e-4, 1e21, 1e22, 1e23, 1e100, 1e-100, 1e308, 1e-308, 5e-324,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxFloat32, math.SmallestNonzeroFloat32,
		1 << 53, 1<<53 + 2, float64(math.MaxInt64), 0.3, 2.0 / 3, 100, 1000000,
	}
	// Around powers of two, where the interval of decimals that read as
	// a double is lopsided, with few decimals and one ulp either side.
	for e := -12; e <= 24; e++ {
		p := math.Ldexp(1, e)
		for _, d := range []float64{0, 0.1, 0.01, 0.001, 0.05, 0.25, 0.3, 0.999} {
			for _, v := range []float64{p + d, p - d, -(p + d)} {
				fs = append(fs, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
			}
		}
	}
	for e := -330; e <= 310; e++ {
		fs = append(fs, math.Pow10(e), -math.Pow10(e), 3*math.Pow10(e))
	}
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0: // any bit pattern, NaNs included
			fs = append(fs, math.Float64frombits(r.Uint64()))
		case 1: // everyday magnitudes
			fs = append(fs, (r.Float64()-0.5)*math.Pow10(r.IntN(20)-6))
		case 2: // integers, also beyond the fixed range
			fs = append(fs, float64(r.Int64N(1<<uint(r.IntN(62)+1))-(1<<uint(r.IntN(40)))))
		case 3: // few decimals, as sensor readings have, and their neighbours
			v := float64(r.Int64N(2e10)-1e10) / math.Pow10(r.IntN(5))
			switch r.IntN(4) {
			case 0:
				v = math.Nextafter(v, math.Inf(1))
			case 1:
				v = math.Nextafter(v, math.Inf(-1))
			}
			fs = append(fs, v)
		case 4: // float32 values of any pattern
			fs = append(fs, float64(math.Float32frombits(r.Uint32())))
		}
	}
	return fs
}

// TestAppendJavaFloatMatchesReference compares the fast path with the
// implementation it replaced over many values, as DOUBLE and as FLOAT.
func TestAppendJavaFloatMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	bad := 0
	for _, f := range floatSamples(r, 100000) {
		for _, bits := range []int{64, 32} {
			v := f
			if bits == 32 {
				v = float64(float32(f))
			}
			got := string(appendJavaFloat([]byte("x"), v, bits))
			want := string(refAppendJavaFloat([]byte("x"), v, bits))
			if got != want {
				t.Errorf("appendJavaFloat(%b, %d) = %q, want %q", v, bits, got, want)
				if bad++; bad > 20 {
					t.FailNow()
				}
			}
		}
	}
}

// TestAppendSQLTimestampMatchesReference compares the hand-written digits
// with time.AppendFormat's over many instants, before 1970 and at the
// ends of the four-digit years included, at every precision.
func TestAppendSQLTimestampMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const year = 365 * 86400 * int64(1e6)
	micros := []int64{0, -1, 1, 999999, -999999, 1e6, -1e6, 86400e6 - 1, -86400e6,
		951782400e6, 951868800e6, // 2000-02-29, 2000-03-01
		-62135596800e6, -62135596800e6 - 1, // 0001-01-01 and the instant before
		-62167219200e6, -62167219200e6 - 1, // 0000-01-01 and the year -1
		253402300799e6 + 999999, 253402300800e6, // the last instant of 9999 and 10000-01-01
		math.MaxInt64, math.MinInt64, 1_700_000_000_123_456,
	}
	for i := 0; i < 60000; i++ {
		switch i % 3 {
		case 0: // within a century of 1970
			micros = append(micros, r.Int64N(200*year)-100*year)
		case 1: // anywhere in 0000..9999 and a little beyond
			micros = append(micros, r.Int64N(10200*year)-2100*year)
		case 2: // any int64
			micros = append(micros, int64(r.Uint64()))
		}
	}
	bad := 0
	for _, m := range micros {
		for p := 0; p <= 10; p++ {
			got := string(appendSQLTimestamp([]byte("x"), m, p))
			want := string(refAppendSQLTimestamp([]byte("x"), m, p))
			if got != want {
				t.Errorf("appendSQLTimestamp(%d, %d) = %q, want %q", m, p, got, want)
				if bad++; bad > 20 {
					t.FailNow()
				}
			}
		}
	}
}

// The day cache gives the right date from empty, and for each of the
// days at its ends (its key 0 means empty).
func TestAppendSQLTimestampDayCache(t *testing.T) {
	for _, m := range []int64{-1, 0, minFastMicros, endFastMicros - 1, -86400e6, 86400e6} {
		for _, prev := range []int64{m, m + 86400e6, m - 86400e6} {
			lastDay.Store(0)
			appendSQLTimestamp(nil, prev, 0) // fills the cache, or not
			for range 2 {
				if got, want := string(appendSQLTimestamp(nil, m, 3)), string(refAppendSQLTimestamp(nil, m, 3)); got != want {
					t.Errorf("after %d: appendSQLTimestamp(%d) = %q, want %q", prev, m, got, want)
				}
			}
			lastDay.Store(0)
			if got, want := string(appendSQLTimestamp(nil, m, 3)), string(refAppendSQLTimestamp(nil, m, 3)); got != want {
				t.Errorf("from empty: appendSQLTimestamp(%d) = %q, want %q", m, got, want)
			}
		}
	}
}

// The Java forms the print connector and CSV files show, spelled out.
func TestAppendTextForms(t *testing.T) {
	cases := []struct {
		v    Value
		t    Type
		want string
	}{
		{DoubleValue(35.8), Of(Double), "35.8"},
		{DoubleValue(100), Of(Double), "100.0"},
		{DoubleValue(-2), Of(Double), "-2.0"},
		{DoubleValue(1e7), Of(Double), "1.0E7"},
		{DoubleValue(1.25e7), Of(Double), "1.25E7"},
		{DoubleValue(1.5e-4), Of(Double), "1.5E-4"},
		{DoubleValue(1e-300), Of(Double), "1.0E-300"},
		{DoubleValue(1e300), Of(Double), "1.0E300"},
		{FloatValue(0.1), Of(Float), "0.1"},
		{FloatValue(3e38), Of(Float), "3.0E38"},
		{TimestampValue(1_700_000_000_123_456), Type{ID: Timestamp, Precision: 3}, "2023-11-14 22:13:20.123"},
		{TimestampValue(1_700_000_000_123_456), Type{ID: Timestamp, Precision: 6}, "2023-11-14 22:13:20.123456"},
		{TimestampValue(1_700_000_000_123_456), Type{ID: Timestamp, Precision: 9}, "2023-11-14 22:13:20.123456000"},
		{TimestampValue(1_700_000_000_123_456), Type{ID: Timestamp, Precision: 0}, "2023-11-14 22:13:20"},
		{TimestampValue(-1), Type{ID: Timestamp, Precision: 6}, "1969-12-31 23:59:59.999999"},
		{TimestampLTZValue(951782400e6), Type{ID: TimestampLTZ, Precision: 3}, "2000-02-29 00:00:00.000"},
	}
	for _, c := range cases {
		if got := c.v.Text(c.t); got != c.want {
			t.Errorf("%#v as %s = %q, want %q", c.v, c.t, got, c.want)
		}
	}
}

// benchFloats are what a retract CSV of sensor aggregates carries, by
// kind, and all kinds mixed.
func benchFloats() map[string][]float64 {
	r := rand.New(rand.NewPCG(5, 6))
	kinds := map[string]func() float64{
		"integer": func() float64 { return float64(r.IntN(1000000)) },        // COUNT, SUM of integers
		"reading": func() float64 { return float64(r.IntN(9000)-1000) / 10 }, // a reading, MAX of them
		"avg":     func() float64 { return r.Float64() * 50 },                // AVG, SUM with rounding error
		"sci":     func() float64 { return r.NormFloat64() * 1e9 },           // beyond 1e7
	}
	out := map[string][]float64{}
	var mix []float64
	for name, gen := range kinds {
		fs := make([]float64, 1024)
		for i := range fs {
			fs[i] = gen()
		}
		out[name] = fs
		mix = append(mix, fs[:256]...)
	}
	r.Shuffle(len(mix), func(i, j int) { mix[i], mix[j] = mix[j], mix[i] })
	out["mix"] = mix
	return out
}

func BenchmarkAppendJavaFloat(b *testing.B) {
	sets := benchFloats()
	for _, kind := range []string{"mix", "integer", "reading", "avg", "sci"} {
		fs := sets[kind]
		for _, impl := range []struct {
			name string
			f    func([]byte, float64, int) []byte
		}{{"new", appendJavaFloat}, {"old", refAppendJavaFloat}} {
			b.Run(kind+"/"+impl.name, func(b *testing.B) {
				buf := make([]byte, 0, 64)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					buf = impl.f(buf[:0], fs[i&1023], 64)
				}
			})
		}
	}
}

func BenchmarkAppendSQLTimestamp(b *testing.B) {
	// Window bounds and event times of one day, 10 s apart, with millis.
	ts := make([]int64, 1024)
	for i := range ts {
		ts[i] = 1_700_000_000_000_000 + int64(i)*10_000_123
	}
	for _, impl := range []struct {
		name string
		f    func([]byte, int64, int) []byte
	}{{"new", appendSQLTimestamp}, {"old", refAppendSQLTimestamp}} {
		b.Run(impl.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				buf = impl.f(buf[:0], ts[i&1023], 3)
			}
		})
	}
}
