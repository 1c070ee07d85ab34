package csv

import (
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

var decimalSeeds = []string{"0", "-0", "-0.00", "+1.5", "79.19", "-5.00", "123.456", "1.", ".5", "00012.3",
	"99999999.99", "100000000.00", "1e5", "1E-2", "-", "", "1.2.3", "12a", " 1", "9223372036854775807",
	"12345678901234567.8", "0.1234567890123456789"}

// decimalTypes are DECIMALs of several precisions and scales, 18 digits
// the most the fast path takes, 19 and 38 which it leaves.
var decimalTypes = [][2]int{{10, 2}, {1, 0}, {5, 5}, {18, 0}, {18, 6}, {18, 18}, {9, 3}, {19, 2}, {38, 10}}

// TestShortDecimal: what shortDecimal reads, it reads as ParseText does
// (the value of the column's type); what ParseText refuses or rounds it
// leaves to ParseText.
func TestShortDecimal(t *testing.T) {
	for _, pt := range decimalTypes {
		for _, s := range decimalSeeds {
			checkShortDecimal(t, s, pt[0], pt[1])
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 200000 {
		b := []byte("-")[:rng.IntN(2)]
		for range 1 + rng.IntN(20) {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if at := rng.IntN(len(b) + 1); rng.IntN(4) > 0 {
			b = append(b[:at], append([]byte("."), b[at:]...)...)
		}
		pt := decimalTypes[rng.IntN(len(decimalTypes))]
		checkShortDecimal(t, string(b), pt[0], pt[1])
	}
	for _, c := range []struct {
		s     string
		p, s2 int
		ok    bool
	}{{"79.19", 10, 2, true}, {"-5", 10, 2, true}, {"0.5", 5, 5, true}, {"1.234", 10, 2, false},
		{"1e5", 10, 2, false}, {"100000000.00", 10, 2, false}, {"1", 19, 2, false}} {
		if _, ok := shortDecimal(c.s, c.p, c.s2); ok != c.ok {
			t.Errorf("shortDecimal(%q, %d, %d) read it: %v, want %v", c.s, c.p, c.s2, ok, c.ok)
		}
	}
}

func checkShortDecimal(t *testing.T, s string, precision, scale int) {
	u, ok := shortDecimal(s, precision, scale)
	if !ok {
		return
	}
	typ := row.Type{ID: row.Decimal, Precision: precision, Scale: scale}
	want, err := row.ParseText(s, typ)
	if err != nil {
		t.Fatalf("shortDecimal read %q as %d for %s; ParseText: %v", s, u, typ, err)
	}
	if got := row.DecimalValue(u, scale); got != want {
		t.Fatalf("shortDecimal(%q) for %s = %v, ParseText %v", s, typ, got, want)
	}
}

func FuzzShortDecimal(f *testing.F) {
	for _, s := range decimalSeeds {
		f.Add(s, uint8(10), uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, p, sc uint8) {
		precision := 1 + int(p)%38
		checkShortDecimal(t, s, precision, int(sc)%(precision+1))
	})
}
