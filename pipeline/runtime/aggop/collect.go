package aggop

import (
	"math"
	"slices"
	"unicode/utf16"

	"github.com/etld/etld/pipeline/row"
)

// COLLECT(x) keeps each distinct non-NULL value with its count (a
// valueCounts in the slot's map), as Flink's CollectAggFunction keeps a
// MapView: an accumulation adds 1, a retraction takes 1 away and drops the
// value at 0; a retraction of a value not there leaves it at -1, as
// Flink's does. Its result is the MULTISET: a MAP of each value to its
// count (INT), empty when the group has no value.

// bagAdd counts v (already detached: a map key outlives its batch) d
// times into a's multiset in slot id.
func (s *Store) bagAdd(id int32, a *aggSlot, v row.Value, d int64) {
	p := &s.exts[int(id)*s.extW+a.ext]
	m, _ := (*p).(valueCounts)
	if m == nil {
		m = valueCounts{}
		*p = m
	}
	if n := m[v] + d; n == 0 {
		delete(m, v)
	} else {
		m[v] = n
	}
}

// bagResult is a's MULTISET in slot id, its entries in the order Flink
// prints them (javaOrder), or PERCENTILE's value.
func (s *Store) bagResult(id int32, a *aggSlot) row.Value {
	m, _ := s.exts[int(id)*s.extW+a.ext].(valueCounts)
	if a.call.Func == Percentile {
		return percentile(m, a.call.Pct)
	}
	keys := make([]row.Value, 0, len(m))
	for v := range m {
		keys = append(keys, v)
	}
	javaOrder(keys)
	counts := make([]row.Value, len(keys))
	for i, k := range keys {
		counts[i] = row.IntValue(int32(m[k]))
	}
	return row.MapValue(keys, counts)
}

// javaOrder orders a multiset's values as Flink prints them: Flink hands
// the print connector a java.util.HashMap of the external values
// (MapMapConverter: new HashMap, one put per entry), whose iteration
// order is by bucket: the value's hashCode, spread as HashMap spreads it,
// modulo a table of at least 16 buckets, doubled while the values pass
// three quarters of it. INT, BIGINT, BOOLEAN, FLOAT, DOUBLE and STRING
// values hash as Java's Integer, Long, Boolean, Float, Double and String;
// the values of other types are listed in ascending order. Values of one
// bucket are listed in ascending order too (Java lists them in the order
// Flink's accumulator gave them).
func javaOrder(vs []row.Value) {
	slices.SortFunc(vs, row.Compare)
	if len(vs) == 0 || !javaHashed(vs[0].Type()) {
		return
	}
	n := 16
	for len(vs) > n*3/4 {
		n *= 2
	}
	mask := uint32(n - 1)
	slices.SortStableFunc(vs, func(a, b row.Value) int {
		return int(javaBucket(a)&mask) - int(javaBucket(b)&mask)
	})
}

func javaHashed(id row.TypeID) bool {
	switch id {
	case row.Int, row.BigInt, row.Boolean, row.Float, row.Double, row.String:
		return true
	}
	return false
}

// javaBucket is v's Java hashCode as java.util.HashMap spreads it
// (h ^ h>>>16).
func javaBucket(v row.Value) uint32 {
	var h uint32
	switch v.Type() {
	case row.Int:
		h = uint32(int32(v.Int64()))
	case row.BigInt:
		h = javaLong(uint64(v.Int64()))
	case row.Boolean:
		h = 1237
		if v.Bool() {
			h = 1231
		}
	case row.Float:
		h = javaFloatBits(float32(v.Float64()))
	case row.Double:
		h = javaLong(javaDoubleBits(v.Float64()))
	case row.String:
		for _, u := range utf16.Encode([]rune(v.Str())) {
			h = 31*h + uint32(u)
		}
	}
	return h ^ h>>16
}

// javaLong is Long.hashCode.
func javaLong(x uint64) uint32 { return uint32(x ^ x>>32) }

// javaFloatBits is Float.floatToIntBits: every NaN is the canonical one.
func javaFloatBits(f float32) uint32 {
	if f != f {
		return 0x7fc00000
	}
	return math.Float32bits(f)
}

// javaDoubleBits is Double.doubleToLongBits.
func javaDoubleBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}
