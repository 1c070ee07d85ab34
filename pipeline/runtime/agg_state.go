package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// aggStore holds the accumulators of many groups in flat arrays indexed by
// slot id, each with a fixed stride: int64 counters and sums, Values for
// MIN/MAX extremes, and the maps of DISTINCT and of retractable MIN/MAX
// past their first distinct value. A group costs its slots and nothing else: no
// per-group object, no per-aggregate interface. The arrays and maps are
// plain data, ready to be snapshotted.
type aggStore struct {
	aggs []aggSlot
	// numW, valW, extW are the strides; nums[id*numW] counts the group's
	// rows (accumulated minus retracted).
	numW, valW, extW int
	nums             []int64
	vals             []row.Value
	exts             []any // *extremes or valueCounts
	// keys holds each slot's group key when the owner emits groups
	// without an input row at hand (batch mode, windows).
	keys     []string
	keepKeys bool
	free     []int32
	slots    int32
}

// newAggStore lays out aggs. insertOnly lets MIN/MAX keep only the
// extreme; otherwise they keep every value with its count so that the
// extreme survives its retraction.
func newAggStore(aggs []AggCall, insertOnly, keepKeys bool) *aggStore {
	s := &aggStore{numW: 1, keepKeys: keepKeys}
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
		s.aggs = append(s.aggs, a)
	}
	return s
}

// alloc returns a zeroed slot.
func (s *aggStore) alloc(key string) int32 {
	var id int32
	if n := len(s.free); n > 0 {
		id, s.free = s.free[n-1], s.free[:n-1]
	} else {
		id = s.slots
		s.slots++
		s.nums = append(s.nums, make([]int64, s.numW)...)
		s.vals = append(s.vals, make([]row.Value, s.valW)...)
		s.exts = append(s.exts, make([]any, s.extW)...)
		if s.keepKeys {
			s.keys = append(s.keys, "")
		}
	}
	if s.keepKeys {
		s.keys[id] = key
	}
	return id
}

// release zeroes a slot, dropping its strings and maps, and makes it free.
func (s *aggStore) release(id int32) {
	clear(s.nums[int(id)*s.numW : int(id+1)*s.numW])
	clear(s.vals[int(id)*s.valW : int(id+1)*s.valW])
	clear(s.exts[int(id)*s.extW : int(id+1)*s.extW])
	if s.keepKeys {
		s.keys[id] = ""
	}
	s.free = append(s.free, id)
}

func (s *aggStore) rows(id int32) int64 { return s.nums[int(id)*s.numW] }

// check reports an argument value of the wrong type, before update
// changes anything.
func (s *aggStore) check(r row.Row) error {
	for i := range s.aggs {
		a := &s.aggs[i]
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

// update accumulates (add) or retracts r into slot id. NULL arguments are
// skipped by all but COUNT(*); so are rows whose FILTER is not TRUE.
func (s *aggStore) update(id int32, r row.Row, add bool) {
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	d := int64(1)
	if !add {
		d = -1
	}
	nums[0] += d
	for i := range s.aggs {
		a := &s.aggs[i]
		if a.kind == accRows {
			continue
		}
		if a.call.HasFilter {
			if f := r[a.call.Filter]; f.IsNull() || !f.Bool() {
				continue
			}
		}
		v := r[a.call.Arg]
		if v.IsNull() {
			continue
		}
		if a.dist >= 0 {
			if !s.distinctStep(id, a, v, d) {
				continue
			}
		}
		s.apply(id, a, nums, v, add)
	}
}

// distinctStep counts v for a DISTINCT aggregate and reports whether v
// became present or absent: only then does the inner aggregate see it.
func (s *aggStore) distinctStep(id int32, a *aggSlot, v row.Value, d int64) bool {
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
func (s *aggStore) apply(id int32, a *aggSlot, nums []int64, v row.Value, add bool) {
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
	case accFirst:
		if p := &s.vals[int(id)*s.valW+a.val]; p.IsNull() {
			*p = v
		}
		return
	case accLast:
		s.vals[int(id)*s.valW+a.val] = v
		return
	case accList:
		l := s.list(id, a)
		if add {
			l.add(v)
		} else {
			l.remove(v)
		}
		return
	case accExtreme:
		p := &s.vals[int(id)*s.valW+a.val]
		switch {
		case a.ext < 0: // insert-only
			if p.IsNull() || a.better(v, *p) {
				*p = v
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
func (s *aggStore) list(id int32, a *aggSlot) *valueList {
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
func (s *aggStore) extremeAdd(id int32, a *aggSlot, nums []int64, v row.Value, d int64) {
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
		e := &extremes{counts: map[row.Value]extremeCount{}, max: a.max}
		e.add(*one, *n)
		e.add(v, d)
		*p, *one, *n = e, row.NullValue, 0
	}
}

// merge adds slot src's accumulators into dst (window slices).
func (s *aggStore) merge(dst, src int32) {
	dn := s.nums[int(dst)*s.numW : int(dst+1)*s.numW]
	sn := s.nums[int(src)*s.numW : int(src+1)*s.numW]
	dn[0] += sn[0]
	for i := range s.aggs {
		a := &s.aggs[i]
		if a.dist >= 0 {
			// The inner accumulator must see each value once: replay the
			// values whose presence the merge changes; a list in its
			// order, not the map's.
			sm, _ := s.exts[int(src)*s.extW+a.dist].(valueCounts)
			if a.kind == accList {
				sl, _ := s.exts[int(src)*s.extW+a.ext].(*valueList)
				if sl != nil {
					for _, v := range sl.vals {
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

// results writes slot id's aggregate values to dst (one per aggregate).
func (s *aggStore) results(id int32, dst []row.Value) {
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	for i := range s.aggs {
		dst[i] = s.result(id, &s.aggs[i], nums)
	}
}

func (s *aggStore) result(id int32, a *aggSlot, nums []int64) row.Value {
	switch a.kind {
	case accRows:
		return row.BigIntValue(nums[0])
	case accCount:
		return row.BigIntValue(nums[a.num])
	case accExtreme:
		switch {
		case a.ext < 0:
			return s.vals[int(id)*s.valW+a.val]
		case nums[a.num] > 0:
			return s.vals[int(id)*s.valW+a.val]
		}
		if e, _ := s.exts[int(id)*s.extW+a.ext].(*extremes); e != nil {
			return e.top()
		}
		return row.NullValue
	case accFirst, accLast:
		return s.vals[int(id)*s.valW+a.val]
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
		if v, ok := fit128(lo, hi); ok && v > -maxDecimal18 && v < maxDecimal18 {
			return row.DecimalValue(v, a.call.ArgType.Scale)
		}
		return row.NullValue // Flink's decimal overflow gives NULL
	}
	return row.NullValue
}

// listResult is LISTAGG's joined string or FIRST/LAST_VALUE's end of the
// list; NULL for no values.
func (s *aggStore) listResult(id int32, a *aggSlot) row.Value {
	l, _ := s.exts[int(id)*s.extW+a.ext].(*valueList)
	if l == nil || len(l.vals) == 0 {
		return row.NullValue
	}
	switch a.call.Func {
	case FirstValue:
		return l.vals[0]
	case LastValue:
		return l.vals[len(l.vals)-1]
	}
	n := len(a.call.Sep) * (len(l.vals) - 1)
	for _, v := range l.vals {
		n += len(v.Str())
	}
	b := make([]byte, 0, n)
	for i, v := range l.vals {
		if i > 0 {
			b = append(b, a.call.Sep...)
		}
		b = append(b, v.Str()...)
	}
	return row.StringValue(string(b))
}

// moments computes STDDEV_POP/SAMP and VAR_POP/SAMP from the sum, the sum
// of squares and the count, the way Flink computes them: Calcite rewrites
// the call to (Σx² - (Σx)²/n) / n (or n-1) in the argument's type, so an
// INT or BIGINT argument gives integer arithmetic (wrapping, truncating)
// and the square root is truncated back to the argument type. NULL for no
// values, and for the sample variants of a single value.
func moments(a *aggSlot, m []int64) row.Value {
	n := m[2]
	f := a.call.Func
	samp := f == StddevSamp || f == VarSamp
	root := f == StddevPop || f == StddevSamp
	den := n
	if samp {
		den = n - 1
	}
	if n <= 0 || den <= 0 {
		return row.NullValue
	}
	if a.kind == accMomF64 {
		sum, sq := math.Float64frombits(uint64(m[0])), math.Float64frombits(uint64(m[1]))
		v := (sq - sum*sum/float64(n)) / float64(den)
		if root {
			v = math.Sqrt(v)
		}
		if a.call.ArgType.ID == row.Float {
			return row.FloatValue(float32(v))
		}
		return row.DoubleValue(v)
	}
	sum, sq := m[0], m[1]
	sumSq := sum * sum
	isInt := a.call.ArgType.ID == row.Int
	if isInt {
		sum, sq = int64(int32(sum)), int64(int32(sq))
		sumSq = int64(int32(sum) * int32(sum))
	}
	v := (sq - sumSq/n) / den
	if root {
		v = javaLong(math.Sqrt(float64(v)))
	}
	if isInt {
		return row.IntValue(javaInt(v, root))
	}
	return row.BigIntValue(v)
}

// javaLong is Java's (long) cast of a double: NaN gives 0, out of range
// saturates.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaInt narrows v to INT: a square root (from a double) saturates as
// Java's (int) cast of a double; an integer variance wraps as (int) of a
// long.
func javaInt(v int64, saturate bool) int32 {
	if saturate {
		return int32(max(min(v, math.MaxInt32), math.MinInt32))
	}
	return int32(v)
}

// maxDecimal18 is 10^18: DECIMAL(18, s) holds unscaled values below it.
const maxDecimal18 = 1_000_000_000_000_000_000

// add128 adds v to the 128-bit integer (lo, hi).
func add128(lo, hi, v int64) (int64, int64) {
	return add128x(lo, hi, v, v>>63)
}

func add128x(lo, hi, lo2, hi2 int64) (int64, int64) {
	l, carry := bits.Add64(uint64(lo), uint64(lo2), 0)
	h, _ := bits.Add64(uint64(hi), uint64(hi2), carry)
	return int64(l), int64(h)
}

// fit128 returns (lo, hi) as an int64 when it fits.
func fit128(lo, hi int64) (int64, bool) { return lo, hi == lo>>63 }

func big128(lo, hi int64) *big.Int {
	b := new(big.Int).SetInt64(hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(uint64(lo)))
}

var pow10 = [...]int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000}

// avgDecimal divides the sum (lo, hi) of n values of scale s by n, at
// scale max(6, s), rounding half away from zero (Flink's HALF_UP); NULL
// when the result does not fit DECIMAL(18).
func avgDecimal(lo, hi, n int64, s int) row.Value {
	rs := avgDecimalScale(s)
	k := rs - s // 0..6
	if v, ok := fit128(lo, hi); ok && v > math.MinInt64/pow10[k] && v < math.MaxInt64/pow10[k] && n > 0 {
		y := v * pow10[k]
		q, r := y/n, y%n
		if r < 0 {
			r = -r
		}
		if uint64(r)*2 >= uint64(n) {
			if y < 0 {
				q--
			} else {
				q++
			}
		}
		if q > -maxDecimal18 && q < maxDecimal18 {
			return row.DecimalValue(q, rs)
		}
		return row.NullValue
	}
	y := big128(lo, hi)
	y.Mul(y, big.NewInt(pow10[k]))
	bn := big.NewInt(n)
	q, r := new(big.Int).QuoRem(y, bn, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(bn)) >= 0 {
		if y.Sign()*bn.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() || q.Int64() <= -maxDecimal18 || q.Int64() >= maxDecimal18 {
		return row.NullValue
	}
	return row.DecimalValue(q.Int64(), rs)
}

// rowArena carves output rows from shared chunks, so that emitting a row
// costs no allocation of its own. Rows are never reused: receivers may
// keep them.
type rowArena struct{ buf []row.Value }

func (a *rowArena) row(width int) row.Row {
	if len(a.buf)+width > cap(a.buf) {
		a.buf = make([]row.Value, 0, max(256*width, 1))
	}
	n := len(a.buf)
	a.buf = a.buf[:n+width]
	return a.buf[n : n+width : n+width]
}

// decodeKey reads the values row.KeyOf encoded into key, filling dst. It
// is row.AppendKey's inverse (a test holds the two together); strings of
// the result share key's memory.
func decodeKey(dst []row.Value, key string) error {
	for i := range dst {
		if len(key) < 2 {
			return fmt.Errorf("group key truncated at column %d", i)
		}
		id, scale := row.TypeID(key[0]), int(key[1])
		key = key[2:]
		switch id {
		case row.Null:
			dst[i] = row.NullValue
			continue
		case row.String, row.Bytes:
			n, w := uvarint(key)
			if w <= 0 || n > uint64(len(key)-w) {
				return fmt.Errorf("group key column %d: bad string length", i)
			}
			s := key[w : w+int(n)]
			key = key[w+int(n):]
			if id == row.String {
				dst[i] = row.StringValue(s)
			} else {
				dst[i] = row.BytesValue([]byte(s))
			}
			continue
		}
		if len(key) < 8 {
			return fmt.Errorf("group key column %d truncated", i)
		}
		var n uint64
		for j := 7; j >= 0; j-- {
			n = n<<8 | uint64(key[j])
		}
		key = key[8:]
		switch id {
		case row.Boolean:
			dst[i] = row.BoolValue(n != 0)
		case row.Int:
			dst[i] = row.IntValue(int32(int64(n)))
		case row.BigInt:
			dst[i] = row.BigIntValue(int64(n))
		case row.Float:
			dst[i] = row.FloatValue(float32(math.Float64frombits(n)))
		case row.Double:
			dst[i] = row.DoubleValue(math.Float64frombits(n))
		case row.Decimal:
			dst[i] = row.DecimalValue(int64(n), scale)
		case row.Date:
			dst[i] = row.DateValue(int32(int64(n)))
		case row.Timestamp:
			dst[i] = row.TimestampValue(int64(n))
		case row.TimestampLTZ:
			dst[i] = row.TimestampLTZValue(int64(n))
		default:
			return fmt.Errorf("group key column %d: unknown type %d", i, id)
		}
	}
	if len(key) != 0 {
		return fmt.Errorf("group key has %d bytes after its %d columns", len(key), len(dst))
	}
	return nil
}

// uvarint is binary.Uvarint over a string: the number and the bytes it
// took, or w <= 0 when s does not start with a valid one.
func uvarint(s string) (n uint64, w int) {
	for i := 0; i < len(s) && i < 10; i++ {
		b := s[i]
		if b < 0x80 {
			if i == 9 && b > 1 {
				return 0, -1
			}
			return n | uint64(b)<<(7*i), i + 1
		}
		n |= uint64(b&0x7f) << (7 * i)
	}
	return 0, 0
}

// Snapshot encoding of an aggStore: the slot count, the free list, then
// every slot in id order (free ones are zeroed and cost a few bytes): its
// key, its int64 slots (varints), its Value slots and its maps (a tag, 0
// for none, then value/count pairs). Slot ids survive a restore, so the
// order groups were first seen, which batch mode and windows emit in,
// does too.
const (
	extNone     = 0
	extCounts   = 1 // valueCounts of a DISTINCT aggregate
	extExtremes = 2 // extremes of a retractable MIN/MAX
	extList     = 3 // valueList of LISTAGG and retractable FIRST/LAST_VALUE
)

// appendState appends the store's state; key gives a slot's group key
// when the store does not keep keys itself.
func (s *aggStore) appendState(dst []byte, key func(id int32) string) []byte {
	dst = binary.AppendUvarint(dst, uint64(s.slots))
	dst = binary.AppendUvarint(dst, uint64(len(s.free)))
	for _, id := range s.free {
		dst = binary.AppendUvarint(dst, uint64(id))
	}
	for id := range s.slots {
		k := ""
		if s.keepKeys {
			k = s.keys[id]
		} else if key != nil {
			k = key(id)
		}
		dst = row.AppendString(dst, k)
		for _, n := range s.nums[int(id)*s.numW : int(id+1)*s.numW] {
			dst = binary.AppendVarint(dst, n)
		}
		for _, v := range s.vals[int(id)*s.valW : int(id+1)*s.valW] {
			dst = row.AppendValue(dst, v)
		}
		for _, x := range s.exts[int(id)*s.extW : int(id+1)*s.extW] {
			switch m := x.(type) {
			case valueCounts:
				dst = append(dst, extCounts)
				dst = binary.AppendUvarint(dst, uint64(len(m)))
				for v, c := range m {
					dst = row.AppendValue(dst, v)
					dst = binary.AppendVarint(dst, c)
				}
			case *valueList:
				dst = append(dst, extList)
				dst = binary.AppendUvarint(dst, uint64(len(m.vals)))
				for _, v := range m.vals {
					dst = row.AppendValue(dst, v)
				}
			case *extremes:
				dst = append(dst, extExtremes)
				live := 0
				for _, c := range m.counts {
					if c.n != 0 {
						live++
					}
				}
				dst = binary.AppendUvarint(dst, uint64(live))
				for v, c := range m.counts {
					if c.n != 0 {
						dst = row.AppendValue(dst, v)
						dst = binary.AppendVarint(dst, c.n)
					}
				}
			default:
				dst = append(dst, extNone)
			}
		}
	}
	return dst
}

// restoreState replaces the store's groups with those appendState wrote;
// keys returns each slot's key (free slots have "").
func (s *aggStore) restoreState(d *row.Decoder) (keys []string) {
	// What each map slot holds, from the layout: DISTINCT counts or a
	// MIN/MAX multiset.
	extTag := make([]byte, s.extW)
	extMax := make([]bool, s.extW)
	for _, a := range s.aggs {
		if a.ext >= 0 {
			extTag[a.ext], extMax[a.ext] = extExtremes, a.max
			if a.kind == accList {
				extTag[a.ext] = extList
			}
		}
		if a.dist >= 0 {
			extTag[a.dist] = extCounts
		}
	}
	slots := d.Count(1 + s.numW + s.valW + s.extW)
	free := make([]int32, d.Count(1))
	for i := range free {
		id := d.Uvarint()
		if id >= uint64(slots) {
			d.Fail("free slot %d of %d", id, slots)
		}
		free[i] = int32(id)
	}
	s.slots = int32(slots)
	s.free = free
	s.nums = make([]int64, slots*s.numW)
	s.vals = make([]row.Value, slots*s.valW)
	s.exts = make([]any, slots*s.extW)
	s.keys = nil
	if s.keepKeys {
		s.keys = make([]string, slots)
	}
	keys = make([]string, slots)
	for id := 0; id < slots && d.Err() == nil; id++ {
		keys[id] = d.Str()
		if s.keepKeys {
			s.keys[id] = keys[id]
		}
		for j := range s.numW {
			s.nums[id*s.numW+j] = d.Varint()
		}
		for j := range s.valW {
			s.vals[id*s.valW+j] = d.Value()
		}
		for j := range s.extW {
			tag := d.Byte()
			if tag == extNone {
				continue
			}
			if tag != extTag[j] {
				d.Fail("slot %d map %d: tag %d, want %d", id, j, tag, extTag[j])
				break
			}
			if tag == extList {
				l := &valueList{vals: make([]row.Value, d.Count(1))}
				for k := range l.vals {
					l.vals[k] = d.Value()
				}
				s.exts[id*s.extW+j] = l
				continue
			}
			n := d.Count(2)
			if tag == extCounts {
				m := make(valueCounts, n)
				for range n {
					v := d.Value()
					m[v] = d.Varint()
				}
				s.exts[id*s.extW+j] = m
				continue
			}
			e := &extremes{counts: make(map[row.Value]extremeCount, n), max: extMax[j]}
			for range n {
				v := d.Value()
				e.add(v, d.Varint())
			}
			s.exts[id*s.extW+j] = e
		}
	}
	return keys
}
