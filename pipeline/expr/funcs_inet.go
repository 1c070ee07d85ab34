package expr

import (
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// INET_ATON, INET_NTOA, IS_DECIMAL and CURRENT_DATABASE of Flink 2.3,
// with the NULL rules of its implementations: a text that is no IPv4
// address, or a number out of IPv4's range, is NULL, never an error.

func init() {
	register(map[string]*funcDef{
		"INET_ATON":        {min: 1, max: 1, build: buildInetAton},
		"INET_NTOA":        {min: 1, max: 1, build: buildInetNtoa},
		"IS_DECIMAL":       {min: 1, max: 1, build: buildIsDecimal},
		"CURRENT_DATABASE": {min: 0, max: 0, build: buildCurrentDatabase},
	})
}

// inetAton reads an IPv4 address as MySQL does: a.b.c.d, and the short
// forms a (the 32-bit number), a.b (a.0.0.b) and a.b.c (a.b.0.c); each
// part decimal (leading zeros too). ok is false for anything else.
func inetAton(s string) (int64, bool) {
	var parts [4]int64
	n := 0
	for _, p := range strings.Split(s, ".") {
		if n == 4 || p == "" {
			return 0, false
		}
		var v int64
		for i := 0; i < len(p); i++ {
			c := p[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
			if v > 0xFFFFFFFF {
				return 0, false
			}
		}
		parts[n] = v
		n++
	}
	for i := 1; i < n; i++ {
		if parts[0] > 255 || parts[i] > 255 {
			return 0, false
		}
	}
	switch n {
	case 1:
		return parts[0], true
	case 2:
		return parts[0]<<24 | parts[1], true
	case 3:
		return parts[0]<<24 | parts[1]<<16 | parts[2], true
	}
	return parts[0]<<24 | parts[1]<<16 | parts[2]<<8 | parts[3], true
}

// buildInetAton is INET_ATON(s): BIGINT, NULL for an empty or invalid
// address.
func buildInetAton(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn1(e, row.Type{ID: row.BigInt}, args[0], func(s row.Value) (row.Value, error) {
		v, ok := inetAton(s.Str())
		if !ok {
			return row.NullValue, nil
		}
		return row.BigIntValue(v), nil
	})
}

// buildInetNtoa is INET_NTOA(n): the dotted address of n, NULL outside
// 0 to 4294967295 (a negative INT too: Flink 2.3 reads it signed).
func buildInetNtoa(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "an integer", isInteger); err != nil {
		return nil, err
	}
	return c.fn1(e, row.Type{ID: row.String}, args[0], func(x row.Value) (row.Value, error) {
		n := x.Int64()
		if n < 0 || n > 0xFFFFFFFF {
			return row.NullValue, nil
		}
		b := make([]byte, 0, 15)
		for shift := 24; shift >= 0; shift -= 8 {
			b = strconv.AppendInt(b, (n>>shift)&0xFF, 10)
			if shift > 0 {
				b = append(b, '.')
			}
		}
		return row.StringValue(string(b)), nil
	})
}

// buildIsDecimal is IS_DECIMAL(x): whether x is a text Java reads as a
// number (Integer.parseInt, Long.parseLong or Double.parseDouble:
// surrounding blanks, an exponent, NaN, Infinity, a hexadecimal float and
// a trailing d or f all pass); FALSE for NULL and the empty text. As
// Flink's code hands it the argument: an integer or a FLOAT or DOUBLE is
// TRUE, also when NULL (Flink passes a NULL number as its primitive
// default, a number); a DECIMAL is FALSE (Flink's DecimalData is no
// Java number). The result is never NULL.
func buildIsDecimal(c *compiler, e *sql.Call, args []*node) (*node, error) {
	a := args[0]
	if !isStringy(a.t) && !a.t.ID.Numeric() {
		return nil, argError(e, 0, args, "a STRING or a number")
	}
	numeric, decimal := a.t.ID.Numeric() && a.t.ID != row.Decimal, a.t.ID == row.Decimal
	ev := a.eval
	f := func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		switch {
		case err != nil:
			return row.NullValue, err
		case numeric || decimal:
			return boolOf(numeric), nil
		case v.IsNull():
			return boolOf(false), nil
		}
		return boolOf(javaParsesNumber(v.Str())), nil
	}
	return c.finish(e, row.Type{ID: row.Boolean, NotNull: true}, f, a)
}

// javaParsesNumber reports whether Java's Long.parseLong or
// Double.parseDouble takes s.
func javaParsesNumber(s string) bool {
	if s == "" {
		return false
	}
	if javaLongText(s) {
		return true
	}
	// Double.parseDouble trims every character at or below ' '.
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "NaN" || s == "Infinity" {
		return true
	}
	if n := len(s); n > 0 && strings.IndexByte("fFdD", s[n-1]) >= 0 {
		s = s[:n-1]
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return javaHexFloat(s[2:])
	}
	mant, exp, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp, hasExp = s[:i], s[i+1:], true
	}
	if hasExp && !signedDigits(exp) {
		return false
	}
	whole, frac, _ := strings.Cut(mant, ".")
	return (whole != "" || frac != "") && allDigits(whole) && allDigits(frac)
}

// javaLongText reports whether Long.parseLong takes s: a sign, then
// decimal digits, within 64 bits. Java's digits are every decimal digit
// of the Basic Multilingual Plane (Character.digit: '١٢٣' is 123).
func javaLongText(s string) bool {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return true
	}
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var v uint64
	for _, r := range s {
		d, ok := javaDigit(r)
		if !ok || v > (limit-uint64(d))/10 {
			return false
		}
		v = v*10 + uint64(d)
	}
	return s != ""
}

// javaDigit is Character.digit(r, 10) for a character of the Basic
// Multilingual Plane: Unicode's decimal digits come in runs of ten from
// their zero.
func javaDigit(r rune) (int, bool) {
	if r >= 0x10000 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10, true
		}
	}
	return 0, false
}

// javaHexFloat is the part after 0x of Java's hexadecimal float:
// hex digits with an optional point, then p and a signed exponent.
func javaHexFloat(s string) bool {
	mant, exp, ok := strings.Cut(strings.ToLower(s), "p")
	if !ok || !signedDigits(exp) {
		return false
	}
	whole, frac, _ := strings.Cut(mant, ".")
	hex := func(x string) bool {
		for i := 0; i < len(x); i++ {
			if !strings.ContainsRune("0123456789abcdef", rune(x[i])) {
				return false
			}
		}
		return true
	}
	return (whole != "" || frac != "") && hex(whole) && hex(frac)
}

func signedDigits(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && allDigits(s)
}

// buildCurrentDatabase is CURRENT_DATABASE(): the name of Flink's
// default database, which every etld table is in.
func buildCurrentDatabase(c *compiler, e *sql.Call, args []*node) (*node, error) {
	return constNode(e, row.Type{ID: row.String, NotNull: true}, row.StringValue("default_database")), nil
}
