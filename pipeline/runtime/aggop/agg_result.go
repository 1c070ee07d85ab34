package aggop

import (
	"math"

	"github.com/etld/etld/pipeline/row"
)

// Results writes slot id's aggregate values to dst (one per aggregate).
func (s *Store) Results(id int32, dst []row.Value) {
	s.settle()
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
	case accBag:
		return s.bagResult(id, a)
	case accArray:
		return s.arrayResult(id, a)
	case accObject:
		return s.objectResult(id, a)
	case accUser:
		return s.userResult(id, a)
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
			// TINYINT and SMALLINT sums wrap to their width as Flink's do.
			return row.IntValue(int32(a.call.ArgType.WrapInt(v)))
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
	l, _ := s.exts[int(id)*s.extW+a.ext].(*valueList)
	if a.call.Func == JSONArrayAgg {
		return jsonArrayResult(l)
	}
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
