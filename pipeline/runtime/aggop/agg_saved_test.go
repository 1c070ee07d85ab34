package aggop

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A slot's saved copy holds its presence bits wherever they sit in the
// bitmap (across a word boundary too) and gives back the results the slot
// had.
func TestSavedSlotIsTheSlot(t *testing.T) {
	for _, words := range []int{1, 3, 7, 63, 64} {
		aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 0, ArgType: optest.TBigInt}}
		for k := range words {
			aggs = append(aggs, AggCall{Func: []AggFunc{Max, Min}[k%2], Arg: k, ArgType: optest.TBigInt})
		}
		s := NewStore(aggs, true, false)
		if s.words != words || !s.flat() {
			t.Fatalf("%d words: store has %d, flat %v", words, s.words, s.flat())
		}
		rng := rand.New(rand.NewPCG(uint64(words), 1))
		const slots = 70
		for range slots {
			s.Alloc("")
		}
		r := make(row.Row, words)
		for range 3 * slots {
			id := int32(rng.IntN(slots))
			for k := range r {
				r[k] = row.NullValue
				if rng.IntN(3) == 0 {
					r[k] = row.BigIntValue(rng.Int64N(100) - 50)
				}
			}
			s.Update(id, r, true)
		}
		var saved []int64
		for id := range int32(slots) {
			bits := s.presence(id)
			for k := range s.Aggs {
				a := &s.Aggs[k]
				if a.kind == accWord && (bits&(1<<a.bit) != 0) != s.hasWord(id, a) {
					t.Fatalf("%d words: slot %d aggregate %d: presence bit %v, hasWord %v", words, id, k, bits&(1<<a.bit) != 0, s.hasWord(id, a))
				}
			}
			saved = s.saveSlot(saved[:0], id)
			if !s.sameAsSaved(id, saved) {
				t.Fatalf("%d words: slot %d differs from its own copy", words, id)
			}
			want, got := make([]row.Value, len(aggs)), make([]row.Value, len(aggs))
			s.Results(id, want)
			s.savedResults(saved, got)
			if !slices.EqualFunc(want, got, row.Equal) {
				t.Fatalf("%d words: slot %d: saved results %v, want %v", words, id, got, want)
			}
			s.Update(id, r, true)
			if sum := s.nums[int(id)*s.numW]; s.sameAsSaved(id, saved) {
				t.Fatalf("%d words: slot %d (rows %d) equals its copy after an update", words, id, sum)
			}
		}
	}
}
