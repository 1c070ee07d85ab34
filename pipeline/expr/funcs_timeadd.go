package expr

import (
	"math"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// TIMESTAMPADD(unit, n, time) and TIMESTAMPDIFF(unit, t1, t2), as Flink
// (Calcite) defines them. The unit is a bare keyword: SECOND, MINUTE,
// HOUR, DAY, WEEK, MONTH, QUARTER or YEAR (also written SQL_TSI_DAY and so
// on, as JDBC does).

func init() {
	register(map[string]*funcDef{
		"TIMESTAMPADD":  {min: 3, max: 3, unitArg: true, build: buildTimestampAdd},
		"TIMESTAMPDIFF": {min: 3, max: 3, unitArg: true, build: buildTimestampDiff},
	})
}

// timeUnit is a unit of TIMESTAMPADD and TIMESTAMPDIFF: a length in
// microseconds for the units of fixed length, or a number of months.
type timeUnit struct {
	name   string
	micros int64
	months int64
}

var timeUnits = map[string]timeUnit{
	"MICROSECOND": {name: "MICROSECOND", micros: 1},
	"MILLISECOND": {name: "MILLISECOND", micros: 1000},
	"SECOND":      {name: "SECOND", micros: 1e6},
	"MINUTE":      {name: "MINUTE", micros: 60e6},
	"HOUR":        {name: "HOUR", micros: 3600e6},
	"DAY":         {name: "DAY", micros: microsPerDay},
	"WEEK":        {name: "WEEK", micros: 7 * microsPerDay},
	"MONTH":       {name: "MONTH", months: 1},
	"QUARTER":     {name: "QUARTER", months: 3},
	"YEAR":        {name: "YEAR", months: 12},
}

// unitOf reads the unit keyword of call e (its first argument).
func unitOf(e *sql.Call, args []*node) (timeUnit, error) {
	name := args[0].val.Str()
	u, ok := timeUnits[strings.TrimPrefix(name, "SQL_TSI_")]
	if !ok {
		names := "SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR"
		return timeUnit{}, errAt(args[0].e.Pos(), "%s: unknown time unit %s; use %s", e.Name, name, names)
	}
	return u, nil
}

// civil splits a day number into its date.
func civil(days int64) (y int64, m time.Month, d int) {
	yy, mm, dd := time.Unix(days*86400, 0).UTC().Date()
	return int64(yy), mm, dd
}

func dayNumber(y int64, m time.Month, d int) int64 {
	return floorDiv(time.Date(int(y), m, d, 0, 0, 0, 0, time.UTC).Unix(), 86400)
}

// maxMonths bounds month arithmetic to years Go's calendar computes
// without overflow (and far beyond what DATE holds).
const maxMonths = 12 * 1_000_000

// addMonths moves a day number by n months, keeping the day of the month
// or, when the new month is shorter, taking its last day (Jan 31 + 1
// month = Feb 28 or 29), as Calcite's DateTimeUtils.addMonths.
func addMonths(days, n int64) (int64, error) {
	if n > maxMonths || n < -maxMonths {
		return 0, errOverflow
	}
	y, m, d := civil(days)
	total := y*12 + int64(m-1) + n
	ny, nm := floorDiv(total, 12), time.Month(total-floorDiv(total, 12)*12+1)
	if last := time.Date(int(ny), nm+1, 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
		d = last
	}
	return dayNumber(ny, nm, d), nil
}

// addMonthsMicros moves a timestamp by n months, keeping its time of day.
func addMonthsMicros(us, n int64) (int64, error) {
	days := floorDiv(us, microsPerDay)
	tod := us - days*microsPerDay
	nd, err := addMonths(days, n)
	if err != nil {
		return 0, err
	}
	if nd > math.MaxInt64/int64(microsPerDay)-1 || nd < math.MinInt64/int64(microsPerDay)+1 {
		return 0, errOverflow
	}
	return nd*microsPerDay + tod, nil
}

// subtractMonths is the number of whole months from date d1 to date d0
// (Calcite's DateTimeUtils.subtractMonths): the largest m with
// addMonths(d1, m) <= d0, negated when d0 < d1.
func subtractMonths(d0, d1 int64) int64 {
	if d0 < d1 {
		return -subtractMonths(d1, d0)
	}
	y0, m0, _ := civil(d0)
	y1, m1, _ := civil(d1)
	m := (y0-y1)*12 + int64(m0-m1) // at most one more than the answer
	for m > 0 {
		if d, err := addMonths(d1, m); err == nil && d <= d0 {
			break
		}
		m--
	}
	return m
}

// subtractMonthsMicros is Calcite's subtractMonths for timestamps t0 and
// t1 (in milliseconds there): whole months on the dates, one less when
// the dates land on the same day but t0's time of day is earlier.
func subtractMonthsMicros(t0, t1 int64) int64 {
	d0, d1 := floorDiv(t0, microsPerDay), floorDiv(t1, microsPerDay)
	tod0, tod1 := t0-d0*microsPerDay, t1-d1*microsPerDay
	x := subtractMonths(d0, d1)
	if d2, err := addMonths(d1, x); err == nil && d2 == d0 && tod0 < tod1 {
		x--
	}
	return x
}

// microsOf reads a DATE (its midnight) or timestamp as microseconds.
func microsOf(id row.TypeID) func(v row.Value) int64 {
	if id == row.Date {
		return func(v row.Value) int64 { return int64(v.Days()) * microsPerDay }
	}
	return func(v row.Value) int64 { return v.Micros() }
}

// buildTimestampAdd is TIMESTAMPADD(unit, n, time): time moved by n units.
// The result keeps time's type, except that a DATE moved by SECOND, MINUTE
// or HOUR becomes a TIMESTAMP (Calcite's rule). n is an integer.
func buildTimestampAdd(c *compiler, e *sql.Call, args []*node) (*node, error) {
	u, err := unitOf(e, args)
	if err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 1); err != nil {
		return nil, err
	}
	x := args[2]
	if !x.t.ID.Temporal() && x.t.ID != row.Null {
		return nil, argError(e, 2, args, "a DATE, TIMESTAMP or TIMESTAMP_LTZ")
	}
	t := x.t
	if t.ID == row.Null {
		t = row.Type{ID: row.Timestamp, Precision: 3}
	}
	if t.ID == row.Date && u.micros > 0 && u.micros < microsPerDay {
		t = row.Type{ID: row.Timestamp, Precision: 6}
	}
	t.NotNull = allNotNull(args[1], x)
	id, in := t.ID, microsOf(x.t.ID)
	return c.fn2(e, t, args[1], x, func(n, v row.Value) (row.Value, error) {
		k := n.Int64()
		if u.months > 0 {
			k *= u.months
			if id == row.Date {
				d, err := addMonths(int64(v.Days()), k)
				if err != nil || d > math.MaxInt32 || d < math.MinInt32 {
					return row.NullValue, errOverflow
				}
				return row.DateValue(int32(d)), nil
			}
			us, err := addMonthsMicros(in(v), k)
			if err != nil {
				return row.NullValue, err
			}
			return tsValue(id, us), nil
		}
		if k > math.MaxInt64/u.micros || k < math.MinInt64/u.micros {
			return row.NullValue, errOverflow
		}
		if id == row.Date {
			d := int64(v.Days()) + k*u.micros/microsPerDay
			if d > math.MaxInt32 || d < math.MinInt32 {
				return row.NullValue, errOverflow
			}
			return row.DateValue(int32(d)), nil
		}
		a, b := in(v), k*u.micros
		s := a + b
		if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
			return row.NullValue, errOverflow
		}
		return tsValue(id, s), nil
	})
}

// buildTimestampDiff is TIMESTAMPDIFF(unit, t1, t2): the signed number of
// whole units from t1 to t2, an INT. Fixed units divide the difference in
// milliseconds (Flink's precision here), truncating towards zero; MONTH,
// QUARTER and YEAR count whole months as subtractMonths does, then divide.
// A DATE counts as its midnight.
func buildTimestampDiff(c *compiler, e *sql.Call, args []*node) (*node, error) {
	u, err := unitOf(e, args)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= 2; i++ {
		if !args[i].t.ID.Temporal() && args[i].t.ID != row.Null {
			return nil, argError(e, i, args, "a DATE, TIMESTAMP or TIMESTAMP_LTZ")
		}
	}
	in1, in2 := microsOf(args[1].t.ID), microsOf(args[2].t.ID)
	t := row.Type{ID: row.Int, NotNull: allNotNull(args[1], args[2])}
	return c.fn2(e, t, args[1], args[2], func(a, b row.Value) (row.Value, error) {
		t1, t2 := in1(a), in2(b)
		if u.months > 0 {
			return row.IntValue(int32(subtractMonthsMicros(t2, t1) / u.months)), nil
		}
		ms1, ms2 := floorDiv(t1, 1000), floorDiv(t2, 1000)
		if u.micros < 1000 {
			return row.IntValue(int32((t2 - t1) / u.micros)), nil
		}
		return row.IntValue(int32((ms2 - ms1) / (u.micros / 1000))), nil
	})
}

// addYearMonth compiles time ± year-month interval (op '+' or '-'): the
// months are added as TIMESTAMPADD(MONTH, ...) adds them, a month end
// clamped (DATE '2024-01-31' + INTERVAL '1' MONTH = 2024-02-29).
func (c *compiler) addYearMonth(e sql.Expr, op byte, l, r *node, notNull bool) (*node, error) {
	ts, iv := l, r
	if l.t.ID == typeIntervalYM {
		ts, iv = r, l
	}
	t := ts.t
	t.NotNull = notNull
	id := t.ID
	text := exprString(e)
	f := func(a, b row.Value) (row.Value, error) {
		k := b.Int64()
		if op == '-' {
			k = -k
		}
		if id == row.Date {
			d, err := addMonths(int64(a.Days()), k)
			if err != nil || d > math.MaxInt32 || d < math.MinInt32 {
				return row.NullValue, evalErr(text, errOverflow)
			}
			return row.DateValue(int32(d)), nil
		}
		us, err := addMonthsMicros(a.Micros(), k)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return tsValue(id, us), nil
	}
	return c.finish(e, t, bin(ts.eval, iv.eval, f), l, r)
}
