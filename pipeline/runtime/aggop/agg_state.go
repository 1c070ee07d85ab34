package aggop

import (
	"cmp"
	"fmt"
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Store holds the accumulators of many groups in flat arrays indexed by
// slot id, each with a fixed stride: int64 counters and sums, and the
// value of an insert-only MIN/MAX/FIRST/LAST of a fixed-width type (a
// word: its bits, with a presence bit in a bitmap beside); Values
// for the other extremes (strings, wide decimals, the single value of a
// retractable MIN/MAX); and the maps of DISTINCT and of retractable
// MIN/MAX past their first distinct value. A group costs its slots and
// nothing else: no per-group object, no per-aggregate interface. The
// int64s, the bulk of most states, live outside the Go heap once large
// (offheap.go). The arrays and maps are plain data, ready to be
// snapshotted.
type Store struct {
	Aggs []aggSlot
	// numW, valW, extW are the strides; nums[id*numW] counts the group's
	// rows (accumulated minus retracted).
	numW, valW, extW int
	// numSnap and valSnap are the int64s and Values a snapshot holds per
	// slot: the words are written as the Values they were before there
	// were words, so the format does not depend on the layout in memory.
	numSnap, valSnap int
	// words is the count of words per slot; present holds their
	// presence bits, slot id's word k at bit id*words+k.
	words   int
	present []uint64
	Mem     *state.OffHeap
	nums    []int64
	Vals    []row.Value
	Exts    []any // *extremes or valueCounts
	// keys holds each slot's group key when the owner emits groups
	// without an input row at hand (batch mode, windows).
	Keys     []string
	keepKeys bool
	Free     []int32
	Slots    int32
}

// NewStore lays out aggs. insertOnly lets MIN/MAX keep only the
// extreme; otherwise they keep every value with its count so that the
// extreme survives its retraction.
func NewStore(aggs []AggCall, insertOnly, keepKeys bool) *Store {
	return newAggStoreWords(aggs, insertOnly, keepKeys, true)
}

// newAggStoreWords is newAggStore; words false keeps every value a
// Value, as before there were words (tests compare the two).
func newAggStoreWords(aggs []AggCall, insertOnly, keepKeys, words bool) *Store {
	s := &Store{numW: 1, keepKeys: keepKeys}
	s.Mem = state.NewOffHeap(s)
	for _, c := range aggs {
		a := newAggSlot(c)
		if !insertOnly && (a.kind == accFirst || a.kind == accLast) {
			// A retraction of the first (last) value needs the one before.
			a.kind = accList
		}
		switch a.kind {
		case accFirst, accLast:
			a.val, s.valW = s.valW, s.valW+1
		case accList:
			a.ext, s.extW = s.extW, s.extW+1
		}
		if a.kind == accExtreme {
			// The extreme, or while a retractable one has seen a single
			// distinct value, that value with its count in a num slot; the
			// multiset only from the second distinct value on.
			a.val, s.valW = s.valW, s.valW+1
			if !insertOnly {
				a.num, s.numW = s.numW, s.numW+1
				a.ext, s.extW = s.extW, s.extW+1
			}
		} else if n := numSlots[a.kind]; n > 0 {
			a.num, s.numW = s.numW, s.numW+n
		}
		if c.distinct() {
			a.dist, s.extW = s.extW, s.extW+1
		}
		s.Aggs = append(s.Aggs, a)
	}
	s.layWords(words)
	return s
}

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
		s.present = state.OffHeapGrow(s.Mem, s.present, n)
	}
}

// Alloc returns a zeroed slot.
func (s *Store) Alloc(key string) int32 {
	var id int32
	if n := len(s.Free); n > 0 {
		id, s.Free = s.Free[n-1], s.Free[:n-1]
	} else {
		id = s.Slots
		s.Slots++
		s.nums = state.OffHeapGrow(s.Mem, s.nums, len(s.nums)+s.numW)
		s.growPresent(int(s.Slots))
		s.Vals = append(s.Vals, make([]row.Value, s.valW)...)
		s.Exts = append(s.Exts, make([]any, s.extW)...)
		if s.keepKeys {
			s.Keys = append(s.Keys, "")
		}
	}
	if s.keepKeys {
		s.Keys[id] = key
	}
	return id
}

// Release zeroes a slot, dropping its strings and maps, and makes it free.
func (s *Store) Release(id int32) {
	clear(s.nums[int(id)*s.numW : int(id+1)*s.numW])
	clear(s.Vals[int(id)*s.valW : int(id+1)*s.valW])
	clear(s.Exts[int(id)*s.extW : int(id+1)*s.extW])
	s.clearWords(id)
	if s.keepKeys {
		s.Keys[id] = ""
	}
	s.Free = append(s.Free, id)
}

func (s *Store) rows(id int32) int64 { return s.nums[int(id)*s.numW] }

// Check reports an argument value of the wrong type, before update
// changes anything.
func (s *Store) Check(r row.Row) error {
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.kind != accRows {
			if err := a.checkArg(r[a.call.Arg]); err != nil {
				return err
			}
		}
		if a.call.HasFilter {
			if v := r[a.call.Filter]; !v.IsNull() && v.Type() != row.Boolean {
				return fmt.Errorf("%s: filter value %s has type %s, want BOOLEAN", a.call, v, v.Type())
			}
		}
	}
	return nil
}

// Update accumulates (add) or retracts r into slot id. NULL arguments are
// skipped by all but COUNT(*); so are rows whose FILTER is not TRUE.
func (s *Store) Update(id int32, r row.Row, add bool) {
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	d := int64(1)
	if !add {
		d = -1
	}
	nums[0] += d
	for i := range s.Aggs {
		if a := &s.Aggs[i]; a.kind != accRows {
			s.step(id, a, nums, r, add)
		}
	}
}

// step is update for one aggregate a (not COUNT(*)) of slot id, whose
// int64s are nums.
func (s *Store) step(id int32, a *aggSlot, nums []int64, r row.Row, add bool) {
	if a.call.HasFilter {
		if f := r[a.call.Filter]; f.IsNull() || !f.Bool() {
			return
		}
	}
	v := r[a.call.Arg]
	if v.IsNull() {
		return
	}
	if a.dist >= 0 {
		// A map assignment stores its key even when the key is present
		// (Go overwrites string keys): every value the set sees is a copy
		// of its own (the contract's retention rule, doc.go).
		v = row.DetachValue(v)
		d := int64(1)
		if !add {
			d = -1
		}
		if !s.distinctStep(id, a, v, d) {
			return
		}
	}
	s.apply(id, a, nums, v, add)
}

// distinctStep counts v for a DISTINCT aggregate and reports whether v
// became present or absent: only then does the inner aggregate see it.
func (s *Store) distinctStep(id int32, a *aggSlot, v row.Value, d int64) bool {
	p := &s.Exts[int(id)*s.extW+a.dist]
	m, _ := (*p).(ValueCounts)
	if m == nil {
		m = ValueCounts{}
		*p = m
	}
	old := m[v]
	n := old + d
	if n == 0 {
		delete(m, v)
	} else {
		m[v] = n
	}
	return (old > 0) != (n > 0)
}

// apply adds or removes one non-NULL value to aggregate a.
func (s *Store) apply(id int32, a *aggSlot, nums []int64, v row.Value, add bool) {
	d := int64(1)
	if !add {
		d = -1
	}
	switch a.kind {
	case accCount:
		nums[a.num] += d
		return
	case accInt:
		nums[a.num] += d * v.Int64() // wraps as Java's long arithmetic
	case accF32:
		f := float32(math.Float64frombits(uint64(nums[a.num])))
		if add {
			f += float32(v.Float64())
		} else {
			f -= float32(v.Float64())
		}
		nums[a.num] = int64(math.Float64bits(float64(f)))
	case accF64:
		f := math.Float64frombits(uint64(nums[a.num]))
		if add {
			f += v.Float64()
		} else {
			f -= v.Float64()
		}
		nums[a.num] = int64(math.Float64bits(f))
	case accDec:
		if v.WideDecimal() {
			x := v.Decimal128()
			if !add {
				x = x.Neg()
			}
			nums[a.num], nums[a.num+1] = add128x(nums[a.num], nums[a.num+1], int64(x.Lo), x.Hi)
			break
		}
		nums[a.num], nums[a.num+1] = add128(nums[a.num], nums[a.num+1], d*v.Unscaled())
	case accMomInt:
		x := v.Int64()
		nums[a.num] += d * x
		nums[a.num+1] += d * x * x
	case accMomF64:
		x := v.Float64()
		if !add {
			x = -x
		}
		nums[a.num] = addF64(nums[a.num], x)
		nums[a.num+1] = addF64(nums[a.num+1], float64(d)*x*x)
	case accWord:
		s.setWord(id, a, nums, wordOf(a.call.ArgType.ID, v))
		return
	case accFirst:
		if p := &s.Vals[int(id)*s.valW+a.val]; p.IsNull() {
			*p = row.DetachValue(v)
		}
		return
	case accLast:
		s.Vals[int(id)*s.valW+a.val] = row.DetachValue(v)
		return
	case accList:
		l := s.list(id, a)
		if add {
			l.add(row.DetachValue(v))
		} else {
			l.remove(v)
		}
		return
	case accExtreme:
		p := &s.Vals[int(id)*s.valW+a.val]
		switch {
		case a.ext < 0: // insert-only
			if p.IsNull() || a.better(v, *p) {
				*p = row.DetachValue(v)
			}
		default:
			s.extremeAdd(id, a, nums, v, d)
		}
		return
	}
	nums[a.num+numSlots[a.kind]-1] += d
}

// addF64 adds x to the float64 whose bits slot holds.
func addF64(slot int64, x float64) int64 {
	return int64(math.Float64bits(math.Float64frombits(uint64(slot)) + x))
}

// list returns the value list of a's list accumulator in slot id.
func (s *Store) list(id int32, a *aggSlot) *ValueList {
	p := &s.Exts[int(id)*s.extW+a.ext]
	l, _ := (*p).(*ValueList)
	if l == nil {
		l = &ValueList{}
		*p = l
	}
	return l
}

func (a *aggSlot) better(v, cur row.Value) bool {
	c := row.Compare(v, cur)
	return (a.max && c > 0) || (!a.max && c < 0)
}

// extremeAdd counts v into a retractable MIN/MAX: in the inline single
// value while there is one distinct value, in the multiset after.
func (s *Store) extremeAdd(id int32, a *aggSlot, nums []int64, v row.Value, d int64) {
	v = row.DetachValue(v) // kept, or a map key (see step)
	p := &s.Exts[int(id)*s.extW+a.ext]
	if e, _ := (*p).(*Extremes); e != nil {
		e.add(v, d)
		return
	}
	one, n := &s.Vals[int(id)*s.valW+a.val], &nums[a.num]
	switch {
	case *n == 0:
		*one, *n = v, d
	case *one == v: // the multiset's identity: the map key equality
		*n += d
		if *n == 0 {
			*one = row.NullValue
		}
	default:
		e := &Extremes{Counts: map[row.Value]extremeCount{}, max: a.max}
		e.add(*one, *n)
		e.add(v, d)
		*p, *one, *n = e, row.NullValue, 0
	}
}

// Merge adds slot src's accumulators into dst (window slices).
func (s *Store) Merge(dst, src int32) {
	dn := s.nums[int(dst)*s.numW : int(dst+1)*s.numW]
	sn := s.nums[int(src)*s.numW : int(src+1)*s.numW]
	dn[0] += sn[0]
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.dist >= 0 {
			// The inner accumulator must see each value once: replay the
			// values whose presence the merge changes; a list in its
			// order, not the map's.
			sm, _ := s.Exts[int(src)*s.extW+a.dist].(ValueCounts)
			if a.kind == accList {
				sl, _ := s.Exts[int(src)*s.extW+a.ext].(*ValueList)
				if sl != nil {
					for _, v := range sl.Vals {
						if c := sm[v]; s.distinctStep(dst, a, v, c) {
							s.apply(dst, a, dn, v, c > 0)
						}
					}
				}
				continue
			}
			for v, c := range sm {
				if s.distinctStep(dst, a, v, c) {
					s.apply(dst, a, dn, v, c > 0)
				}
			}
			continue
		}
		switch a.kind {
		case accRows:
		case accWord:
			if s.hasWord(src, a) {
				s.setWord(dst, a, dn, sn[a.word])
			}
		case accMomF64:
			dn[a.num] = addF64(dn[a.num], math.Float64frombits(uint64(sn[a.num])))
			dn[a.num+1] = addF64(dn[a.num+1], math.Float64frombits(uint64(sn[a.num+1])))
			dn[a.num+2] += sn[a.num+2]
		case accFirst:
			p := &s.Vals[int(dst)*s.valW+a.val]
			if p.IsNull() {
				*p = s.Vals[int(src)*s.valW+a.val]
			}
		case accLast:
			if v := s.Vals[int(src)*s.valW+a.val]; !v.IsNull() {
				s.Vals[int(dst)*s.valW+a.val] = v
			}
		case accList:
			// Slices merge in time order: src's values come after dst's.
			if sl, _ := s.Exts[int(src)*s.extW+a.ext].(*ValueList); sl != nil && len(sl.Vals) > 0 {
				dl := s.list(dst, a)
				dl.Vals = append(dl.Vals, sl.Vals...)
			}
		case accF32:
			f := float32(math.Float64frombits(uint64(dn[a.num]))) + float32(math.Float64frombits(uint64(sn[a.num])))
			dn[a.num], dn[a.num+1] = int64(math.Float64bits(float64(f))), dn[a.num+1]+sn[a.num+1]
		case accF64:
			f := math.Float64frombits(uint64(dn[a.num])) + math.Float64frombits(uint64(sn[a.num]))
			dn[a.num], dn[a.num+1] = int64(math.Float64bits(f)), dn[a.num+1]+sn[a.num+1]
		case accDec:
			dn[a.num], dn[a.num+1] = add128x(dn[a.num], dn[a.num+1], sn[a.num], sn[a.num+1])
			dn[a.num+2] += sn[a.num+2]
		case accExtreme:
			v := s.Vals[int(src)*s.valW+a.val]
			switch {
			case a.ext < 0:
				p := &s.Vals[int(dst)*s.valW+a.val]
				if !v.IsNull() && (p.IsNull() || a.better(v, *p)) {
					*p = v
				}
			case sn[a.num] != 0:
				s.extremeAdd(dst, a, dn, v, sn[a.num])
			default:
				se, _ := s.Exts[int(src)*s.extW+a.ext].(*Extremes)
				if se == nil {
					break
				}
				for v, c := range se.Counts {
					if c.n != 0 {
						s.extremeAdd(dst, a, dn, v, c.n)
					}
				}
			}
		default: // accCount, accInt: plain sums
			for j := range numSlots[a.kind] {
				dn[a.num+j] += sn[a.num+j]
			}
		}
	}
}

// Results writes slot id's aggregate values to dst (one per aggregate).
func (s *Store) Results(id int32, dst []row.Value) {
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	for i := range s.Aggs {
		dst[i] = s.result(id, &s.Aggs[i], nums)
	}
}

func (s *Store) result(id int32, a *aggSlot, nums []int64) row.Value {
	switch a.kind {
	case accRows:
		return row.BigIntValue(nums[0])
	case accCount:
		return row.BigIntValue(nums[a.num])
	case accWord:
		return s.wordValue(id, a, nums)
	case accExtreme:
		switch {
		case a.ext < 0:
			return s.Vals[int(id)*s.valW+a.val]
		case nums[a.num] > 0:
			return s.Vals[int(id)*s.valW+a.val]
		}
		if e, _ := s.Exts[int(id)*s.extW+a.ext].(*Extremes); e != nil {
			return e.top()
		}
		return row.NullValue
	case accFirst, accLast:
		return s.Vals[int(id)*s.valW+a.val]
	case accList:
		return s.listResult(id, a)
	case accMomInt, accMomF64:
		return moments(a, nums[a.num:a.num+3])
	}
	n := nums[a.num+numSlots[a.kind]-1]
	if n == 0 {
		return row.NullValue
	}
	avg := a.call.Func == Avg || a.call.Func == AvgDistinct
	switch a.kind {
	case accInt:
		v := nums[a.num]
		if avg {
			v /= n // truncates toward zero, as Java's long division
		}
		if a.call.ArgType.ID == row.Int {
			return row.IntValue(int32(v))
		}
		return row.BigIntValue(v)
	case accF32:
		return row.FloatValue(float32(math.Float64frombits(uint64(nums[a.num]))))
	case accF64:
		f := math.Float64frombits(uint64(nums[a.num]))
		if avg {
			f /= float64(n)
		}
		if a.call.ArgType.ID == row.Float {
			return row.FloatValue(float32(f))
		}
		return row.DoubleValue(f)
	case accDec:
		lo, hi := nums[a.num], nums[a.num+1]
		if avg {
			return avgDecimal(lo, hi, n, a.call.ArgType.Scale)
		}
		if x := (row.Int128{Hi: hi, Lo: uint64(lo)}); x.DigitsFit(row.MaxDecimalPrecision) {
			return row.Decimal128Value(x, a.call.ArgType.Scale)
		}
		return row.NullValue // Flink's decimal overflow gives NULL
	}
	return row.NullValue
}

// listResult is LISTAGG's joined string or FIRST/LAST_VALUE's end of the
// list; NULL for no values.
func (s *Store) listResult(id int32, a *aggSlot) row.Value {
	l, _ := s.Exts[int(id)*s.extW+a.ext].(*ValueList)
	if l == nil || len(l.Vals) == 0 {
		return row.NullValue
	}
	switch a.call.Func {
	case FirstValue:
		return l.Vals[0]
	case LastValue:
		return l.Vals[len(l.Vals)-1]
	}
	n := len(a.call.Sep) * (len(l.Vals) - 1)
	for _, v := range l.Vals {
		n += len(v.Str())
	}
	b := make([]byte, 0, n)
	for i, v := range l.Vals {
		if i > 0 {
			b = append(b, a.call.Sep...)
		}
		b = append(b, v.Str()...)
	}
	return row.StringValue(string(b))
}
