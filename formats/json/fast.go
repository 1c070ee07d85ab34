package json

import (
	"math/bits"
	"unsafe"

	"github.com/etld/etld/internal/swar"
	"github.com/etld/etld/pipeline/row"
)

// The one-pass decode of the common record: one object on one line, its
// members named as the schema spells them (usually in its order), each
// once, every read value in its common form. It walks the record once,
// matching a member to its column by the member's first bytes, skipping
// the members the row does not read (nested objects and arrays included)
// with their JSON checked but nothing built, writing BIGINTs, INTs,
// STRINGs and TIMESTAMPs straight into the row and the fields of nested
// projection pushdown (paths.go) straight into their columns, and finds
// the line's end in the same pass. Any other value is read by the general
// path's own function for it (decodeColumn, decodeAs). Anything else (a
// member twice, a value that does not fit, a missing member that is an
// error, malformed JSON, a line break inside the object) sends the record
// to the general path, DecodeObject, which reads it from the start as if
// the one-pass had not run: the rows, the errors and their positions are
// then the general path's, by construction.

// Column kinds of the one-pass decode.
const (
	opSkip         uint8 = iota // not in the row (DecodeColumns): checked only
	opNull                      // projected away (SetColumns): NULL, checked only
	opPaths                     // projected away, its fields read into the paths' columns
	opString                    // a string without escapes is its substring
	opInt                       // INT, SMALLINT, TINYINT: digits summed as scanned
	opBigInt                    // digits summed as scanned
	opTimestamp                 // a string read by a TimestampReader (decodeAs)
	opTimestampSQL              // the same, held to timestamp_format: sql (decodeColumn)
	opValue                     // the general path's function
)

// fastCol is what the one-pass decode does with a column of the schema.
type fastCol struct {
	op      uint8
	notNull bool
	col     int // the column's index in the schema
	at      int // the row's place of the column
	key     fastKey
	t       *row.Type
	// node is the column's paths: read by opPaths, or filled from the
	// value of a column read whole.
	node *fastNode
}

// fastNode is a pathNode with what the one-pass decode needs.
type fastNode struct {
	n      *pathNode
	fields []fastField // one per field of n.typ
	// notNull has the bits of the kids whose type is NOT NULL.
	notNull uint64
}

// fastField is a field of a fastNode's ROW.
type fastField struct {
	key fastKey
	kid int // the field's kid in the pathNode, -1 for none: skipped
	// For a kid that ends a path: how its value is read (as decodeAs
	// reads it), its type and its row column; else the kid's node.
	op  uint8
	typ *row.Type
	out int
	sub *fastNode
}

// fastPlan is the one-pass decode of a Codec's schema and projection.
type fastPlan struct {
	cols []fastCol
	// want has the bits of the columns whose missing member needs a
	// NULL or is an error; nulls are the row places that are NULL in
	// every row (columns projected away).
	want  uint64
	nulls []int
}

// planFast sets c.fast from the schema, the projection and the paths,
// after NewDecoder, SetColumns, DecodeColumns and DecodePaths. A schema
// of more than 64 columns has none: the general path reads it.
func (c *Codec) planFast() {
	c.fast = nil
	width := c.Width()
	if width > 64 {
		return
	}
	p := &fastPlan{cols: make([]fastCol, width)}
	for col := range width {
		f := &c.schema.Fields[col]
		op := fastCol{col: col, at: c.at(col), notNull: f.Type.NotNull, key: newFastKey(f.Name), t: &f.Type}
		var node *pathNode
		if c.paths != nil {
			node = c.paths[col]
		}
		used := c.use == nil || c.use[col]
		switch {
		case !used && c.outAt != nil:
			op.op = opSkip
		case !used && node != nil:
			op.op, op.node = opPaths, newFastNode(node)
			p.nulls = append(p.nulls, col)
			if op.notNull || c.opts.FailOnMissingField {
				p.want |= 1 << col
			}
		case !used:
			op.op = opNull
			p.nulls = append(p.nulls, col)
		case op.at < 0:
			return
		default:
			op.op = scalarOp(f.Type, c.timestampOp())
			if node != nil {
				op.node = newFastNode(node)
			}
			p.want |= 1 << col
		}
		p.cols[col] = op
	}
	c.fast = p
}

// scalarOp is how the one-pass decode reads a value of type t; ts is
// the kind for a TIMESTAMP.
func scalarOp(t row.Type, ts uint8) uint8 {
	switch t.ID {
	case row.String:
		return opString
	case row.Int:
		return opInt
	case row.BigInt:
		return opBigInt
	case row.Timestamp:
		return ts
	}
	return opValue
}

// timestampOp is how the one-pass decode reads a TIMESTAMP column as
// decodeColumn does: held to the sql form when the options ask for it,
// by the general path when they ask for the iso-8601 form (which
// timestampForm rewrites).
func (c *Codec) timestampOp() uint8 {
	switch {
	case !c.opts.strictTimestamps:
		return opTimestamp
	case !c.opts.iso():
		return opTimestampSQL
	}
	return opValue
}

func newFastNode(n *pathNode) *fastNode {
	fields := n.typ.Fields()
	fn := &fastNode{n: n, fields: make([]fastField, len(fields))}
	for f := range fields {
		ff := fastField{key: newFastKey(fields[f].Name), kid: n.byField[f], out: -1}
		if ff.kid >= 0 {
			kid := n.kids[ff.kid]
			ff.typ, ff.out = &kid.typ, kid.out
			if kid.out < 0 {
				ff.sub = newFastNode(kid)
			}
			ff.op = scalarOp(kid.typ, opTimestamp) // decodeAs reads any form
			if kid.typ.NotNull {
				fn.notNull |= 1 << ff.kid
			}
		}
		fn.fields[f] = ff
	}
	return fn
}

// decodeFast writes the row of the object at the start of s into r (after
// blanks) and returns the offset after the object, when it is a common
// record (see above). ok is false when it is not, and r then holds some of
// its values, which the general path writes again.
func (c *Codec) decodeFast(s string, r row.Row) (end int, ok bool) {
	p := c.fast
	i := fastSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return 0, false
	}
	if c.paths != nil {
		c.clearPaths(r)
	}
	var seen uint64 // the columns read, each once
	next := 0       // the column expected next, as readMembers's hint
	if i = fastSpace(s, i+1); i < len(s) && s[i] == '}' {
		return c.finishFast(r, seen, i+1)
	}
	for {
		col, v := -1, 0
		if next < len(p.cols) && p.cols[next].key.at(s, i) {
			col, v = next, i+len(p.cols[next].key.text)
		} else {
			var key string
			if key, v, ok = c.fastMember(s, i); !ok {
				return 0, false
			}
			col = c.column(key, next)
		}
		v = fastSpace(s, v)
		if col < 0 {
			end, ok = skipMember(s, v)
		} else {
			// The common kinds here, the others in fastColumn.
			next = col + 1
			op := &p.cols[col]
			bit := uint64(1) << col
			switch {
			case op.op <= opNull:
				end, ok = skipMember(s, v)
			case seen&bit != 0:
				return 0, false // a member again: the general path's last one wins
			case op.op == opBigInt:
				seen |= bit
				var n int64
				if v+8 <= len(s) && s[v]-'1' < 9 {
					// Up to 7 digits from one word, here.
					x := swar.Word(s, v) - '0'*swar.LSB
					if k := swar.FirstByte(swar.NonDigits(x)); k < 8 {
						if e := v + k; s[e] != '.' && s[e] != 'e' && s[e] != 'E' {
							r[op.at] = row.BigIntValue(int64(swar.EightDigits(x, k)))
							end, ok = e, true
							break
						}
					}
				}
				if n, end, ok = fastInt(s, v); ok {
					r[op.at] = row.BigIntValue(n)
				} else {
					end, ok = c.fastColumn(s, v, op, r)
				}
			case op.op == opString:
				seen |= bit
				if v >= len(s) || s[v] != '"' {
					end, ok = c.fastColumn(s, v, op, r)
				} else if j := scanString(s, v+1); j < len(s) && s[j] == '"' {
					r[op.at] = row.StringValue(s[v+1 : j])
					end, ok = j+1, true
				} else if j < len(s) && s[j] == '\\' && op.node == nil {
					// From the first escape on (fastColumn would scan the
					// plain bytes before it again).
					var str string
					if str, end, ok = c.unescape(s, v, j); ok {
						r[op.at] = row.StringValue(str)
					}
				} else {
					end, ok = c.fastColumn(s, v, op, r)
				}
			default:
				seen |= bit
				end, ok = c.fastColumn(s, v, op, r)
			}
		}
		if !ok {
			return 0, false
		}
		if i = fastSpace(s, end); i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case ',':
			i = fastSpace(s, i+1)
		case '}':
			return c.finishFast(r, seen, i+1)
		default:
			return 0, false
		}
	}
}

// fastMember reads the member name at s[i] and the ':' after it, as
// walkObject does, and returns the name and the offset after the ':'.
func (c *Codec) fastMember(s string, i int) (key string, v int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	j := scanString(s, i+1)
	switch {
	case j < len(s) && s[j] == '"':
		key, v = s[i+1:j], j+1
	case j < len(s) && s[j] == '\\':
		var err error
		if key, v, err = ReadString(s, i); err != nil {
			return "", 0, false
		}
	default:
		return "", 0, false
	}
	if v = fastSpace(s, v); v >= len(s) || s[v] != ':' {
		return "", 0, false
	}
	return key, v + 1, true
}

// fastColumn reads the value at s[v] into the place of column op of r,
// as readMembers does.
func (c *Codec) fastColumn(s string, v int, op *fastCol, r row.Row) (int, bool) {
	if op.op == opPaths {
		if v < len(s) && s[v] == 'n' {
			if op.notNull {
				return 0, false
			}
			return literal(s, v, "null")
		}
		return c.fastPaths(s, v, op.node, r)
	}
	val, end, ok := c.fastScalar(s, v, op.op, op.t)
	if !ok {
		var err error
		if val, end, err = c.decodeColumn(s, v, op.col); err != nil {
			return 0, false
		}
	}
	if op.notNull && val.IsNull() {
		return 0, false
	}
	r[op.at] = val
	if op.node != nil {
		op.node.n.fill(val, r)
	}
	return end, true
}

// skipMember checks the value at s[v] of a member the row does not read:
// a string, a positive integer of up to 7 digits from one word, any
// other value by fastSkip.
func skipMember(s string, v int) (int, bool) {
	if v < len(s) && s[v] == '"' {
		return fastSkipString(s, v+1)
	}
	if v+8 <= len(s) && s[v]-'1' < 9 {
		if k := swar.FirstByte(swar.NonDigits(swar.Word(s, v) - '0'*swar.LSB)); k < 8 {
			if e := v + k; s[e] != '.' && s[e] != 'e' && s[e] != 'E' {
				return e, true
			}
		}
	}
	return fastSkip(s, v, 1)
}

// finishFast ends a row read by decodeFast as DecodeObject does: the
// columns whose member is missing, those projected away, the copies.
func (c *Codec) finishFast(r row.Row, seen uint64, end int) (int, bool) {
	p := c.fast
	for miss := p.want &^ seen; miss != 0; miss &= miss - 1 {
		op := &p.cols[bits.TrailingZeros64(miss)]
		if op.op == opPaths || op.notNull || c.opts.FailOnMissingField {
			return 0, false
		}
		r[op.at] = row.NullValue
	}
	for _, at := range p.nulls {
		r[at] = row.NullValue
	}
	for _, cp := range c.copies {
		r[cp[1]] = r[cp[0]]
	}
	return end, true
}

// fastScalar reads the value at s[v] when it is in its common form for
// op: null, a string without escapes, an integer, a timestamp string. ok
// is false for any other value.
func (c *Codec) fastScalar(s string, v int, op uint8, t *row.Type) (row.Value, int, bool) {
	if v >= len(s) {
		return row.NullValue, 0, false
	}
	if s[v] == 'n' {
		end, ok := literal(s, v, "null")
		return row.NullValue, end, ok
	}
	switch op {
	case opString:
		if s[v] != '"' {
			break
		}
		j := scanString(s, v+1)
		if j < len(s) && s[j] == '"' {
			return row.StringValue(s[v+1 : j]), j + 1, true
		}
		if j < len(s) && s[j] == '\\' {
			str, end, ok := c.unescape(s, v, j)
			return row.StringValue(str), end, ok
		}
	case opBigInt:
		if n, end, ok := fastInt(s, v); ok {
			return row.BigIntValue(n), end, true
		}
	case opInt:
		// In the column's range, as wholeNumber reads it: INT,
		// SMALLINT or TINYINT.
		if n, end, ok := fastInt(s, v); ok {
			if half := int64(1) << (t.IntBits() - 1); n >= -half && n < half {
				return row.IntValue(int32(n)), end, true
			}
		}
	case opTimestamp, opTimestampSQL:
		if s[v] != '"' {
			break
		}
		if m, end, ok := c.fastTimestamp(s, v, op, t); ok {
			return row.TimestampValue(m), end, true
		}
	}
	return row.NullValue, 0, false
}

// fastTimestamp reads the string at s[v] (a '"') when it is a timestamp
// in its common form, as fastScalar reads it for op.
func (c *Codec) fastTimestamp(s string, v int, op uint8, t *row.Type) (int64, int, bool) {
	j := scanString(s, v+1)
	if j >= len(s) || s[j] != '"' {
		return 0, 0, false
	}
	str := s[v+1 : j]
	// ParseText trims blanks off a timestamp, Micros does not.
	if len(str) == 0 || str[0] < '0' || str[0] > '9' || str[len(str)-1] < '0' || str[len(str)-1] > '9' {
		return 0, 0, false
	}
	if op == opTimestampSQL {
		if _, err := c.timestampForm(str, *t); err != nil {
			return 0, 0, false
		}
	}
	m, ok := c.ts.Micros(str)
	return m, j + 1, ok
}

// unescape reads the string at s[start], whose first escape is at s[j],
// into the decoder's arena and returns its value, a string over the
// arena: strings of many records share a chunk, and bytes once handed
// out are never written again.
func (c *Codec) unescape(s string, start, j int) (string, int, bool) {
	const chunk = 16 << 10
	if cap(c.arena)-len(c.arena) < 256 {
		c.arena = make([]byte, 0, chunk)
	}
	n := len(c.arena)
	buf, end, ok := appendUnescapedFast(c.arena, s, start, j)
	if !ok {
		return "", 0, false
	}
	c.arena = buf
	if len(buf) == n {
		return "", end, true
	}
	return unsafe.String(&buf[n], len(buf)-n), end, true
}

// fastPaths reads the value at s[i], of fn's ROW type, into the columns
// of the paths through fn, as decodePaths does; the columns are NULL
// when it starts (clearPaths, and each member read once).
func (c *Codec) fastPaths(s string, i int, fn *fastNode, r row.Row) (int, bool) {
	n := fn.n
	if i < len(s) && s[i] == 'n' {
		return literal(s, i, "null")
	}
	if i >= len(s) || s[i] != '{' || n.typ.ID != row.Struct {
		return 0, false // an error, as a rule: the general path's
	}
	fields := n.typ.Fields()
	var seen, set uint64 // the kids read; those not NULL
	next := 0            // the field expected next, as decodePaths's hint
	end := 0
	if i = fastSpace(s, i+1); i < len(s) && s[i] == '}' {
		end = i + 1
	} else {
		for {
			f, v := -1, 0
			if next < len(fields) && fn.fields[next].key.at(s, i) {
				f, v = next, i+len(fn.fields[next].key.text)
			} else {
				key, kv, ok := c.fastMember(s, i)
				if !ok {
					return 0, false
				}
				if f, v = next, kv; f >= len(fields) || fields[f].Name != key {
					f = n.typ.FieldIndex(key)
				}
			}
			next = f + 1
			v = fastSpace(s, v)
			var ok bool
			if f < 0 || fn.fields[f].kid < 0 {
				end, ok = skipMember(s, v)
			} else {
				// The common kinds here, the others in fastKid.
				ff := &fn.fields[f]
				bit := uint64(1) << ff.kid
				if seen&bit != 0 {
					return 0, false // a member again: decodePaths starts it over
				}
				seen |= bit
				switch {
				case ff.op == opBigInt && ff.out >= 0:
					var n int64
					if n, end, ok = fastInt(s, v); ok {
						r[ff.out] = row.BigIntValue(n)
						set |= bit
						break
					}
					end, ok = c.fastKid(s, v, ff, r, bit, &set)
				case ff.op == opString && ff.out >= 0 && v < len(s) && s[v] == '"':
					j := scanString(s, v+1)
					if j < len(s) && s[j] == '"' {
						r[ff.out] = row.StringValue(s[v+1 : j])
						end, ok = j+1, true
						set |= bit
						break
					}
					if j < len(s) && s[j] == '\\' {
						// From the first escape on: the plain bytes before it
						// are not scanned again.
						var str string
						if str, end, ok = c.unescape(s, v, j); ok {
							r[ff.out] = row.StringValue(str)
							set |= bit
						}
						break
					}
					end, ok = c.fastKid(s, v, ff, r, bit, &set)
				case ff.op == opTimestamp && ff.out >= 0 && v < len(s) && s[v] == '"':
					// Every event's time: read here, not through fastKid's
					// and fastScalar's calls.
					if m, e, ok2 := c.fastTimestamp(s, v, opTimestamp, ff.typ); ok2 {
						r[ff.out] = row.TimestampValue(m)
						end, ok = e, true
						set |= bit
						break
					}
					end, ok = c.fastKid(s, v, ff, r, bit, &set)
				default:
					end, ok = c.fastKid(s, v, ff, r, bit, &set)
				}
			}
			if !ok {
				return 0, false
			}
			if i = fastSpace(s, end); i >= len(s) {
				return 0, false
			}
			if s[i] == '}' {
				end = i + 1
				break
			}
			if s[i] != ',' {
				return 0, false
			}
			i = fastSpace(s, i+1)
		}
	}
	if fn.notNull&^set != 0 {
		return 0, false // a NOT NULL field is NULL or missing: an error
	}
	return end, true
}

// fastKid reads the value at s[v] of field ff, a kid whose bit is bit.
func (c *Codec) fastKid(s string, v int, ff *fastField, r row.Row, bit uint64, set *uint64) (int, bool) {
	if ff.out < 0 {
		end, ok := c.fastPaths(s, v, ff.sub, r)
		if ok && s[v] != 'n' {
			*set |= bit
		}
		return end, ok
	}
	val, end, ok := c.fastScalar(s, v, ff.op, ff.typ)
	if !ok {
		var err error
		if val, end, err = decodeAs(s, v, *ff.typ); err != nil {
			return 0, false
		}
	}
	r[ff.out] = val
	if !val.IsNull() {
		*set |= bit
	}
	return end, true
}
