package row

import (
	"errors"
	"fmt"
	"math"
)

// Java's ISO formats write a year past 0000..9999 with a sign
// (appendISOYear): Flink's json and csv writers write +10000-01-01 and
// -0001-12-31, its json reader takes them back, and so does its csv
// reader for a timestamp. SignedYear and AtYear let a reader do the same
// with its own parser of the four-digit form.

// signedYearBase is the year SignedYear puts in place of the signed one:
// a leap year, so that the reader's parser takes a February 29 that
// AtYear then checks against the real year.
const signedYearBase = 2000

// maxSignedYear bounds the years AtYear reads, past a TIMESTAMP's range
// (int64 microseconds: -290308 to +294247), within a DATE's int32 days.
const maxSignedYear = 300000

// ErrYearRange is AtYear's error for a time past the int64 microseconds
// (or a year past maxSignedYear).
var ErrYearRange = errors.New("year out of range")

// SignedYear reads the signed year java.time's ISO formats write (strict
// SignStyle.EXCEEDS_PAD: a '+' and five or more digits, or a '-' and four
// or more, -0000 not being a year) at the start of s, followed by '-'.
// It returns the year and s with the year written as 2000, for the
// caller's parser of the four-digit form; ok is false for any other text.
func SignedYear(s string) (year int, rest string, ok bool) {
	if len(s) < 6 || (s[0] != '+' && s[0] != '-') {
		return 0, "", false
	}
	i := 1
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if i > 10 { // Java's widest year is nine digits
			return 0, "", false
		}
		year = year*10 + int(s[i]-'0')
		i++
	}
	n := i - 1
	if i >= len(s) || s[i] != '-' || n < 4 || (s[0] == '+' && n < 5) || (s[0] == '-' && year == 0) {
		return 0, "", false
	}
	if s[0] == '-' {
		year = -year
	}
	return year, fmt.Sprint(signedYearBase) + s[i:], true
}

// AtYear moves v, read from rest (SignedYear's text, in the year 2000),
// to year: a DATE's days or a TIMESTAMP's or TIMESTAMP_LTZ's
// microseconds by the days between the text's month and day in 2000 and
// in year (taken from the text, so that a zone offset that moved the
// instant to another day counts once). February 29 of a year that has
// none is an error, as java.time's is.
func AtYear(v Value, rest string, year int) (Value, error) {
	if year > maxSignedYear || year < -maxSignedYear {
		return NullValue, ErrYearRange
	}
	if len(rest) < 10 {
		return NullValue, fmt.Errorf("not a date")
	}
	month, ok1 := digits(rest[5:7])
	day, ok2 := digits(rest[8:10])
	if !ok1 || !ok2 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return NullValue, fmt.Errorf("no such day in the year %d", year)
	}
	delta := daysFromCivil(year, month, day) - daysFromCivil(signedYearBase, month, day)
	switch v.id {
	case Date:
		return DateValue(int32(int64(v.Days()) + delta)), nil
	case Timestamp, TimestampLTZ:
		// days*86400e6 + tod, the time of day (a zone offset may carry it
		// past the day's ends) added last, so that an instant near the
		// int64 ends is neither refused nor wrapped.
		days := daysFromCivil(year, month, day)
		tod := v.Micros() - daysFromCivil(signedYearBase, month, day)*86400e6
		if days < 0 {
			days, tod = days+1, tod-86400e6
		}
		if days > math.MaxInt64/int64(86400e6) || days < math.MinInt64/int64(86400e6) {
			return NullValue, ErrYearRange
		}
		base := days * 86400e6
		sum := base + tod
		if (tod > 0 && sum < base) || (tod < 0 && sum > base) {
			return NullValue, ErrYearRange
		}
		if v.id == Timestamp {
			return TimestampValue(sum), nil
		}
		return TimestampLTZValue(sum), nil
	}
	return v, nil
}
