package row

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// Int128 is a two's-complement 128-bit integer: the unscaled value of a
// DECIMAL of up to 38 digits (10^38 < 2^127). A Value keeps a DECIMAL
// whose unscaled value fits an int64 inline, as before; only wider ones
// use the high word (see Decimal128Value).
type Int128 struct {
	Hi int64
	Lo uint64
}

// Int128Of widens v.
func Int128Of(v int64) Int128 { return Int128{Hi: v >> 63, Lo: uint64(v)} }

// IsInt64 reports whether x fits an int64.
func (x Int128) IsInt64() bool { return x.Hi == int64(x.Lo)>>63 }

// Sign is -1, 0 or 1.
func (x Int128) Sign() int {
	switch {
	case x.Hi < 0:
		return -1
	case x.Hi == 0 && x.Lo == 0:
		return 0
	}
	return 1
}

// Neg is -x, wrapping at -2^127 as two's complement does.
func (x Int128) Neg() Int128 {
	lo, borrow := bits.Sub64(0, x.Lo, 0)
	hi, _ := bits.Sub64(0, uint64(x.Hi), borrow)
	return Int128{Hi: int64(hi), Lo: lo}
}

// Add is x + y, wrapping modulo 2^128.
func (x Int128) Add(y Int128) Int128 {
	lo, carry := bits.Add64(x.Lo, y.Lo, 0)
	hi, _ := bits.Add64(uint64(x.Hi), uint64(y.Hi), carry)
	return Int128{Hi: int64(hi), Lo: lo}
}

// Cmp compares x and y.
func (x Int128) Cmp(y Int128) int {
	switch {
	case x.Hi < y.Hi:
		return -1
	case x.Hi > y.Hi:
		return 1
	case x.Lo < y.Lo:
		return -1
	case x.Lo > y.Lo:
		return 1
	}
	return 0
}

// magnitude is |x| as an unsigned 128-bit hi:lo (|-2^127| fits).
func (x Int128) magnitude() (hi, lo uint64) {
	if x.Hi < 0 {
		x = x.Neg()
	}
	return uint64(x.Hi), x.Lo
}

// Big sets z to x and returns z.
func (x Int128) Big(z *big.Int) *big.Int {
	hi, lo := x.magnitude()
	var w [2]big.Word
	if bits.UintSize == 64 {
		w[0], w[1] = big.Word(lo), big.Word(hi)
		z.SetBits(w[:])
	} else {
		z.SetUint64(hi)
		z.Lsh(z, 64)
		z.Or(z, new(big.Int).SetUint64(lo))
	}
	if x.Hi < 0 {
		z.Neg(z)
	}
	return z
}

// Int128FromBig converts b; ok is false when b needs more than 128 bits.
func Int128FromBig(b *big.Int) (Int128, bool) {
	if b.BitLen() > 127 {
		return Int128{}, false
	}
	m := new(big.Int).Abs(b)
	lo := m.Uint64()
	hi := m.Rsh(m, 64).Uint64()
	x := Int128{Hi: int64(hi), Lo: lo}
	if b.Sign() < 0 {
		x = x.Neg()
	}
	return x, true
}

// pow10x128 holds 10^0 .. 10^38 as unsigned 128-bit hi:lo pairs.
var pow10x128 = func() (t [MaxDecimalPrecision + 1][2]uint64) {
	t[0] = [2]uint64{0, 1}
	for i := 1; i < len(t); i++ {
		h, l := bits.Mul64(t[i-1][1], 10)
		t[i] = [2]uint64{t[i-1][0]*10 + h, l}
	}
	return t
}()

// DigitsFit reports whether |x| has at most p decimal digits.
func (x Int128) DigitsFit(p int) bool {
	if p >= len(pow10x128) {
		return true
	}
	hi, lo := x.magnitude()
	ph, pl := pow10x128[p][0], pow10x128[p][1]
	return hi < ph || (hi == ph && lo < pl)
}

// appendMagnitude128 appends the decimal digits of |x|, without
// allocating: two divisions by 10^19 split 128 bits into at most three
// 19-digit chunks.
func appendMagnitude128(dst []byte, x Int128) []byte {
	hi, lo := x.magnitude()
	if hi == 0 {
		return appendUint(dst, lo)
	}
	const e19 = 10_000_000_000_000_000_000
	// hi:lo = q*10^19 + r0, q = qh:ql.
	qh := hi / e19
	ql, r0 := bits.Div64(hi%e19, lo, e19)
	var r1 uint64
	if qh != 0 {
		// q = top*10^19 + r1; top < 10^19 since 2^128 < 10^39.
		var top uint64
		top, r1 = bits.Div64(qh, ql, e19)
		dst = appendUint(dst, top)
		dst = appendPadded(dst, r1)
	} else {
		dst = appendUint(dst, ql)
	}
	return appendPadded(dst, r0)
}

func appendUint(dst []byte, u uint64) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}

// appendPadded appends u as exactly 19 digits.
func appendPadded(dst []byte, u uint64) []byte {
	var b [19]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return append(dst, b[:]...)
}

// wideHi holds the 8-byte encodings of the high words -512..511, so that
// a DECIMAL up to about ±9.4·10^21 (99999999.99², say) is built without
// allocating; wider ones allocate their 8 bytes.
const wideHiSpan = 512

var wideHi = func() string {
	b := make([]byte, 0, 2*wideHiSpan*8)
	for h := -wideHiSpan; h < wideHiSpan; h++ {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(h)))
	}
	return string(b)
}()

func hiString(h int64) string {
	if h >= -wideHiSpan && h < wideHiSpan {
		i := (h + wideHiSpan) * 8
		return wideHi[i : i+8]
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(h))
	return string(b[:])
}
