package row

import "time"

// OffsetMicros is loc's offset from UTC at the instant us (microseconds
// since the epoch), in microseconds.
func OffsetMicros(loc *time.Location, us int64) int64 {
	_, off := time.UnixMicro(us).In(loc).Zone()
	return int64(off) * 1_000_000
}

// WallMicros is the wall clock (microseconds of a local date-time) of the
// instant us in loc: Flink's TimestampData.toLocalDateTime of the instant
// at the zone.
func WallMicros(loc *time.Location, us int64) int64 {
	return us + OffsetMicros(loc, us)
}

// AtZone is the instant (microseconds) of the wall clock wall
// (microseconds of a local date-time) in loc, as java.time's
// LocalDateTime.atZone gives it (Flink's casts of a wall clock to a
// TIMESTAMP_LTZ, its window_time): a wall clock repeated by a backward
// shift takes the earlier offset; one skipped by a forward shift moves on
// by the gap, which is reading it with the offset before the gap.
func AtZone(loc *time.Location, wall int64) int64 {
	return atZone(loc, wall, false)
}

// AtZoneLater is AtZone, but a repeated wall clock takes the later
// instant, the standard time after the shift: as java.util's
// GregorianCalendar reads it (SimpleDateFormat, Flink's UNIX_TIMESTAMP of
// a text) and as Flink's timers do (toEpochMillsForTimer: a window that
// ends in a repeated hour fires at its later instant).
func AtZoneLater(loc *time.Location, wall int64) int64 {
	return atZone(loc, wall, true)
}

func atZone(loc *time.Location, wall int64, later bool) int64 {
	const day = 86_400_000_000
	// The offsets a day either side: a zone shifts at most once in two
	// days, so these are the offsets that may hold at wall.
	before, after := OffsetMicros(loc, wall-day), OffsetMicros(loc, wall+day)
	best, found := int64(0), false
	for _, off := range [2]int64{before, after} {
		at := wall - off
		if OffsetMicros(loc, at) == off && (!found || at < best != later) {
			best, found = at, true
		}
	}
	if found {
		return best
	}
	// In a gap: wall + gap read with the offset after is wall read with
	// the offset before.
	return wall - before
}
