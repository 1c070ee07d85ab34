package csv

import (
	"strings"

	"github.com/etld/etld/internal/swar"
	"github.com/etld/etld/pipeline/row"
)

// The one-pass decode of the common record: no quote, no escape, no line
// break, the schema's number of fields, every read value in its plain
// form. It splits and converts at once, field by field, reading each byte
// once: a BIGINT's digits are summed as they are scanned, a STRING is the
// substring up to its delimiter, a column the row does not hold is only
// skipped. Anything else (a quote, a bad or unusual value, a field too
// many or too few, a NOT NULL column's null literal) sends the record to
// the general path, parse then decode's column loop, which reads it from
// the start as if the one-pass had not run: the values, the errors and
// their positions are then the general path's, by construction.

// colOp is what the one-pass decode does with a column of the schema.
type colOp struct {
	at      int // the row's place of the column; unused for opSkip
	kind    uint8
	notNull bool
	t       *row.Type
	// run is the number of columns from this one on that the row does
	// not read (opSkip, opNull), the last column never among them:
	// skipFields passes over them at once; nulls are the row's places
	// of those of them that are NULL in it (opNull).
	run   int
	nulls []int
}

const (
	opSkip      uint8 = iota // not in the row: split off only
	opNull                   // projected away (SetColumns): NULL, not parsed
	opString                 // the field's text
	opBigInt                 // digits summed while scanned
	opValue                  // parseValue of the field's text
	opTimestamp              // fastTimestamp, else parseValue
)

// planColumns sets d.ops from the schema and the projection, after
// NewDecoder, SetColumns and DecodeColumns.
func (d *Decoder) planColumns() {
	ops := make([]colOp, d.schema.Len())
	for i := range ops {
		t := &d.schema.Fields[i].Type
		op := colOp{at: i, kind: opValue, notNull: t.NotNull, t: t}
		if d.outAt != nil {
			op.at = d.outAt[i]
		}
		switch {
		case op.at < 0:
			op.kind = opSkip
		case d.needed != nil && !d.needed[i]:
			op.kind = opNull
		case t.ID == row.String:
			op.kind = opString
		case t.ID == row.BigInt && !d.cfg.special("0123456789+-"):
			// Not when a special byte could be read as a digit or a
			// sign: the delimiter 1 or -.
			op.kind = opBigInt
		case (t.ID == row.Timestamp || t.ID == row.TimestampLTZ) && !d.cfg.special("0123456789-: .") && !(d.cfg.hasNull && len(d.cfg.nullLit) == 23):
			// Nor a byte of the form, nor when the null literal could
			// be such a text.
			op.kind = opTimestamp
		}
		ops[i] = op
	}
	for i := len(ops) - 2; i >= 0; i-- {
		if k := ops[i].kind; k == opSkip || k == opNull {
			ops[i].run = ops[i+1].run + 1
			ops[i].nulls = ops[i+1].nulls
			if k == opNull {
				ops[i].nulls = append([]int{ops[i].at}, ops[i].nulls...)
			}
		}
	}
	d.ops = ops
}

// special reports whether the delimiter, the quote or the escape is one
// of the bytes of set.
func (c *config) special(set string) bool {
	for _, b := range []byte{c.delim, c.quote, c.escape} {
		if b != 0 && strings.IndexByte(set, b) >= 0 {
			return true
		}
	}
	return false
}

// decodeFast writes the row of s[:end] into r when s starts with a common
// record (see above) that s[end:] ends: the end of s, "\n", "\r\n", or a
// "\r" that ends s. ok is false when it did not, and r then holds some of
// the record's values, which the general path writes again.
func (d *Decoder) decodeFast(s string, r row.Row) (end int, ok bool) {
	special, ends := &d.special, &d.fieldEnds
	delim := d.cfg.delim
	hasNull, nullLit := d.cfg.hasNull, d.cfg.nullLit
	ops := d.ops
	if len(ops) == 0 {
		return 0, false // no plan: the general path only (tests)
	}
	n := len(s)
	j := 0
	for ci := 0; ci < len(ops); ci++ {
		op := &ops[ci]
		if k := op.run; k > 0 && j+8 <= n {
			if e, ok := d.skipFields(s, j, k); ok {
				for _, at := range op.nulls {
					r[at] = row.Value{} // NULL: a zeroing store, no load of row.NullValue
				}
				j = e
				ci += k - 1
				continue
			}
		}
		start := j
		if op.kind == opTimestamp {
			if m, ok := d.fastTimestamp(s, j); ok {
				r[op.at] = timestampOf(m, op.t)
				j += 23
				goto next
			}
		}
		if op.kind == opBigInt {
			if j+8 <= n {
				// A word at a time: up to 7 digits and their end in
				// the first word, longer numbers in swarInt.
				x := swar.Word(s, j) - '0'*swar.LSB
				k := swar.FirstByte(swar.NonDigits(x))
				v, e := int64(-1), j+k
				switch {
				case k == 8:
					// Eight digits and more: the next word holds
					// the rest (up to 15 digits) and their end.
					if j+16 <= n {
						y := swar.Word(s, j+8) - '0'*swar.LSB
						if k2 := swar.FirstByte(swar.NonDigits(y)); k2 < 8 {
							v, e = int64(swar.EightDigits(x, 8)*uint64(pow10[k2])+swar.EightDigits(y, k2)), j+8+k2
						}
					} else if w, we, ok := swarInt(s, j); ok {
						v, e = w, we
					}
				case k > 0:
					v = int64(swar.EightDigits(x, k))
				}
				if v >= 0 && (e == n || ends[s[e]]) && (!hasNull || s[start:e] != nullLit) {
					r[op.at] = row.BigIntValue(v)
					j = e
					goto next
				}
			}
			// Up to 18 digits and a sign cannot overflow: shortInt's
			// value, read as the digits go by.
			neg := false
			if j < n && (s[j] == '-' || s[j] == '+') {
				neg = s[j] == '-'
				j++
			}
			digits := j
			var v int64
			for j < n {
				c := s[j] - '0'
				if c > 9 {
					break
				}
				v = v*10 + int64(c)
				j++
			}
			if nd := j - digits; nd > 0 && nd <= 18 && (j == n || ends[s[j]]) && (!hasNull || s[start:j] != nullLit) {
				if neg {
					v = -v
				}
				r[op.at] = row.BigIntValue(v)
				goto next
			}
			j = start // not plain digits: read as any value
		}
		for j < n && !special[s[j]] {
			j++
		}
		if j < n && !ends[s[j]] {
			return 0, false // a quote or an escape
		}
		switch text := s[start:j]; {
		case op.kind == opSkip:
		case op.kind == opNull:
			r[op.at] = row.NullValue
		case hasNull && text == nullLit:
			if op.notNull {
				return 0, false
			}
			r[op.at] = row.NullValue
		case op.kind == opString:
			r[op.at] = row.StringValue(text)
		default:
			v, err := d.parseValue(text, op.t)
			if err != nil {
				return 0, false
			}
			r[op.at] = v
			if op.kind == opTimestamp {
				d.noteMinute()
			}
		}
	next:
		if j == n || s[j] != delim {
			// The record ends: with its last column, or too soon.
			if ci != len(ops)-1 {
				return 0, false
			}
			return j, d.recordEnds(s, j)
		}
		j++ // the delimiter
	}
	// A delimiter ending a full record is no extra field (Flink's
	// allow-trailing-comma); any other field after the last column is
	// one too many.
	return j, d.recordEnds(s, j)
}

// recordEnds reports whether s[j:] ends a record: s ends there, or a
// line break, "\n" or "\r\n", or a "\r" that ends s.
func (d *Decoder) recordEnds(s string, j int) bool {
	switch {
	case j == len(s), s[j] == '\n':
		return true
	case s[j] == '\r':
		return j+1 == len(s) || s[j+1] == '\n'
	}
	return false
}

// swarInt reads the integer at s[i:], an optional sign and 1 to 16
// digits, a word at a time: its value and the offset of the byte after
// it. ok is false when it is no such integer or lies too near the end of
// s for whole words, which the byte loop then reads.
func swarInt(s string, i int) (v int64, end int, ok bool) {
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	if i+8 > len(s) {
		return 0, 0, false
	}
	x := swar.Word(s, i) - '0'*swar.LSB
	k := swar.FirstByte(swar.NonDigits(x))
	var u uint64
	switch {
	case k == 0:
		return 0, 0, false
	case k < 8:
		u = swar.EightDigits(x, k)
	case i+16 > len(s):
		return 0, 0, false
	default:
		y := swar.Word(s, i+8) - '0'*swar.LSB
		k2 := swar.FirstByte(swar.NonDigits(y))
		if k2 == 8 {
			return 0, 0, false
		}
		u = swar.EightDigits(x, 8)*uint64(pow10[k2]) + swar.EightDigits(y, k2)
		k += k2
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, i + k, true
}
