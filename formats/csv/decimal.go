package csv

// pow10 are the powers of ten an int64 holds.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// shortDecimal reads the commonest form of a DECIMAL(precision, scale)
// of up to 18 digits: an optional sign, digits, and a point with 1 to
// scale digits after it, into its unscaled value, as
// row.ParseDecimal128 does, without ParseText's look for an exponent and
// its cut at the point. It reports false for any other text (an
// exponent, more fraction digits than the scale, a value the precision
// does not hold, ...), which ParseText then reads or refuses.
func shortDecimal(s string, precision, scale int) (int64, bool) {
	if precision > 18 || scale > precision {
		return 0, false
	}
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	var u int64
	n := 0 // digits before the point
	for ; n < len(s); n++ {
		c := s[n] - '0'
		if c > 9 {
			break
		}
		u = u*10 + int64(c)
		if n+1+scale > 18 {
			// The scaled value may not fit an int64: ParseText.
			return 0, false
		}
	}
	if n == 0 {
		return 0, false
	}
	frac := 0
	if n < len(s) {
		if s[n] != '.' {
			return 0, false
		}
		f := s[n+1:]
		if len(f) == 0 || len(f) > scale {
			return 0, false
		}
		for j := 0; j < len(f); j++ {
			c := f[j] - '0'
			if c > 9 {
				return 0, false
			}
			u = u*10 + int64(c)
		}
		frac = len(f)
	}
	u *= pow10[scale-frac]
	if u >= pow10[precision] {
		return 0, false
	}
	if neg {
		u = -u
	}
	return u, true
}
