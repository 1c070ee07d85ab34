package datagen

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// clock is the current time in the forms random time columns need, read
// once per batch rather than once per value.
type clock struct {
	wall    int64 // TIMESTAMP: the local wall clock, µs
	instant int64 // TIMESTAMP_LTZ: the instant, µs
	days    int64 // DATE: today's local date
}

func newClock(now time.Time) clock {
	wall := row.TimeValue(row.Timestamp, now).Micros()
	return clock{wall: wall, instant: now.UnixMicro(), days: floorDiv(wall, int64(day/time.Microsecond))}
}

// fill generates one row, column by column in schema order: the order of
// draws that makes a seed's rows independent of batch sizes.
func (s *Source) fill(r row.Row, now *clock) {
	for i := range s.cols {
		c := &s.cols[i]
		if c.nullRate > 0 && s.float01() < c.nullRate {
			if c.gen >= genSeqInt {
				c.seq.next++
			}
			continue // r[i] is NULL already: NewRow zeroes rows
		}
		switch c.gen {
		case genBool:
			r[i] = row.BoolValue(s.pcg.Uint64()>>63 == 1)
		case genInt:
			r[i] = intValue(c.typ, c.lo+int64(s.between(c.span)))
		case genFloat:
			r[i] = s.float(c)
		case genString:
			r[i] = row.StringValue(s.alnum(c.length))
		case genBytes:
			r[i] = row.BytesValue(s.randBytes(c.length))
		case genPast:
			r[i] = s.past(c, now)
		case genSeqInt:
			q := &c.seq
			r[i] = intValue(c.typ, q.start+int64(q.next)*q.step)
			q.next++
		case genSeqFloat:
			v := c.seq.fstart + float64(c.seq.next)
			if c.typ.ID == row.Float {
				r[i] = row.FloatValue(float32(v))
			} else {
				r[i] = row.DoubleValue(v)
			}
			c.seq.next++
		}
	}
}

// intValue makes a value of type t from an integer payload.
func intValue(t row.Type, n int64) row.Value {
	switch t.ID {
	case row.Int:
		return row.IntValue(int32(n))
	case row.Decimal:
		return row.DecimalValue(n, t.Scale)
	case row.String:
		return row.StringValue(strconv.FormatInt(n, 10))
	case row.Date:
		return row.DateValue(int32(n))
	case row.Timestamp:
		return row.TimestampValue(n)
	case row.TimestampLTZ:
		return row.TimestampLTZValue(n)
	}
	return row.BigIntValue(n)
}

// float draws from [flo, fhi). Rounding (to float32 for FLOAT) can land on
// fhi itself, which the half-open range excludes.
func (s *Source) float(c *column) row.Value {
	v := c.flo + (c.fhi-c.flo)*s.float01()
	if c.typ.ID == row.Float {
		f := float32(v)
		if hi := float32(c.fhi); f >= hi && c.fhi > c.flo {
			f = max(math.Nextafter32(hi, float32(math.Inf(-1))), float32(c.flo))
		}
		return row.FloatValue(f)
	}
	if v >= c.fhi && c.fhi > c.flo {
		v = math.Nextafter(c.fhi, math.Inf(-1))
	}
	return row.DoubleValue(v)
}

// past draws a time up to span before now, truncated to the precision.
func (s *Source) past(c *column, now *clock) row.Value {
	back := int64(s.between(c.span))
	switch c.typ.ID {
	case row.Date:
		return row.DateValue(int32(now.days - back))
	case row.Timestamp:
		return row.TimestampValue(floorTo(now.wall-back, c.unit))
	}
	return row.TimestampLTZValue(floorTo(now.instant-back, c.unit))
}

// between draws uniformly from [0, span], inclusive.
func (s *Source) between(span uint64) uint64 {
	switch span {
	case 0:
		return 0
	case math.MaxUint64:
		return s.pcg.Uint64()
	}
	return s.uint64n(span + 1)
}

// uint64n draws uniformly from [0, n) without modulo bias (Lemire's
// multiply-and-reject).
func (s *Source) uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(s.pcg.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.pcg.Uint64(), n)
		}
	}
	return hi
}

// float01 draws uniformly from [0, 1) with 53 bits.
func (s *Source) float01() float64 {
	return float64(s.pcg.Uint64()>>11) * 0x1p-53
}

const (
	alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// pow62x10 is 62^10: one 64-bit draw below alnumLimit, a whole number
	// of times 62^10, gives ten unbiased base-62 digits.
	pow62x10   = 839299365868340224
	alnumLimit = 21 * pow62x10
)

// alnum draws a random alphanumeric string of n characters.
func (s *Source) alnum(n int) string {
	if n == 0 {
		return ""
	}
	buf := s.buf(n)
	for i := 0; i < n; {
		x := s.pcg.Uint64()
		if x >= alnumLimit {
			continue
		}
		for j := 0; j < 10 && i < n; j++ {
			buf[i] = alphabet[x%62]
			x /= 62
			i++
		}
	}
	return string(buf)
}

// randBytes draws n random bytes into the scratch buffer.
func (s *Source) randBytes(n int) []byte {
	buf := s.buf(n)
	var word [8]byte
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(word[:], s.pcg.Uint64())
		copy(buf[i:], word[:])
	}
	return buf
}

func (s *Source) buf(n int) []byte {
	if cap(s.scratch) < n {
		s.scratch = make([]byte, n)
	}
	return s.scratch[:n]
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorTo(v, unit int64) int64 {
	if unit <= 1 {
		return v
	}
	return floorDiv(v, unit) * unit
}
