package state

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// checkKeyTable runs ops against a keyTable and a Go map side by side:
// each op byte picks insert, remove (by key or by id and hash) or lookup of one of a small set of
// keys (short, inline-limit and long ones), so that probe runs collide,
// grow and shift back; after every op the two must agree.
func checkKeyTable(t *testing.T, ops []byte) {
	t.Helper()
	tab := newKeyTable()
	want := map[string]int32{}
	var free []int32
	next := int32(0)
	keyOf := func(b byte) []byte {
		switch b % 4 {
		case 0:
			return []byte{b}
		case 1:
			return []byte(fmt.Sprintf("%0*d", keyInline, b)) // exactly keyInline
		case 2:
			return []byte(strings.Repeat(string(rune('a'+b%26)), 21+int(b)))
		}
		return []byte(fmt.Sprintf("k%d", b))
	}
	for i := 0; i+1 < len(ops); i += 2 {
		k := keyOf(ops[i+1])
		switch ops[i] % 3 {
		case 0:
			if _, ok := want[string(k)]; ok {
				continue
			}
			id := next
			if n := len(free); n > 0 {
				id, free = free[n-1], free[:n-1]
			} else {
				next++
			}
			tab.Insert(k, id)
			want[string(k)] = id
		case 1:
			wid, wok := want[string(k)]
			var id int32
			var ok bool
			if ops[i]/3%2 == 1 {
				// By id and hash: a present key's own id; for an absent
				// key, id 0 (holding another key, or none) is no match.
				if id = wid; !wok {
					id = 0
				}
				ok = tab.RemoveID(id, tab.Hash(k))
			} else {
				id, ok = tab.Remove(k)
			}
			if ok != wok || (ok && id != wid) {
				t.Fatalf("op %d: remove %q = %d,%v, want %d,%v", i, k, id, ok, wid, wok)
			}
			if ok {
				delete(want, string(k))
				free = append(free, id)
			}
		}
		if tab.Len() != len(want) {
			t.Fatalf("op %d: len %d, want %d", i, tab.Len(), len(want))
		}
		for wk, wid := range want {
			id, ok := tab.Find([]byte(wk))
			if !ok || id != wid {
				t.Fatalf("op %d: find %q = %d,%v, want %d", i, wk, id, ok, wid)
			}
			if got := tab.Key(id); got != wk {
				t.Fatalf("op %d: key(%d) = %q, want %q", i, id, got, wk)
			}
		}
		if _, ok := want[string(k)]; !ok {
			if _, found := tab.Find(k); found {
				t.Fatalf("op %d: found removed key %q", i, k)
			}
		}
	}
}

func TestKeyTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		ops := make([]byte, 2000)
		for i := range ops {
			ops[i] = byte(rng.UintN(256))
		}
		checkKeyTable(t, ops)
	}
}

func FuzzKeyTable(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 0, 3, 0, 1})
	f.Add([]byte{0, 2, 0, 6, 0, 10, 1, 2, 1, 6, 0, 14})
	f.Fuzz(checkKeyTable)
}

// TestKeyTableLarge grows a table to 200k keys, removes every other one
// (compacting the arena of long keys) and checks the rest, on the Go heap
// and off it (where the index, entries and arena outgrow the heap).
func TestKeyTableLarge(t *testing.T) {
	t.Run("heap", func(t *testing.T) { checkKeyTableLarge(t, newKeyTable()) })
	t.Run("off-heap", func(t *testing.T) {
		tab := NewOffHeapKeyTable()
		checkKeyTableLarge(t, tab)
		if MapSupported && tab.mem.Mapped() < len(tab.index)*8+len(tab.Entries)*16 {
			t.Fatalf("%d bytes mapped for an index of %d and %d entries", tab.mem.Mapped(), len(tab.index), len(tab.Entries))
		}
		live := OffHeapLive.Load()
		m := tab.mem.Mapped()
		tab.Release()
		if OffHeapLive.Load() != live-int64(m) || tab.Len() != 0 {
			t.Fatalf("release: live %d, want %d; len %d", OffHeapLive.Load(), live-int64(m), tab.Len())
		}
		tab.Insert([]byte("again"), 0) // a released table is an empty one
		if id, ok := tab.Find([]byte("again")); !ok || id != 0 {
			t.Fatalf("find after release = %d,%v", id, ok)
		}
	})
}

func checkKeyTableLarge(t *testing.T, tab *KeyTable) {
	key := func(i int) []byte {
		if i%3 == 0 {
			return []byte(fmt.Sprintf("long key number %030d", i))
		}
		return []byte(fmt.Sprintf("%d", i))
	}
	const n = 200_000
	for i := range n {
		tab.Insert(key(i), int32(i))
	}
	for i := 0; i < n; i += 2 {
		if id, ok := tab.Remove(key(i)); !ok || id != int32(i) {
			t.Fatalf("remove %d = %d,%v", i, id, ok)
		}
	}
	if tab.Len() != n/2 {
		t.Fatalf("len %d, want %d", tab.Len(), n/2)
	}
	for i := range n {
		id, ok := tab.Find(key(i))
		if ok != (i%2 == 1) || (ok && id != int32(i)) {
			t.Fatalf("find %d = %d,%v", i, id, ok)
		}
		if ok && tab.Key(id) != string(key(i)) {
			t.Fatalf("key(%d) = %q", id, tab.Key(id))
		}
	}
	if len(tab.Arena) > n/3*46 {
		t.Fatalf("arena %d bytes after removing half its keys: not compacted", len(tab.Arena))
	}
}

// TestKeyTableFindAllocs: the hot path allocates nothing.
func TestKeyTableFindAllocs(t *testing.T) {
	tab := newKeyTable()
	for i := range 1000 {
		tab.Insert([]byte(fmt.Sprint(i)), int32(i))
	}
	k := []byte("500")
	if a := testing.AllocsPerRun(100, func() {
		if _, ok := tab.Find(k); !ok {
			t.Fatal("lost key")
		}
	}); a != 0 {
		t.Fatalf("find allocates %.1f times", a)
	}
}

// TestKeyTableEntrySize: the per-key cost the design counts on.
func TestKeyTableEntrySize(t *testing.T) {
	if s := unsafe.Sizeof(KeyEntry{}); s != 16 {
		t.Fatalf("keyEntry is %d bytes, want 16", s)
	}
}
