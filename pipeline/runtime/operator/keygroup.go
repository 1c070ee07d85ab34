package operator

import (
	"encoding/binary"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
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
// on every machine and in every run. A checkpoint's key groups depend
// on its values: they never change (keygroup_test.go pins them).
func KeyHash(b []byte) uint64 {
	const m = 0x9e3779b97f4a7c15
	n := len(b)
	h := uint64(n) * m
	i := 0
	for ; i+8 <= n; i += 8 {
		h = bits.RotateLeft64(h^binary.LittleEndian.Uint64(b[i:])*m, 31) * m
	}
	if r := n - i; r > 0 {
		// The last r bytes as a little-endian number: the top of the
		// key's last eight bytes when it has eight, read at once.
		var t uint64
		if n >= 8 {
			t = binary.LittleEndian.Uint64(b[n-8:]) >> (64 - 8*r)
		} else {
			for j, c := range b {
				t |= uint64(c) << (8 * j)
			}
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

// TableHash is the 32 bits of a KeyHash that a key table of a keyed
// worker indexes by (state.KeyTable's fixed hash): its high half, apart
// from the low bits that make the key group, which all keys of a worker
// share in part.
func TableHash(h uint64) uint32 { return uint32(h >> 32) }

// KeyGrouped is a Snapshotter whose state is keyed by the encoded key of
// its key columns, and which can therefore run as several workers (the
// runtime's Keyed): it writes its state cut in key groups, and restores
// from the groups of any number of instances. It is an Operator, or a
// TwoInput whose two inputs' keys encode alike (a regular join's).
type KeyGrouped interface {
	Lifecycle
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

// EncodedKeys are the keys of a batch's changes, encoded (row.KeyOf of
// the operator's key columns) and hashed once by the split that gave
// the batch to a keyed worker: change i's key is Bytes[Ends[i-1]:Ends[i]]
// (the first from 0) and its hash Hashes[i], TableHash of its KeyHash.
// Bytes has at least 16 bytes of capacity after its last key, so that a
// key table reads a short key's words in place. A change whose row is
// too narrow for the keys has an empty key.
type EncodedKeys struct {
	Bytes  []byte
	Ends   []int32
	Hashes []uint32
}

// Reset empties k, keeping its memory.
func (k *EncodedKeys) Reset() {
	k.Bytes, k.Ends, k.Hashes = k.Bytes[:0], k.Ends[:0], k.Hashes[:0]
}

// PreKeyed is a KeyGrouped operator that takes its keys encoded and
// hashed by its caller, so that a keyed split's work is not done again
// by the worker.
type PreKeyed interface {
	KeyGrouped
	// UseKeyHash makes the operator, before its first call, index its
	// keys by KeyHash (TableHash), the hash ProcessKeys hands it.
	UseKeyHash()
	// ProcessKeys is Process of in, whose keys are keys.
	ProcessKeys(in *row.Batch, keys *EncodedKeys, out Emitter) error
}

// OutputAtFinish is an operator that may emit nothing before Finish (a
// batch-mode aggregate), so that a keyed runtime may let its workers
// fold batches behind the caller instead of waiting for each.
type OutputAtFinish interface {
	EmitsOnlyAtFinish() bool
}

// SharedState is a KeyGrouped operator that also holds state of no key,
// which every worker has the same of (an event-time operator's
// watermark): a worker of a restored run must have it even when it
// owns no key group with state. The runtime's Keyed writes each worker's
// SnapshotShared beside the key groups, and after RestoreGroups hands
// every worker all of them.
type SharedState interface {
	KeyGrouped
	SnapshotShared() ([]byte, error)
	// RestoreShared is called after RestoreGroups with the
	// SnapshotShared of every instance whose key groups were restored
	// (of any number of workers).
	RestoreShared(parts [][]byte) error
}

// SyncedState is a SharedState operator whose shared state moves with
// the rows and timers of every key, not only its own (an interval
// join's expiration times, Flink's one approximation per operator of
// each cache's oldest row), and which decides rows by it: the runtime's
// Keyed keeps its workers' shared state what one instance's would be.
// Every worker sees each batch whole before it gets its share
// (SeeInput), and after each watermark every worker gets the shared
// state of all (SyncShared).
type SyncedState interface {
	SharedState
	// SeeInput moves the shared state over every change of in, the
	// whole batch of input input, as one instance would over them, and
	// notes for each what the share's change of it then reads
	// (ShareOrigin.InputChange names it). The next Process or
	// ProcessInput is of a share of in, or none when the worker's share
	// is empty.
	SeeInput(input int, in *row.Batch)
	// SyncShared replaces the shared state with the one instance's after
	// a watermark, from the SnapshotShared of every worker.
	SyncShared(parts [][]byte) error
}
