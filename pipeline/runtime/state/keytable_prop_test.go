package state

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// randomKeyValue is one column of a group key: a BIGINT, a STRING of 0 to
// 40 bytes (kept in the entry up to keyInline bytes of encoding, in the
// arena past it; some are prefixes of others), a DOUBLE or NULL, drawn
// from few values so that keys repeat.
func randomKeyValue(rnd *rand.Rand) row.Value {
	switch rnd.IntN(8) {
	case 0:
		return row.NullValue
	case 1, 2:
		return row.BigIntValue(rnd.Int64N(50) - 25)
	case 3:
		return row.DoubleValue(float64(rnd.IntN(5)) / 2)
	}
	n := rnd.IntN(41)
	return row.StringValue(strings.Repeat("s", n) + fmt.Sprint(rnd.IntN(3)))
}

// TestKeyTableGroupsLikeMap: keys of one, two and three columns of every
// shape (row.KeyOf of BIGINT, STRING short and long, DOUBLE, NULL) go
// through the key table as GroupAgg's passes use it: a batch at a time
// through FindAll, the missing ones looked up again in order and added
// under the next free id, now and then some removed and their ids
// reused. After every batch the table must hold exactly the groups of a
// Go map from the key's bytes to its id. The same with the hash
// narrowed to 2 bits, so that every key shares its hash with about a
// quarter of the others and FindAll's candidates are often another key.
// Also for tables hashing with operator.KeyHash (UseKeyHash), as a
// keyed worker's, the hashes given by its split.
func TestKeyTableGroupsLikeMap(t *testing.T) {
	for _, cols := range []int{1, 2, 3} {
		for _, narrow := range []bool{false, true} {
			for _, kind := range []string{"", "fixed"} {
				t.Run(fmt.Sprintf("cols=%d narrow=%v %s", cols, narrow, kind), func(t *testing.T) {
					rnd := rand.New(rand.NewPCG(uint64(cols), 9))
					tab := newKeyTable()
					if narrow {
						tab.hashMask = 3
					}
					if kind == "fixed" {
						tab.UseKeyHash()
					}
					checkGroupsLikeMap(t, rnd, tab, cols)
				})
			}
		}
	}
}

func checkGroupsLikeMap(t *testing.T, rnd *rand.Rand, tab *KeyTable, cols int) {
	idx := make([]int, cols)
	for i := range idx {
		idx[i] = i
	}
	want := map[string]int32{}
	var free []int32
	next := int32(0)
	for batch := range 60 {
		n := rnd.IntN(300)
		var keys []byte
		ends := make([]int32, n)
		r := make(row.Row, cols)
		for i := range n {
			for c := range r {
				r[c] = randomKeyValue(rnd)
			}
			keys = row.KeyOf(keys, r, idx)
			ends[i] = int32(len(keys))
		}
		if rnd.IntN(2) == 0 {
			// Room after the keys: the short ones at the end are read
			// in place too; without it they take the copying way.
			keys = append(keys, make([]byte, 16)...)[:len(keys)]
		}
		hashes, ids := make([]uint32, n), make([]int32, n)
		var missed bool
		if tab.fixed && rnd.IntN(2) == 0 {
			// As a keyed worker gets them: hashed by its split.
			start := int32(0)
			for i, e := range ends {
				hashes[i] = operator.TableHash(operator.KeyHash(keys[start:e]))
				start = e
			}
			missed = tab.FindAllHashed(keys, ends, hashes, ids)
		} else {
			missed = tab.FindAll(keys, ends, hashes, ids)
		}
		start := int32(0)
		anyMissing := false
		addedNow := map[string]bool{} // keys this batch added
		for i, end := range ends {
			key := keys[start:end]
			start = end
			if h := tab.Hash(key); hashes[i] != h {
				t.Fatalf("batch %d key %d: FindAll's hash %x, Hash %x", batch, i, hashes[i], h)
			}
			wid, ok := want[string(key)]
			if ids[i] >= 0 {
				if !ok || ids[i] != wid {
					t.Fatalf("batch %d key %q: found id %d, the map has %d,%v", batch, key, ids[i], wid, ok)
				}
				continue
			}
			anyMissing = true
			if id, found := tab.FindHashed(key, hashes[i]); found {
				// Added by an earlier key of this batch, or FindAll
				// missed a key the table held before it.
				if !ok || id != wid || !addedNow[string(key)] {
					t.Fatalf("batch %d key %q: found id %d again, the map has %d,%v", batch, key, id, wid, ok)
				}
				continue
			}
			if ok {
				t.Fatalf("batch %d key %q: missing, the map has it as %d", batch, key, wid)
			}
			id := next
			if k := len(free); k > 0 {
				id, free = free[k-1], free[:k-1]
			} else {
				next++
			}
			tab.InsertHashed(key, id, hashes[i])
			want[string(key)] = id
			addedNow[string(key)] = true
		}
		if missed != anyMissing {
			t.Fatalf("batch %d: FindAll reported missed=%v, keys missing: %v", batch, missed, anyMissing)
		}
		for k := range want { // remove about a tenth
			if rnd.IntN(10) == 0 {
				id, ok := tab.Remove([]byte(k))
				if !ok || id != want[k] {
					t.Fatalf("batch %d: remove %q = %d,%v, want %d", batch, k, id, ok, want[k])
				}
				delete(want, k)
				free = append(free, id)
			}
		}
		if tab.Len() != len(want) {
			t.Fatalf("batch %d: %d keys, the map %d", batch, tab.Len(), len(want))
		}
		for k, wid := range want {
			if id, ok := tab.Find([]byte(k)); !ok || id != wid || tab.Key(id) != k {
				t.Fatalf("batch %d: find %q = %d,%v (key %q), want %d", batch, k, id, ok, tab.Key(id), wid)
			}
		}
	}
}
