package json

import (
	"math/rand/v2"
	"testing"
)

// scanStringRef is scanString byte by byte.
func scanStringRef(s string, j int) int {
	for ; j < len(s); j++ {
		if c := s[j]; c == '"' || c == '\\' || c < 0x20 {
			return j
		}
	}
	return j
}

// TestScanStringEveryByte: scanString stops where a byte-by-byte scan
// does for every byte value at every offset of a word and past it, after
// plain bytes of every value (stringStops's one test for the quote and
// the control characters must neither miss one nor stop at a neighbour:
// ' ', '!', '#', 0x7f, 0xff), and before a later stop.
func TestScanStringEveryByte(t *testing.T) {
	for plain := 0x20; plain < 0x100; plain++ {
		if plain == '"' || plain == '\\' {
			continue
		}
		for n := range 40 {
			for c := range 0x100 {
				b := make([]byte, 48)
				for i := range b {
					b[i] = byte(plain)
				}
				b[n] = byte(c)
				b[len(b)-3] = '"'
				s := string(b)
				for _, j := range []int{0, 1, 7} {
					if j > n {
						continue
					}
					if got, want := scanString(s, j), scanStringRef(s, j); got != want {
						t.Fatalf("scanString(%q, %d) = %d, want %d", s, j, got, want)
					}
				}
			}
		}
	}
}

// FuzzScanString: scanString agrees with the byte-by-byte scan anywhere.
func FuzzScanString(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		b := make([]byte, r.IntN(70))
		for i := range b {
			b[i] = byte(r.IntN(0x80))
		}
		f.Add(string(b), 0)
	}
	f.Add("abcdefgh\"ijklmnop", 3)
	f.Fuzz(func(t *testing.T, s string, j int) {
		if j < 0 || j > len(s) {
			return
		}
		if got, want := scanString(s, j), scanStringRef(s, j); got != want {
			t.Fatalf("scanString(%q, %d) = %d, want %d", s, j, got, want)
		}
	})
}
