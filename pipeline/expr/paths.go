package expr

import (
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// Nested projection pushdown (the planner's side is in pipeline/plan):
// an expression that reads a ROW column only through field accesses
// (r.f, r.f.g, r['f']) reports each chain as a FieldPath, and the planner
// may have the source decode the chain's value into a column of its own,
// which the expression then reads in place of the ROW (ReadAt), so that
// no ROW value is built nor walked.

// FieldPath is a chain of field accesses over one input column: r.f.g is
// Column r, Fields [f, g] (indices into each ROW's fields, outermost
// first). Its value is NULL when the column or any ROW on the way is.
type FieldPath struct {
	Column int
	Fields []int
	Type   row.Type // the value's type
	// at is the input column the value is read from instead, -1 for none.
	at    int
	inner bool // a longer chain extends it
}

// ReadAt makes the expression read the chain's value from input column i
// of its rows instead of from the ROW: the planner calls it before the
// expression is first evaluated, once the source fills column i with
// that value for every row.
func (p *FieldPath) ReadAt(i int) { p.at = i }

// Same reports whether p and q name the same field of the same column.
func (p *FieldPath) Same(q *FieldPath) bool {
	return p.Column == q.Column && slices.Equal(p.Fields, q.Fields)
}

// rootNode is a read of column i as it is: the start of a FieldPath.
func rootNode(e sql.Expr, i int, t row.Type) *node {
	n := colNode(e, i, t)
	n.path = &FieldPath{Column: i, Type: t, at: -1}
	return n
}

// extend is the chain of field f (of type t) of the chain or column p.
func (c *compiler) extend(p *FieldPath, f int, t row.Type) *FieldPath {
	if len(p.Fields) == 0 {
		if c.rootsUsed == nil {
			c.rootsUsed = map[int]int{}
		}
		c.rootsUsed[p.Column]++
	} else {
		p.inner = true
	}
	q := &FieldPath{Column: p.Column, Fields: append(slices.Clip(p.Fields), f), Type: t, at: -1}
	c.paths = append(c.paths, q)
	return q
}

// finishPaths fills out's Paths and Whole.
func (c *compiler) finishPaths(out *Compiled) {
	for _, p := range c.paths {
		if !p.inner {
			out.Paths = append(out.Paths, p)
		}
	}
	for _, i := range c.reads {
		if c.refs[i] > c.rootsUsed[i] {
			out.Whole = append(out.Whole, i)
		}
	}
}

// ReadsWhole lists the columns of Reads the expression reads other than
// through its Paths: Whole for a compiled expression, and every column of
// Reads for one the planner made by hand (a column copy), which has no
// Paths.
func (c *Compiled) ReadsWhole() []int {
	if len(c.Paths) == 0 {
		return c.Reads
	}
	var out []int
	for _, i := range c.Reads {
		if slices.Contains(c.Whole, i) || !slices.ContainsFunc(c.Paths, func(p *FieldPath) bool { return p.Column == i }) {
			out = append(out, i)
		}
	}
	return out
}
