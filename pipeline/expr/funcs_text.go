package expr

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// String functions of Flink 2.3: STARTSWITH, ENDSWITH, HEX, BIN,
// URL_ENCODE and URL_DECODE, each NULL when an argument is; IS_ALPHA and
// IS_DIGIT, false for NULL.

func init() {
	register(map[string]*funcDef{
		"STARTSWITH": {min: 2, max: 2, build: buildAffix},
		"ENDSWITH":   {min: 2, max: 2, build: buildAffix},
		"HEX":        {min: 1, max: 1, build: buildHex},
		"BIN":        {min: 1, max: 1, build: buildBin},
		"URL_ENCODE": {min: 1, max: 1, build: buildURLCode},
		"URL_DECODE": {min: 1, max: 1, build: buildURLCode},
		"IS_ALPHA":   {min: 1, max: 1, build: buildIsClass},
		"IS_DIGIT":   {min: 1, max: 1, build: buildIsClass},
	})
}

// strictUnary makes the node of a function of one argument that is NULL
// when its argument is.
func (c *compiler) strictUnary(e *sql.Call, t row.Type, arg *node, f func(row.Value) (row.Value, error)) (*node, error) {
	ev := arg.eval
	return c.finish(e, t, func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		return f(v)
	}, arg)
}

// buildAffix is STARTSWITH(s, prefix) and ENDSWITH(s, suffix) of two
// STRINGs or two BYTES; an empty prefix is at the start of anything.
func buildAffix(c *compiler, e *sql.Call, args []*node) (*node, error) {
	bytesOrStr := func(t row.Type) bool { return t.ID == row.String || t.ID == row.Bytes || t.ID == row.Null }
	if err := check(e, args, "a STRING or BYTES", bytesOrStr); err != nil {
		return nil, err
	}
	if a, b := args[0].t.ID, args[1].t.ID; a != b && a != row.Null && b != row.Null {
		return nil, argError(e, 1, args, "of the first argument's type "+typeName(args[0].t))
	}
	has := strings.HasPrefix
	if strings.EqualFold(e.Name, "ENDSWITH") {
		has = strings.HasSuffix
	}
	se, pe := args[0].eval, args[1].eval
	return c.finish(e, row.Type{ID: row.Boolean, NotNull: allNotNull(args...)}, func(r row.Row) (row.Value, error) {
		s, err := se(r)
		if err != nil || s.IsNull() {
			return row.NullValue, err
		}
		p, err := pe(r)
		if err != nil || p.IsNull() {
			return row.NullValue, err
		}
		return row.BoolValue(has(s.Str(), p.Str())), nil
	}, args...)
}

// buildHex is HEX(x): an integer's 64-bit two's complement in upper-case
// hexadecimal (Java's Long.toHexString), a string's UTF-8 bytes.
func buildHex(c *compiler, e *sql.Call, args []*node) (*node, error) {
	a := args[0]
	switch {
	case a.t.ID.Integral(), a.t.ID == row.Null:
		return c.strictUnary(e, strType(a), a, func(v row.Value) (row.Value, error) {
			return row.StringValue(strings.ToUpper(strconv.FormatUint(uint64(v.Int64()), 16))), nil
		})
	case a.t.ID == row.String:
		return c.strictUnary(e, strType(a), a, func(v row.Value) (row.Value, error) {
			return row.StringValue(fmt.Sprintf("%X", v.Str())), nil
		})
	}
	return nil, argError(e, 0, args, "an integer or a STRING")
}

// buildBin is BIN(n): an integer's 64-bit two's complement in binary,
// without leading zeros (Java's Long.toBinaryString).
func buildBin(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "an integer", isInteger); err != nil {
		return nil, err
	}
	return c.strictUnary(e, strType(args[0]), args[0], func(v row.Value) (row.Value, error) {
		return row.StringValue(strconv.FormatUint(uint64(v.Int64()), 2)), nil
	})
}

// buildURLCode is URL_ENCODE and URL_DECODE, Java's URLEncoder and
// URLDecoder in UTF-8: a space is '+', letters, digits and ".-*_" stay,
// every other byte is %XX. A malformed escape decodes to NULL.
func buildURLCode(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t := strType(args[0])
	if strings.EqualFold(e.Name, "URL_ENCODE") {
		return c.strictUnary(e, t, args[0], func(v row.Value) (row.Value, error) { return row.StringValue(urlEncode(v.Str())), nil })
	}
	t.NotNull = false
	return c.strictUnary(e, t, args[0], func(v row.Value) (row.Value, error) {
		s, ok := urlDecode(v.Str())
		if !ok {
			return row.NullValue, nil
		}
		return row.StringValue(s), nil
	})
}

func urlEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9', strings.IndexByte(".-*_", ch) >= 0:
			b.WriteByte(ch)
		case ch == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// urlDecode is URLDecoder.decode: '+' is a space, %XX a byte; bytes that
// are not UTF-8 become U+FFFD. It reports false on a malformed escape.
func urlDecode(s string) (string, bool) {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '+':
			b.WriteByte(' ')
		case '%':
			if i+3 > len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil || s[i+1] == '+' || s[i+1] == '-' {
				return "", false
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(ch)
		}
	}
	return strings.ToValidUTF8(b.String(), string(utf8.RuneError)), true
}

// buildIsClass is IS_ALPHA(s) and IS_DIGIT(s): whether s is not empty
// and each of its UTF-16 characters a letter (a decimal digit), as
// commons-lang's StringUtils.isAlpha and isNumeric test them with
// Java's Character; false for NULL.
func buildIsClass(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	is := unicode.IsLetter
	if strings.EqualFold(e.Name, "IS_DIGIT") {
		is = unicode.IsDigit
	}
	ev := args[0].eval
	return c.finish(e, row.Type{ID: row.Boolean, NotNull: true}, func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil || v.IsNull() || v.Str() == "" {
			return row.BoolValue(false), err
		}
		for _, ch := range v.Str() {
			// A character beyond the BMP is two surrogates in Java,
			// neither a letter nor a digit.
			if ch > 0xFFFF || !is(ch) {
				return row.BoolValue(false), nil
			}
		}
		return row.BoolValue(true), nil
	}, args...)
}
