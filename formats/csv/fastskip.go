package csv

import (
	"math/bits"

	"github.com/etld/etld/internal/swar"
	"github.com/etld/etld/pipeline/row"
)

// Two shortcuts of the one-pass decode, each for a common case and
// falling back to the field-by-field loop on anything else:
//
//   - a run of columns the row does not read (opSkip, opNull: id, k1, k2,
//     cust of a query that reads amount and ts) is passed over eight
//     bytes at a time, counting delimiters, instead of field by field: the
//     byte loop's exit is a mispredicted branch per field, whose length
//     varies, and a skipped field needs no more than its end;
//   - a TIMESTAMP's text "YYYY-MM-DD HH:MM:SS.fff" of the minute the last
//     one had (the rows of a log, one a millisecond) is read from three
//     words: the minute compared as two, the seconds and their end as one.

// ctlFloor: bytes below it (\n, \r, the other control characters) stop a
// run of skipped fields; those that are not line breaks only send it to
// the byte loop, which reads them as the plain text they are.
const ctlFloor = 0x0E

// skipFields passes over k fields from s[j] on, each ended by the
// delimiter, and returns the offset after the k-th delimiter. ok is false
// when a line break, a quote, an escape, a control character or the end
// of s's whole words comes first: the byte loop then reads the fields
// from j, and decides.
func (d *Decoder) skipFields(s string, j, k int) (end int, ok bool) {
	delim, quote, esc := d.skip[0], d.skip[1], d.skip[2]
	// A word first for a run of one: a short field ends in it, and the
	// chunks need not be read. A longer run most often spans more than
	// a word (two fields and their delimiters in eight bytes are three
	// bytes each at most): it starts with a chunk (a run of four
	// fields of 28 bytes: four words masked, not five).
	if k == 1 && j+8 <= len(s) {
		dm, st := skipMasks(swar.Word(s, j), delim, quote, esc)
		if e, ok, more := pickDelimWord(dm, st, &k); !more {
			return j + e, ok
		}
		j += 8
	}
	// Then 32 bytes at a time, their delimiters and stops as bitmaps: the
	// fields a row skips are most often within one such chunk, and its
	// branches do not depend on where in it they end.
	for j+32 <= len(s) {
		c := s[j : j+32]
		dm0, st0 := skipMasks(swar.Word(c, 0), delim, quote, esc)
		dm1, st1 := skipMasks(swar.Word(c, 8), delim, quote, esc)
		dm2, st2 := skipMasks(swar.Word(c, 16), delim, quote, esc)
		dm3, st3 := skipMasks(swar.Word(c, 24), delim, quote, esc)
		dm := swar.Mask8(dm0) | swar.Mask8(dm1)<<8 | swar.Mask8(dm2)<<16 | swar.Mask8(dm3)<<24
		// Most chunks hold no stop (a line's fields before its end):
		// their bitmap is then not made.
		var stop uint32
		if st0|st1|st2|st3 != 0 {
			stop = swar.Mask8(st0) | swar.Mask8(st1)<<8 | swar.Mask8(st2)<<16 | swar.Mask8(st3)<<24
		}
		if e, ok, more := pickDelim(dm, stop, &k); !more {
			return j + e, ok
		}
		j += 32
	}
	for j+8 <= len(s) {
		dm, st := skipMasks(swar.Word(s, j), delim, quote, esc)
		if e, ok, more := pickDelimWord(dm, st, &k); !more {
			return j + e, ok
		}
		j += 8
	}
	return 0, false
}

// pickDelim finds the k-th delimiter of a chunk whose delimiters and
// stops are the bitmaps dm and stop (bit i: byte i): the offset after it
// and true, or false when a stop comes first; more when the chunk holds
// neither, k then less the chunk's delimiters.
func pickDelim(dm, stop uint32, k *int) (end int, ok, more bool) {
	if stop != 0 {
		dm &= stop&-stop - 1 // the delimiters before the stop
	}
	n := bits.OnesCount32(dm)
	if n < *k {
		*k -= n
		return 0, false, stop == 0
	}
	for i := *k; i > 1; i-- {
		dm &= dm - 1
	}
	return bits.TrailingZeros32(dm) + 1, true, false
}

// pickDelimWord is pickDelim of one word's masks as skipMasks gives
// them (the high bit of byte i: byte i), without making bitmaps of them.
func pickDelimWord(dm, stop uint64, k *int) (end int, ok, more bool) {
	if stop != 0 {
		dm &= stop&-stop - 1 // the delimiters before the stop
	}
	n := bits.OnesCount64(dm)
	if n < *k {
		*k -= n
		return 0, false, stop == 0
	}
	for i := *k; i > 1; i-- {
		dm &= dm - 1
	}
	return bits.TrailingZeros64(dm)>>3 + 1, true, false
}

// skipMasks flags, in w, the delimiters (exactly) and the bytes that stop
// a run of skipped fields (the first of them exactly), given the
// delimiter, the quote and the escape in every byte (Decoder.skip).
func skipMasks(w, delim, quote, esc uint64) (delims, stops uint64) {
	x := w ^ delim
	delims = ^((x&^swar.MSB + ^swar.MSB&(0x7F*swar.LSB)) | x | ^swar.MSB&(0x7F*swar.LSB))
	// Bytes below ctlFloor, exactly: the high bit of neither the byte
	// nor its low seven bits plus 0x80 - ctlFloor; not the delimiter,
	// which may be one (a tab). The quote and the escape by the borrow
	// trick: exact in their lowest byte, the one that counts.
	q := w ^ quote
	stops = (^((w&^swar.MSB + (0x80-ctlFloor)*swar.LSB) | w) &^ delims) | (q-swar.LSB)&^q
	if esc != quote { // no escape set (skipBytesOf): one check less a word
		e := w ^ esc
		stops |= (e - swar.LSB) &^ e
	}
	return delims, stops & swar.MSB
}

// skipBytesOf is the delimiter, the quote and the escape of c in every
// byte of a word, for skipMasks (Decoder.skip). An unset quote or escape
// is 0, so a NUL byte stops a run (the byte loop reads it as the plain
// byte it is then); an unset escape is the quote, so that it adds no
// stop of its own.
func skipBytesOf(c config) [3]uint64 {
	if c.escape == 0 {
		c.escape = c.quote
	}
	return [3]uint64{uint64(c.delim) * swar.LSB, uint64(c.quote) * swar.LSB, uint64(c.escape) * swar.LSB}
}

// tsMinute is the minute of the last TIMESTAMP text read, as the words
// of its first 16 bytes ("YYYY-MM-DD HH:MM"), and its microseconds
// (row.TimestampReader.Minute); ok is false before the first.
type tsMinute struct {
	w0, w1 uint64
	base   int64
	ok     bool
}

// The third word of a text of a known minute, ":SS.fff" and the byte
// after it: tsSeps masks the separators (and that byte), tsWant is what
// they must be.
const (
	tsSeps = 0x00000000FF0000FF
	tsWant = '.'<<24 | ':'
	tsEnd  = 0xFF << 56
)

// fastTimestamp reads the "YYYY-MM-DD HH:MM:SS.fff" at s[j:j+23] when
// its minute is the last one read and a delimiter or line break follows
// it: its microseconds and true, what TimestampReader.Micros gives; ok is
// false for anything else, which parseValue then reads.
func (d *Decoder) fastTimestamp(s string, j int) (int64, bool) {
	m := &d.tsMin
	if !m.ok || j+24 > len(s) || swar.Word(s, j) != m.w0 || swar.Word(s, j+8) != m.w1 {
		return 0, false
	}
	w := swar.Word(s, j+16)
	if w&tsSeps != tsWant || !d.fieldEnds[byte(w>>56)] {
		return 0, false
	}
	// The separators and the end made digits, then every byte checked
	// at once: a byte that is no digit is flagged (the first exactly).
	x := (w&^(tsSeps|tsEnd) | (tsSeps|tsEnd)&('0'*swar.LSB)) - '0'*swar.LSB
	if swar.NonDigits(x) != 0 {
		return 0, false
	}
	sec := int64(x>>8&0xFF)*10 + int64(x>>16&0xFF)
	if sec > 59 {
		return 0, false
	}
	ms := int64(x>>32&0xFF)*100 + int64(x>>40&0xFF)*10 + int64(x>>48&0xFF)
	return m.base + sec*1_000_000 + ms*1000, true
}

// noteMinute keeps the minute the timestamp reader last read, for
// fastTimestamp.
func (d *Decoder) noteMinute() {
	if minute, base := d.ts.Minute(); len(minute) == 17 {
		d.tsMin = tsMinute{w0: swar.Word(minute, 0), w1: swar.Word(minute, 8), base: base, ok: true}
	}
}

// timestampOf is the value of microseconds m in a column of type t.
func timestampOf(m int64, t *row.Type) row.Value {
	if t.ID == row.TimestampLTZ {
		return row.TimestampLTZValue(m)
	}
	return row.TimestampValue(m)
}
