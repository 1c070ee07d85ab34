package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// java.util.Formatter's format strings, for PRINTF: the conversions b B
// s S c C d o x X e E f g G % n with their flags (- # + space 0 , ( ),
// width, precision and argument indexes (2$, <), in Locale.US. An error
// is what Java throws (a bad spec, an argument of the wrong kind, one
// missing). %h, %a and %t (date and time) are not supported: an error.

// jarg is an argument as PRINTF's Java code sees it.
type jarg struct {
	kind jkind
	i    int64   // jInt
	bits int     // jInt: 8, 16, 32 or 64 (Byte, Short, Integer, Long)
	f    float64 // jFloat, jDouble
	s    string  // jBool ("true", "false"), jString, jOther: toString
}

type jkind int

const (
	jNull jkind = iota
	jBool
	jInt
	jFloat
	jDouble
	jString
	jOther // an object %s prints (a DECIMAL, a TIMESTAMP) and no number conversion takes
)

// maxFormatWidth bounds a width or precision: Java would try to build
// the string (and fail for want of memory); etld refuses it.
const maxFormatWidth = 1 << 20

var errFormat = errors.New("format")

// errUnsupported marks a conversion etld does not do, unlike a format
// Java refuses (PRINTF's NULL).
var errUnsupported = errors.New("not supported by etld's PRINTF")

func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errFormat}, a...)...)
}

// javaFormat is String.format(Locale.US, f, args...).
func javaFormat(f string, args []jarg) (string, error) {
	var b strings.Builder
	ordinary, last := 0, -1
	for i := 0; i < len(f); {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			i++
			continue
		}
		sp, n, err := parseSpec(f[i:])
		if err != nil {
			return "", err
		}
		i += n
		switch sp.conv {
		case '%':
			if sp.flags&^fMinus != 0 || sp.prec >= 0 {
				return "", formatErr("illegal flags or precision for %%")
			}
			b.WriteString(justify(sp, "%"))
			continue
		case 'n':
			if sp.flags != 0 || sp.width >= 0 || sp.prec >= 0 {
				return "", formatErr("illegal flags, width or precision for %%n")
			}
			b.WriteByte('\n')
			continue
		}
		var a jarg
		switch {
		case sp.index == -1: // <
			if last < 0 {
				return "", formatErr("missing format argument for %%<%c", sp.conv)
			}
			a = args[last]
		case sp.index > 0:
			if sp.index > len(args) {
				return "", formatErr("missing format argument %d$", sp.index)
			}
			last = sp.index - 1
			a = args[last]
		default:
			if ordinary >= len(args) {
				return "", formatErr("missing format argument for %%%c", sp.conv)
			}
			last = ordinary
			a = args[ordinary]
			ordinary++
		}
		out, err := formatOne(sp, a)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
	}
	return b.String(), nil
}

const (
	fMinus = 1 << iota
	fSharp
	fPlus
	fSpace
	fZero
	fComma
	fParen
)

type spec struct {
	index       int // 0: the next ordinary argument; -1: the previous (<)
	flags       int
	width, prec int // -1 when absent
	conv        byte
	upper       bool
}

// parseSpec reads the specifier at s[0] == '%'; n is its length.
func parseSpec(s string) (sp spec, n int, err error) {
	sp = spec{width: -1, prec: -1}
	i := 1
	digits := func() (int, bool) {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			return 0, false
		}
		v, err := strconv.Atoi(s[i:j])
		if err != nil || v > maxFormatWidth {
			v = -2
		}
		i = j
		return v, true
	}
	// An argument index is digits followed by $; digits alone are the width.
	start := i
	if v, ok := digits(); ok && i < len(s) && s[i] == '$' {
		if v <= 0 {
			return sp, 0, formatErr("illegal argument index")
		}
		sp.index = v
		i++
	} else {
		i = start
	}
	for ; i < len(s); i++ {
		var f int
		switch s[i] {
		case '-':
			f = fMinus
		case '#':
			f = fSharp
		case '+':
			f = fPlus
		case ' ':
			f = fSpace
		case '0':
			f = fZero
		case ',':
			f = fComma
		case '(':
			f = fParen
		case '<':
			if sp.index != 0 {
				return sp, 0, formatErr("duplicate argument index")
			}
			sp.index = -1
			continue
		}
		if f == 0 {
			break
		}
		if sp.flags&f != 0 {
			return sp, 0, formatErr("duplicate flag %q", s[i])
		}
		sp.flags |= f
	}
	if v, ok := digits(); ok {
		if v < 0 {
			return sp, 0, formatErr("width too large (etld allows %d)", maxFormatWidth)
		}
		sp.width = v
	}
	if i < len(s) && s[i] == '.' {
		i++
		v, ok := digits()
		if !ok {
			return sp, 0, formatErr("precision missing after '.'")
		}
		if v < 0 {
			return sp, 0, formatErr("precision too large (etld allows %d)", maxFormatWidth)
		}
		sp.prec = v
	}
	if i >= len(s) {
		return sp, 0, formatErr("unknown format conversion at the end")
	}
	c := s[i]
	switch c {
	case 'B', 'S', 'C', 'X', 'E', 'G':
		sp.upper, c = true, c+'a'-'A'
	case 't', 'T', 'h', 'H', 'a', 'A':
		return sp, 0, fmt.Errorf("conversion %%%c is %w (dates and times: DATE_FORMAT; hash codes and hexadecimal floats: none)", c, errUnsupported)
	}
	if strings.IndexByte("bscdoxefg%n", c) < 0 {
		return sp, 0, formatErr("unknown format conversion %q", s[i])
	}
	sp.conv = c
	if sp.flags&fMinus != 0 && sp.width < 0 || sp.flags&fZero != 0 && sp.width < 0 && c != '%' {
		return sp, 0, formatErr("missing format width")
	}
	if sp.flags&fMinus != 0 && sp.flags&fZero != 0 || sp.flags&fPlus != 0 && sp.flags&fSpace != 0 {
		return sp, 0, formatErr("illegal flag combination")
	}
	return sp, i + 1, nil
}

// justify pads s to the width with spaces, on the right with '-'.
func justify(sp spec, s string) string {
	if sp.upper {
		s = strings.ToUpper(s)
	}
	n := int(javaLength(s)) // Java counts UTF-16 units
	if sp.width <= n {
		return s
	}
	pad := strings.Repeat(" ", sp.width-n)
	if sp.flags&fMinus != 0 {
		return s + pad
	}
	return pad + s
}

// text is a general conversion's text: precision cuts it (to UTF-16
// units, as Java's substring; half a pair becomes '?').
func text(sp spec, s string) string {
	if sp.prec >= 0 && int64(sp.prec) < javaLength(s) {
		s = javaUnitsString(javaUnits(s)[:sp.prec])
	}
	return justify(sp, s)
}

func formatOne(sp spec, a jarg) (string, error) {
	switch sp.conv {
	case 'b':
		if sp.flags&^fMinus != 0 {
			return "", formatErr("flags mismatch for %%b")
		}
		v := "true"
		switch a.kind {
		case jNull:
			v = "false"
		case jBool:
			v = a.s
		}
		return text(sp, v), nil
	case 's':
		if sp.flags&^fMinus != 0 {
			return "", formatErr("flags mismatch for %%s")
		}
		return text(sp, a.str()), nil
	}
	if a.kind == jNull {
		// Java prints null for any conversion but %b, cut and padded.
		if sp.conv == 'c' && sp.prec >= 0 {
			return "", formatErr("illegal precision for %%c")
		}
		return text(sp, "null"), nil
	}
	switch sp.conv {
	case 'c':
		if sp.prec >= 0 || sp.flags&^fMinus != 0 {
			return "", formatErr("illegal precision or flags for %%c")
		}
		if a.kind != jInt || a.bits > 32 || a.i < 0 || a.i > 0x10FFFF {
			return "", formatErr("%%c needs a character code, not %s", a.str())
		}
		return justify(sp, string(rune(a.i))), nil
	case 'd', 'o', 'x':
		if a.kind != jInt {
			return "", formatErr("%%%c needs an integer, not %s", sp.conv, a.str())
		}
		if sp.prec >= 0 {
			return "", formatErr("illegal precision for %%%c", sp.conv)
		}
		return formatInt(sp, a)
	case 'e', 'f', 'g':
		if a.kind != jFloat && a.kind != jDouble {
			return "", formatErr("%%%c needs a FLOAT or DOUBLE, not %s", sp.conv, a.str())
		}
		return formatFloat(sp, a.f)
	}
	return "", formatErr("unknown conversion")
}

// str is the argument's toString.
func (a jarg) str() string {
	switch a.kind {
	case jNull:
		return "null"
	case jInt:
		return strconv.FormatInt(a.i, 10)
	case jFloat:
		return row.FloatValue(float32(a.f)).String()
	case jDouble:
		return row.DoubleValue(a.f).String()
	}
	return a.s
}

// withSign puts the sign (and the parentheses of '(') around a magnitude,
// zero-padded to the width with '0'.
func withSign(sp spec, neg bool, prefix, mag string) string {
	lead, trail := "", ""
	switch {
	case neg && sp.flags&fParen != 0:
		lead, trail = "(", ")"
	case neg:
		lead = "-"
	case sp.flags&fPlus != 0:
		lead = "+"
	case sp.flags&fSpace != 0:
		lead = " "
	}
	lead += prefix
	if sp.flags&fZero != 0 {
		if n := sp.width - len(lead) - len(mag) - len(trail); n > 0 {
			mag = strings.Repeat("0", n) + mag
		}
	}
	return justify(sp, lead+mag+trail)
}

// group puts ',' between each three digits of an integer part.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func formatInt(sp spec, a jarg) (string, error) {
	if sp.conv == 'd' {
		if sp.flags&fSharp != 0 {
			return "", formatErr("flags mismatch for %%d")
		}
		neg := a.i < 0
		mag := strconv.FormatUint(absU(a.i), 10)
		if sp.flags&fComma != 0 {
			mag = group(mag)
		}
		return withSign(sp, neg, "", mag), nil
	}
	if sp.flags&(fPlus|fSpace|fComma|fParen) != 0 {
		return "", formatErr("flags mismatch for %%%c", sp.conv)
	}
	u := uint64(a.i)
	if a.bits < 64 {
		u &= 1<<a.bits - 1 // Java's two's complement of the type's width
	}
	base, prefix := 16, "0x"
	if sp.conv == 'o' {
		base, prefix = 8, "0"
	}
	if sp.flags&fSharp == 0 {
		prefix = ""
	}
	return withSign(sp, false, prefix, strconv.FormatUint(u, base)), nil
}

func absU(i int64) uint64 {
	if i < 0 {
		return uint64(-i)
	}
	return uint64(i)
}

// javaDigits is the shortest decimal digits of f (Double.toString's or
// Float.toString's) and the exponent of the first: f = 0.d1d2... * 10^exp.
// Java's Formatter rounds these digits, half up, never f's exact value.
func javaDigits(f float64, bits int) (string, int) {
	s := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "0", 1
	}
	return digits, e + 1
}

// roundDigits rounds digits, half up, (0.d1d2... * 10^exp) to keep n digits after
// the decimal point (n may be negative); it returns the new digits and
// exponent.
func roundDigits(digits string, exp, n int) (string, int) {
	keep := exp + n // digits to keep
	if keep >= len(digits) {
		return digits, exp
	}
	if keep < 0 {
		return "0", exp
	}
	up := digits[keep] >= '5'
	d := []byte(digits[:keep])
	if up {
		i := len(d) - 1
		for ; i >= 0; i-- {
			if d[i] < '9' {
				d[i]++
				break
			}
			d[i] = '0'
		}
		if i < 0 {
			d = append([]byte{'1'}, d...)
			exp++
		}
	}
	s := strings.TrimRight(string(d), "0")
	if s == "" {
		return "0", exp
	}
	return s, exp
}

// fixed writes digits (0.d1d2... * 10^exp) with prec digits after the
// point.
func fixed(digits string, exp, prec int, comma bool) string {
	var intPart, frac string
	if digits == "0" {
		intPart = "0"
	} else if exp <= 0 {
		intPart = "0"
		frac = strings.Repeat("0", -exp) + digits
	} else if exp >= len(digits) {
		intPart = digits + strings.Repeat("0", exp-len(digits))
	} else {
		intPart, frac = digits[:exp], digits[exp:]
	}
	if comma {
		intPart = group(intPart)
	}
	if len(frac) < prec {
		frac += strings.Repeat("0", prec-len(frac))
	}
	frac = frac[:prec]
	if prec == 0 {
		return intPart
	}
	return intPart + "." + frac
}

// sci writes digits as d.ddd e+XX with prec digits after the point.
func sci(digits string, exp, prec int) string {
	m := digits[:1]
	rest := digits[1:]
	if len(rest) < prec {
		rest += strings.Repeat("0", prec-len(rest))
	}
	if prec > 0 {
		m += "." + rest[:prec]
	}
	e := exp - 1
	if digits == "0" {
		e = 0
	}
	sign := "+"
	if e < 0 {
		sign, e = "-", -e
	}
	es := strconv.Itoa(e)
	if len(es) < 2 {
		es = "0" + es
	}
	return m + "e" + sign + es
}

func formatFloat(sp spec, f float64) (string, error) {
	c := sp.conv
	if c == 'e' && sp.flags&fComma != 0 || c == 'g' && sp.flags&fSharp != 0 {
		return "", formatErr("flags mismatch for %%%c", c)
	}
	neg := math.Signbit(f) && !math.IsNaN(f)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		s := "NaN"
		if math.IsInf(f, 0) {
			s = "Infinity"
			if neg && sp.flags&fParen != 0 {
				s = "(Infinity)"
			} else if neg {
				s = "-Infinity"
			} else if sp.flags&fPlus != 0 {
				s = "+Infinity"
			} else if sp.flags&fSpace != 0 {
				s = " Infinity"
			}
		}
		return justify(sp, s), nil
	}
	prec := sp.prec
	if prec < 0 {
		prec = 6
	}
	digits, exp := javaDigits(math.Abs(f), 64)
	var mag string
	switch c {
	case 'f':
		d, e := roundDigits(digits, exp, prec)
		mag = fixed(d, e, prec, sp.flags&fComma != 0)
		if prec == 0 && sp.flags&fSharp != 0 {
			mag += "."
		}
	case 'e':
		d, e := roundDigits(digits, exp, prec+1-exp)
		mag = sci(d, e, prec)
		if prec == 0 && sp.flags&fSharp != 0 {
			mag = strings.Replace(mag, "e", ".e", 1)
		}
	case 'g':
		if prec == 0 {
			prec = 1
		}
		if digits == "0" {
			mag = fixed("0", 1, prec-1, sp.flags&fComma != 0)
			break
		}
		d, e := roundDigits(digits, exp, prec-exp)
		if x := e - 1; x >= -4 && x < prec {
			mag = fixed(d, e, prec-e, sp.flags&fComma != 0)
		} else {
			mag = sci(d, e, prec-1)
		}
	}
	return withSign(sp, neg, "", mag), nil
}
