package operator

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// keyHashRef is KeyHash as first written, byte by byte: the values every
// checkpoint's key groups were cut with.
func keyHashRef(b []byte) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(b)) * m
	for len(b) >= 8 {
		h = bits.RotateLeft64(h^binary.LittleEndian.Uint64(b)*m, 31) * m
		b = b[8:]
	}
	if len(b) > 0 {
		var t uint64
		for i, c := range b {
			t |= uint64(c) << (8 * i)
		}
		h = bits.RotateLeft64(h^t*m, 31) * m
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb93fe53a2d1b
	h ^= h >> 33
	return h
}

// A key's group must never change: checkpoints are cut by it.
func TestKeyHashFixed(t *testing.T) {
	pinned := []struct {
		key  string
		want uint64
	}{
		{"", 0},
		{"\x00\x00", 0x5a2c7e42d7749470},
		{"\x0b\x00\x0csensor_12345", 0x4b3175e56d29a05b},
	}
	for _, p := range pinned {
		if got := KeyHash([]byte(p.key)); got != p.want {
			t.Errorf("KeyHash(%q) = %#x, want %#x", p.key, got, p.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if got, want := KeyHash(b), keyHashRef(b); got != want {
			t.Fatalf("KeyHash(%x) = %#x, the first version gave %#x", b, got, want)
		}
	}
}
