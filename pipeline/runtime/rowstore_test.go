package runtime

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestRowStoreMatchesAMap drives a rowStore and a map with the same
// random puts (rows growing, shrinking, staying) and removes, past
// compactions, and compares every row and the arena's size.
func TestRowStoreMatchesAMap(t *testing.T) {
	var s rowStore
	want := map[int32]row.Row{}
	rnd := rand.New(rand.NewPCG(7, 8))
	for i := range 200_000 {
		id := int32(rnd.IntN(5000))
		if rnd.IntN(4) == 0 {
			s.remove(id)
			delete(want, id)
		} else {
			r := row.Row{row.BigIntValue(int64(i)), row.StringValue(strings.Repeat("x", rnd.IntN(300))), row.NullValue}
			s.put(id, r)
			want[id] = r
		}
	}
	if s.len() != len(want) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	for id := range int32(5000) {
		r, ok := want[id]
		if s.has(id) != ok {
			t.Fatalf("id %d: has %v, want %v", id, s.has(id), ok)
		}
		if ok && fmt.Sprint(s.row(id)) != fmt.Sprint(r) {
			t.Fatalf("id %d: %v, want %v", id, s.row(id), r)
		}
	}
	if live := s.len(); len(s.buf) > 4*live*400+1<<21 {
		t.Errorf("arena %d bytes for %d rows: dead bytes are not reclaimed", len(s.buf), live)
	}
}

// TestRowStoreRowIsACopy checks that a row read back survives later
// changes to the store.
func TestRowStoreRowIsACopy(t *testing.T) {
	var s rowStore
	s.put(0, row.Row{row.StringValue("first")})
	got := s.row(0)
	s.put(0, row.Row{row.StringValue("other")}) // same length: in place
	if got[0].String() != "first" {
		t.Fatalf("row read before the overwrite is now %v", got)
	}
}
