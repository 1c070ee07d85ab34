package json

import (
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Nested projection pushdown (connector.NestedDecoder): the fields of a
// ROW column that the plan reads are decoded straight into columns of
// their own after the schema's, and the ROW itself is never built. The
// values are those decodeNested would put in the ROW: a field matched by
// name as FieldIndex does, the last of duplicate members winning, NULL
// when missing or when a ROW on the way is NULL or missing.

// pathNode is a field of a ROW some paths go through or end at.
type pathNode struct {
	field int      // the field's index in its ROW
	typ   row.Type // the field's type
	out   int      // the row column of a path ending here, -1 if none
	kids  []*pathNode
	// byField maps a field index of typ to its kid, -1 for none.
	byField []int
	// leaves are the row columns of every path through or ending here:
	// what a NULL here, or a member seen again, sets to NULL.
	leaves []int
}

// DecodePaths implements connector.NestedDecoder: path j's column is
// gap+j after the schema's. It refuses a path that is not a chain of ROW
// fields of the schema, one that is a prefix of another, a negative gap,
// and a decoder that picks columns (DecodeColumns).
func (d *Decoder) DecodePaths(paths []connector.FieldPath, gap int) bool {
	c := d.codec
	if c.outAt != nil || len(paths) == 0 || gap < 0 {
		return false
	}
	width := c.Width()
	roots := make([]*pathNode, width)
	first := width + gap // path j's column is first+j
	for j, p := range paths {
		if p.Column < 0 || p.Column >= width || len(p.Fields) == 0 {
			return false
		}
		if roots[p.Column] == nil {
			roots[p.Column] = newPathNode(-1, c.schema.Fields[p.Column].Type)
		}
		n := roots[p.Column]
		n.leaves = append(n.leaves, first+j)
		for _, f := range p.Fields {
			if n.out >= 0 || n.typ.ID != row.Struct || f < 0 || f >= len(n.typ.Fields()) {
				return false
			}
			k := n.byField[f]
			if k < 0 {
				if len(n.kids) == 64 {
					return false // decodePaths keeps one bit per kid
				}
				k = len(n.kids)
				n.byField[f] = k
				n.kids = append(n.kids, newPathNode(f, n.typ.Fields()[f].Type))
			}
			n = n.kids[k]
			n.leaves = append(n.leaves, first+j)
		}
		if n.out >= 0 || len(n.kids) > 0 {
			return false // a path again, or a prefix of another
		}
		n.out = first + j
	}
	c.paths, c.pathAt, c.pathCount = roots, first, len(paths)
	c.planFast()
	return true
}

// WritesNestedRows implements connector.FullNestedDecoder: both ways of
// decoding a record (decodeFast, DecodeObject) clear the paths' columns
// and write NULL in the columns SetColumns left out.
func (d *Decoder) WritesNestedRows() bool { return true }

func newPathNode(field int, t row.Type) *pathNode {
	n := &pathNode{field: field, typ: t, out: -1, byField: make([]int, len(t.Fields()))}
	for i := range n.byField {
		n.byField[i] = -1
	}
	return n
}

// decodePaths reads the value at s[i], of n's type, into the row columns
// of the paths through n.
func (c *Codec) decodePaths(s string, i int, n *pathNode, r row.Row) (int, error) {
	for _, o := range n.leaves {
		r[o] = row.NullValue // a member seen again starts over
	}
	if i < len(s) && s[i] == 'n' {
		return readLiteral(s, i, "null")
	}
	if i >= len(s) || s[i] != '{' || n.typ.ID != row.Struct {
		// Not an object: whatever decodeAs makes of it (an error, as a
		// rule); a value it does make is taken apart by fields.
		v, end, err := decodeAs(s, i, n.typ)
		if err == nil {
			n.fill(v, r)
		}
		return end, err
	}
	fields := n.typ.Fields()
	var set uint64 // the kids whose value was not NULL
	next := 0      // the field expected next: members come in order, as a rule
	end, err := walkObject(s, i, func(key string, _, v int) (int, error) {
		f := next
		if f >= len(fields) || fields[f].Name != key {
			f = n.typ.FieldIndex(key)
		}
		next = f + 1
		if f < 0 || n.byField[f] < 0 {
			return skipValue(s, v, 1)
		}
		k := n.kids[n.byField[f]]
		var end int
		var err error
		if k.out >= 0 {
			var x row.Value
			x, end, err = decodeAs(s, v, k.typ)
			r[k.out] = x
		} else {
			end, err = c.decodePaths(s, v, k, r)
		}
		bit := uint64(1) << n.byField[f]
		if err == nil && !(v < len(s) && s[v] == 'n') {
			set |= bit
		} else {
			set &^= bit
		}
		return end, err
	})
	if err != nil {
		return end, err
	}
	for j, k := range n.kids {
		null := set&(uint64(1)<<j) == 0
		if k.out >= 0 {
			null = r[k.out].IsNull()
		}
		if k.typ.NotNull && null {
			return end, &row.ParseError{Text: s[i:end], Type: n.typ, Err: fmt.Errorf("field %q is null or missing, but it is %s", fields[k.field].Name, k.typ)}
		}
	}
	return end, nil
}

// fill sets the paths through n from v, a value of n's type.
func (n *pathNode) fill(v row.Value, r row.Row) {
	if n.out >= 0 {
		r[n.out] = v
		return
	}
	if v.IsNull() {
		return // the leaves are NULL already
	}
	for _, k := range n.kids {
		x, _ := v.Item(k.field)
		k.fill(x, r)
	}
}

// clearPaths sets every path's column of r to NULL.
func (c *Codec) clearPaths(r row.Row) {
	clear(r[c.pathAt : c.pathAt+c.pathCount])
}

// readPaths reads the member of column col, whose value is at s[v], into
// the columns of its paths, as readMembers reads a column's: a value that
// does not fit makes them all NULL under ignore_parse_errors.
func (c *Codec) readPaths(s string, v, col int) (int, error) {
	n, r := c.paths[col], c.pathRow
	c.seen[col] = true
	t := c.schema.Fields[col].Type
	end, err := c.decodePaths(s, v, n, r)
	if err != nil {
		if _, ok := err.(*SyntaxError); ok || !c.opts.IgnoreParseErrors || t.NotNull {
			return end, err
		}
		for _, o := range n.leaves {
			r[o] = row.NullValue // Flink's ignore-parse-errors: the ROW is NULL
		}
		return skipValue(s, v, 1) // the error may have stopped inside it

	}
	if t.NotNull && v < len(s) && s[v] == 'n' {
		return end, fmt.Errorf("null, but the column is %s", t)
	}
	return end, nil
}

// checkPathColumn checks column col, which has paths, once the record is
// read: missing where it may not be, and, when the column is decoded
// whole too, its paths' columns filled from its value.
func (c *Codec) checkPathColumn(col int, seen bool, r row.Row) error {
	f := &c.schema.Fields[col]
	if c.use != nil && !c.use[col] {
		switch {
		case !seen && c.opts.FailOnMissingField:
			return &connector.DecodeError{Column: f.Name, Err: errors.New("missing from the record (fail_on_missing_field is set)")}
		case !seen && f.Type.NotNull:
			return &connector.DecodeError{Column: f.Name, Err: fmt.Errorf("null or missing, but the column is %s", f.Type)}
		}
		return nil
	}
	n := c.paths[col]
	for _, o := range n.leaves {
		r[o] = row.NullValue
	}
	if seen {
		n.fill(r[c.at(col)], r)
	}
	return nil
}
