package expr

import (
	"fmt"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// TestFieldPaths: which chains of field accesses an expression reports,
// which columns it reads whole, and that a chain read from a column of
// its own (ReadAt) gives what the ROW gives.
func TestFieldPaths(t *testing.T) {
	tab, r := nestedTable(t)
	tests := []struct {
		text  string
		paths []string // column:fields
		whole []int
	}{
		{text: "r.a", paths: []string{"2:[0]"}},
		{text: "r.sub.c + r.a", paths: []string{"2:[2 0]", "2:[0]"}},
		{text: "t.r.b", paths: []string{"2:[1]"}},
		{text: "r['b']", paths: []string{"2:[1]"}},
		{text: "r[1]", paths: []string{"2:[0]"}},
		{text: "r.sub", paths: []string{"2:[2]"}},
		{text: "r", whole: []int{2}},
		{text: "r IS NULL OR r.a > 1", paths: []string{"2:[0]"}, whole: []int{2}},
		{text: "n_r.a + i", paths: []string{"5:[0]"}, whole: []int{7}},
		{text: "arr[1]", whole: []int{0}},
		{text: "CAST(r AS ROW<a BIGINT, b STRING, sub ROW<c DOUBLE>>).a", whole: []int{2}},
		{text: "ROW(1, 'x').EXPR$0"},
	}
	for _, tt := range tests {
		e, err := sql.ParseExpr(tt.text)
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		c, err := Compile(e, tab)
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		var paths []string
		for _, p := range c.Paths {
			paths = append(paths, fmt.Sprintf("%d:%v", p.Column, p.Fields))
		}
		if !slices.Equal(paths, tt.paths) || !slices.Equal(c.Whole, tt.whole) {
			t.Errorf("%s: paths %v whole %v, want %v %v", tt.text, paths, c.Whole, tt.paths, tt.whole)
		}
		if len(c.Whole) > 0 || len(c.Paths) == 0 {
			continue
		}
		// Read each path from a column of its own after the row's.
		want, err := c.Eval(r)
		if err != nil {
			t.Fatal(err)
		}
		wide := slices.Clone(r)
		for _, p := range c.Paths {
			v := r[p.Column]
			for _, f := range p.Fields {
				v, _ = v.Item(f)
			}
			p.ReadAt(len(wide))
			wide = append(wide, v)
		}
		for _, p := range c.Paths {
			wide[p.Column] = row.NullValue // not decoded
		}
		got, err := c.Eval(wide)
		if err != nil || !row.Equal(got, want) {
			t.Errorf("%s read from columns: %v, %v; want %v", tt.text, got, err, want)
		}
	}
}

// TestReadsWhole: a hand-made expression (no Paths) reads its Reads
// whole; a compiled one what it reads other than through paths.
func TestReadsWhole(t *testing.T) {
	if got := (&Compiled{Reads: []int{0, 3}}).ReadsWhole(); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("hand-made: %v", got)
	}
	tab, _ := nestedTable(t)
	e, _ := sql.ParseExpr("r.a + i")
	c, err := Compile(e, tab)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ReadsWhole(); !slices.Equal(got, []int{7}) {
		t.Errorf("r.a + i: %v, want [7]", got)
	}
}
