package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// FLOOR(x TO unit) and CEIL(x TO unit) of a TIMESTAMP, TIMESTAMP_LTZ, DATE
// or TIME, computed as Flink 2.3 does, quirks included:
//   - the value is cut to milliseconds first (FLOOR and CEIL alike),
//     but for CEIL of a TIMESTAMP (not a TIMESTAMP_LTZ) TO MILLISECOND
//     (CEIL of 01:56:59.987654 TO MILLISECOND is 01:56:59.988, TO SECOND
//     of 00:00:00.000001 is 00:00:00);
//   - YEAR, QUARTER, MONTH and WEEK look only at the day, found by
//     dividing the milliseconds by a day's with truncation toward zero
//     (so 1969-12-31 23:59:59.5 counts as 1970-01-01, and CEIL of
//     2024-05-01 00:00:00.001 TO MONTH is 2024-05-01);
//   - CEIL TO QUARTER moves on unless the day is January 1st (CEIL of
//     2024-04-01 TO QUARTER is 2024-07-01);
//   - weeks start on Sunday;
//   - centuries and millennia start in years 1 (1901, 2001), decades in
//     years 0; CEIL TO one of them moves on even from its first day (CEIL
//     of 2001-01-01 TO CENTURY is 2101-01-01), as Calcite's
//     julianDateFloor does;
//   - the units of fixed length round the milliseconds since 1970 or a
//     TIME's milliseconds of the day; a DATE stays as it is TO HOUR and
//     finer;
//   - CEIL of a DATE TO DAY is the next day, even for the day itself;
//   - a TIME rounded TO YEAR, QUARTER, MONTH, WEEK or DAY is its
//     milliseconds of the day rounded as if they were a day number (CEIL
//     TO DAY adds a millisecond), and a CEIL that reaches 24:00 fails, as
//     Flink's job does.
// The session time zone is UTC, so TIMESTAMP_LTZ rounds as TIMESTAMP.

const msPerDay = 86400000

// floorCeilUnits are the units' lengths in milliseconds; 0 for the units
// of the calendar.
var floorCeilUnits = map[string]int64{
	"MILLENNIUM": 0, "CENTURY": 0, "DECADE": 0, "YEAR": 0, "QUARTER": 0, "MONTH": 0, "WEEK": 0,
	"DAY": msPerDay, "HOUR": 3600000, "MINUTE": 60000, "SECOND": 1000, "MILLISECOND": 1,
}

// buildFloorCeilTo compiles FLOOR or CEIL with a unit (e.Unit).
func (c *compiler) buildFloorCeilTo(e *sql.Call, x *node, floor bool) (*node, error) {
	unit := strings.ToUpper(e.Unit)
	ms, ok := floorCeilUnits[unit]
	if !ok {
		return nil, errAt(e.UnitAt, "%s(x TO %s): unknown unit; use MILLENNIUM, CENTURY, DECADE, YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND or MILLISECOND", e.Name, unit)
	}
	t := x.t
	// Under a session zone Flink rounds a TIMESTAMP_LTZ to HOUR, DAY or a
	// calendar unit on its wall clock there, shifting by the instant's
	// own offset and back by the same (DateTimeUtils.timestampFloor and
	// timestampCeil), not by the result's.
	var zone *time.Location
	if t.ID == row.TimestampLTZ && (ms == 0 || ms >= 3600000) {
		zone = c.zone
	}
	switch t.ID {
	case row.Null:
		return nullNode(e, row.Type{ID: row.Timestamp, Precision: 3}, x), nil
	case row.Timestamp, row.TimestampLTZ:
		return c.fn1(e, t, x, func(v row.Value) (row.Value, error) {
			m := floorDiv(v.Micros(), 1000)
			var off int64
			if zone != nil {
				off = row.OffsetMicros(zone, v.Micros()) / 1000
				m += off
			}
			if !floor && ms == 1 && t.ID == row.Timestamp && v.Micros()%1000 != 0 {
				m++ // TO MILLISECOND alone sees the microseconds, of a TIMESTAMP only
			}
			if ms == 0 {
				// Flink's day: the division truncates toward zero.
				m = calendarRound(unit, m/msPerDay, floor) * msPerDay
			} else {
				m = roundTo(m, ms, floor)
			}
			if t.ID == row.Timestamp {
				return row.TimestampValue(m * 1000), nil
			}
			return row.TimestampLTZValue((m - off) * 1000), nil
		})
	case row.Date:
		return c.fn1(e, t, x, func(v row.Value) (row.Value, error) {
			d := int64(v.Days())
			if ms == 0 || ms == msPerDay {
				d = calendarRound(unit, d, floor)
			}
			return row.DateValue(int32(d)), nil
		})
	case row.Time:
		return c.fn1(e, t, x, func(v row.Value) (row.Value, error) {
			m := v.Micros() / 1000
			if ms == 0 || ms == msPerDay {
				// Flink rounds the milliseconds as if they were a day number.
				m = calendarRound(unit, m, floor)
			} else {
				m = roundTo(m, ms, floor)
			}
			if m < 0 || m >= msPerDay {
				return row.NullValue, fmt.Errorf("%s(x TO %s) of a TIME gives %d ms after midnight, not a time of day", e.Name, unit, m)
			}
			return row.TimeOfDayValue(m * 1000), nil
		})
	}
	return nil, errAt(e.At, "%s(x TO %s) needs a TIMESTAMP, TIMESTAMP_LTZ, DATE or TIME, got %s", e.Name, unit, t)
}

// roundTo rounds a down (floor) or up to a multiple of n.
func roundTo(a, n int64, floor bool) int64 {
	f := floorDiv(a, n) * n
	if !floor && f != a {
		f += n
	}
	return f
}

// calendarRound rounds day number d (days since 1970-01-01) to the start
// of its year, quarter, month or week (Sunday), or past it for CEIL; TO
// DAY, FLOOR keeps d and CEIL adds one.
func calendarRound(unit string, d int64, floor bool) int64 {
	y, mon, day := civil(d)
	m := int64(mon)
	switch unit {
	case "MILLENNIUM", "CENTURY":
		n := int64(1000)
		if unit == "CENTURY" {
			n = 100
		}
		start := n*((y+n-1)/n) + 1 // Java's division, truncating toward zero
		if floor {
			start -= n
		}
		return daysOf(start, 1)
	case "DECADE":
		if !floor {
			return daysOf(10*(1+y/10), 1)
		}
		return daysOf(10*(y/10), 1)
	case "YEAR":
		if !floor && (m > 1 || day > 1) {
			y++
		}
		return daysOf(y, 1)
	case "MONTH":
		if !floor && day > 1 {
			m++
		}
		return daysOf(y, m)
	case "QUARTER":
		q := (m + 2) / 3
		if !floor && (m > 1 || day > 1) {
			q++
		}
		return daysOf(y, q*3-2)
	case "DAY":
		if !floor {
			return d + 1 // even on the day's start
		}
		return d
	}
	dow := (d + 4) % 7 // 1970-01-01 was a Thursday; Sunday is 0
	if dow < 0 {
		dow += 7
	}
	if floor || dow == 0 {
		return d - dow
	}
	return d - dow + 7
}

// daysOf is the day number of the first of month m (13 is January of the
// next year) of year y.
func daysOf(y, m int64) int64 {
	return time.Date(int(y), time.Month(m), 1, 0, 0, 0, 0, time.UTC).Unix() / 86400
}
