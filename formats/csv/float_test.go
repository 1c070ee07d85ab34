package csv

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

var floatSeeds = []string{"0", "-0", "-0.0", "+1.5", "3.14159", "-5.00", "39.99", "1.", ".5", "123456789012345",
	"1234567890123456", "0.000000000000001", "9007199254740993", "1e5", "1_0", ".", "-", "", "1.2.3", "inf", "0x10", "12a"}

// TestShortFloat: what shortFloat reads, it reads as strconv.ParseFloat
// does, bit for bit (the sign of zero included); the rest it leaves.
func TestShortFloat(t *testing.T) {
	for _, s := range floatSeeds {
		checkShortFloat(t, s)
	}
	// Random digits, up to 15 of them, the point anywhere.
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200000 {
		b := []byte("-")[:rng.IntN(2)]
		for range 1 + rng.IntN(15) {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if at := rng.IntN(len(b) + 1); rng.IntN(4) > 0 {
			b = append(b[:at], append([]byte("."), b[at:]...)...)
		}
		checkShortFloat(t, string(b))
	}
	for _, s := range []string{"1e5", "1_0", "1234567890123456", "inf", "."} {
		if _, ok := shortFloat(s); ok {
			t.Errorf("shortFloat read %q", s)
		}
	}
	for _, s := range []string{"-0.0", "39.99", "123456789012345", ".5", "1."} {
		if _, ok := shortFloat(s); !ok {
			t.Errorf("shortFloat left %q", s)
		}
	}
}

func checkShortFloat(t *testing.T, s string) {
	f, ok := shortFloat(s)
	if !ok {
		return
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("shortFloat read %q as %v; ParseFloat: %v", s, f, err)
	}
	if math.Float64bits(f) != math.Float64bits(want) {
		t.Fatalf("shortFloat(%q) = %v, ParseFloat %v", s, f, want)
	}
}

func FuzzShortFloat(f *testing.F) {
	for _, s := range floatSeeds {
		f.Add(s)
	}
	f.Fuzz(checkShortFloat)
}
