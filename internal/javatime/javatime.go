// Package javatime formats and parses times with Java's date pattern
// letters (SimpleDateFormat / DateTimeFormatter), as Flink's DATE_FORMAT,
// TO_TIMESTAMP and UNIX_TIMESTAMP and its Elasticsearch dynamic index
// (`{col|yyyy-MM-dd}`) read them.
package javatime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Patterns use Java's pattern letters (SimpleDateFormat /
// DateTimeFormatter, as Flink's DATE_FORMAT, TO_TIMESTAMP and
// UNIX_TIMESTAMP do): yyyy MM dd HH mm ss SSS and friends. A pattern is
// compiled once into fields. Supported letters: G y Y u(=year as in
// DateTimeFormatter) M L d D E e a H k K h m s S n z Z X x; text in single
// quotes is literal, '' is a quote. S is the fraction of a second with as
// many digits as letters (DateTimeFormatter's meaning; for SSS both agree).
// Parsing is strict: the whole text must match. yy parses as 20yy.

type dfField struct {
	letter byte // 0 for literal text
	n      int  // repeat count
	lit    string
}

// Pattern is a compiled date pattern.
type Pattern []dfField

// Compile reads a pattern such as yyyy-MM-dd'T'HH:mm:ss.SSS.
func Compile(p string) (Pattern, error) {
	var f Pattern
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f = append(f, dfField{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		ch := p[i]
		switch {
		case ch == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			end := strings.IndexByte(p[i+1:], '\'')
			for end >= 0 && i+1+end+1 < len(p) && p[i+1+end+1] == '\'' {
				// '' inside quotes is a quote
				lit.WriteString(p[i+1 : i+1+end+1])
				i += end + 2
				end = strings.IndexByte(p[i+1:], '\'')
			}
			if end < 0 {
				return nil, fmt.Errorf("date format %q has an unclosed quote", p)
			}
			lit.WriteString(p[i+1 : i+1+end])
			i += end + 2
		case (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'):
			if !strings.ContainsRune("GyYuMLdDEeaHkKhmsSnzZXx", rune(ch)) {
				return nil, fmt.Errorf("date format %q: pattern letter %c is not supported (quote literal text: 'T')", p, ch)
			}
			n := 1
			for i+n < len(p) && p[i+n] == ch {
				n++
			}
			if n > 9 {
				return nil, fmt.Errorf("date format %q: too many pattern letters %c (at most 9)", p, ch)
			}
			flush()
			f = append(f, dfField{letter: ch, n: n})
			i += n
		default:
			lit.WriteByte(ch)
			i++
		}
	}
	flush()
	return f, nil
}

func appendPadded(dst []byte, v, width int) []byte {
	if uint(v) < 100 && width <= 2 {
		// The usual field (MM, dd, HH, mm, ss): no strconv.
		if v >= 10 || width == 2 {
			dst = append(dst, byte('0'+v/10))
		}
		return append(dst, byte('0'+v%10))
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// Format appends t (read as a UTC wall clock) in the pattern. The date
// and the clock are taken from t once, by the first field that needs
// them: each of t's field methods would work out the date again.
func (f Pattern) Format(dst []byte, t time.Time) []byte {
	var (
		dated, clocked    bool
		year, day         int
		month             time.Month
		hour, minute, sec int
	)
	date := func() {
		if !dated {
			year, month, day = t.Date()
			dated = true
		}
	}
	clock := func() {
		if !clocked {
			hour, minute, sec = t.Clock()
			clocked = true
		}
	}
	for _, fl := range f {
		n := fl.n
		switch fl.letter {
		case 0:
			dst = append(dst, fl.lit...)
		case 'G':
			dst = append(dst, "AD"...)
		case 'y', 'Y', 'u':
			date()
			switch {
			case n == 2:
				dst = appendPadded(dst, year%100, 2)
			case n >= 4 && year > 0 && len(strconv.Itoa(year)) > n:
				// Java's SignStyle.EXCEEDS_PAD: a year wider than the
				// pattern's four or more letters has a '+' (DATE_FORMAT of
				// the year 10000 in yyyy-MM-dd is +10000-01-01).
				dst = append(dst, '+')
				dst = appendPadded(dst, year, n)
			default:
				dst = appendPadded(dst, year, n)
			}
		case 'M', 'L':
			date()
			switch {
			case n >= 4:
				dst = append(dst, month.String()...)
			case n == 3:
				dst = append(dst, month.String()[:3]...)
			default:
				dst = appendPadded(dst, int(month), n)
			}
		case 'd':
			date()
			dst = appendPadded(dst, day, n)
		case 'D':
			dst = appendPadded(dst, t.YearDay(), n)
		case 'E', 'e':
			if n >= 4 {
				dst = append(dst, t.Weekday().String()...)
			} else {
				dst = append(dst, t.Weekday().String()[:3]...)
			}
		case 'a':
			clock()
			if hour < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case 'H':
			clock()
			dst = appendPadded(dst, hour, n)
		case 'k':
			clock()
			h := hour
			if h == 0 {
				h = 24
			}
			dst = appendPadded(dst, h, n)
		case 'K':
			clock()
			dst = appendPadded(dst, hour%12, n)
		case 'h':
			clock()
			h := hour % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, h, n)
		case 'm':
			clock()
			dst = appendPadded(dst, minute, n)
		case 's':
			clock()
			dst = appendPadded(dst, sec, n)
		case 'S':
			var buf [9]byte
			frac := appendPadded(buf[:0], t.Nanosecond(), 9)
			dst = append(dst, frac[:n]...)
		case 'n':
			dst = appendPadded(dst, t.Nanosecond(), n)
		case 'z':
			dst = append(dst, "UTC"...)
		case 'Z':
			dst = append(dst, "+0000"...)
		case 'X':
			dst = append(dst, 'Z')
		case 'x':
			dst = append(dst, "+00"...)
			if n >= 2 {
				dst = append(dst, "00"...)
			}
		}
	}
	return dst
}

func isNumericField(fl dfField) bool {
	switch fl.letter {
	case 'y', 'Y', 'u', 'd', 'D', 'H', 'k', 'K', 'h', 'm', 's', 'S', 'n':
		return true
	case 'M', 'L':
		return fl.n <= 2
	}
	return false
}

// ErrNoMatch is Parse's error for a text that does not match the pattern.
var ErrNoMatch = errors.New("does not match the format")

// Parse reads s in the pattern and returns the instant (UTC unless the
// text carries a zone offset).
func (f Pattern) Parse(s string) (time.Time, error) {
	p := parsed{year: 1970, month: 1, day: 1}
	pos := 0
	for i, fl := range f {
		var w int
		ok := true
		switch {
		case fl.letter == 0:
			ok, w = strings.HasPrefix(s[pos:], fl.lit), len(fl.lit)
		case isNumericField(fl):
			maxW := 10
			if i+1 < len(f) && isNumericField(f[i+1]) {
				maxW = fl.n // adjacent numbers: fixed widths
			}
			w, ok = p.number(fl, s[pos:], maxW)
		default:
			w, ok = p.text(fl, s[pos:])
		}
		if !ok {
			return time.Time{}, ErrNoMatch
		}
		pos += w
	}
	if pos != len(s) {
		return time.Time{}, ErrNoMatch
	}
	return p.instant()
}

// parsed holds the fields Parse has read, each at its default (the Unix
// epoch's) until the text sets it.
type parsed struct {
	year, month, day, yday   int
	hour, minute, sec, nanos int
	pm, hasAmPm              bool
	offset                   int // seconds east of UTC
}

// number reads the numeric field fl at the start of s, at most maxW
// digits (a year may carry a minus sign), records it and returns the
// width it read.
func (p *parsed) number(fl dfField, s string, maxW int) (int, bool) {
	pos := 0
	neg := false
	if (fl.letter == 'y' || fl.letter == 'u') && pos < len(s) && s[pos] == '-' {
		neg = true
		pos++
	}
	start := pos
	for pos < len(s) && pos-start < maxW && s[pos] >= '0' && s[pos] <= '9' {
		pos++
	}
	digits := s[start:pos]
	if digits == "" {
		return 0, false
	}
	v, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return pos, p.setNumber(fl, v, digits)
}

// setNumber records v, read as digits, for the numeric field fl; it
// reports false for an hour out of the letter's range.
func (p *parsed) setNumber(fl dfField, v int, digits string) bool {
	switch fl.letter {
	case 'y', 'Y', 'u':
		if fl.n == 2 && len(digits) == 2 {
			v += 2000
		}
		p.year = v
	case 'M', 'L':
		p.month = v
	case 'd':
		p.day = v
	case 'D':
		p.yday = v
	case 'H', 'K':
		if v > 23 || (fl.letter == 'K' && v > 11) {
			return false
		}
		p.hour = v
	case 'k', 'h':
		if v < 1 || v > 24 || (fl.letter == 'h' && v > 12) {
			return false
		}
		p.hour = v % 24
		if fl.letter == 'h' {
			p.hour = v % 12
		}
	case 'm':
		p.minute = v
	case 's':
		p.sec = v
	case 'S':
		for k := len(digits); k < 9; k++ {
			v *= 10
		}
		if len(digits) > 9 {
			v, _ = strconv.Atoi(digits[:9])
		}
		p.nanos = v
	case 'n':
		p.nanos = v
	}
	return true
}

// text reads the text field fl (an era, a month or day name, AM/PM, a
// zone) at the start of s, records it and returns the width it read.
func (p *parsed) text(fl dfField, s string) (int, bool) {
	switch fl.letter {
	case 'G':
		return 2, hasPrefixFold(s, "AD")
	case 'M', 'L':
		m, w := matchName(s, monthNames[:], fl.n >= 4)
		if m < 0 {
			return 0, false
		}
		p.month = m + 1
		return w, true
	case 'E', 'e':
		d, w := matchName(s, dayNames[:], fl.n >= 4)
		return w, d >= 0
	case 'a':
		switch {
		case hasPrefixFold(s, "AM"):
			p.hasAmPm = true
		case hasPrefixFold(s, "PM"):
			p.hasAmPm, p.pm = true, true
		default:
			return 0, false
		}
		return 2, true
	case 'z', 'Z', 'X', 'x':
		off, w, ok := parseZone(s)
		if !ok {
			return 0, false
		}
		p.offset = off
		return w, true
	}
	return 0, true
}

// instant checks the fields read and returns the instant they name.
func (p *parsed) instant() (time.Time, error) {
	hour := p.hour
	if p.hasAmPm && p.pm {
		hour += 12
	}
	if p.month < 1 || p.month > 12 || p.day < 1 || p.day > 31 || p.minute > 59 || p.sec > 59 || hour > 23 {
		return time.Time{}, ErrNoMatch
	}
	t := time.Date(p.year, time.Month(p.month), p.day, hour, p.minute, p.sec, p.nanos, time.UTC)
	if p.yday > 0 {
		t = time.Date(p.year, 1, p.yday, hour, p.minute, p.sec, p.nanos, time.UTC)
	} else if t.Day() != p.day {
		return time.Time{}, ErrNoMatch // 2024-02-30
	}
	return t.Add(-time.Duration(p.offset) * time.Second), nil
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }

// matchName finds a month or day name (full or its first three letters)
// at the start of s.
func matchName(s string, names []string, full bool) (int, int) {
	for i, n := range names {
		if full && hasPrefixFold(s, n) {
			return i, len(n)
		}
		if !full && hasPrefixFold(s, n[:3]) {
			return i, 3
		}
	}
	return -1, 0
}

// parseZone reads Z, UTC, GMT or an offset +HH, +HHMM, +HH:MM.
func parseZone(s string) (offset, width int, ok bool) {
	switch {
	case strings.HasPrefix(s, "Z"):
		return 0, 1, true
	case strings.HasPrefix(s, "UTC"), strings.HasPrefix(s, "GMT"):
		if len(s) == 3 || (s[3] != '+' && s[3] != '-') {
			return 0, 3, true
		}
		off, w, ok := parseZone(s[3:])
		return off, w + 3, ok
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, 0, false
	}
	num := func(t string) (int, bool) {
		if len(t) < 2 || t[0] < '0' || t[0] > '9' || t[1] < '0' || t[1] > '9' {
			return 0, false
		}
		return int(t[0]-'0')*10 + int(t[1]-'0'), true
	}
	h, ok := num(s[1:])
	if !ok {
		return 0, 0, false
	}
	w, m := 3, 0
	switch {
	case len(s) >= 6 && s[3] == ':':
		if m, ok = num(s[4:]); ok {
			w = 6
		}
	case len(s) >= 5:
		if mm, ok2 := num(s[3:]); ok2 {
			m, w = mm, 5
		}
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, w, true
}

// HasZone says whether the pattern reads a zone or offset (z, Z, X, x):
// a text it parses names its instant itself; one without names a wall
// clock that the caller places in its session zone.
func (f Pattern) HasZone() bool {
	for _, fl := range f {
		switch fl.letter {
		case 'z', 'Z', 'X', 'x':
			return true
		}
	}
	return false
}
