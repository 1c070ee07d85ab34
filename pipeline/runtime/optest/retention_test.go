package optest

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/state"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// storeValues is every Value an aggregate store holds: inline values,
// lists, multisets (keys and heap) and DISTINCT sets.
func storeValues(s *aggop.Store) []row.Value {
	vals := append([]row.Value(nil), s.Vals...)
	for _, x := range s.Exts {
		switch x := x.(type) {
		case *aggop.ValueList:
			vals = append(vals, x.Vals...)
		case *aggop.Extremes:
			vals = append(vals, x.Heap...)
			for v := range x.Counts {
				vals = append(vals, v)
			}
		case aggop.ValueCounts:
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
	funcs := []aggop.AggFunc{aggop.Min, aggop.Max, aggop.FirstValue, aggop.LastValue, aggop.ListAgg, aggop.CountDistinct}
	for _, insertOnly := range []bool{true, false} {
		for _, f := range funcs {
			t.Run(fmt.Sprintf("%v/insertOnly=%v", f, insertOnly), func(t *testing.T) {
				b := newReadBlock()
				g := aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: f, Arg: 1, ArgType: str}}, aggop.GroupAggOptions{InsertOnly: insertOnly})
				var changes []row.Change
				for i := range 40 {
					// Five groups, several distinct values each, some equal
					// values arriving from different records.
					changes = append(changes, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(int64(i % 5)), b.str(i%13*3, 4)}})
				}
				if !insertOnly {
					changes = append(changes, row.Change{Kind: row.Delete, Row: changes[7].Row}, row.Change{Kind: row.Delete, Row: changes[0].Row})
				}
				if err := g.Process(&row.Batch{Changes: changes}, &Out{}); err != nil {
					t.Fatal(err)
				}
				vals := storeValues(g.St)
				if f != aggop.CountDistinct && len(vals) == 0 {
					t.Fatal("the store holds no values: the test inspects the wrong place")
				}
				for _, v := range vals {
					if b.pins(v) {
						t.Fatalf("state value %s points into the input's read block", v)
					}
				}
			})
		}
	}
}

// Rows that joins and sessions keep past their batch are copies.
func TestKeptRowsDoNotPinInput(t *testing.T) {
	b := newReadBlock()
	at := func(i int) row.Value { return row.TimestampValue(int64(i) * 1000) }

	t.Run("temporal join", func(t *testing.T) {
		j := joinop.NewTemporalJoin(temporalSpec(false))
		for i := range 4 {
			r := row.Row{row.BigIntValue(1), at(i), b.str(i*5, 5)}
			for side := range 2 {
				if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &Discard{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, k := range j.Keys {
			for _, l := range k.Left {
				b.checkRows(t, "held order", l.Row)
			}
			for _, v := range k.Versions {
				b.checkRows(t, "version", v.Row)
			}
		}
	})
	t.Run("window join", func(t *testing.T) {
		j := joinop.NewWindowJoin(wjSpec(joinop.InnerJoin))
		for side := range 2 {
			r := row.Row{row.BigIntValue(1), at(0), at(10), b.str(side*7, 6)}
			if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range j.Windows {
			for _, k := range w.Keys {
				b.checkRows(t, "window row", append(k.Rows[0], k.Rows[1]...)...)
			}
		}
	})
	t.Run("session table", func(t *testing.T) {
		s := Must(windowop.NewSessionTable(windowop.WindowTable{Spec: windowop.WindowSpec{Kind: windowop.Session, TimeCol: 0, Gap: 5 * Minute}, Keys: []int{1}}))
		for i := range 3 {
			r := row.Row{at(i), b.str(0, 3), b.str(i*4, 4)}
			if err := s.Process(&row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &Out{}); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.Held) == 0 {
			t.Fatal("no rows held")
		}
		for _, rows := range s.Held {
			b.checkRows(t, "session row", rows...)
		}
	})
}

// TestEmittedKeysDoNotPointIntoIndex: the key columns a mini-batch flush
// and batch Finish emit are decoded from the key index's memory (its
// entries, its arena, off the Go heap once large), which a later change
// rewrites or frees: a STRING key must be a copy of its own.
func TestEmittedKeysDoNotPointIntoIndex(t *testing.T) {
	inside := func(g *aggop.GroupAgg, s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		in := func(start unsafe.Pointer, n uintptr) bool {
			return n > 0 && p >= uintptr(start) && p < uintptr(start)+n
		}
		t := g.Index
		return in(unsafe.Pointer(unsafe.SliceData(t.Entries)), uintptr(len(t.Entries))*unsafe.Sizeof(state.KeyEntry{})) ||
			in(unsafe.Pointer(unsafe.SliceData(t.Arena)), uintptr(len(t.Arena)))
	}
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	for _, opt := range []aggop.GroupAggOptions{
		{InsertOnly: true, MiniBatch: true},
		{InsertOnly: true, Batch: true},
	} {
		g := aggop.NewGroupAgg([]int{0, 1}, aggs, opt)
		b := &row.Batch{}
		for i := range 50 {
			short, long := fmt.Sprintf("k%d", i%7), strings.Repeat("x", 20)+fmt.Sprint(i%5)
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: row.Row{row.StringValue(short), row.StringValue(long)}})
		}
		out := &Out{}
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
