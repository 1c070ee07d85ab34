package csv

import (
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
}

const (
	opSkip   uint8 = iota // not in the row: split off only
	opNull                // projected away (SetColumns): NULL, not parsed
	opString              // the field's text
	opBigInt              // digits summed while scanned
	opValue               // parseValue of the field's text
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
		case t.ID == row.BigInt:
			op.kind = opBigInt
		}
		ops[i] = op
	}
	d.ops = ops
}

// decodeFast writes the row of s into r when s is a common record (see
// above) and reports whether it did. When it did not, r holds some of the
// record's values, which the general path writes again.
func (d *Decoder) decodeFast(s string, r row.Row) bool {
	special := &d.special
	delim := d.cfg.delim
	hasNull, nullLit := d.cfg.hasNull, d.cfg.nullLit
	ops := d.ops
	if len(ops) == 0 {
		return false // no plan: the general path only (tests)
	}
	n := len(s)
	j := 0
	for ci := range ops {
		op := &ops[ci]
		start := j
		if op.kind == opBigInt {
			if j+9 <= n {
				// With a word left in the record, a word at a time.
				if v, e, ok := swarInt(s, j); ok && (e == n || s[e] == delim) && (!hasNull || s[start:e] != nullLit) {
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
			if nd := j - digits; nd > 0 && nd <= 18 && (j == n || s[j] == delim) && (!hasNull || s[start:j] != nullLit) {
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
		if j < n && s[j] != delim {
			return false // a quote, an escape or a line break
		}
		switch text := s[start:j]; {
		case op.kind == opSkip:
		case op.kind == opNull:
			r[op.at] = row.NullValue
		case hasNull && text == nullLit:
			if op.notNull {
				return false
			}
			r[op.at] = row.NullValue
		case op.kind == opString:
			r[op.at] = row.StringValue(text)
		default:
			v, err := d.parseValue(text, op.t)
			if err != nil {
				return false
			}
			r[op.at] = v
		}
	next:
		if j == n {
			// The record ends: with its last column, or too soon.
			return ci == len(ops)-1
		}
		j++ // the delimiter
	}
	// A delimiter ending a full record is no extra field (Flink's
	// allow-trailing-comma); any other field after the last column is
	// one too many.
	return j == n
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
	x := word(s, i) - '0'*lsb
	k := firstByte(nonDigits(x))
	var u uint64
	switch {
	case k == 0:
		return 0, 0, false
	case k < 8:
		u = eightDigits(x, k)
	case i+16 > len(s):
		return 0, 0, false
	default:
		y := word(s, i+8) - '0'*lsb
		k2 := firstByte(nonDigits(y))
		if k2 == 8 {
			return 0, 0, false
		}
		u = eightDigits(x, 8)*uint64(pow10[k2]) + eightDigits(y, k2)
		k += k2
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, i + k, true
}
