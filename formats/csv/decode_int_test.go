package csv

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// shortInt gives strconv.ParseInt's value for every text it takes, and
// takes the common ones.
func TestShortIntMatchesStrconv(t *testing.T) {
	texts := []string{"0", "-0", "+0", "7", "-7", "+7", "123456789012345678", "-123456789012345678", "999999999999999999",
		"1234567890123456789", "", "-", "+", "1a", "a1", " 1", "1 ", "--1", "+-1", "1_0", "0x10", "٣", "9223372036854775807", "-9223372036854775808"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		b := make([]byte, rng.IntN(21))
		for i := range b {
			b[i] = "0123456789-+ a"[rng.IntN(14)]
		}
		texts = append(texts, string(b))
	}
	taken := 0
	for _, s := range texts {
		got, ok := shortInt(s)
		want, err := strconv.ParseInt(s, 10, 64)
		if ok && (err != nil || got != want) {
			t.Fatalf("shortInt(%q) = %d; strconv.ParseInt gives %d, %v", s, got, want, err)
		}
		if ok {
			taken++
		}
		if !ok && err == nil && len(s) <= 18 && s != "" && s[0] != '-' && s[0] != '+' {
			t.Fatalf("shortInt(%q) refused a plain number of %d digits", s, len(s))
		}
	}
	if taken < 1000 {
		t.Fatalf("shortInt took %d texts: the test tests nothing", taken)
	}
}

func FuzzShortInt(f *testing.F) {
	f.Add("123")
	f.Add("-9")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := shortInt(s)
		want, err := strconv.ParseInt(s, 10, 64)
		if ok && (err != nil || got != want) {
			t.Fatalf("shortInt(%q) = %d; strconv.ParseInt gives %d, %v", s, got, want, err)
		}
	})
}
