package expr

import "fmt"

// The text of an INTERVAL, as Flink's CAST(... AS STRING) writes it
// (Calcite's intervalDayTimeToString and intervalYearMonthToString with
// the widest qualifier): a sign, then days and the time of day to the
// millisecond, or years and two digits of months, whatever units the
// interval was written in (INTERVAL '36' HOUR is +1 12:00:00.000).

// intervalDayTimeText writes a day-time interval of us microseconds.
func intervalDayTimeText(us int64) string {
	sign := '+'
	if us < 0 {
		sign, us = '-', -us
	}
	ms := us / 1000
	return fmt.Sprintf("%c%d %02d:%02d:%02d.%03d", sign, ms/86400000, ms/3600000%24, ms/60000%60, ms/1000%60, ms%1000)
}

// intervalYearMonthText writes a year-month interval of months months.
func intervalYearMonthText(months int64) string {
	sign := '+'
	if months < 0 {
		sign, months = '-', -months
	}
	return fmt.Sprintf("%c%d-%02d", sign, months/12, months%12)
}
