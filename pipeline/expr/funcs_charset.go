package expr

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// ENCODE(s, charset) and DECODE(b, charset) of Flink 2.3: Java's
// String.getBytes(charset) and new String(bytes, charset). A character
// the charset cannot hold becomes '?', bytes that are no character of it
// U+FFFD. etld knows the charsets every Java has (US-ASCII, ISO-8859-1,
// UTF-8, UTF-16, UTF-16BE, UTF-16LE) and UTF-32; any other name fails,
// as a name Java does not know fails Flink's job: at validation when it
// is a constant.

func init() {
	register(map[string]*funcDef{
		"ENCODE": {min: 2, max: 2, build: buildEncode},
		"DECODE": {min: 2, max: 2, build: buildDecode},
	})
}

// charset is one of the charsets etld encodes and decodes.
type charset int

const (
	csASCII charset = iota
	csLatin1
	csUTF8
	csUTF16 // big-endian, written with a byte-order mark, read after one
	csUTF16BE
	csUTF16LE
	csUTF32
	csUTF32BE
	csUTF32LE
)

// charsetNames are Java's canonical names and aliases of them, in upper
// case (Java compares them so).
var charsetNames = map[string]charset{
	"US-ASCII": csASCII, "ASCII": csASCII, "ISO646-US": csASCII, "ISO_646.IRV:1991": csASCII, "646": csASCII, "US": csASCII,
	"IBM367": csASCII, "CP367": csASCII, "CSASCII": csASCII, "DEFAULT": csASCII, "ANSI_X3.4-1968": csASCII, "ANSI_X3.4-1986": csASCII,
	"ISO-8859-1": csLatin1, "ISO8859_1": csLatin1, "ISO8859-1": csLatin1, "ISO_8859-1": csLatin1, "ISO_8859_1": csLatin1,
	"LATIN1": csLatin1, "L1": csLatin1, "IBM819": csLatin1, "CP819": csLatin1, "CSISOLATIN1": csLatin1, "819": csLatin1,
	"IBM-819": csLatin1, "ISO_8859-1:1987": csLatin1, "8859_1": csLatin1, "ISO-IR-100": csLatin1,
	"UTF-8": csUTF8, "UTF8": csUTF8, "UNICODE-1-1-UTF-8": csUTF8,
	"UTF-16": csUTF16, "UTF16": csUTF16, "UTF_16": csUTF16, "UNICODE": csUTF16,
	"UTF-16BE": csUTF16BE, "UTF_16BE": csUTF16BE, "ISO-10646-UCS-2": csUTF16BE, "X-UTF-16BE": csUTF16BE, "UNICODEBIGUNMARKED": csUTF16BE,
	"UTF-16LE": csUTF16LE, "UTF_16LE": csUTF16LE, "X-UTF-16LE": csUTF16LE, "UNICODELITTLEUNMARKED": csUTF16LE,
	"UTF-32": csUTF32, "UTF_32": csUTF32, "UTF32": csUTF32,
	"UTF-32BE": csUTF32BE, "UTF_32BE": csUTF32BE, "X-UTF-32BE": csUTF32BE,
	"UTF-32LE": csUTF32LE, "UTF_32LE": csUTF32LE, "X-UTF-32LE": csUTF32LE,
}

func lookupCharset(name string) (charset, error) {
	cs, ok := charsetNames[strings.ToUpper(name)]
	if !ok {
		return 0, fmt.Errorf("unsupported charset %q (etld knows US-ASCII, ISO-8859-1, UTF-8, UTF-16, UTF-16BE, UTF-16LE, UTF-32, UTF-32BE, UTF-32LE)", name)
	}
	return cs, nil
}

// charsetArg reads argument i, a charset name: once when constant.
func charsetArg(e *sql.Call, args []*node, i int) (func(string) (charset, error), error) {
	a := args[i]
	if a.konst && !a.val.IsNull() {
		cs, err := lookupCharset(a.val.Str())
		if err != nil {
			return nil, errAt(a.e.Pos(), "%s: %v", e.Name, err)
		}
		return func(string) (charset, error) { return cs, nil }, nil
	}
	return lookupCharset, nil
}

// encode is Java's String.getBytes: s is UTF-8 (an invalid byte is
// U+FFFD, as Flink's strings read it).
func encode(s string, cs charset) []byte {
	var out []byte
	switch cs {
	case csUTF8:
		return []byte(strings.ToValidUTF8(s, "\uFFFD"))
	case csUTF16:
		out = append(out, 0xFE, 0xFF)
	case csUTF32:
		// Java's UTF-32 encoder writes no byte-order mark.
	}
	for _, r := range s {
		switch cs {
		case csASCII, csLatin1:
			top := rune(0x7F)
			if cs == csLatin1 {
				top = 0xFF
			}
			if r > top {
				r = '?'
			}
			out = append(out, byte(r))
		case csUTF16, csUTF16BE, csUTF16LE:
			for _, u := range utf16.AppendRune(nil, r) {
				if cs == csUTF16LE {
					out = binary.LittleEndian.AppendUint16(out, u)
				} else {
					out = binary.BigEndian.AppendUint16(out, u)
				}
			}
		case csUTF32, csUTF32BE:
			out = binary.BigEndian.AppendUint32(out, uint32(r))
		case csUTF32LE:
			out = binary.LittleEndian.AppendUint32(out, uint32(r))
		}
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

// decode is Java's new String(bytes, charset): what is no character of
// the charset becomes U+FFFD, one for each maximal ill-formed part.
func decode(b []byte, cs charset) string {
	var sb strings.Builder
	switch cs {
	case csASCII:
		for _, c := range b {
			if c > 0x7F {
				sb.WriteRune(utf8.RuneError)
				continue
			}
			sb.WriteByte(c)
		}
	case csLatin1:
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
	case csUTF8:
		decodeUTF8(&sb, b)
	case csUTF16, csUTF16BE, csUTF16LE:
		little := cs == csUTF16LE
		if cs == csUTF16 && len(b) >= 2 {
			switch {
			case b[0] == 0xFE && b[1] == 0xFF:
				b = b[2:]
			case b[0] == 0xFF && b[1] == 0xFE:
				b, little = b[2:], true
			}
		}
		units := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			if little {
				units = append(units, binary.LittleEndian.Uint16(b[i:]))
			} else {
				units = append(units, binary.BigEndian.Uint16(b[i:]))
			}
		}
		for _, r := range utf16.Decode(units) {
			sb.WriteRune(r)
		}
		if len(b)%2 == 1 {
			sb.WriteRune(utf8.RuneError)
		}
	case csUTF32, csUTF32BE, csUTF32LE:
		little := cs == csUTF32LE
		if cs == csUTF32 && len(b) >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 0xFE && b[3] == 0xFF {
			b = b[4:]
		}
		for i := 0; i+3 < len(b); i += 4 {
			var u uint32
			if little {
				u = binary.LittleEndian.Uint32(b[i:])
			} else {
				u = binary.BigEndian.Uint32(b[i:])
			}
			r := rune(u)
			if u > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
				r = utf8.RuneError
			}
			sb.WriteRune(r)
		}
		if len(b)%4 != 0 {
			sb.WriteRune(utf8.RuneError)
		}
	}
	return sb.String()
}

// decodeUTF8 writes b's characters, U+FFFD for each maximal part of an
// ill-formed sequence (a lead byte and the continuation bytes that may
// follow it), as Java's decoder replaces them.
func decodeUTF8(sb *strings.Builder, b []byte) {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			sb.Write(b[:n])
			b = b[n:]
			continue
		}
		// How many bytes of a valid sequence's start b has.
		lo, hi := byte(0x80), byte(0xBF)
		need := 0
		switch c := b[0]; {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			// A surrogate's three bytes (ED A0..BF) are one ill-formed
			// sequence to Java, not three.
			if c == 0xE0 {
				lo = 0xA0
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lo = 0x90
			} else if c == 0xF4 {
				hi = 0x8F
			}
		}
		n = 1
		for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
			lo, hi = 0x80, 0xBF
			n++
		}
		sb.WriteRune(utf8.RuneError)
		b = b[n:]
	}
}

// buildEncode is ENCODE(s, charset): BYTES, NULL when an argument is.
func buildEncode(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	cs, err := charsetArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	t := row.Type{ID: row.Bytes, NotNull: allNotNull(args...)}
	return c.fn2(e, t, args[0], args[1], func(s, name row.Value) (row.Value, error) {
		set, err := cs(name.Str())
		if err != nil {
			return row.NullValue, err
		}
		return row.BytesValue(encode(s.Str(), set)), nil
	})
}

// buildDecode is DECODE(b, charset): STRING, NULL when an argument is.
func buildDecode(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if args[0].t.ID != row.Bytes && args[0].t.ID != row.Null {
		return nil, argError(e, 0, args, "BYTES (BINARY or VARBINARY)")
	}
	if err := check(e, args, "a STRING", isStringy, 1); err != nil {
		return nil, err
	}
	cs, err := charsetArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	t := row.Type{ID: row.String, NotNull: allNotNull(args...)}
	return c.fn2(e, t, args[0], args[1], func(b, name row.Value) (row.Value, error) {
		set, err := cs(name.Str())
		if err != nil {
			return row.NullValue, err
		}
		return row.StringValue(decode([]byte(b.Str()), set)), nil
	})
}
