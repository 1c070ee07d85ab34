package json

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError is malformed JSON, at a byte offset of the record.
type SyntaxError struct {
	Offset int
	Msg    string
	// Near is the record's text from Offset on, cut short (excerpt), so
	// that the message shows what was found there; empty at its end.
	Near string
}

func (e *SyntaxError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("invalid JSON at byte %d: %s (near %q)", e.Offset, e.Msg, e.Near)
}

func syntaxErr(s string, off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...), Near: excerpt(s, off)}
}

// excerptLen is how many bytes of the record a SyntaxError shows.
const excerptLen = 24

// excerpt returns up to excerptLen bytes of s from off on, cut at a rune
// boundary, with "..." when it was cut short.
func excerpt(s string, off int) string {
	if off < 0 || off >= len(s) {
		return ""
	}
	rest := s[off:]
	if len(rest) <= excerptLen {
		return rest
	}
	end := excerptLen
	for end > 0 && !utf8.RuneStart(rest[end]) {
		end--
	}
	return rest[:end] + "..."
}

// maxDepth bounds the nesting SkipValue follows, so that a hostile record
// of a million brackets costs an error, not a deep stack.
const maxDepth = 1000

// SkipSpace returns the offset of the first non-blank byte at or after i.
func SkipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// describe names the value starting at s[i] for error messages.
func describe(s string, i int) string {
	if i >= len(s) {
		return "the end of the record"
	}
	switch c := s[i]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	// A literal is named only when it is spelled out: "not json" does not
	// start a null.
	case strings.HasPrefix(s[i:], "true") || strings.HasPrefix(s[i:], "false"):
		return "a boolean"
	case strings.HasPrefix(s[i:], "null"):
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c < 0x20 || c >= 0x7f:
		return fmt.Sprintf("byte 0x%02x", c)
	default:
		return fmt.Sprintf("%q", c)
	}
}

// ReadString reads the JSON string starting at s[i], which must be '"',
// and returns its value and the offset after the closing quote. A string
// without escapes is returned as a substring of s, without copying.
func ReadString(s string, i int) (string, int, error) {
	if i >= len(s) || s[i] != '"' {
		return "", i, syntaxErr(s, i, "expected a string, got %s", describe(s, i))
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, nil
		case c == '\\':
			return readEscaped(s, i, j)
		case c < 0x20:
			return "", j, syntaxErr(s, j, "control character 0x%02x in a string (escape it)", c)
		}
	}
	return "", len(s), syntaxErr(s, i, "unterminated string")
}

// readEscaped finishes a string whose first escape is at s[j].
func readEscaped(s string, start, j int) (string, int, error) {
	// Room for twice what comes before the first escape: s may be a
	// whole block of records (the one-pass decode's), not one.
	buf, end, err := appendUnescaped(make([]byte, 0, min(len(s)-start, max(64, 2*(j-start)))), s, start, j)
	if err != nil {
		return "", end, err
	}
	return string(buf), end, nil
}

// appendUnescaped appends the value of the string starting at s[start],
// whose first escape is at s[j], to buf: the one decoding of escapes,
// which the one-pass decode (fast.go) shares.
func appendUnescaped(buf []byte, s string, start, j int) ([]byte, int, error) {
	buf = append(buf, s[start+1:j]...)
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			return buf, j + 1, nil
		case c < 0x20:
			return buf, j, syntaxErr(s, j, "control character 0x%02x in a string (escape it)", c)
		case c != '\\':
			// The plain bytes up to the next quote, escape or control
			// character at once.
			k := scanString(s, j)
			buf = append(buf, s[j:k]...)
			j = k
			continue
		}
		if j+1 >= len(s) {
			break
		}
		if c, ok := shortEscape(s[j+1]); ok {
			buf = append(buf, c)
			j += 2
			continue
		}
		if e := s[j+1]; e != 'u' {
			return buf, j, syntaxErr(s, j, "invalid escape \\%s in a string", printable(e))
		}
		r, ok := hex4(s, j+2)
		if !ok {
			return buf, j, syntaxErr(s, j, `\u must be followed by four hex digits`)
		}
		j += 6
		if utf16.IsSurrogate(r) {
			// A pair is two escapes; a lone half is replaced, as
			// encoding/json does, rather than producing invalid UTF-8.
			if r2, ok := hex4(s, j+2); ok && j+1 < len(s) && s[j] == '\\' && s[j+1] == 'u' {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					buf = utf8.AppendRune(buf, dec)
					j += 6
					continue
				}
			}
			r = utf8.RuneError
		}
		buf = utf8.AppendRune(buf, r)
	}
	return buf, len(s), syntaxErr(s, start, "unterminated string")
}

// skipString checks the JSON string at s[i], which must be '"', as
// ReadString does (the same errors at the same offsets), without making
// its value: a skipped member's escapes cost no copy.
func skipString(s string, i int) (int, error) {
	j := i + 1
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return j, syntaxErr(s, j, "control character 0x%02x in a string (escape it)", c)
		case c != '\\':
			j++
			continue
		}
		if j+1 >= len(s) {
			break
		}
		switch e := s[j+1]; e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if _, ok := hex4(s, j+2); !ok {
				return j, syntaxErr(s, j, `\u must be followed by four hex digits`)
			}
			j += 6
		default:
			return j, syntaxErr(s, j, "invalid escape \\%s in a string", printable(e))
		}
	}
	return len(s), syntaxErr(s, i, "unterminated string")
}

func printable(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("x%02x", c)
	}
	return string(rune(c))
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// readNumber reads the JSON number at s[i] and returns its text and
// whether it has a fraction or an exponent.
func readNumber(s string, i int) (lit string, isFloat bool, end int, err error) {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case j < len(s) && s[j] >= '1' && s[j] <= '9':
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	default:
		return "", false, j, syntaxErr(s, j, "invalid number: expected a digit, got %s", describe(s, j))
	}
	if j < len(s) && s[j] == '.' {
		isFloat = true
		j++
		d := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == d {
			return "", false, j, syntaxErr(s, j, "invalid number: expected a digit after '.'")
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		isFloat = true
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		d := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == d {
			return "", false, j, syntaxErr(s, j, "invalid number: expected a digit in the exponent")
		}
	}
	return s[i:j], isFloat, j, nil
}

// readLiteral checks for the keyword word (true, false, null) at s[i].
func readLiteral(s string, i int, word string) (int, error) {
	if strings.HasPrefix(s[i:], word) {
		return i + len(word), nil
	}
	return i, syntaxErr(s, i, "invalid value: not %s, nor any other JSON value", word)
}

// SkipValue checks the JSON value at s[i] (after blanks) and returns the
// offset after it.
func SkipValue(s string, i int) (int, error) {
	return skipValue(s, SkipSpace(s, i), 0)
}

func skipValue(s string, i, depth int) (int, error) {
	if i >= len(s) {
		return i, syntaxErr(s, i, "expected a value, got the end of the record")
	}
	switch c := s[i]; {
	case c == '"':
		return skipString(s, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, syntaxErr(s, i, "nested deeper than %d levels", maxDepth)
		}
		if c == '{' {
			return walkObject(s, i, func(_ string, _, v int) (int, error) { return skipValue(s, v, depth+1) })
		}
		return skipArray(s, i, depth)
	case c == 't':
		return readLiteral(s, i, "true")
	case c == 'f':
		return readLiteral(s, i, "false")
	case c == 'n':
		return readLiteral(s, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, end, err := readNumber(s, i)
		return end, err
	}
	return i, syntaxErr(s, i, "expected a value, got %s", describe(s, i))
}

// walkArray reads the array at s[i], calling fn with the offset of each
// element (after blanks); fn consumes it and returns the offset after it.
func walkArray(s string, i int, fn func(v int) (int, error)) (int, error) {
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := fn(i)
		if err != nil {
			return end, err
		}
		i = SkipSpace(s, end)
		if i >= len(s) {
			return i, syntaxErr(s, i, "unterminated array")
		}
		switch s[i] {
		case ',':
			i = SkipSpace(s, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, syntaxErr(s, i, "expected ',' or ']' in an array, got %s", describe(s, i))
		}
	}
}

func skipArray(s string, i, depth int) (int, error) {
	return walkArray(s, i, func(v int) (int, error) { return skipValue(s, v, depth+1) })
}

// WalkObject reads the object at s[i] (after blanks). For each member it
// calls fn with the key and the offsets of the key and of the value (after
// blanks); fn consumes the value and returns the offset after it. WalkObject
// returns the offset after the closing brace.
func WalkObject(s string, i int, fn func(key string, keyPos, valuePos int) (int, error)) (int, error) {
	return walkObject(s, SkipSpace(s, i), fn)
}

func walkObject(s string, i int, fn func(key string, keyPos, valuePos int) (int, error)) (int, error) {
	if i >= len(s) || s[i] != '{' {
		return i, syntaxErr(s, i, "expected an object, got %s", describe(s, i))
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		keyPos := i
		if i >= len(s) || s[i] != '"' {
			return i, syntaxErr(s, i, "expected a quoted member name, got %s", describe(s, i))
		}
		key, end, err := ReadString(s, i)
		if err != nil {
			return end, err
		}
		i = SkipSpace(s, end)
		if i >= len(s) || s[i] != ':' {
			return i, syntaxErr(s, i, "expected ':' after member name %q, got %s", key, describe(s, i))
		}
		i = SkipSpace(s, i+1)
		if end, err = fn(key, keyPos, i); err != nil {
			return end, err
		}
		i = SkipSpace(s, end)
		if i >= len(s) {
			return i, syntaxErr(s, i, "unterminated object")
		}
		switch s[i] {
		case ',':
			i = SkipSpace(s, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, syntaxErr(s, i, "expected ',' or '}' after a member, got %s", describe(s, i))
		}
	}
}

// shortEscape is the byte a two-character escape \e stands for; false
// for \u (four hex digits follow) and for anything json does not allow.
func shortEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
