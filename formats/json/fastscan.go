package json

import (
	"encoding/binary"
	"math/bits"

	"github.com/etld/etld/internal/swar"
)

// The one-pass decode's scanning (fast.go): each function checks the
// JSON it passes over as the general path's scan.go does, but says only
// whether it is well-formed, with no error to build: anything it does not
// accept (malformed JSON, or a form it leaves to the general path) sends
// the record to the general path, which finds the error and its
// position. None crosses a line break: a "\n" outside a string is not a
// blank here, and inside one it is a control character, so that a line's
// scan never reads into the next line.

// fastMaxDepth is the nesting fastSkip follows; deeper values go to the
// general path (maxDepth).
const fastMaxDepth = 64

// stringStops has the high bit set in the first byte of w that ends a
// run of a string's plain bytes, a '"', a '\\' or a control character
// (and maybe in bytes after it: only the first is exact).
//
// The quote and the control characters are one test: flipping bit 1
// maps '"' (0x22) to 0x20 and the bytes below 0x20 onto themselves, and
// no other byte below 0x21, so that the bytes that stop a run are those
// below 0x21 after the flip, or the backslash.
func stringStops(w uint64) uint64 {
	q := w ^ (0x02 * swar.LSB)
	b := w ^ ('\\' * swar.LSB)
	return ((q-0x21*swar.LSB)&^q | (b-swar.LSB)&^b) & swar.MSB
}

// scanString returns the offset of the first byte at or after j that is
// a '"', a '\\' or a control character, or len(s): eight bytes at a time,
// for the long strings (descriptions, URLs, free text) a record carries.
func scanString(s string, j int) int {
	for j+16 <= len(s) {
		if m := stringStops(swar.Word(s, j)); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		if m := stringStops(swar.Word(s, j+8)); m != 0 {
			return j + 8 + bits.TrailingZeros64(m)>>3
		}
		j += 16
	}
	for j+8 <= len(s) {
		if m := stringStops(swar.Word(s, j)); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	for j < len(s) {
		if c := s[j]; c == '"' || c == '\\' || c < 0x20 {
			return j
		}
		j++
	}
	return j
}

// appendUnescapedFast is appendUnescaped for the one-pass decode, with
// ok for its error: the plain bytes between escapes are scanned and
// copied in one pass, a word at a time (a word is stored whole, then the
// slice is cut back to where the run stops), where appendUnescaped scans
// a run and then copies it. A \u escape goes to appendUnescaped.
func appendUnescapedFast(buf []byte, s string, start, j int) ([]byte, int, bool) {
	buf = append(buf, s[start+1:j]...)
	for {
		if j >= len(s) {
			return buf, 0, false
		}
		switch c := s[j]; {
		case c == '"':
			return buf, j + 1, true
		case c != '\\' || j+1 >= len(s):
			return buf, 0, false // a control character, or cut
		}
		c, ok := shortEscape(s[j+1])
		if !ok {
			b, end, err := appendUnescaped(buf, s, j-1, j)
			return b, end, err == nil
		}
		buf = append(buf, c)
		j += 2
		for {
			// A word is stored only where the buffer has room for it: it
			// grows (and copies) only where appendUnescaped's would.
			if j+8 > len(s) || cap(buf)-len(buf) < 8 {
				k := scanString(s, j)
				buf = append(buf, s[j:k]...)
				j = k
				break
			}
			w := swar.Word(s, j)
			m := stringStops(w)
			l := len(buf)
			buf = binary.LittleEndian.AppendUint64(buf, w)
			if m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				buf = buf[:l+k]
				j += k
				break
			}
			j += 8
		}
	}
}

// fastSpace returns the offset of the first byte at or after i that is
// not a blank other than "\n".
func fastSpace(s string, i int) int {
	// One compare for the byte after a compact record's value or name,
	// which is above ' ' (',', ':', '}', ']', '"', a digit, a letter).
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// fastSkipString checks the rest of the string whose opening quote is
// at s[j-1] as skipString does, and returns the offset after it.
func fastSkipString(s string, j int) (int, bool) {
	for {
		j = scanString(s, j)
		if j >= len(s) || s[j] < 0x20 {
			return 0, false
		}
		if s[j] == '"' {
			return j + 1, true
		}
		if j+1 >= len(s) {
			return 0, false
		}
		switch s[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if _, ok := hex4(s, j+2); !ok {
				return 0, false
			}
			j += 6
		default:
			return 0, false
		}
	}
}

// fastSkipNumber checks the number at s[i] as readNumber does and returns
// the offset after it.
func fastSkipNumber(s string, i int) (int, bool) {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case j < len(s) && s[j] >= '1' && s[j] <= '9':
		j = skipDigits(s, j+1)
	default:
		return 0, false
	}
	if j < len(s) && s[j] == '.' {
		d := j + 1
		if j = skipDigits(s, d); j == d {
			return 0, false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		d := j
		if j = skipDigits(s, d); j == d {
			return 0, false
		}
	}
	return j, true
}

func skipDigits(s string, j int) int {
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j
}

// fastSkip checks the value at s[i] as skipValue does and returns the
// offset after it: a member the row does not read.
func fastSkip(s string, i, depth int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch c := s[i]; c {
	case '"':
		return fastSkipString(s, i+1)
	case '{', '[':
		if depth >= fastMaxDepth {
			return 0, false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = fastSpace(s, i+1)
		if i < len(s) && s[i] == end {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(s) || s[i] != '"' {
					return 0, false
				}
				if i, ok = fastSkipString(s, i+1); !ok {
					return 0, false
				}
				if i = fastSpace(s, i); i >= len(s) || s[i] != ':' {
					return 0, false
				}
				i = fastSpace(s, i+1)
			}
			if i, ok = fastSkip(s, i, depth+1); !ok {
				return 0, false
			}
			if i = fastSpace(s, i); i >= len(s) {
				return 0, false
			}
			switch s[i] {
			case ',':
				i = fastSpace(s, i+1)
			case end:
				return i + 1, true
			default:
				return 0, false
			}
		}
	case 't':
		return literal(s, i, "true")
	case 'f':
		return literal(s, i, "false")
	case 'n':
		return literal(s, i, "null")
	}
	return fastSkipNumber(s, i)
}

func literal(s string, i int, word string) (int, bool) {
	if len(s)-i >= len(word) && s[i:i+len(word)] == word {
		return i + len(word), true
	}
	return 0, false
}

// fastInt reads the integer at s[i], a JSON number without a fraction or
// an exponent of 1 to 18 digits (which cannot overflow), and returns the
// offset after it: up to 7 digits a word at a time, and the first 8 of a
// longer one (a price, an id, a time in milliseconds). ok is false for
// any other value: the general path reads it (an error, a fraction, a
// longer number).
func fastInt(s string, i int) (n int64, end int, ok bool) {
	j := i
	neg := j < len(s) && s[j] == '-'
	if neg {
		j++
	}
	d := j // the first digit
	if j+8 <= len(s) {
		x := swar.Word(s, j) - '0'*swar.LSB
		if k := swar.FirstByte(swar.NonDigits(x)); k > 0 && (k == 1 || s[j] != '0') {
			if k < 8 {
				if e := j + k; s[e] != '.' && s[e] != 'e' && s[e] != 'E' {
					n = int64(swar.EightDigits(x, k))
					if neg {
						n = -n
					}
					return n, e, true
				}
				return 0, 0, false
			}
			// Eight digits: the rest one by one below.
			n, j = int64(swar.EightDigits(x, 8)), j+8
		}
	}
	if j == d && j < len(s) && s[j] == '0' {
		j++
	} else {
		for j < len(s) {
			c := s[j] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int64(c)
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

// fastKey is a member's `"name":` as written without escapes and without
// blanks, which a member that starts with it names: two words compared
// for a name of up to 13 bytes (text of up to 16).
type fastKey struct {
	text string // "" when the name needs escaping: never matched so
	// The text is its first word (masked to its length when shorter
	// than a word) and the word ending at off (the same word then).
	w0, w1 uint64
	m0     uint64
	off    int
	short  bool // the text is 16 bytes or shorter
}

func newFastKey(name string) fastKey {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return fastKey{}
		}
	}
	k := fastKey{text: `"` + name + `":`}
	n := len(k.text)
	if k.short = n <= 16; !k.short {
		return k
	}
	var buf [16]byte
	copy(buf[:], k.text)
	k.w0 = binary.LittleEndian.Uint64(buf[:8])
	k.m0 = ^uint64(0)
	if n < 8 {
		k.m0 = 1<<(8*n) - 1
	} else {
		k.off = n - 8
	}
	k.w1 = binary.LittleEndian.Uint64(buf[k.off : k.off+8])
	if n < 8 {
		k.w1 = k.w0
	}
	return k
}

// at reports whether s[i:] starts with k's text, for a text of up to 16
// bytes not too near the end of s; false says nothing else (the caller
// then reads the member's name).
func (k *fastKey) at(s string, i int) bool {
	return k.short && i+16 <= len(s) && swar.Word(s, i)&k.m0 == k.w0 && swar.Word(s, i+k.off)&k.m0 == k.w1
}
