package expr

import (
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/javatime"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// Time functions. The session time zone is UTC unless the pipeline sets
// local_time_zone (WithZone, zone.go): a TIMESTAMP_LTZ's fields and text
// are its wall clock in that zone. Functions that parse text
// return NULL for text that does not match, as Flink's do (UNIX_TIMESTAMP
// returns Long.MIN_VALUE, as documented by Flink); a bad constant format
// pattern is a plan error.

// defaultTimestampFormat is the pattern of TO_TIMESTAMP and FROM_UNIXTIME
// without one.
const defaultTimestampFormat = "yyyy-MM-dd HH:mm:ss"

func init() {
	register(map[string]*funcDef{
		"TO_TIMESTAMP_LTZ":      {min: 1, max: 2, build: buildToTimestampLTZ},
		"TO_TIMESTAMP":          {min: 1, max: 2, build: buildParseTime(row.Timestamp)},
		"TO_DATE":               {min: 1, max: 2, build: buildParseTime(row.Date)},
		"DATE_FORMAT":           {min: 2, max: 2, build: buildDateFormat},
		"UNIX_TIMESTAMP":        {min: 0, max: 2, build: buildUnixTimestamp},
		"FROM_UNIXTIME":         {min: 1, max: 2, build: buildFromUnixtime},
		"CURRENT_TIMESTAMP":     {min: 0, max: 0, build: buildNow(row.TimestampLTZ)},
		"NOW":                   {min: 0, max: 0, build: buildNow(row.TimestampLTZ)},
		"CURRENT_ROW_TIMESTAMP": {min: 0, max: 0, build: buildNow(row.TimestampLTZ)},
		"PROCTIME":              {min: 0, max: 0, build: buildNow(row.TimestampLTZ)},
		"LOCALTIMESTAMP":        {min: 0, max: 0, build: buildNow(row.Timestamp)},
		"CURRENT_DATE":          {min: 0, max: 0, build: buildNow(row.Date)},
		"CURRENT_TIME":          {min: 0, max: 0, build: buildCurrentTime},
		"LOCALTIME":             {min: 0, max: 0, build: buildCurrentTime},
		"YEAR":                  {min: 1, max: 1, build: buildPart("YEAR")},
		"QUARTER":               {min: 1, max: 1, build: buildPart("QUARTER")},
		"MONTH":                 {min: 1, max: 1, build: buildPart("MONTH")},
		"WEEK":                  {min: 1, max: 1, build: buildPart("WEEK")},
		"DAYOFYEAR":             {min: 1, max: 1, build: buildPart("DOY")},
		"DAYOFMONTH":            {min: 1, max: 1, build: buildPart("DAY")},
		"DAYOFWEEK":             {min: 1, max: 1, build: buildPart("DOW")},
		"HOUR":                  {min: 1, max: 1, build: buildPart("HOUR")},
		"MINUTE":                {min: 1, max: 1, build: buildPart("MINUTE")},
		"SECOND":                {min: 1, max: 1, build: buildPart("SECOND")},
	})
}

func timeOf(v row.Value) time.Time { return v.Time() }

// nowMicros reads the clock truncated to milliseconds, TIMESTAMP(3)'s
// precision.
func nowMicros(now func() time.Time) int64 { return now().UnixMilli() * 1000 }

func buildNow(id row.TypeID) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		t := row.Type{ID: id, Precision: 3, NotNull: true}
		now := c.now
		// LOCALTIMESTAMP and CURRENT_DATE read the wall clock in the
		// session zone; CURRENT_TIMESTAMP is the instant itself.
		wall := nowMicros
		if zone := c.zone; zone != nil && id != row.TimestampLTZ {
			wall = func(now func() time.Time) int64 { return row.WallMicros(zone, nowMicros(now)) }
		}
		if id == row.Date {
			t.Precision = 0
			return c.volatile(e, t, func(row.Row) (row.Value, error) {
				return row.DateValue(int32(floorDiv(wall(now), microsPerDay))), nil
			}), nil
		}
		return c.volatile(e, t, func(row.Row) (row.Value, error) { return tsValue(id, wall(now)), nil }), nil
	}
}

// buildCurrentTime is CURRENT_TIME and LOCALTIME: the clock's time of
// day in the session zone (UTC), TIME(0) NOT NULL as Flink types it, its
// milliseconds kept as Flink keeps them.
func buildCurrentTime(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.Time, NotNull: true}
	now := c.now
	zone := c.zone
	return c.volatile(e, t, func(row.Row) (row.Value, error) {
		if zone != nil {
			return row.TimeOfTimestamp(row.WallMicros(zone, nowMicros(now))), nil
		}
		return row.TimeOfTimestamp(nowMicros(now)), nil
	}), nil
}

// formatArg compiles argument i as a date format: once when constant,
// else per distinct value, remembering the last.
type formatArg struct {
	fixed javatime.Pattern
	last  atomic.Pointer[fmtCache]
}

type fmtCache struct {
	pattern string
	f       javatime.Pattern
}

func newFormatArg(e *sql.Call, args []*node, i int) (*formatArg, error) {
	fa := &formatArg{}
	if i >= len(args) {
		fa.fixed, _ = javatime.Compile(defaultTimestampFormat)
		return fa, nil
	}
	if a := args[i]; a.konst && !a.val.IsNull() {
		f, err := javatime.Compile(a.val.Str())
		if err != nil {
			return nil, errAt(a.e.Pos(), "%s: %v", e.Name, err)
		}
		fa.fixed = f
	}
	return fa, nil
}

func (fa *formatArg) get(p string) (javatime.Pattern, error) {
	if fa.fixed != nil {
		return fa.fixed, nil
	}
	if c := fa.last.Load(); c != nil && c.pattern == p {
		return c.f, nil
	}
	f, err := javatime.Compile(p)
	if err != nil {
		return nil, err
	}
	fa.last.Store(&fmtCache{pattern: p, f: f})
	return f, nil
}

// withFormat compiles f(x [, format]) where the format is optional.
func (c *compiler) withFormat(e *sql.Call, args []*node, t row.Type, f func(x row.Value, df javatime.Pattern) (row.Value, error)) (*node, error) {
	fa, err := newFormatArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		return c.fn1(e, t, args[0], func(x row.Value) (row.Value, error) { return f(x, fa.fixed) })
	}
	return c.fn2(e, t, args[0], args[1], func(x, p row.Value) (row.Value, error) {
		df, err := fa.get(p.Str())
		if err != nil {
			return row.NullValue, err
		}
		return f(x, df)
	})
}

// buildToTimestampLTZ is TO_TIMESTAMP_LTZ(epoch, precision): precision 0
// reads seconds, 3 milliseconds (the default), 6 micro-, 9 nanoseconds.
// TO_TIMESTAMP_LTZ(text, format) parses like TO_TIMESTAMP.
func buildToTimestampLTZ(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.TimestampLTZ, Precision: 3}
	if isStringy(args[0].t) && args[0].t.ID != row.Null {
		if err := check(e, args, "a STRING", isStringy); err != nil {
			return nil, err
		}
		// The text is read in UTC whatever the session zone, as Flink
		// documents and does (ltz29-parse-*).
		return c.withFormat(e, args, t, func(x row.Value, df javatime.Pattern) (row.Value, error) {
			tm, err := df.Parse(x.Str())
			if err != nil {
				return row.NullValue, nil
			}
			return row.TimestampLTZValue(truncMicros(tm.UnixMicro(), 3)), nil
		})
	}
	if err := check(e, args, "a number", isNumber, 0); err != nil {
		return nil, err
	}
	unit := int64(1000) // microseconds per input unit
	if len(args) == 2 {
		p, err := constArg(e, args, 1, "the precision, 0 or 3")
		if err != nil {
			return nil, err
		}
		if !isInteger(args[1].t) {
			return nil, argError(e, 1, args, "an integer (0 for seconds, 3 for milliseconds)")
		}
		switch p.Int64() {
		case 0:
			unit = 1e6
		case 3:
			unit = 1e3
		case 6:
			unit = 1
		case 9:
			unit = -1e3 // nanoseconds: divide
		default:
			return nil, errAt(args[1].e.Pos(), "TO_TIMESTAMP_LTZ precision must be 0 (seconds) or 3 (milliseconds), not %d", p.Int64())
		}
	}
	// NULL past the years 0000 to 9999, as Flink's (DateTimeUtils.
	// toTimestampData), so the result is nullable whatever the input
	// (Flink's type is TIMESTAMP_LTZ(3) NULL); a constant that fits
	// stays NOT NULL.
	x := args[0]
	var f func(v row.Value) (row.Value, error)
	if x.t.ID.Integral() {
		f = func(v row.Value) (row.Value, error) {
			n := v.Int64()
			if unit < 0 {
				return epochLTZ(truncMicros(floorDiv(n, -unit), 3)), nil
			}
			if n > math.MaxInt64/unit || n < math.MinInt64/unit {
				return row.NullValue, nil
			}
			return epochLTZ(truncMicros(n*unit, 3)), nil
		}
	} else {
		f = func(v row.Value) (row.Value, error) {
			// Flink casts the epoch in milliseconds to a long: toward
			// zero, so -1.5 ms is -1 ms, and NaN is no instant here
			// (its (long) NaN, 0, at precision 3 is a Java accident).
			ms := toFloat(v)
			if unit < 0 {
				ms /= float64(-unit) * 1000
			} else {
				ms *= float64(unit) / 1000
			}
			ms = math.Trunc(ms)
			if ms != ms || ms > float64(math.MaxInt64/1000) || ms < float64(math.MinInt64/1000) {
				return row.NullValue, nil
			}
			return epochLTZ(int64(ms) * 1000), nil
		}
	}
	n, err := c.fn1(e, t, x, f)
	if err == nil && n.konst && !n.val.IsNull() {
		n.t.NotNull = true
	}
	return n, err
}

// epochLTZ is TO_TIMESTAMP_LTZ's instant of micros, NULL past the years
// 0000 to 9999 (Flink's MIN_EPOCH_MILLS to MAX_EPOCH_MILLS).
func epochLTZ(micros int64) row.Value {
	if !row.InTimestampRange(micros) {
		return row.NullValue
	}
	return row.TimestampLTZValue(micros)
}

// buildParseTime is TO_TIMESTAMP(text [, format]) and TO_DATE(text [,
// format]); the default formats are 'yyyy-MM-dd HH:mm:ss' and
// 'yyyy-MM-dd'. Text that does not match gives NULL, as in Flink, and so
// does a year past 0000..9999 (10000-01-01, -0001-01-01), which Flink's
// yyyy (java.time's strict four-digit year of era) does not read
// (fn-range-parse-past).
func buildParseTime(id row.TypeID) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a STRING", isStringy); err != nil {
			return nil, err
		}
		t := row.Type{ID: id, Precision: 3}
		if id == row.Date {
			t.Precision = 0
			if len(args) == 1 {
				dt := row.Type{ID: row.Date}
				return c.fn1(e, t, args[0], func(x row.Value) (row.Value, error) {
					d, err := row.ParseText(x.Str(), dt)
					if err != nil || !row.InDateRange(int64(d.Days())) {
						return row.NullValue, nil
					}
					return d, nil
				})
			}
		}
		if id == row.Timestamp && len(args) == 1 {
			// Without a format Flink also takes fractions and the ISO T.
			fa, _ := javatime.Compile(defaultTimestampFormat)
			return c.fn1(e, t, args[0], func(x row.Value) (row.Value, error) {
				s := strings.TrimSpace(x.Str())
				if tm, err := fa.Parse(s); err == nil {
					return parsedTimestamp(tm.UnixMicro()), nil
				}
				ts, err := row.ParseTimestamp(s, row.Timestamp)
				if err != nil {
					return row.NullValue, nil
				}
				return parsedTimestamp(truncMicros(ts.Micros(), 3)), nil
			})
		}
		return c.withFormat(e, args, t, func(x row.Value, df javatime.Pattern) (row.Value, error) {
			tm, err := df.Parse(x.Str())
			if err != nil {
				return row.NullValue, nil
			}
			if id == row.Date {
				days := floorDiv(tm.Unix(), 86400)
				if !row.InDateRange(days) {
					return row.NullValue, nil
				}
				return row.DateValue(int32(days)), nil
			}
			return parsedTimestamp(truncMicros(tm.UnixMicro(), 3)), nil
		})
	}
}

// parsedTimestamp is TO_TIMESTAMP's value of micros: NULL past the years
// 0000..9999, which Flink's parse does not read.
func parsedTimestamp(micros int64) row.Value {
	if !row.InTimestampRange(micros) {
		return row.NullValue
	}
	return row.TimestampValue(micros)
}

// buildDateFormat is DATE_FORMAT(time, format); time may be a TIMESTAMP,
// TIMESTAMP_LTZ, DATE or a timestamp text.
func buildDateFormat(c *compiler, e *sql.Call, args []*node) (*node, error) {
	x := args[0]
	if !x.t.ID.Temporal() && !isStringy(x.t) {
		return nil, argError(e, 0, args, "a TIMESTAMP, DATE or STRING")
	}
	if err := check(e, args, "a STRING", isStringy, 1); err != nil {
		return nil, err
	}
	if x.t.ID == row.TimestampLTZ && c.zone != nil {
		// Flink formats the instant's wall clock in the session zone.
		x = c.wallOf(x)
		args = append([]*node{x}, args[1:]...)
	}
	t := row.Type{ID: row.String, NotNull: allNotNull(args...) && x.t.ID != row.String}
	isText := x.t.ID == row.String
	return c.withFormat(e, args, t, func(v row.Value, df javatime.Pattern) (row.Value, error) {
		var tm time.Time
		if isText {
			ts, err := row.ParseTimestamp(strings.TrimSpace(v.Str()), row.Timestamp)
			if err != nil {
				return row.NullValue, nil
			}
			tm = ts.Time()
		} else {
			tm = timeOf(v)
		}
		var buf [64]byte
		return row.StringValue(string(df.Format(buf[:0], tm))), nil
	})
}

// buildUnixTimestamp is UNIX_TIMESTAMP() (now, in seconds) or
// UNIX_TIMESTAMP(text [, format]): the text's epoch seconds, or
// -9223372036854775808 when it does not parse (Flink's documented
// Long.MIN_VALUE).
func buildUnixTimestamp(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.BigInt, NotNull: true}
	if len(args) == 0 {
		now := c.now
		return c.volatile(e, t, func(row.Row) (row.Value, error) { return row.BigIntValue(now().Unix()), nil }), nil
	}
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t.NotNull = allNotNull(args...)
	zone := c.zone
	return c.withFormat(e, args, t, func(x row.Value, df javatime.Pattern) (row.Value, error) {
		tm, err := df.Parse(x.Str())
		if err != nil {
			return row.BigIntValue(math.MinInt64), nil
		}
		if zone != nil && !df.HasZone() {
			// A text without an offset is a wall clock in the session
			// zone, read as SimpleDateFormat reads it (ltz29-parse-la).
			return row.BigIntValue(floorDiv(row.AtZoneLater(zone, tm.UnixMicro()), 1_000_000)), nil
		}
		return row.BigIntValue(tm.Unix()), nil
	})
}

// buildFromUnixtime is FROM_UNIXTIME(seconds [, format]): the text of the
// time, 'yyyy-MM-dd HH:mm:ss' by default.
func buildFromUnixtime(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "an integer", isInteger, 0); err != nil {
		return nil, err
	}
	if err := check(e, args, "a STRING", isStringy, 1); err != nil {
		return nil, err
	}
	t := strType(args...)
	zone := c.zone
	return c.withFormat(e, args, t, func(x row.Value, df javatime.Pattern) (row.Value, error) {
		var buf [64]byte
		s := x.Int64()
		if zone != nil {
			// The wall clock of the instant in the session zone, as
			// Flink's fromUnixtime formats it.
			s = row.WallMicros(zone, s*1_000_000) / 1_000_000
		}
		return row.StringValue(string(df.Format(buf[:0], time.Unix(s, 0).UTC()))), nil
	})
}

// datePart extracts a field as EXTRACT does (Calcite's definitions: DOW 1
// = Sunday, ISODOW 1 = Monday, WEEK the ISO week); MILLISECOND,
// MICROSECOND and NANOSECOND give only the fraction of the second, as
// Flink does (123 for 10:30:33.123, not 33123).
func datePart(unit string) (func(t time.Time) int64, bool, bool) {
	// returns f, needsTime (refused on DATE), ok
	switch unit {
	case "YEAR":
		return func(t time.Time) int64 { return int64(t.Year()) }, false, true
	case "QUARTER":
		return func(t time.Time) int64 { return int64(t.Month()-1)/3 + 1 }, false, true
	case "MONTH":
		return func(t time.Time) int64 { return int64(t.Month()) }, false, true
	case "WEEK":
		return func(t time.Time) int64 { _, w := t.ISOWeek(); return int64(w) }, false, true
	case "DAY":
		return func(t time.Time) int64 { return int64(t.Day()) }, false, true
	case "DOW":
		return func(t time.Time) int64 { return int64(t.Weekday()) + 1 }, false, true
	case "ISODOW":
		return func(t time.Time) int64 { return (int64(t.Weekday())+6)%7 + 1 }, false, true
	case "DOY":
		return func(t time.Time) int64 { return int64(t.YearDay()) }, false, true
	case "ISOYEAR":
		return func(t time.Time) int64 { y, _ := t.ISOWeek(); return int64(y) }, false, true
	case "DECADE":
		return func(t time.Time) int64 { return floorDiv(int64(t.Year()), 10) }, false, true
	case "CENTURY":
		return func(t time.Time) int64 { return centuryOf(int64(t.Year()), 100) }, false, true
	case "MILLENNIUM":
		return func(t time.Time) int64 { return centuryOf(int64(t.Year()), 1000) }, false, true
	case "EPOCH":
		return func(t time.Time) int64 { return t.Unix() }, false, true
	case "HOUR":
		return func(t time.Time) int64 { return int64(t.Hour()) }, true, true
	case "MINUTE":
		return func(t time.Time) int64 { return int64(t.Minute()) }, true, true
	case "SECOND":
		return func(t time.Time) int64 { return int64(t.Second()) }, true, true
	case "MILLISECOND":
		return func(t time.Time) int64 { return int64(t.Nanosecond() / 1e6) }, true, true
	case "MICROSECOND":
		return func(t time.Time) int64 { return int64(t.Nanosecond() / 1e3) }, true, true
	case "NANOSECOND":
		return func(t time.Time) int64 { return int64(t.Nanosecond()) }, true, true
	}
	return nil, false, false
}

func centuryOf(y, span int64) int64 {
	if y > 0 {
		return (y + span - 1) / span
	}
	return -((-y)/span + 1)
}

func (c *compiler) partNode(e sql.Expr, unit string, unitAt sql.Pos, x *node) (*node, error) {
	f, needsTime, ok := datePart(unit)
	if !ok {
		return nil, errAt(unitAt, "unknown time unit %s", unit)
	}
	if x.t.ID == row.TimestampLTZ && c.zone != nil {
		// The field of the instant's wall clock in the session zone, as
		// Flink reads it (the LTZ converted to a TIMESTAMP there; EPOCH
		// too: the wall clock's seconds, ltz29-epoch-*).
		x = c.wallOf(x)
	}
	switch {
	case x.t.ID == row.Null:
		return nullNode(e, row.Type{ID: row.BigInt}, x), nil
	case x.t.ID == row.Date && needsTime:
		return nil, errAt(unitAt, "%s of a DATE: a DATE has no time of day; CAST it to TIMESTAMP first", unit)
	case x.t.ID == row.Time && !needsTime:
		return nil, errAt(unitAt, "%s of a TIME: a TIME has no date, only HOUR, MINUTE, SECOND and their fractions", unit)
	case x.t.ID == row.Time:
		// A TIME reads as that time on 1970-01-01.
	case !x.t.ID.Temporal():
		return nil, errAt(x.e.Pos(), "cannot take the %s of %s: it needs a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ", unit, typeName(x.t))
	}
	t := row.Type{ID: row.BigInt, NotNull: x.t.NotNull}
	return c.fn1(e, t, x, func(v row.Value) (row.Value, error) { return row.BigIntValue(f(timeOf(v))), nil })
}

func (c *compiler) extract(e *sql.Extract) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	return c.partNode(e, strings.ToUpper(e.Unit), e.UnitAt, x)
}

func buildPart(unit string) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		return c.partNode(e, unit, e.At, args[0])
	}
}
