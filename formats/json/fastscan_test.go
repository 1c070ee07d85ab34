package json

import (
	"math/rand/v2"
	"strings"
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
// plain bytes of many values (stringStops's one test for the quote and
// the control characters must neither miss one nor stop at a neighbour:
// ' ', '!', '#', 0x7f, 0xff), and before a later stop.
func TestScanStringEveryByte(t *testing.T) {
	// The plain bytes next to the thresholds and the high ones (a plain
	// byte never borrows in the tests: the stop is what is exhaustive).
	for _, plain := range []int{0x20, 0x21, 0x23, 0x2f, 0x41, 0x5b, 0x5d, 0x7e, 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
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
		// 128 bytes take every loop of scanString several turns. A
		// longer input finds "new code" in a loop's larger turn count
		// alone, and the fuzzer then spends its minute minimizing it
		// (3 KB: 58 inputs a second, most of them minimizing).
		if j < 0 || j > len(s) || len(s) > 128 {
			return
		}
		if got, want := scanString(s, j), scanStringRef(s, j); got != want {
			t.Fatalf("scanString(%q, %d) = %d, want %d", s, j, got, want)
		}
	})
}

// fastIntRef is fastInt digit by digit: the JSON integer at s[i] of 1
// to 18 digits, no fraction or exponent after it.
func fastIntRef(s string, i int) (int64, int, bool) {
	j := i
	neg := j < len(s) && s[j] == '-'
	if neg {
		j++
	}
	d := j
	var n int64
	if j < len(s) && s[j] == '0' {
		j++
	} else {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			n = n*10 + int64(s[j]-'0')
			j++
		}
	}
	if j == d || j-d > 18 || (j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
		return 0, 0, false
	}
	if neg {
		n = -n
	}
	return n, j, true
}

// TestFastInt: fastInt reads as the digit-by-digit loop does numbers of
// 1 to 20 digits (7, 8 and 9 where its word ends), with a sign, leading
// zeros, a fraction, an exponent, and whatever follows, at the end of
// the text or before more.
func TestFastInt(t *testing.T) {
	var texts []string
	for _, digits := range []string{"0", "7", "10", "1234567", "12345678", "123456789", "100000000", "1234567890123456", "999999999999999999", "1000000000000000000", "12345678901234567890", "01234567", "012345678", "00"} {
		for _, sign := range []string{"", "-"} {
			for _, after := range []string{"", ",", "}", ".5", "e3", "E", " ", "x", "0000000000"} {
				texts = append(texts, sign+digits+after)
			}
		}
	}
	texts = append(texts, "", "-", "-x", "a", "12345678-")
	for _, s := range texts {
		for _, pad := range []string{"", "        "} {
			x := s + pad
			n, end, ok := fastInt(x, 0)
			wn, wend, wok := fastIntRef(x, 0)
			if n != wn || end != wend || ok != wok {
				t.Fatalf("fastInt(%q) = %d, %d, %v; want %d, %d, %v", x, n, end, ok, wn, wend, wok)
			}
		}
	}
}

// FuzzFastInt: fastInt agrees with the digit-by-digit loop anywhere.
func FuzzFastInt(f *testing.F) {
	for _, s := range []string{"12345678,", "-123456789}", "0.5", "1e5", "123456789012345678901"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, end, ok := fastInt(s, 0)
		wn, wend, wok := fastIntRef(s, 0)
		if n != wn || end != wend || ok != wok {
			t.Fatalf("fastInt(%q) = %d, %d, %v; want %d, %d, %v", s, n, end, ok, wn, wend, wok)
		}
	})
}

// FuzzAppendUnescapedFast: the one-pass decode's unescape makes the
// string appendUnescaped makes, ends where it does, and fails where it
// does, after any bytes already in the buffer.
func FuzzAppendUnescapedFast(f *testing.F) {
	for _, s := range []string{`"a\\b"`, `"abcdefgh\"ijklmnopq\/rs"`, `"\u00e9x\ud83d\ude00yz"`, `"\x"`, `"a\`, "\"tab\\t\x01\"", `"\\\\\\\\\\\\\\\\\\"`, `"0123456789abcdef\n0123456789"`} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, pre int) {
		if len(s) == 0 || s[0] != '"' || pre < 0 || pre > 64 {
			return
		}
		j := scanString(s, 1)
		if j >= len(s) || s[j] != '\\' {
			return
		}
		prefix := make([]byte, pre, pre+len(s)%13) // room for some of it, or none
		want, wend, err := appendUnescaped(append([]byte(nil), prefix...), s, 0, j)
		got, end, ok := appendUnescapedFast(prefix, s, 0, j)
		if ok != (err == nil) || ok && (end != wend || string(got) != string(want)) {
			t.Fatalf("%q: appendUnescapedFast %q, %d, %v; appendUnescaped %q, %d, %v", s, got, end, ok, want, wend, err)
		}
	})
}

// TestAppendUnescapedFast: escapes of every kind next to plain runs that
// end inside a word, at its end and across it, near the end of the text.
func TestAppendUnescapedFast(t *testing.T) {
	escapes := []string{`\\`, `\"`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\x`, `\u12`, "\x01", `\`}
	for _, e1 := range escapes {
		for _, e2 := range escapes {
			for n := range 18 {
				run := strings.Repeat("p", n)
				for _, tail := range []string{`"`, `"}`, `"` + strings.Repeat(" ", 9), ``, "x"} {
					s := `"a` + e1 + run + e2 + run + tail
					j := scanString(s, 1)
					want, wend, err := appendUnescaped(nil, s, 0, j)
					got, end, ok := appendUnescapedFast(nil, s, 0, j)
					if ok != (err == nil) || ok && (end != wend || string(got) != string(want)) {
						t.Fatalf("%q: appendUnescapedFast %q, %d, %v; appendUnescaped %q, %d, %v", s, got, end, ok, want, wend, err)
					}
				}
			}
		}
	}
}
