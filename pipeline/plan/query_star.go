package plan

import (
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/sql"
)

// star adds the columns * (or t.*) stands for.
func (p *projector) star(star *sql.Star, s *scope) error {
	in := p.in
	if !star.Table.IsZero() && !s.knows(star.Table.Name) {
		return errAt(star.At, "unknown table %q: this query reads %s", star.Table.Name, s.reads())
	}
	for j, f := range in.Schema.Fields {
		if !starCovers(star, s, j) {
			continue
		}
		c, err := compileExpr(p.zone, &sql.ColumnRef{Column: sql.Ident{Name: f.Name, Quoted: true}}, in.Schema, s.table)
		if err != nil {
			return err
		}
		name := f.Name
		if s.cols != nil && s.cols[j].raw {
			name = s.cols[j].name // t.* of a USING join: t's own names
		}
		p.add(p.unique(name), c, j, f.Name)
	}
	return nil
}

// starCovers tells whether * (or t.*) stands for column j of s.
func starCovers(star *sql.Star, s *scope, j int) bool {
	if !star.Table.IsZero() && s.cols != nil && !slices.ContainsFunc(s.cols[j].quals, func(q string) bool { return strings.EqualFold(q, star.Table.Name) }) {
		return false // t.* of a join: t's columns only
	}
	// Not a scalar subquery's join columns, nor a function call's.
	// Nor, for *, the columns behind a USING join's (t.* only).
	return s.cols == nil || !strings.HasPrefix(s.cols[j].quals[0], scalarQual) && s.cols[j].quals[0] != udfQual &&
		(!s.cols[j].raw || !star.Table.IsZero())
}
