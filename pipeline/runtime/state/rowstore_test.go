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

// TestRowStoreReusesFreeBlocks: rows that come and go (a sliding
// window of 5000 rows of random sizes, the oldest leaving as one comes)
// take the blocks the ones before them left: past the first window the
// arena grows by no more than the spread of the sizes' counts, with
// Churn or without.
func TestRowStoreReusesFreeBlocks(t *testing.T) {
	for _, churn := range []bool{false, true} {
		s := RowStore{Churn: churn}
		want := map[int32]row.Row{}
		rnd := rand.New(rand.NewPCG(3, 4))
		var warm int
		for i := range 60_000 {
			id := int32(i % 5000)
			r := row.Row{row.BigIntValue(int64(i)), row.StringValue(strings.Repeat("y", 40+rnd.IntN(200)))}
			s.Remove(id)
			s.Put(id, r)
			want[id] = r
			if i == 10_000 {
				warm = len(s.buf)
			}
		}
		for id, r := range want {
			if fmt.Sprint(s.Row(id)) != fmt.Sprint(r) {
				t.Fatalf("churn %v id %d: %v, want %v", churn, id, s.Row(id), r)
			}
		}
		if len(s.buf) > warm+warm/10 {
			t.Errorf("churn %v: the arena grew from %d to %d bytes for as many rows", churn, warm, len(s.buf))
		}
		t.Logf("churn %v: %d bytes after the second window, %d at the end", churn, warm, len(s.buf))
	}
}

// TestRowStoreCompactsUnusedClasses: rows replaced by larger ones (half
// as large again), round after round, leave blocks of sizes no row asks for again; a compaction
// reclaims them (the arena stays within twice the live bytes and an
// eighth), and a Churn store's compaction leaves room for as many bytes
// as are live.
func TestRowStoreCompactsUnusedClasses(t *testing.T) {
	for _, churn := range []bool{false, true} {
		s := RowStore{Churn: churn}
		compactions := 0
		size := 100
		for round := range 10 {
			size = size * 3 / 2 // a new class each round, its rows more than what all before them left
			for id := range int32(1000) {
				before := s.freeBytes
				s.Put(id, row.Row{row.BigIntValue(int64(id)), row.StringValue(strings.Repeat("z", size+int(id)%7))})
				if s.freeBytes < before {
					compactions++
					if live := len(s.buf); churn && cap(s.buf) < 2*live-live/8 {
						t.Fatalf("churn: compacted to %d bytes of room for %d live", cap(s.buf)-live, live)
					}
				}
			}
			live := len(s.buf) - s.freeBytes
			if len(s.buf) > 2*live+live/8+1<<20 {
				t.Fatalf("churn %v round %d: arena %d bytes for %d live", churn, round, len(s.buf), live)
			}
			for id := range int32(1000) {
				if got := s.Row(id)[1].String(); len(got) != size+int(id)%7 {
					t.Fatalf("churn %v round %d id %d: a string of %d bytes", churn, round, id, len(got))
				}
			}
		}
		if compactions == 0 {
			t.Fatalf("churn %v: no compaction", churn)
		}
	}
}

// TestSizeClass: a class's size holds n with at most 7 bytes or an
// eighth more, the classes grow with n, and a block's size is its own
// class's (a freed block goes back to the list it came from).
func TestSizeClass(t *testing.T) {
	prevClass, prevSize := -1, 0
	for n := 1; n <= 1<<22; n++ {
		c, size := sizeClass(n)
		if size < n || size > n+max(7, n/8) || size < 8 {
			t.Fatalf("n %d: size %d", n, size)
		}
		if c < prevClass || c == prevClass && size != prevSize || c > prevClass && size <= prevSize || c >= numSizeClasses {
			t.Fatalf("n %d: class %d size %d after class %d size %d", n, c, size, prevClass, prevSize)
		}
		if c2, size2 := sizeClass(size); c2 != c || size2 != size {
			t.Fatalf("n %d: size %d is of class %d (%d), not %d", n, size, c2, size2, c)
		}
		prevClass, prevSize = c, size
	}
	if c, size := sizeClass(1 << 32); c != numSizeClasses-1 || size != 1<<32 {
		t.Fatalf("2^32: class %d size %d", c, size)
	}
}

// TestDecodeRowInto: a row the state encoded decodes to CopyRow's
// values, each string a copy of its own (the encoding is written over
// after: a kept row holds no chunk shared with others), numbers with no
// allocation.
func TestDecodeRowInto(t *testing.T) {
	r := row.Row{row.BigIntValue(7), row.StringValue("bid"), row.NullValue, row.DoubleValue(1.5), row.StringValue("extra text")}
	b := row.AppendRow(nil, r)
	dst := make(row.Row, len(r))
	if n := testing.AllocsPerRun(100, func() { DecodeRowInto(dst, b) }); n != 2 {
		t.Errorf("%v allocations, want 2 (the strings)", n)
	}
	for i := range b {
		b[i] = 0xff
	}
	for i := range r {
		if !row.Equal(dst[i], r[i]) || dst[i].Type() != r[i].Type() {
			t.Fatalf("column %d: %v, want %v", i, dst[i], r[i])
		}
	}
}
