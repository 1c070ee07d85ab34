package state

// IntIDs is KeyIDs for keys that are one 64-bit integer (a join's BIGINT
// key): an IntIndex of the values to ids it hands out, reusing freed
// ones, so that an owner keeps per-key state in arrays by id. The
// index's slots and the values by id are mapped outside the Go heap once
// large (OffHeap), on huge pages where the kernel gives them: their
// reads are at random.
type IntIDs struct {
	mem *OffHeap
	idx IntIndex
	// keys holds each id's value, for Key and Has.
	keys []uint64
	free []int32
	next int32 // ids handed out so far
}

// NewIntIDs returns an empty table.
func NewIntIDs() *IntIDs {
	t := &IntIDs{}
	t.mem = NewOffHeap(t)
	t.idx.mem = t.mem
	return t
}

// Len is the number of keys held.
func (t *IntIDs) Len() int { return t.idx.Len() }

// Find returns k's id and whether it is held.
func (t *IntIDs) Find(k uint64) (int32, bool) { return t.idx.Find(k) }

// Touch reads k's home slot (IntIndex.Touch).
func (t *IntIDs) Touch(k uint64) uint64 { return t.idx.Touch(k) }

// Add inserts k, which must be absent, and returns its id; fresh reports
// an id never handed out before.
func (t *IntIDs) Add(k uint64) (id int32, fresh bool) {
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
	} else {
		id, fresh = t.next, true
		t.next++
	}
	t.idx.Put(k, id)
	if int(id) >= len(t.keys) {
		t.keys = OffHeapGrow(t.mem, t.keys, int(id)+1)
	}
	t.keys[id] = k
	return id, fresh
}

// Key returns id's value (of a held id).
func (t *IntIDs) Key(id int32) uint64 { return t.keys[id] }

// Has reports whether id holds a key.
func (t *IntIDs) Has(id int32) bool {
	if id < 0 || int(id) >= len(t.keys) {
		return false
	}
	got, ok := t.idx.Find(t.keys[id])
	return ok && got == id
}

// Drop removes k and frees its id for a later Add.
func (t *IntIDs) Drop(k uint64) (int32, bool) {
	id, ok := t.idx.Del(k)
	if ok {
		t.free = append(t.free, id)
	}
	return id, ok
}

// Each yields every held value with its id, in slot order.
func (t *IntIDs) Each(yield func(k uint64, id int32) bool) { t.idx.Each(yield) }

// MemBytes is the memory the table holds: what a state budget counts.
func (t *IntIDs) MemBytes() int64 {
	if t == nil {
		return 0
	}
	return t.idx.MemBytes() + int64(cap(t.keys))*8 + int64(cap(t.free))*4
}

// Release returns the table's off-heap memory; it is empty after.
func (t *IntIDs) Release() {
	t.mem.Release()
	t.idx.drop()
	t.keys, t.free = nil, nil
	t.next = 0
}
