package aggop

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/state"
)

// storeValues is every Value an aggregate store holds: inline values,
// lists, multisets (keys and heap) and DISTINCT sets.
func storeValues(s *Store) []row.Value {
	vals := append([]row.Value(nil), s.vals...)
	for _, x := range s.exts {
		switch x := x.(type) {
		case *valueList:
			vals = append(vals, x.vals...)
		case *extremes:
			vals = append(vals, x.heap.Items()...)
			for v := range x.counts {
				vals = append(vals, v)
			}
		case valueCounts:
			for v := range x {
				vals = append(vals, v)
			}
		}
	}
	return vals
}

// An aggregate that keeps input values (MIN, MAX, FIRST_VALUE,
// LAST_VALUE, LISTAGG, DISTINCT sets), in insert-only and retracting
// state, keeps copies: a kept value must not pin the read block of the
// record it came from, or 1M groups pin as many blocks.
func TestAggregateStateDoesNotPinInput(t *testing.T) {
	str := row.Type{ID: row.String}
	funcs := []AggFunc{Min, Max, FirstValue, LastValue, ListAgg, CountDistinct}
	for _, insertOnly := range []bool{true, false} {
		for _, f := range funcs {
			t.Run(fmt.Sprintf("%v/insertOnly=%v", f, insertOnly), func(t *testing.T) {
				b := optest.NewReadBlock()
				g := optest.Must(NewGroupAgg([]int{0}, []AggCall{{Func: f, Arg: 1, ArgType: str}}, GroupAggOptions{InsertOnly: insertOnly}))
				var changes []row.Change
				for i := range 40 {
					// Five groups, several distinct values each, some equal
					// values arriving from different records.
					changes = append(changes, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(int64(i % 5)), b.Str(i%13*3, 4)}})
				}
				if !insertOnly {
					changes = append(changes, row.Change{Kind: row.Delete, Row: changes[7].Row}, row.Change{Kind: row.Delete, Row: changes[0].Row})
				}
				if err := g.Process(&row.Batch{Changes: changes}, &optest.Out{}); err != nil {
					t.Fatal(err)
				}
				vals := storeValues(g.store)
				if f != CountDistinct && len(vals) == 0 {
					t.Fatal("the store holds no values: the test inspects the wrong place")
				}
				for _, v := range vals {
					if b.Pins(v) {
						t.Fatalf("state value %s points into the input's read block", v)
					}
				}
			})
		}
	}
}

// TestEmittedKeysDoNotPointIntoIndex: the key columns a mini-batch flush
// and batch Finish emit are decoded from the key index's memory (its
// entries, its arena, off the Go heap once large), which a later change
// rewrites or frees: a STRING key must be a copy of its own.
func TestEmittedKeysDoNotPointIntoIndex(t *testing.T) {
	inside := func(g *GroupAgg, s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		in := func(start unsafe.Pointer, n uintptr) bool {
			return n > 0 && p >= uintptr(start) && p < uintptr(start)+n
		}
		t := g.index
		return in(unsafe.Pointer(unsafe.SliceData(t.Entries)), uintptr(len(t.Entries))*unsafe.Sizeof(state.KeyEntry{})) ||
			in(unsafe.Pointer(unsafe.SliceData(t.Arena)), uintptr(len(t.Arena)))
	}
	aggs := []AggCall{{Func: CountStar, Arg: -1}}
	for _, opt := range []GroupAggOptions{
		{InsertOnly: true, MiniBatch: true},
		{InsertOnly: true, Batch: true},
	} {
		g := optest.Must(NewGroupAgg([]int{0, 1}, aggs, opt))
		b := &row.Batch{}
		for i := range 50 {
			short, long := fmt.Sprintf("k%d", i%7), strings.Repeat("x", 20)+fmt.Sprint(i%5)
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: row.Row{row.StringValue(short), row.StringValue(long)}})
		}
		out := &optest.Out{}
		if err := g.Process(b, out); err != nil {
			t.Fatal(err)
		}
		if err := g.Flush(out); err != nil {
			t.Fatal(err)
		}
		if err := g.Finish(out); err != nil {
			t.Fatal(err)
		}
		if len(out.Rows) == 0 {
			t.Fatalf("%+v: nothing emitted", opt)
		}
		for _, c := range out.Rows {
			for i, v := range c.Row[:2] {
				if inside(g, v.Str()) {
					t.Fatalf("%+v: key column %d %q points into the key index", opt, i, v.Str())
				}
			}
		}
	}
}
