package state

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
	var s RowStore
	want := map[int32]row.Row{}
	rnd := rand.New(rand.NewPCG(7, 8))
	for i := range 200_000 {
		id := int32(rnd.IntN(5000))
		if rnd.IntN(4) == 0 {
			s.Remove(id)
			delete(want, id)
		} else {
			r := row.Row{row.BigIntValue(int64(i)), row.StringValue(strings.Repeat("x", rnd.IntN(300))), row.NullValue}
			s.Put(id, r)
			want[id] = r
		}
	}
	if s.Len() != len(want) {
		t.Fatalf("len %d, want %d", s.Len(), len(want))
	}
	for id := range int32(5000) {
		r, ok := want[id]
		if s.Has(id) != ok {
			t.Fatalf("id %d: has %v, want %v", id, s.Has(id), ok)
		}
		if ok && fmt.Sprint(s.Row(id)) != fmt.Sprint(r) {
			t.Fatalf("id %d: %v, want %v", id, s.Row(id), r)
		}
	}
	if live := s.Len(); len(s.buf) > 4*live*400+1<<21 {
		t.Errorf("arena %d bytes for %d rows: dead bytes are not reclaimed", len(s.buf), live)
	}
}

// TestRowStoreRowIsACopy checks that a row read back survives later
// changes to the store.
func TestRowStoreRowIsACopy(t *testing.T) {
	var s RowStore
	s.Put(0, row.Row{row.StringValue("first")})
	got := s.Row(0)
	s.Put(0, row.Row{row.StringValue("other")}) // same length: in place
	if got[0].String() != "first" {
		t.Fatalf("row read before the overwrite is now %v", got)
	}
}
