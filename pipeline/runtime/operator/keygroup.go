package operator

import (
	"encoding/binary"
	"math/bits"
)

// Keyed operators run as several workers, each owning the keys whose
// hash falls in its share (the runtime's Keyed). Their state is cut in
// KeyGroups key groups, Flink's max parallelism: a key belongs to group
// KeyGroupOf(key) whatever the number of workers, and a worker owns a
// contiguous range of groups (WorkerOf). A checkpoint holds the state
// group by group, so a run restored with another number of workers
// gives each its groups: the number of workers may change between runs,
// the number of groups never.

// KeyGroups is the number of key groups, the most workers a keyed
// operator can have.
const KeyGroups = 128

// KeyGroupOf returns the key group of an encoded key (row.KeyOf of the
// operator's key columns). The hash is fixed, not seeded per process:
// a key must fall in the same group in the run that restores it.
func KeyGroupOf(key []byte) int { return int(KeyHash(key) % KeyGroups) }

// WorkerOf returns which of n workers owns key group g: worker i owns
// the groups [i*KeyGroups/n, (i+1)*KeyGroups/n), as Flink assigns them.
func WorkerOf(g, n int) int { return g * n / KeyGroups }

// KeyHash is a fixed 64-bit hash of b (eight bytes at a time, with
// murmur3's finalizer): fast on the short keys of a GROUP BY, the same
// on every machine and in every run.
func KeyHash(b []byte) uint64 {
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

// KeyGrouped is a Snapshotter whose state is keyed by the encoded key of
// its key columns, and which can therefore run as several workers (the
// runtime's Keyed): it writes its state cut in key groups, and restores
// from the groups of any number of instances.
type KeyGrouped interface {
	Operator
	Snapshotter
	// SnapshotGroups encodes the state key group by key group: it calls
	// part with each group g (KeyGroupOf) that has state, in increasing
	// order, and its bytes, which are valid during the call only (so
	// that a large state is written a group at a time).
	SnapshotGroups(part func(g int, b []byte) error) error
	// RestoreGroups replaces the state with the union of parts, each a
	// part of some instance's SnapshotGroups (their keys are disjoint).
	RestoreGroups(parts [][]byte) error
}
