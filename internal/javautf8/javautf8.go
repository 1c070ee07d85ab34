// Package javautf8 makes text valid UTF-8 the way Java decodes bytes
// (new String(bytes, UTF_8)), which Flink runs on a STRING's bytes
// (StringData.toString) before Jackson writes it into JSON: each
// malformed sequence becomes one U+FFFD. Which bytes form one malformed
// sequence is the JDK decoder's choice (a truncated lead and the
// continuation bytes it accepted go together; a lone continuation byte, a
// lead that is never valid and a UTF-16 surrogate each stand alone or
// whole), and differs from Go's range loop, which replaces every invalid
// byte, and from strings.ToValidUTF8, which replaces every run of them.
// What is valid is the same for both.
package javautf8

import "unicode/utf8"

// Replacement is what a malformed sequence becomes.
const Replacement = "\uFFFD"

// MalformedLen returns how many bytes at the start of s Java replaces
// with one U+FFFD; s must start with a malformed sequence (utf8.DecodeRune
// gives RuneError of size 1).
func MalformedLen(s string) int {
	n := len(s)
	if n == 0 {
		return 0
	}
	b1 := s[0]
	switch {
	case b1 >= 0xE0 && b1 <= 0xEF:
		if n >= 3 {
			switch {
			case b1 == 0xE0 && s[1]&0xE0 == 0x80 || !cont(s[1]):
				return 1
			case !cont(s[2]):
				return 2
			}
			return 3 // a UTF-16 surrogate (ED A0..BF xx)
		}
		if n == 2 && (b1 == 0xE0 && s[1]&0xE0 == 0x80 || !cont(s[1])) {
			return 1
		}
		return n // a truncated sequence at the end
	case b1 >= 0xF0 && b1 <= 0xF7:
		if n > 1 && bad4second(b1, s[1]) || b1 > 0xF4 {
			return 1
		}
		if n > 2 && !cont(s[2]) {
			return 2
		}
		return min(n, 3)
	}
	// A lead of two bytes without its continuation, an overlong lead
	// (C0, C1), a continuation byte alone, or F8..FF.
	return 1
}

// bad4second reports whether b2 cannot follow the four-byte lead b1 (an
// overlong form, beyond U+10FFFF, or no continuation byte).
func bad4second(b1, b2 byte) bool {
	return b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF) || b1 == 0xF4 && b2&0xF0 != 0x80 || !cont(b2)
}

func cont(b byte) bool { return b&0xC0 == 0x80 }

// AppendValid appends s to dst with each malformed sequence replaced by
// U+FFFD as Java replaces it.
func AppendValid(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, Replacement...)
		i += MalformedLen(s[i:])
		start = i
	}
	return append(dst, s[start:]...)
}
