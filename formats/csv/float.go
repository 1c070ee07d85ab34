package csv

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// shortFloat parses the commonest form of a DOUBLE: digits, a sign and a
// decimal point allowed, at most 15 digits. The digits as an integer and
// the power of ten that places the point are then exact float64s, and
// IEEE division rounds their quotient correctly: the value
// strconv.ParseFloat returns, without its general reader (exponents,
// underscores, hex, inf), which costs more than the division. It reports
// false for any other text, which ParseFloat then reads.
func shortFloat(s string) (float64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) == 0 || len(s) > 16 {
		return 0, false
	}
	var m uint64
	digits, point := 0, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' && point < 0 {
			point = i
			continue
		}
		if c -= '0'; c > 9 {
			return 0, false
		}
		m = m*10 + uint64(c)
		digits++
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(m)
	if point >= 0 {
		f /= exactPow10[len(s)-point-1]
	}
	if neg {
		f = -f
	}
	return f, true
}
