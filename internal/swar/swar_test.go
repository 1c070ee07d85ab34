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
