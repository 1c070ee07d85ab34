package runtime

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// readBlock stands for a source's read buffer: the strings of thousands
// of decoded rows point into it (the contract's retention rule, doc.go).
type readBlock struct{ s string }

func newReadBlock() readBlock {
	return readBlock{strings.Repeat("abcdefghijklmnopqrstuvwxyz", 64)}
}

// str returns the n-byte value at offset i, pointing into the block.
func (b readBlock) str(i, n int) row.Value { return row.StringValue(b.s[i : i+n]) }

// pins reports whether v's text lies inside the block.
func (b readBlock) pins(v row.Value) bool {
	if v.IsNull() || v.Type() != row.String || v.Str() == "" {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(b.s)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(v.Str())))
	return p >= start && p < start+uintptr(len(b.s))
}

// checkRows fails t for each value of rows that pins the block.
func (b readBlock) checkRows(t *testing.T, what string, rows ...row.Row) {
	t.Helper()
	for _, r := range rows {
		for i, v := range r {
			if b.pins(v) {
				t.Errorf("%s: column %d (%s) points into the input's read block", what, i, v)
			}
		}
	}
}

// storeValues is every Value an aggregate store holds: inline values,
// lists, multisets (keys and heap) and DISTINCT sets.
func storeValues(s *aggStore) []row.Value {
	vals := append([]row.Value(nil), s.vals...)
	for _, x := range s.exts {
		switch x := x.(type) {
		case *valueList:
			vals = append(vals, x.vals...)
		case *extremes:
			vals = append(vals, x.heap...)
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
				b := newReadBlock()
				g := NewGroupAgg([]int{0}, []AggCall{{Func: f, Arg: 1, ArgType: str}}, GroupAggOptions{InsertOnly: insertOnly})
				var changes []row.Change
				for i := range 40 {
					// Five groups, several distinct values each, some equal
					// values arriving from different records.
					changes = append(changes, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(int64(i % 5)), b.str(i%13*3, 4)}})
				}
				if !insertOnly {
					changes = append(changes, row.Change{Kind: row.Delete, Row: changes[7].Row}, row.Change{Kind: row.Delete, Row: changes[0].Row})
				}
				if err := g.Process(&row.Batch{Changes: changes}, &aggOut{}); err != nil {
					t.Fatal(err)
				}
				vals := storeValues(g.st)
				if f != CountDistinct && len(vals) == 0 {
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
		j := NewTemporalJoin(temporalSpec(false))
		for i := range 4 {
			r := row.Row{row.BigIntValue(1), at(i), b.str(i*5, 5)}
			for side := range 2 {
				if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &temporalCollector{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, k := range j.keys {
			for _, l := range k.left {
				b.checkRows(t, "held order", l.row)
			}
			for _, v := range k.versions {
				b.checkRows(t, "version", v.row)
			}
		}
	})
	t.Run("window join", func(t *testing.T) {
		j := NewWindowJoin(wjSpec(InnerJoin))
		for side := range 2 {
			r := row.Row{row.BigIntValue(1), at(0), at(10), b.str(side*7, 6)}
			if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range j.windows {
			for _, k := range w.keys {
				b.checkRows(t, "window row", append(k.rows[0], k.rows[1]...)...)
			}
		}
	})
	t.Run("session table", func(t *testing.T) {
		s := NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, TimeCol: 0, Gap: 5 * minute}, Keys: []int{1}})
		for i := range 3 {
			r := row.Row{at(i), b.str(0, 3), b.str(i*4, 4)}
			if err := s.Process(&row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &aggOut{}); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.held) == 0 {
			t.Fatal("no rows held")
		}
		for _, rows := range s.held {
			b.checkRows(t, "session row", rows...)
		}
	})
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
		return in(unsafe.Pointer(unsafe.SliceData(t.entries)), uintptr(len(t.entries))*unsafe.Sizeof(keyEntry{})) ||
			in(unsafe.Pointer(unsafe.SliceData(t.arena)), uintptr(len(t.arena)))
	}
	aggs := []AggCall{{Func: CountStar, Arg: -1}}
	for _, opt := range []GroupAggOptions{
		{InsertOnly: true, MiniBatch: true},
		{InsertOnly: true, Batch: true},
	} {
		g := NewGroupAgg([]int{0, 1}, aggs, opt)
		b := &row.Batch{}
		for i := range 50 {
			short, long := fmt.Sprintf("k%d", i%7), strings.Repeat("x", 20)+fmt.Sprint(i%5)
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: row.Row{row.StringValue(short), row.StringValue(long)}})
		}
		out := &aggOut{}
		if err := g.Process(b, out); err != nil {
			t.Fatal(err)
		}
		if err := g.Flush(out); err != nil {
			t.Fatal(err)
		}
		if err := g.Finish(out); err != nil {
			t.Fatal(err)
		}
		if len(out.rows) == 0 {
			t.Fatalf("%+v: nothing emitted", opt)
		}
		for _, c := range out.rows {
			for i, v := range c.Row[:2] {
				if inside(g, v.Str()) {
					t.Fatalf("%+v: key column %d %q points into the key index", opt, i, v.Str())
				}
			}
		}
	}
}
