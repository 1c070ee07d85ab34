package nexmark

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestPushedFields: with every field of the three ROWs pushed down and
// only event_type read, each row holds event_type, three NULL ROWs, the
// gap the planner asked for, NULL, and,
// for its event's type, the fields the ROW of a source without pushdown
// holds (the same draws), NULL for the other types' fields; paths the
// ROWs do not have are refused.
func TestPushedFields(t *testing.T) {
	opts := fixed + "events: 3000\n"
	whole, _ := read(t, mustOpen(t, opts), -1, 700)
	s := mustOpen(t, opts)
	var paths []connector.FieldPath
	for c := 1; c <= 3; c++ {
		for f := range fieldCount[c-1] {
			paths = append(paths, connector.FieldPath{Column: c, Fields: []int{f}})
		}
	}
	s.SetColumns([]bool{true, false, false, false})
	const gap = 2 // the table's computed columns' room, left NULL
	if !s.SetPaths(paths, gap) {
		t.Fatal("the ROWs' fields were refused")
	}
	pushed, _ := read(t, s, -1, 700)
	if len(pushed) != len(whole) || len(whole) != 3000 {
		t.Fatalf("%d rows pushed, %d whole", len(pushed), len(whole))
	}
	for i, r := range pushed {
		w := whole[i]
		if len(r) != len(Columns)+gap+len(paths) || r[0] != w[0] {
			t.Fatalf("row %d: %d columns, event_type %v; want %d, %v", i, len(r), r[0], len(Columns)+gap+len(paths), w[0])
		}
		for c := len(Columns); c < len(Columns)+gap; c++ {
			if !r[c].IsNull() {
				t.Fatalf("row %d: gap column %d written: %v", i, c, r[c])
			}
		}
		for c := 1; c <= 3; c++ {
			if !r[c].IsNull() {
				t.Fatalf("row %d: column %d not read but %v", i, c, r[c])
			}
		}
		for j, p := range paths {
			want := row.NullValue
			if v := w[p.Column]; !v.IsNull() {
				want, _ = v.Item(p.Fields[0])
			}
			if got := r[len(Columns)+gap+j]; fmt.Sprint(got) != fmt.Sprint(want) || got.IsNull() != want.IsNull() {
				t.Fatalf("row %d, column %d field %d: %v, want %v", i, p.Column, p.Fields[0], got, want)
			}
		}
	}
	for _, bad := range [][]connector.FieldPath{
		{{Column: 0, Fields: []int{0}}},
		{{Column: 3, Fields: []int{7}}},
		{{Column: 1, Fields: []int{0, 1}}},
	} {
		if mustOpen(t, opts).SetPaths(bad, 0) {
			t.Errorf("SetPaths(%v) accepted", bad)
		}
	}
	if mustOpen(t, opts).SetPaths(paths, -1) {
		t.Error("a negative gap accepted")
	}
}
