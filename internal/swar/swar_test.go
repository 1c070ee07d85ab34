package swar

import (
	"strconv"
	"testing"
)

// TestEightDigits reads every prefix of digit runs against strconv, and
// NonDigits/FirstByte find the first byte that is not a digit.
func TestEightDigits(t *testing.T) {
	for _, s := range []string{"00000000", "12345678", "99999999", "1234567x", "0,123456", "7 aaaaaa", "/:09abcd", "9876543\x00"} {
		x := Word(s, 0) - '0'*LSB
		n := FirstByte(NonDigits(x))
		want := 0
		for want < 8 && s[want] >= '0' && s[want] <= '9' {
			want++
		}
		if n != want {
			t.Fatalf("%q: FirstByte(NonDigits) = %d, want %d", s, n, want)
		}
		if n == 0 {
			continue
		}
		v, err := strconv.ParseUint(s[:n], 10, 64)
		if err != nil || EightDigits(x, n) != v {
			t.Fatalf("%q: EightDigits(%d) = %d, strconv %d (%v)", s, n, EightDigits(x, n), v, err)
		}
	}
}

// TestBytes marks exactly the bytes equal to c, every byte value
// against every other, in every place of the word.
func TestBytes(t *testing.T) {
	for c := range 256 {
		for b := range 256 {
			for at := range 8 {
				w := []byte("\x00\xff\x80\x7f,\n\r\"")
				w[at] = byte(b)
				var want uint64
				for i, x := range w {
					if x == byte(c) {
						want |= 0x80 << (8 * i)
					}
				}
				if got := Bytes(Word(string(w), 0), byte(c)); got != want {
					t.Fatalf("Bytes(%q, %#x) = %#x, want %#x", w, c, got, want)
				}
			}
		}
	}
}

// TestMask8 packs every pattern of high bits.
func TestMask8(t *testing.T) {
	for bitsSet := range 256 {
		var m uint64
		for i := range 8 {
			if bitsSet>>i&1 == 1 {
				m |= 0x80 << (8 * i)
			}
		}
		// Low bits of the bytes are ignored.
		if got := Mask8(m | ^MSB&0x0123456789abcdef); got != uint32(bitsSet) {
			t.Fatalf("Mask8(%#x) = %#x, want %#x", m, got, bitsSet)
		}
	}
}
