package aggop

import (
	"math"
	"unsafe"

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
// (state.OffHeap). The arrays and maps are plain data, ready to be
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
	mem     *state.OffHeap
	nums    []int64
	vals    []row.Value
	exts    []any // *extremes, *valueList, valueCounts, or a DISTINCT set: *wordSet, *valueSet[row.Value]
	// keys holds each slot's group key when the owner emits groups
	// without an input row at hand (batch mode, windows).
	Keys     []string
	keepKeys bool
	Free     []int32
	Slots    int32
	// user holds the queued changes of each user aggregate, userErr the
	// first failure of one (user.go).
	user    []userQueue
	userErr error
	// sets are the DISTINCT sets, each shared by the DISTINCT aggregates
	// over one column (distinct_set.go); insertOnly says they keep a bit
	// per aggregate, not a count.
	sets       []distinctSet
	insertOnly bool
	// strs are the sets of STRING and BYTES values, nstr a slot.
	strs    []strSet
	nstr    int
	touched uint64 // what touchStrSets read, kept so that its loads are not dropped
	// With DeferSets (distinct_defer.go), logs holds each deferred
	// set's updates not applied yet, pending their number (settle
	// applies them at logCap); setEntries is how many entries the
	// flushes made, logSorted a flush's scratch.
	deferring  bool
	logs       []setLog
	pending    int
	logCap     int
	logMin     int // minSetLog; tests flush more often
	setEntries int
	logSorted  []pendEntry
	// setViews is, for each ext slot, the set member whose map a
	// snapshot writes there.
	setViews []setView
	// widenKey and widenIn, when not nil, are the retagging of the next
	// RestoreState by column (operator.ColumnWidener): per position of
	// the saved keys, and per input column for the values the aggregates
	// over it keep; row.Null reads a value as saved.
	widenKey, widenIn []row.TypeID
	// checks are Check's tests of a row (agg_check.go).
	checks []argCheck
}

// MemBytes is the memory of the store's arrays: what a group costs
// whatever its values. Strings in Values and the lists and maps of
// LISTAGG, DISTINCT and retractable MIN/MAX grow with the values and
// are not counted: the figure is a floor.
func (s *Store) MemBytes() int64 {
	n := int64(cap(s.present)+cap(s.nums))*8 + int64(cap(s.vals))*int64(unsafe.Sizeof(row.Value{}))
	n += int64(cap(s.exts))*16 + int64(cap(s.Keys))*16 + int64(cap(s.Free))*4 + int64(cap(s.strs))*int64(unsafe.Sizeof(strSet{}))
	for _, l := range s.logs { // updates logged, not applied yet
		n += int64(cap(l.e))*int64(unsafe.Sizeof(pendEntry{})) + int64(cap(l.data))
	}
	n += int64(cap(s.logSorted)) * int64(unsafe.Sizeof(pendEntry{}))
	return n
}

// NewStore lays out aggs. insertOnly lets MIN/MAX keep only the
// extreme; otherwise they keep every value with its count so that the
// extreme survives its retraction.
func NewStore(aggs []AggCall, insertOnly, keepKeys bool) *Store {
	return newStoreWords(aggs, insertOnly, keepKeys, true)
}

// newStoreWords is NewStore; words false keeps every value a
// Value, as before there were words (tests compare the two).
func newStoreWords(aggs []AggCall, insertOnly, keepKeys, words bool) *Store {
	s := &Store{numW: 1, keepKeys: keepKeys}
	s.mem = state.NewOffHeap(s)
	for _, c := range aggs {
		a := newAggSlot(c)
		if !insertOnly && (a.kind == accFirst || a.kind == accLast) {
			// A retraction of the first (last) value needs the one before.
			a.kind = accList
		}
		switch a.kind {
		case accFirst, accLast:
			a.val, s.valW = s.valW, s.valW+1
		case accList, accBag, accArray, accObject:
			a.ext, s.extW = s.extW, s.extW+1
		case accUser:
			a.ext, s.extW = s.extW, s.extW+1
			a.user = len(s.user)
			s.user = append(s.user, userQueue{})
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
	s.layDistinctSets(insertOnly)
	s.layChecks()
	return s
}

// Alloc returns a zeroed slot.
func (s *Store) Alloc(key string) int32 {
	var id int32
	if n := len(s.Free); n > 0 {
		id, s.Free = s.Free[n-1], s.Free[:n-1]
	} else {
		id = s.Slots
		s.Slots++
		s.nums = state.OffHeapGrow(s.mem, s.nums, len(s.nums)+s.numW)
		s.growPresent(int(s.Slots))
		s.vals = append(s.vals, make([]row.Value, s.valW)...)
		s.exts = append(s.exts, make([]any, s.extW)...)
		s.strs = append(s.strs, make([]strSet, s.nstr)...)
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
	s.settle()
	if s.hasUser() {
		// No queued change may outlive its slot.
		s.flushUser()
	}
	clear(s.nums[int(id)*s.numW : int(id+1)*s.numW])
	clear(s.vals[int(id)*s.valW : int(id+1)*s.valW])
	clear(s.exts[int(id)*s.extW : int(id+1)*s.extW])
	clear(s.strs[int(id)*s.nstr : int(id+1)*s.nstr])
	s.clearWords(id)
	if s.keepKeys {
		s.Keys[id] = ""
	}
	s.Free = append(s.Free, id)
}

func (s *Store) rows(id int32) int64 { return s.nums[int(id)*s.numW] }

// Rows is the number of rows slot id holds: added less retracted.
func (s *Store) Rows(id int32) int64 { s.settle(); return s.rows(id) }

// Update accumulates (add) or retracts r into slot id. NULL arguments are
// skipped by all but COUNT(*); so are rows whose FILTER is not TRUE.
func (s *Store) Update(id int32, r row.Row, add bool) {
	s.settle()
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	d := int64(1)
	if !add {
		d = -1
	}
	nums[0] += d
	for i := range s.Aggs {
		if a := &s.Aggs[i]; a.kind != accRows && a.set < 0 {
			s.step(id, a, nums, r, add)
		}
	}
	if len(s.sets) > 0 {
		s.setStep(id, nums, r, add)
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
	if v.IsNull() && !(a.call.KeepNulls && a.kind == accArray) {
		return
	}
	if a.dist >= 0 {
		// A map assignment stores its key even when the key is present
		// (Go overwrites string keys): every value the set sees is a copy
		// of its own: a value kept past its batch must not pin the batch's
		// memory or the read block its strings point into.
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
	p := &s.exts[int(id)*s.extW+a.dist]
	m, _ := (*p).(valueCounts)
	if m == nil {
		m = valueCounts{}
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
		if p := &s.vals[int(id)*s.valW+a.val]; p.IsNull() {
			*p = row.DetachValue(v)
		}
		return
	case accLast:
		s.vals[int(id)*s.valW+a.val] = row.DetachValue(v)
		return
	case accList:
		l := s.list(id, a)
		if add {
			l.add(row.DetachValue(v))
		} else {
			l.remove(v)
		}
		return
	case accBag:
		s.bagAdd(id, a, row.DetachValue(v), d) // a map key (see step)
		return
	case accArray:
		s.arrayOf(id, a).add(row.DetachValue(v), add)
		return
	case accObject:
		s.objectStep(id, a, v, add)
		return
	case accUser:
		s.userStep(id, a, v, add)
		return
	case accExtreme:
		p := &s.vals[int(id)*s.valW+a.val]
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
func (s *Store) list(id int32, a *aggSlot) *valueList {
	p := &s.exts[int(id)*s.extW+a.ext]
	l, _ := (*p).(*valueList)
	if l == nil {
		l = &valueList{}
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
	p := &s.exts[int(id)*s.extW+a.ext]
	if e, _ := (*p).(*extremes); e != nil {
		e.add(v, d)
		return
	}
	one, n := &s.vals[int(id)*s.valW+a.val], &nums[a.num]
	switch {
	case *n == 0:
		*one, *n = v, d
	case *one == v: // the multiset's identity: the map key equality
		*n += d
		if *n == 0 {
			*one = row.NullValue
		}
	default:
		e := newExtremes(a.max, 0)
		e.add(*one, *n)
		e.add(v, d)
		*p, *one, *n = e, row.NullValue, 0
	}
}

// Merge adds slot src's accumulators into dst (window slices).
func (s *Store) Merge(dst, src int32) { s.merge(dst, src, false) }

// MergeAhead is Merge where src's values come before dst's in the list
// aggregates that keep Flink's merge order: a HOP window merges its
// slices into the first one in time order, while Flink merges them from
// the newest to the oldest, so its ARRAY_AGG lists the newest slice's
// values first.
func (s *Store) MergeAhead(dst, src int32) { s.merge(dst, src, true) }

func (s *Store) merge(dst, src int32, ahead bool) {
	s.settle()
	dn := s.nums[int(dst)*s.numW : int(dst+1)*s.numW]
	sn := s.nums[int(src)*s.numW : int(src+1)*s.numW]
	dn[0] += sn[0]
	s.mergeSets(dst, src, dn)
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.set >= 0 {
			continue
		}
		if a.dist >= 0 {
			// The inner accumulator must see each value once: replay the
			// values whose presence the merge changes; a list in its
			// order, not the map's.
			sm, _ := s.exts[int(src)*s.extW+a.dist].(valueCounts)
			var order []row.Value
			switch a.kind {
			case accList:
				if sl, _ := s.exts[int(src)*s.extW+a.ext].(*valueList); sl != nil {
					order = sl.vals
				}
			case accArray:
				if sa, _ := s.exts[int(src)*s.extW+a.ext].(*arrayAcc); sa != nil {
					order = sa.vals
				}
			}
			if a.kind == accList || a.kind == accArray {
				{
					for _, v := range order {
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
		case accUser:
			s.userMerge(dst, src, a)
		case accWord:
			if s.hasWord(src, a) {
				s.setWord(dst, a, dn, sn[a.word])
			}
		case accMomF64:
			dn[a.num] = addF64(dn[a.num], math.Float64frombits(uint64(sn[a.num])))
			dn[a.num+1] = addF64(dn[a.num+1], math.Float64frombits(uint64(sn[a.num+1])))
			dn[a.num+2] += sn[a.num+2]
		case accFirst:
			p := &s.vals[int(dst)*s.valW+a.val]
			if p.IsNull() {
				*p = s.vals[int(src)*s.valW+a.val]
			}
		case accLast:
			if v := s.vals[int(src)*s.valW+a.val]; !v.IsNull() {
				s.vals[int(dst)*s.valW+a.val] = v
			}
		case accBag:
			sm, _ := s.exts[int(src)*s.extW+a.ext].(valueCounts)
			for v, c := range sm {
				s.bagAdd(dst, a, v, c)
			}
		case accArray:
			if sa, _ := s.exts[int(src)*s.extW+a.ext].(*arrayAcc); sa != nil {
				s.arrayOf(dst, a).merge(sa, ahead)
			}
		case accObject:
			if so, _ := s.exts[int(src)*s.extW+a.ext].(*objectAcc); so != nil {
				if err := s.objectOf(dst, a).merge(so); err != nil {
					s.fail(err)
				}
			}
		case accList:
			// Slices merge in time order: src's values come after dst's.
			if sl, _ := s.exts[int(src)*s.extW+a.ext].(*valueList); sl != nil && len(sl.vals) > 0 {
				dl := s.list(dst, a)
				dl.vals = append(dl.vals, sl.vals...)
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
			v := s.vals[int(src)*s.valW+a.val]
			switch {
			case a.ext < 0:
				p := &s.vals[int(dst)*s.valW+a.val]
				if !v.IsNull() && (p.IsNull() || a.better(v, *p)) {
					*p = v
				}
			case sn[a.num] != 0:
				s.extremeAdd(dst, a, dn, v, sn[a.num])
			default:
				se, _ := s.exts[int(src)*s.extW+a.ext].(*extremes)
				if se == nil {
					break
				}
				for v, c := range se.counts {
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
