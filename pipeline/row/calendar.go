// Proleptic Gregorian calendar arithmetic between days since 1970-01-01
// and year-month-day, for writing and reading timestamps without package
// time.

package row

import (
	"strconv"
	"sync/atomic"
)

// lastDay caches the last day that cachedCivilFromDays converted: its
// key (dayKey, never 0, so that 0 is empty) in the high 32 bits,
// year<<9 | month<<5 | day in the low ones. The rows of one window, and
// the windows of one day, share it. One word, so that goroutines share
// it without a lock.
var lastDay atomic.Uint64

// dayKey numbers the days of years 0..9999 from 1 (0000-01-01 is day
// -719528 of the Unix epoch).
func dayKey(days int64) uint64 { return uint64(days + 719528 + 1) }

func cachedCivilFromDays(days int64) (year int64, month, day int) {
	c := lastDay.Load()
	if c>>32 == dayKey(days) {
		return int64(c >> 9 & (1<<23 - 1)), int(c >> 5 & 15), int(c & 31)
	}
	year, month, day = civilFromDays(days)
	// Only years 0..9999 come here: the key and the year fit their fields.
	lastDay.Store(dayKey(days)<<32 | uint64(year)<<9 | uint64(month)<<5 | uint64(day))
	return year, month, day
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's days-to-civil algorithm, eras of 400 years).
func civilFromDays(days int64) (year int64, month, day int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], March first
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to the proleptic
// Gregorian date y-m-d (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// appendISOYear writes a year as java.time's ISO formats do
// (SignStyle.EXCEEDS_PAD, four digits wide): what LocalDate.toString,
// Instant.toString and Flink's json and csv writers write, and what
// Flink's json reader takes back. 0..9999 are four digits; a year past
// 9999 has a '+' before its digits (+10000), one before 0000 a '-' and at
// least four digits (-0001). A year past 9999 written without the sign
// would read back as no date at all.
func appendISOYear(dst []byte, y int64) []byte {
	switch {
	case y > 9999:
		dst = append(dst, '+')
	case y < 0:
		dst = append(dst, '-')
		y = -y
	}
	if y < 10000 {
		var b [4]byte
		put4(b[:], int(y))
		return append(dst, b[:]...)
	}
	return strconv.AppendInt(dst, y, 10)
}

// AppendDate writes a DATE (days since 1970-01-01) as yyyy-MM-dd, the
// year as appendISOYear: CAST(d AS STRING), LocalDate.toString and the
// csv and json writers.
func AppendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	dst = appendISOYear(dst, y)
	var b [6]byte
	b[0] = '-'
	put2(b[1:], m)
	b[3] = '-'
	put2(b[4:], d)
	return append(dst, b[:]...)
}

// splitMicros splits micros since the epoch into days and the
// microseconds of that day (0 <= of < 86400e6), flooring.
func splitMicros(micros int64) (days, of int64) {
	days = micros / 86400e6
	of = micros - days*86400e6
	if of < 0 {
		days--
		of += 86400e6
	}
	return days, of
}
