package runtime

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestJoinRowsMatchesAMap drives joinRows and a map with the same random
// puts and deletes, across the index threshold both ways, deleting rows
// while iterating, and wants the same rows each step.
func TestJoinRowsMatchesAMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	var m joinRows
	want := map[string]*joinEntry{}
	for step := range 20_000 {
		id := fmt.Sprint(rnd.IntN(3 * joinRowsScan))
		switch e := m.get(id); {
		case e != want[id]:
			t.Fatalf("step %d: get(%s) = %v, want %v", step, id, e, want[id])
		case e == nil:
			e = &joinEntry{count: step}
			m.put(id, e)
			want[id] = e
		default:
			m.del(id)
			delete(want, id)
		}
		if step%97 == 0 { // delete some rows while iterating
			seen := map[string]bool{}
			for id, e := range m.all {
				if seen[id] || want[id] != e {
					t.Fatalf("step %d: all yields %s twice or a stale entry", step, id)
				}
				seen[id] = true
				if rnd.IntN(3) == 0 {
					m.del(id)
					delete(want, id)
				}
			}
			if len(seen) < len(want) {
				t.Fatalf("step %d: all yielded %d rows, %d left after its deletions", step, len(seen), len(want))
			}
		}
		if m.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, m.len(), len(want))
		}
	}
}

// TestJoinKeysMatchesAMap drives joinKeys and a map with the same adds
// and removes of keys of every length (inline and arena keys in the
// keyTable) and compares lookups and iteration.
func TestJoinKeysMatchesAMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	keys := newJoinKeys()
	want := map[string]*joinRows{}
	for step := range 20_000 {
		k := fmt.Sprintf("%0*d", 1+rnd.IntN(30), rnd.IntN(500))
		if got := keys.get(k); got != want[k] {
			t.Fatalf("step %d: get(%q) = %p, want %p", step, k, got, want[k])
		}
		if want[k] == nil {
			want[k] = keys.add(k)
		} else {
			keys.remove(k)
			delete(want, k)
		}
	}
	n := 0
	for k, m := range keys.all {
		if want[k] != m {
			t.Fatalf("all yields %q with other rows", k)
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("all yields %d keys, want %d", n, len(want))
	}
}
