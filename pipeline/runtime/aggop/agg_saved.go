package aggop

import "github.com/etld/etld/pipeline/row"

// A slot of a flat store is its int64s and its presence bits, nothing
// else: a copy of those words is the slot as it was. Mini-batch keeps
// that copy of each key it touches instead of the key's results
// (groupagg_minibatch.go): copying a few words costs less than building
// Values, an unchanged key is found by comparing words, and the copies
// hold no pointer for the garbage collector to scan.

// flat reports a store whose slots are words only: no Values, no maps,
// and presence bits that fit one word.
func (s *Store) flat() bool {
	return s.valW == 0 && s.extW == 0 && s.words <= 64
}

// savedWords is the length of a slot's copy: its int64s and its
// presence bits.
func (s *Store) savedWords() int { return s.numW + 1 }

// saveSlot appends slot id's copy to dst; the store is flat.
func (s *Store) saveSlot(dst []int64, id int32) []int64 {
	s.settle()
	dst = append(dst, s.nums[int(id)*s.numW:int(id+1)*s.numW]...)
	return append(dst, int64(s.presence(id)))
}

// warmSlot loads slot id's first int64 and presence bits and returns
// a number made of them, for a caller that loads the lines of many
// slots ahead of its use of them (GroupAgg.warm).
func (s *Store) warmSlot(id int32) int {
	return int(s.nums[int(id)*s.numW]) + int(s.presence(id))
}

// presence is slot id's presence bits, word k at bit k.
func (s *Store) presence(id int32) uint64 {
	if s.words == 0 {
		return 0
	}
	b := uint(id) * uint(s.words)
	lo := s.present[b>>6] >> (b & 63)
	if used := 64 - b&63; used < uint(s.words) {
		lo |= s.present[b>>6+1] << used
	}
	if s.words < 64 {
		lo &= 1<<uint(s.words) - 1
	}
	return lo
}

// sameAsSaved reports whether slot id still holds the words saved.
func (s *Store) sameAsSaved(id int32, saved []int64) bool {
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	for i, w := range nums {
		if saved[i] != w {
			return false
		}
	}
	return uint64(saved[s.numW]) == s.presence(id)
}

// savedResults writes the aggregate values of a saved copy to dst, as
// results would have when the copy was taken.
func (s *Store) savedResults(saved []int64, dst []row.Value) {
	nums, bits := saved[:s.numW], uint64(saved[s.numW])
	for i := range s.Aggs {
		a := &s.Aggs[i]
		switch {
		case a.kind != accWord:
			dst[i] = s.result(-1, a, nums) // a flat store's other kinds read nums only
		case bits&(1<<a.bit) == 0:
			dst[i] = row.NullValue
		default:
			dst[i] = valueOfWord(a.call.ArgType, nums[a.word])
		}
	}
}
