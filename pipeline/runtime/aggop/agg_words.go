package aggop

import (
	"cmp"
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Words: the insert-only MIN/MAX/FIRST_VALUE/LAST_VALUE of a fixed-width
// type keep their value as an int64 among the slot's counters, with a
// presence bit in a bitmap beside, instead of a Value.

// maxWords bounds the words of a store (the bit field's width).
const maxWords = 256

// layWords turns the insert-only MIN/MAX/FIRST_VALUE/LAST_VALUE of a
// fixed-width type into words: an int64 after the counters instead of a
// 32-byte Value (MAX(BIGINT) then costs 8 bytes and a bit; a slot of
// COUNT(*), SUM and MAX of BIGINT is 32 bytes, two to a cache line). The snapshot
// layout (numSnap, valSnap, each aggregate's sval) stays the one without
// words.
func (s *Store) layWords(words bool) {
	s.numSnap, s.valSnap = s.numW, s.valW
	n, vals := 0, 0
	for i := range s.Aggs {
		a := &s.Aggs[i]
		a.sval, a.word = a.val, -1
		if a.val < 0 {
			continue
		}
		insertOnly := a.kind == accFirst || a.kind == accLast || (a.kind == accExtreme && a.ext < 0)
		if words && insertOnly && n < maxWords && wordType(a.call.ArgType) {
			a.kind, a.val = accWord, -1
			a.word, a.bit = s.numW, uint8(n)
			s.numW++
			n++
			continue
		}
		a.val = vals
		vals++
	}
	s.valW = vals
	s.words = n
}

// wordType reports a type whose values an int64 holds exactly and orders
// as row.Compare does. A DECIMAL of up to 18 digits always fits 64 bits;
// FLOAT is left out: its Value holds float64 bits, which a round trip
// through float32 would not keep for every NaN.
func wordType(t row.Type) bool {
	switch t.ID {
	case row.Boolean, row.Int, row.BigInt, row.Date, row.Timestamp, row.TimestampLTZ, row.Double:
		return true
	case row.Decimal:
		return t.Precision > 0 && t.Precision <= 18
	}
	return false
}

// wordOf is v's word; checkArg made sure v has the call's type.
func wordOf(t row.TypeID, v row.Value) int64 {
	switch t {
	case row.Double:
		return int64(math.Float64bits(v.Float64()))
	case row.Decimal:
		return v.Unscaled()
	case row.Boolean:
		if v.Bool() {
			return 1
		}
		return 0
	}
	return v.Int64()
}

// valueOfWord is wordOf's inverse.
func valueOfWord(t row.Type, w int64) row.Value {
	switch t.ID {
	case row.Boolean:
		return row.BoolValue(w != 0)
	case row.Int:
		return row.IntValue(int32(w))
	case row.Date:
		return row.DateValue(int32(w))
	case row.Timestamp:
		return row.TimestampValue(w)
	case row.TimestampLTZ:
		return row.TimestampLTZValue(w)
	case row.Double:
		return row.DoubleValue(math.Float64frombits(uint64(w)))
	case row.Decimal:
		return row.DecimalValue(w, t.Scale)
	}
	return row.BigIntValue(w)
}

// wordBetter is better over words: w would replace cur as the extreme.
func (a *aggSlot) wordBetter(w, cur int64) bool {
	var c int
	if a.call.ArgType.ID == row.Double {
		c = cmp.Compare(math.Float64frombits(uint64(w)), math.Float64frombits(uint64(cur)))
	} else {
		c = cmp.Compare(w, cur)
	}
	return (a.max && c > 0) || (!a.max && c < 0)
}

// hasWord reports whether slot id's word of a was set.
func (s *Store) hasWord(id int32, a *aggSlot) bool {
	b := uint(id)*uint(s.words) + uint(a.bit)
	return s.present[b>>6]&(1<<(b&63)) != 0
}

// setWord folds word w into aggregate a of slot id, whose int64s are
// nums: the first one always, later ones as the function says.
func (s *Store) setWord(id int32, a *aggSlot, nums []int64, w int64) {
	b := uint(id)*uint(s.words) + uint(a.bit)
	m := &s.present[b>>6]
	p := &nums[a.word]
	switch {
	case *m&(1<<(b&63)) == 0:
		*p = w
		*m |= 1 << (b & 63)
	case a.call.Func == LastValue:
		*p = w
	case (a.call.Func == Min || a.call.Func == Max) && a.wordBetter(w, *p):
		*p = w
	}
}

// wordValue is slot id's word of a as a Value, NULL when none was set.
func (s *Store) wordValue(id int32, a *aggSlot, nums []int64) row.Value {
	if !s.hasWord(id, a) {
		return row.NullValue
	}
	return valueOfWord(a.call.ArgType, nums[a.word])
}

// clearWords unsets the presence bits of slot id.
func (s *Store) clearWords(id int32) {
	for k := range s.words {
		b := uint(id)*uint(s.words) + uint(k)
		s.present[b>>6] &^= 1 << (b & 63)
	}
}

// growPresent makes room for the presence bits of slots.
func (s *Store) growPresent(slots int) {
	if n := (slots*s.words + 63) / 64; n > len(s.present) {
		s.present = state.OffHeapGrow(s.mem, s.present, n)
	}
}
