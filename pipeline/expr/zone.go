package expr

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// WithZone sets the session time zone (the pipeline's local_time_zone,
// Flink's table.local-time-zone); nil is UTC. Conversions between a
// TIMESTAMP_LTZ and a wall clock (a TIMESTAMP, DATE, TIME or its text)
// read it in Flink.
func WithZone(loc *time.Location) Option {
	return func(c *compiler) {
		if loc != time.UTC {
			c.zone = loc
		}
	}
}

// wallClock says whether id is a wall-clock value (or its text): what a
// TIMESTAMP_LTZ converts to and from through the session zone.
func wallClock(id row.TypeID) bool {
	return id == row.String || id == row.Timestamp || id == row.Date || id == row.Time
}

// zoneConv says whether converting from to to reads the session zone.
func zoneConv(from, to row.TypeID) bool {
	return from == row.TimestampLTZ && wallClock(to) || to == row.TimestampLTZ && wallClock(from)
}

// unzonedErr refuses what, a conversion that Flink makes in the session
// zone by a rule etld does not know yet, when the session zone is not
// UTC: a refusal at plan time rather than a silent wrong result. The
// caller places it.
func (c *compiler) unzonedErr(what string) error {
	return fmt.Errorf("%s under local_time_zone %s is not supported yet: Flink's rule for it in a session zone is not known (ltz-compare-timestamp); CAST the TIMESTAMP_LTZ to TIMESTAMP, or the TIMESTAMP to TIMESTAMP_LTZ, to say which is meant", what, c.zone.String())
}

// zonedCast converts between a TIMESTAMP_LTZ and a wall clock (a
// TIMESTAMP, DATE, TIME or text) in zone, as Flink's cast rules do with the
// session zone: the instant's wall clock there, or the wall clock's
// instant there (row.AtZone), through a TIMESTAMP of the LTZ's
// precision.
func zonedCast(from, to row.Type, zone *time.Location) (castFunc, error) {
	if from.ID == row.TimestampLTZ {
		wall := row.Type{ID: row.Timestamp, Precision: from.Precision}
		k, err := castKernel(wall, to, nil)
		if err != nil {
			return nil, err
		}
		return func(v row.Value) (row.Value, error) {
			return k(row.TimestampValue(row.WallMicros(zone, v.Micros())))
		}, nil
	}
	wall := row.Type{ID: row.Timestamp, Precision: to.Precision}
	k, err := castKernel(from, wall, nil)
	if err != nil {
		return nil, err
	}
	return func(v row.Value) (row.Value, error) {
		w, err := k(v)
		if err != nil || w.IsNull() {
			return w, err
		}
		return row.TimestampLTZValue(row.AtZone(zone, w.Micros())), nil
	}, nil
}

// wallOf is x, a TIMESTAMP_LTZ, as the TIMESTAMP of its wall clock in the
// session zone: what Flink reads a field of or formats.
func (c *compiler) wallOf(x *node) *node {
	zone, ev := c.zone, x.eval
	n := &node{t: row.Type{ID: row.Timestamp, Precision: x.t.Precision, NotNull: x.t.NotNull}, col: -1, e: x.e, konst: x.konst}
	conv := func(v row.Value) row.Value {
		if v.IsNull() {
			return v
		}
		return row.TimestampValue(row.WallMicros(zone, v.Micros()))
	}
	n.eval = func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil {
			return v, err
		}
		return conv(v), nil
	}
	if x.konst {
		n.val = conv(x.val)
	}
	return n
}
