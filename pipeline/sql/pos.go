package sql

import "strconv"

// Pos is a place in the SQL text: Line and Col count from 1, Col in
// characters (UTF-8 code points, a tab counts as one), Offset in bytes from
// the start of the text. The zero Pos means "no position" (an absent
// optional part of a node).
type Pos struct {
	Line, Col, Offset int
}

// IsValid reports whether p names a place in the text.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String renders p as line:col.
func (p Pos) String() string {
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Shift maps p, found in a SQL text embedded in a larger file, to a
// position in that file: base is where the text's first character sits, and
// indent is the number of columns stripped from the start of every later
// line (a YAML block scalar's indentation; 0 for text kept flush).
func (p Pos) Shift(base Pos, indent int) Pos {
	if !p.IsValid() || !base.IsValid() {
		return p
	}
	out := Pos{
		Line:   base.Line + p.Line - 1,
		Col:    p.Col + indent,
		Offset: base.Offset + p.Offset + (p.Line-1)*indent,
	}
	if p.Line == 1 {
		out.Col = base.Col + p.Col - 1
	}
	return out
}
