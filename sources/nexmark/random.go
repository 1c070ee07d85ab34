package nexmark

import "math"

// splitMix is java.util.SplittableRandom with the default gamma: the
// reference generator draws every field from one, so matching its events
// needs the same stream bit for bit.
type splitMix struct{ seed uint64 }

const goldenGamma = 0x9e3779b97f4a7c15

func newSplitMix(seed int64) splitMix { return splitMix{seed: uint64(seed)} }

func (r *splitMix) nextSeed() uint64 {
	r.seed += goldenGamma
	return r.seed
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func mix32(z uint64) int32 {
	z = (z ^ (z >> 33)) * 0x62a9d9ed799705f5
	return int32(((z ^ (z >> 28)) * 0xcb24d0a5c88c35b3) >> 32)
}

func (r *splitMix) nextInt() int32  { return mix32(r.nextSeed()) }
func (r *splitMix) nextLong() int64 { return int64(mix64(r.nextSeed())) }

// nextDouble is in [0, 1), from the top 53 bits of a long.
func (r *splitMix) nextDouble() float64 {
	return float64(uint64(r.nextLong())>>11) * (1.0 / (1 << 53))
}

// intn is SplittableRandom.nextInt(bound), bound > 0: a power of two takes
// the low bits; otherwise over-represented candidates are drawn again.
func (r *splitMix) intn(bound int32) int32 {
	v := r.nextInt()
	m := bound - 1
	if bound&m == 0 {
		return v & m
	}
	u := int32(uint32(v) >> 1)
	for {
		v = u % bound
		if u+m-v >= 0 { // int32 overflow makes this negative for a rejected u
			return v
		}
		u = int32(uint32(r.nextInt()) >> 1)
	}
}

// longn is the reference's LongGenerator.nextLong: [0, n), skewed for
// n >= 2^31-1 as there.
func (r *splitMix) longn(n int64) int64 {
	if n < math.MaxInt32 {
		return int64(r.intn(int32(n)))
	}
	v := r.nextLong() % n
	if v < 0 {
		v = -v
	}
	return v
}

// javaRound is Java's Math.round for a finite double: floor(x + 1/2)
// computed without the rounding error of adding 0.5.
func javaRound(x float64) int64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return int64(f)
}
