package aggop

import (
	"cmp"
	"math"
	"slices"

	"github.com/etld/etld/pipeline/row"
)

// PERCENTILE(x, p) keeps each distinct value of x as a DOUBLE (the
// planner projects the cast) with its count, COLLECT's multiset
// (valueCounts): an accumulation adds 1, a retraction takes 1 away, a
// value at 0 leaves, as Flink's PercentileAggFunction keeps its MapView.
// Its result is the value at position p * (n - 1) + 1 of the n values in
// order, interpolated linearly between its two neighbours; NULL when the
// counts add up to 0 or less.

// percentile is Flink's PercentileAccumulator.getValue for one
// percentage.
func percentile(m valueCounts, pct float64) row.Value {
	type entry struct {
		v float64
		n int64
	}
	var total int64
	es := make([]entry, 0, len(m))
	for v, n := range m {
		es = append(es, entry{v.Float64(), n})
		total += n
	}
	if total <= 0 {
		return row.NullValue
	}
	slices.SortFunc(es, func(a, b entry) int { return javaDoubleCompare(a.v, b.v) })
	pos := pct*float64(total-1) + 1
	lower, higher := int64(math.Floor(pos)), int64(math.Ceil(pos))
	j, pre := 0, es[0].n
	for pre < lower {
		j++
		pre += es[j].n
	}
	if pre >= higher {
		return row.DoubleValue(es[j].v)
	}
	return row.DoubleValue((float64(higher)-pos)*es[j].v + (pos-float64(lower))*es[j+1].v)
}

// javaDoubleCompare is Double.compare: -0.0 before 0.0, NaN last.
func javaDoubleCompare(a, b float64) int {
	switch an, bn := a != a, b != b; {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a != b:
		return cmp.Compare(a, b)
	}
	return cmp.Compare(int64(math.Float64bits(a)), int64(math.Float64bits(b)))
}
