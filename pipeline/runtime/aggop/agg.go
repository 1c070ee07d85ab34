package aggop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// AggFunc is an aggregate function of GROUP BY and window aggregates.
type AggFunc uint8

const (
	CountStar     AggFunc = iota // COUNT(*): rows of the group
	Count                        // COUNT(x): non-NULL values
	CountDistinct                // COUNT(DISTINCT x)
	Sum                          // SUM(x)
	SumDistinct                  // SUM(DISTINCT x)
	Min                          // MIN(x)
	Max                          // MAX(x)
	Avg                          // AVG(x)
	AvgDistinct                  // AVG(DISTINCT x)
	StddevPop                    // STDDEV_POP(x)
	StddevSamp                   // STDDEV_SAMP(x)
	VarPop                       // VAR_POP(x)
	VarSamp                      // VAR_SAMP(x)
	FirstValue                   // FIRST_VALUE(x)
	LastValue                    // LAST_VALUE(x)
	ListAgg                      // LISTAGG(x [, sep])
	Collect                      // COLLECT(x): the MULTISET of the values (collect.go)
	UserDefined                  // a function of the pipeline file's (user.go)
	ArrayAgg                     // ARRAY_AGG(x) (arrayagg.go)
	JSONArrayAgg                 // JSON_ARRAYAGG(x): x's JSON text projected (arrayagg.go)
	JSONObjectAgg                // JSON_OBJECTAGG(KEY k VALUE v): ROW(k, k's JSON text, v's) projected (arrayagg.go)
	Percentile                   // PERCENTILE(x, p): x as DOUBLE projected (percentile.go)
)

var aggNames = [...]string{
	CountStar:     "COUNT",
	Count:         "COUNT",
	CountDistinct: "COUNT",
	Sum:           "SUM",
	SumDistinct:   "SUM",
	Min:           "MIN",
	Max:           "MAX",
	Avg:           "AVG",
	AvgDistinct:   "AVG",
	StddevPop:     "STDDEV_POP",
	StddevSamp:    "STDDEV_SAMP",
	VarPop:        "VAR_POP",
	VarSamp:       "VAR_SAMP",
	FirstValue:    "FIRST_VALUE",
	LastValue:     "LAST_VALUE",
	ListAgg:       "LISTAGG",
	Collect:       "COLLECT",
	UserDefined:   "USER",
	ArrayAgg:      "ARRAY_AGG",
	JSONArrayAgg:  "JSON_ARRAYAGG",
	JSONObjectAgg: "JSON_OBJECTAGG",
	Percentile:    "PERCENTILE",
}

func (f AggFunc) String() string {
	if int(f) < len(aggNames) {
		return aggNames[f]
	}
	return fmt.Sprintf("AggFunc(%d)", f)
}

// Distinct reports whether the function sees each distinct argument value
// once.
func (f AggFunc) Distinct() bool {
	return f == CountDistinct || f == SumDistinct || f == AvgDistinct
}

// AggCall is one aggregate of a GROUP BY or window aggregate. The planner
// places a projection before the aggregate that computes every argument
// (and every FILTER condition), so an argument is a column index of the
// operator's input.
type AggCall struct {
	Func    AggFunc
	Arg     int // input column index; -1 for COUNT(*)
	ArgType row.Type
	// Distinct makes any function see each distinct non-NULL value once
	// (the *Distinct functions imply it).
	Distinct bool
	// HasFilter says that only rows whose BOOLEAN column Filter is TRUE
	// reach the aggregate (agg(...) FILTER (WHERE cond)). COUNT(*) with a
	// filter is planned as COUNT(Filter): a FALSE is not NULL, but the
	// filter drops it first.
	HasFilter bool
	Filter    int
	// Sep is LISTAGG's separator (Flink's default is ",").
	Sep string
	// KeepNulls makes ARRAY_AGG keep NULL values (RESPECT NULLS, its
	// default) and JSON_OBJECTAGG write them as null (NULL ON NULL).
	KeepNulls bool
	// Pct is PERCENTILE's percentage, a constant in [0, 1].
	Pct float64
	// User is a UserDefined call's function, UserName its name and
	// UserType its result type; Arg is then a ROW of its arguments.
	User     UserAgg
	UserName string
	UserType row.Type
}

// distinct reports whether the call keeps a DISTINCT multiset.
func (c AggCall) distinct() bool { return c.Distinct || c.Func.Distinct() }

func (c AggCall) String() string {
	var s string
	switch {
	case c.Func == CountStar:
		s = "COUNT(*)"
	case c.Func == UserDefined:
		s = fmt.Sprintf("%s($%d)", c.UserName, c.Arg)
		if c.distinct() {
			s = fmt.Sprintf("%s(DISTINCT $%d)", c.UserName, c.Arg)
		}
	case c.distinct():
		s = fmt.Sprintf("%s(DISTINCT $%d)", c.Func, c.Arg)
	default:
		s = fmt.Sprintf("%s($%d)", c.Func, c.Arg)
	}
	if c.HasFilter {
		s += fmt.Sprintf(" FILTER (WHERE $%d)", c.Filter)
	}
	return s
}

// ResultType gives Flink's result type of the call:
//
//   - COUNT(*), COUNT(x), COUNT(DISTINCT x): BIGINT NOT NULL.
//   - SUM: INT → INT, BIGINT → BIGINT, FLOAT → FLOAT, DOUBLE → DOUBLE (the
//     argument type, as Flink's SumAggFunction), DECIMAL(p,s) →
//     DECIMAL(38,s) (Flink's findSumAggType). Integer sums wrap on overflow
//     as Java's do; a DECIMAL sum that does not fit 38 digits is NULL, as
//     Flink's decimal overflow is. The running sum is a 128-bit integer
//     modulo 2^128: exact whatever the order of additions and retractions,
//     but a true sum past ±1.7·10^38 (2^127) would wrap unnoticed.
//   - AVG: the argument type for INT, BIGINT (the average truncated toward
//     zero, as Flink's), FLOAT and DOUBLE; DECIMAL(p,s) → DECIMAL(38,
//     max(6,s)) (Flink's findAvgAggType), rounded as Flink's division.
//   - MIN, MAX, FIRST_VALUE, LAST_VALUE: the argument type.
//   - STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP: the argument type, as
//     Calcite's SqlAvgAggFunction derives it for Flink (INT gives INT).
//     DECIMAL arguments are refused.
//   - LISTAGG: STRING.
//   - COLLECT: MULTISET<argument type> NOT NULL, empty for no values.
//   - ARRAY_AGG: ARRAY<argument type>, NULL for no values.
//   - JSON_ARRAYAGG, JSON_OBJECTAGG: STRING NOT NULL ([] and {}).
//
// All but COUNT, COLLECT and the JSON ones are nullable: NULL when the group has no
// non-NULL value.
func (c AggCall) ResultType() row.Type {
	switch c.Func {
	case CountStar, Count, CountDistinct:
		return row.Type{ID: row.BigInt, NotNull: true}
	case UserDefined:
		return c.UserType.Nullable()
	case ListAgg:
		return row.Of(row.String)
	case JSONArrayAgg, JSONObjectAgg:
		return row.Type{ID: row.String, NotNull: true}
	case ArrayAgg:
		return row.ArrayOf(c.ArgType)
	case Percentile:
		return row.Of(row.Double)
	case Collect:
		t := row.MultisetOf(c.ArgType)
		t.NotNull = true
		return t
	case Sum, SumDistinct:
		if c.ArgType.ID == row.Decimal {
			return row.Type{ID: row.Decimal, Precision: row.MaxDecimalPrecision, Scale: c.ArgType.Scale}
		}
	case Avg, AvgDistinct:
		if c.ArgType.ID == row.Decimal {
			return row.Type{ID: row.Decimal, Precision: row.MaxDecimalPrecision, Scale: avgDecimalScale(c.ArgType.Scale)}
		}
	}
	return c.ArgType.Nullable()
}

// avgDecimalScale is Flink's max(6, s) for AVG(DECIMAL(p, s)).
func avgDecimalScale(s int) int { return max(6, s) }

// Validate reports a call the aggregate operators cannot run: an argument
// index missing or given to COUNT(*), or an argument type the function
// does not take. The operators' constructors (through InputWidth) return
// its error.
func (c AggCall) Validate() error {
	if int(c.Func) >= len(aggNames) {
		return fmt.Errorf("unknown aggregate function %d", c.Func)
	}
	if c.Func == CountStar {
		if c.Arg != -1 {
			return fmt.Errorf("%s takes no argument, got column %d", c, c.Arg)
		}
		return nil
	}
	if c.Arg < 0 {
		return fmt.Errorf("%s: argument column %d is negative", c.Func, c.Arg)
	}
	if c.HasFilter && c.Filter < 0 {
		return fmt.Errorf("%s: filter column %d is negative", c, c.Filter)
	}
	id := c.ArgType.ID
	switch c.Func {
	case UserDefined:
		if c.User == nil {
			return fmt.Errorf("%s: no function", c)
		}
	case Sum, SumDistinct, Avg, AvgDistinct:
		if !id.Numeric() {
			return fmt.Errorf("%s: argument type %s is not numeric (want INT, BIGINT, FLOAT, DOUBLE or DECIMAL)", c, c.ArgType)
		}
	case StddevPop, StddevSamp, VarPop, VarSamp:
		if !id.Numeric() || id == row.Decimal {
			return fmt.Errorf("%s: argument type %s is not INT, BIGINT, FLOAT or DOUBLE", c, c.ArgType)
		}
	case ListAgg, JSONArrayAgg:
		if id != row.String {
			return fmt.Errorf("%s: argument type %s is not STRING", c, c.ArgType)
		}
	case JSONObjectAgg:
		if id != row.Struct || len(c.ArgType.Fields()) != 3 {
			return fmt.Errorf("%s: argument type %s is not a ROW of the key, its JSON text and the value's", c, c.ArgType)
		}
	case ArrayAgg:
		if id == row.Null {
			return fmt.Errorf("%s: argument type %s cannot be aggregated", c, c.ArgType)
		}
	case Percentile:
		if id != row.Double {
			return fmt.Errorf("%s: argument type %s is not DOUBLE", c, c.ArgType)
		}
		if !(c.Pct >= 0 && c.Pct <= 1) {
			return fmt.Errorf("%s: the percentage %v is not between 0.0 and 1.0", c, c.Pct)
		}
	case Min, Max, Count, CountDistinct, FirstValue, LastValue, Collect:
		// TIME came after the composite types (row.TypeID) and is
		// ordered and counted as the other times are.
		if id == row.Null || id > row.TimestampLTZ && !id.Nested() && id != row.Time {
			return fmt.Errorf("%s: argument type %s cannot be aggregated", c, c.ArgType)
		}
		// A composite value is counted and kept, never ordered.
		if id.Nested() && (c.Func == Min || c.Func == Max) {
			return fmt.Errorf("%s: argument type %s has no order", c, c.ArgType)
		}
	}
	if id == row.Decimal && (c.ArgType.Precision > row.MaxDecimalPrecision || c.ArgType.Scale > c.ArgType.Precision) {
		return fmt.Errorf("%s: argument type %s is out of range", c, c.ArgType)
	}
	return nil
}

// accKind is how an aggregate accumulates its non-NULL argument values.
type accKind uint8

const (
	accRows    accKind = iota // COUNT(*): reads the group's row counter
	accCount                  // n
	accInt                    // wrapping int64 sum, n
	accF32                    // float32 sum (Flink's SUM(FLOAT)), n
	accF64                    // float64 sum, n
	accDec                    // 128-bit unscaled sum, n
	accExtreme                // MIN/MAX
	accMomInt                 // wrapping int64 sum, sum of squares, n (STDDEV/VAR)
	accMomF64                 // float64 sum, sum of squares, n (STDDEV/VAR)
	accFirst                  // insert-only FIRST_VALUE: the first value
	accLast                   // insert-only LAST_VALUE: the last value
	accList                   // LISTAGG, retractable FIRST/LAST_VALUE: the values in arrival order
	accWord                   // insert-only MIN/MAX/FIRST/LAST of a fixed-width type: an int64 (Store.layWords)
	accBag                    // COLLECT: value → count (collect.go)
	accUser                   // a user aggregate's accumulator (user.go)
	accArray                  // ARRAY_AGG: values and retractions kept aside (arrayagg.go)
	accObject                 // JSON_OBJECTAGG: key → value text (arrayagg.go)
)

// numSlots is how many int64 slots each kind takes; the last one is n, the
// count of accumulated values.
var numSlots = [...]int{accRows: 0, accCount: 1, accInt: 2, accF32: 2, accF64: 2, accDec: 3, accExtreme: 0,
	accMomInt: 3, accMomF64: 3, accFirst: 0, accLast: 0, accList: 0, accWord: 0, accBag: 0, accUser: 0, accArray: 0, accObject: 0}

// aggSlot is one aggregate's place in a group's state.
type aggSlot struct {
	call AggCall
	kind accKind
	// num is the first int64 slot; val the Value slot of an insert-only
	// MIN/MAX; ext the multiset of a retractable MIN/MAX; dist the
	// value→count map of a DISTINCT aggregate. -1 when unused.
	num, val, ext, dist int
	// sval is the Value's place in a snapshot (the val it had before
	// words); word the int64 of an accWord, bit its presence bit.
	sval, word int
	bit        uint8
	max        bool // MAX rather than MIN
	res        row.Type

	// user is a user aggregate's queue in Store.user.
	user int
	// set is the DISTINCT set (Store.sets) the aggregate counts its
	// values in, -1 for none, and member its bit there.
	set, member int
}

func newAggSlot(c AggCall) aggSlot {
	s := aggSlot{call: c, num: -1, val: -1, ext: -1, dist: -1, sval: -1, word: -1, set: -1, res: c.ResultType()}
	switch c.Func {
	case CountStar:
		s.kind = accRows
	case Count, CountDistinct:
		s.kind = accCount
	case Min, Max:
		s.kind, s.max = accExtreme, c.Func == Max
	case StddevPop, StddevSamp, VarPop, VarSamp:
		s.kind = accMomF64
		if c.ArgType.ID == row.Int || c.ArgType.ID == row.BigInt {
			s.kind = accMomInt
		}
	case FirstValue:
		s.kind = accFirst // newStoreWords makes it accList when retractable
	case LastValue:
		s.kind = accLast
	case ListAgg, JSONArrayAgg:
		s.kind = accList
	case ArrayAgg:
		s.kind = accArray
	case JSONObjectAgg:
		s.kind = accObject
	case Collect, Percentile:
		s.kind = accBag
	case UserDefined:
		s.kind = accUser
	default: // SUM, AVG
		switch c.ArgType.ID {
		case row.Int, row.BigInt:
			s.kind = accInt
		case row.Float:
			s.kind = accF64
			if c.Func == Sum || c.Func == SumDistinct {
				s.kind = accF32
			}
		case row.Decimal:
			s.kind = accDec
		default:
			s.kind = accF64
		}
	}
	return s
}

// checkArg reports an argument value whose type differs from the call's:
// the planner's projection guarantees the type, so a mismatch is a bug to
// report, not data to guess at.
func (s *aggSlot) checkArg(v row.Value) error {
	if s.kind == accRows || v.IsNull() {
		return nil
	}
	want := s.call.ArgType
	if v.Type() != want.ID || (want.ID == row.Decimal && v.Scale() != want.Scale) {
		return fmt.Errorf("%s: argument value %s has type %s, want %s", s.call, v, v.Type(), want)
	}
	if s.kind == accWord && v.WideDecimal() {
		return fmt.Errorf("%s: argument value %s has more digits than its type %s", s.call, v, want)
	}
	return nil
}

// valueCounts is a DISTINCT aggregate's multiset: value → count. A count
// may go negative when a retraction arrives before its accumulation (as
// Flink's MapView counts do); a value is present while its count is > 0.
type valueCounts map[row.Value]int64

// valueList is the values of a LISTAGG or of a retractable FIRST_VALUE /
// LAST_VALUE in arrival order. A retraction removes the earliest equal
// value, as Flink's ListView-backed retractable accumulators do; one with
// no equal value is ignored. Retraction costs O(n) in the group's values.
type valueList struct{ vals []row.Value }

func (l *valueList) add(v row.Value) { l.vals = append(l.vals, v) }

func (l *valueList) remove(v row.Value) {
	for i, x := range l.vals {
		if x == v {
			copy(l.vals[i:], l.vals[i+1:])
			l.vals[len(l.vals)-1] = row.NullValue
			l.vals = l.vals[:len(l.vals)-1]
			return
		}
	}
}

// extremes is a retractable MIN/MAX: every value with its count, and a
// binary heap whose top is the extreme. Retracting the extreme costs
// O(log n) amortised: dead heap entries are popped when they reach the
// top, and the heap is rebuilt when they outnumber the live ones.
type extremes struct {
	counts map[row.Value]extremeCount
	heap   state.Heap[row.Value] // the values with heaped set
	stale  int                   // heaped values whose count is <= 0
}

type extremeCount struct {
	n      int64
	heaped bool
}

// newExtremes returns an empty MAX (max) or MIN multiset, with room for
// n values.
func newExtremes(max bool, n int) *extremes {
	less := lessValue
	if max {
		less = greaterValue
	}
	return &extremes{counts: make(map[row.Value]extremeCount, n), heap: state.NewHeap(less)}
}

func lessValue(a, b *row.Value) bool    { return row.Compare(*a, *b) < 0 }
func greaterValue(a, b *row.Value) bool { return row.Compare(*a, *b) > 0 }

func (e *extremes) add(v row.Value, d int64) {
	c := e.counts[v]
	old := c.n
	c.n += d
	switch {
	case c.heaped && old > 0 && c.n <= 0:
		e.stale++
	case c.heaped && old <= 0 && c.n > 0:
		e.stale--
	case !c.heaped && c.n > 0:
		c.heaped = true
		e.heap.Push(v)
	}
	if c.n == 0 && !c.heaped {
		delete(e.counts, v)
	} else {
		e.counts[v] = c
	}
	if e.stale > 32 && e.stale > e.heap.Len()/2 {
		e.compact()
	}
}

// top pops dead values off the heap and returns the extreme, or NULL.
func (e *extremes) top() row.Value {
	for e.heap.Len() > 0 {
		v := *e.heap.Top()
		c := e.counts[v]
		if c.n > 0 {
			return v
		}
		e.heap.Pop()
		e.stale--
		if c.n == 0 {
			delete(e.counts, v)
		} else {
			c.heaped = false
			e.counts[v] = c
		}
	}
	return row.NullValue
}

// compact drops the dead values from the heap and orders the live ones
// into a heap again.
func (e *extremes) compact() {
	all := e.heap.Items()
	live := all[:0]
	for _, v := range all {
		c := e.counts[v]
		switch {
		case c.n > 0:
			live = append(live, v)
		case c.n == 0:
			delete(e.counts, v)
		default:
			c.heaped = false
			e.counts[v] = c
		}
	}
	clear(all[len(live):])
	e.heap.Fill(live)
	e.stale = 0
}
