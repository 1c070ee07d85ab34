package expr

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
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

// unzoned refuses what, a conversion that Flink makes in the session zone
// but etld still makes in UTC, when the session zone is not UTC: a
// refusal at plan time rather than a silent wrong result.
func (c *compiler) unzoned(at sql.Pos, what string) error {
	if c.zone == nil {
		return nil
	}
	return errAt(at, "%v", c.unzonedErr(what))
}

// unzonedErr is unzoned's error without a position, for a caller that
// places it itself.
func (c *compiler) unzonedErr(what string) error {
	return fmt.Errorf("%s under local_time_zone %s is not supported yet: etld would compute it in UTC where Flink uses the session zone (ltz-zone-expressions)", what, c.zone.String())
}
