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

// TestRowStoreChurnLeavesRoom: a store of rows that come and go (Churn)
// reads back every row as a map does, and each compaction leaves as much
// room as the live bytes, so the arena is not grown between two of them;
// without Churn the room is an eighth.
func TestRowStoreChurnLeavesRoom(t *testing.T) {
	for _, churn := range []bool{false, true} {
		s := RowStore{Churn: churn}
		want := map[int32]row.Row{}
		compactions, grown := 0, 0
		for i := range 120_000 {
			// A sliding window of 20k rows: the oldest leaves as one comes.
			id := int32(i % 20_000)
			r := row.Row{row.BigIntValue(int64(i)), row.StringValue(strings.Repeat("y", 40+i%50))}
			before, capBefore := s.dead, cap(s.buf)
			s.Remove(id)
			s.Put(id, r)
			want[id] = r
			switch {
			case s.dead < before:
				compactions++
				// (a row may have been put since the compaction)
				if live := len(s.buf); churn && cap(s.buf) < 2*live-200 {
					t.Fatalf("churn: compacted to %d bytes of room for %d live", cap(s.buf)-live, live)
				}
			case cap(s.buf) != capBefore && compactions > 0:
				grown++ // since the first compaction
			}
		}
		for id, r := range want {
			if fmt.Sprint(s.Row(id)) != fmt.Sprint(r) {
				t.Fatalf("churn %v id %d: %v, want %v", churn, id, s.Row(id), r)
			}
		}
		if compactions < 3 {
			t.Fatalf("churn %v: %d compactions", churn, compactions)
		}
		if churn && grown > 0 {
			t.Errorf("churn: the arena grew %d times between %d compactions", grown, compactions)
		}
		t.Logf("churn %v: %d compactions, %d growths", churn, compactions, grown)
	}
}
