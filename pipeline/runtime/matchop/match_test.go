package matchop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// The input of these tests: (sym STRING, ts TIMESTAMP, price BIGINT).
const (
	cSym, cTS, cPrice = 0, 1, 2
	width             = 3
)

func tick(sec int, price int) row.Change {
	ts := optest.TS("2018-09-17 10:00:00") + int64(sec)*1_000_000
	return optest.Ins("XYZ", row.TimestampValue(ts), price)
}

// last is v.col (LAST(v.col, 0)); first is FIRST(v.col).
func last(v, col int) Nav  { return Nav{Func: NavLast, Var: v, Col: col} }
func first(v, col int) Nav { return Nav{Func: NavFirst, Var: v, Col: col} }
func sum(v, col int) Nav {
	return Nav{Func: NavAgg, Var: v, Col: col, Agg: aggop.AggCall{Func: aggop.Sum, Arg: col, ArgType: row.Type{ID: row.BigInt}}}
}

// nav is an Expr that returns its only Nav's value.
func nav(n Nav) *Expr {
	return &Expr{Navs: []Nav{n}, Text: "nav", Eval: func(r row.Row) (row.Value, error) { return r[width], nil }}
}

// pred is an Expr that is f of the current row's price and its Navs.
func pred(f func(price int64, navs []row.Value) bool, navs ...Nav) *Expr {
	return &Expr{Navs: navs, Text: "pred", Eval: func(r row.Row) (row.Value, error) {
		return row.BoolValue(f(r[cPrice].Int64(), r[width:])), nil
	}}
}

// run drives the operator over rows with a watermark after each, and, when
// restore, snapshots it and continues on a restored copy at every step.
func run(t *testing.T, s Spec, restore bool, steps ...any) []string {
	t.Helper()
	op, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	out := &optest.Out{}
	for i, st := range steps {
		switch st := st.(type) {
		case row.Change:
			err = op.Process(optest.Batch(st), out)
		case int64:
			err = op.Watermark(st, out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if restore {
			op = optest.Restored(t, func() operator.Operator { return optest.Must(New(s)) }, op).(*Match)
		}
	}
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	return out.Take()
}

// both runs the steps straight and with a restore at every step, and
// checks the two agree.
func both(t *testing.T, s Spec, steps ...any) string {
	t.Helper()
	plain := run(t, s, false, steps...)
	restored := run(t, s, true, steps...)
	if !slices.Equal(plain, restored) {
		t.Fatalf("restored at every step:\n%s\nwithout:\n%s", strings.Join(restored, "\n"), strings.Join(plain, "\n"))
	}
	return strings.Join(plain, "\n")
}

// skipSpec is the documentation's AFTER MATCH example: PATTERN (A+ C),
// DEFINE A AS SUM(A.price) < 30, MEASURES SUM(A.price), FIRST(rowtime),
// LAST(rowtime).
func skipSpec(skip SkipKind) Spec {
	return Spec{
		Keys: []int{cSym}, TimeCol: cTS, Vars: []string{"A", "C"},
		Terms:    []Term{{Var: 0, Min: 1, Max: Unbounded, Greedy: true}, {Var: 1, Min: 1, Max: 1}},
		Define:   []*Expr{pred(func(_ int64, n []row.Value) bool { return n[0].Int64() < 30 }, sum(0, cPrice)), nil},
		Measures: []*Expr{nav(sum(0, cPrice)), nav(first(AnyVar, cTS)), nav(last(AnyVar, cTS))},
		Skip:     skip, SkipVar: 0,
	}
}

var skipRows = []any{tick(1, 7), tick(2, 9), tick(3, 10), tick(4, 5), tick(5, 10), tick(6, 7), tick(7, 14)}

func TestSkipStrategies(t *testing.T) {
	for _, tc := range []struct {
		skip SkipKind
		want []string
	}{
		{SkipPastLastRow, []string{"26 01 04", "17 05 07"}},
		{SkipToNextRow, []string{"26 01 04", "24 02 05", "25 03 06", "22 04 07", "17 05 07"}},
		{SkipToLast, []string{"26 01 04", "25 03 06", "17 05 07"}},
	} {
		got := both(t, skipSpec(tc.skip), skipRows...)
		var want []string
		for _, w := range tc.want {
			var s, a, b int
			fmt.Sscanf(w, "%d %d %d", &s, &a, &b)
			want = append(want, fmt.Sprintf("+I[XYZ, %d, 2018-09-17T10:00:%02d, 2018-09-17T10:00:%02d]", s, a, b))
		}
		if got != strings.Join(want, "\n") {
			t.Errorf("%v:\n got %s\nwant %s", tc.skip, got, strings.Join(want, "\n"))
		}
	}
}

func TestSkipToFirstOfTheMatchFails(t *testing.T) {
	s := skipSpec(SkipToFirst)
	op := optest.Must(New(s))
	out := &optest.Out{}
	for _, r := range skipRows {
		if err := op.Process(optest.Batch(r.(row.Change)), out); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Finish(out); err == nil || !strings.Contains(err.Error(), "could not skip to the first row of a match") {
		t.Fatalf("err = %v", err)
	}
}

// greedySpec is the documentation's PATTERN (A B* C) with A price > 10,
// B price < 15, C price > 12, MEASURES C.price, SKIP PAST LAST ROW.
func greedySpec(greedy bool) Spec {
	return Spec{
		Keys: []int{cSym}, TimeCol: cTS, Vars: []string{"A", "B", "C"},
		Terms: []Term{{Var: 0, Min: 1, Max: 1}, {Var: 1, Min: 0, Max: Unbounded, Greedy: greedy}, {Var: 2, Min: 1, Max: 1}},
		Define: []*Expr{
			pred(func(p int64, _ []row.Value) bool { return p > 10 }),
			pred(func(p int64, _ []row.Value) bool { return p < 15 }),
			pred(func(p int64, _ []row.Value) bool { return p > 12 }),
		},
		Measures: []*Expr{nav(last(2, cPrice))},
		Skip:     SkipPastLastRow,
	}
}

func TestGreedyAndReluctant(t *testing.T) {
	rows := []any{tick(2, 10), tick(3, 11), tick(4, 12), tick(5, 13), tick(6, 14), tick(7, 16)}
	if got := both(t, greedySpec(true), rows...); got != "+I[XYZ, 16]" {
		t.Errorf("greedy: %s", got)
	}
	if got := both(t, greedySpec(false), rows...); got != "+I[XYZ, 13]\n+I[XYZ, 16]" {
		t.Errorf("reluctant: %s", got)
	}
}

// TestWithin is the documentation's WITHIN example: PATTERN (A B* C)
// WITHIN INTERVAL '1' HOUR, B AS B.price > A.price - 10, C AS C.price <
// A.price - 10, MEASURES C.rowtime, A.price - C.price. The page shows the
// drop from 15 at 12:00 to 1 at 13:00, but Flink's NFA drops a partial
// match once an event is the interval or more after its start (13:00 -
// 12:00 is not less than an hour), so the match from 14 at 12:20 is the
// one found.
func TestWithin(t *testing.T) {
	aPrice := last(0, cPrice)
	s := Spec{
		Keys: []int{cSym}, TimeCol: cTS, Vars: []string{"A", "B", "C"},
		Terms: []Term{{Var: 0, Min: 1, Max: 1}, {Var: 1, Min: 0, Max: Unbounded, Greedy: true}, {Var: 2, Min: 1, Max: 1}},
		Define: []*Expr{nil,
			pred(func(p int64, n []row.Value) bool { return p > n[0].Int64()-10 }, aPrice),
			pred(func(p int64, n []row.Value) bool { return p < n[0].Int64()-10 }, aPrice),
		},
		Measures: []*Expr{nav(last(2, cTS)), {Navs: []Nav{aPrice, last(2, cPrice)}, Eval: func(r row.Row) (row.Value, error) {
			return row.BigIntValue(r[width].Int64() - r[width+1].Int64()), nil
		}}},
		Skip:   SkipPastLastRow,
		Within: 3600_000_000,
	}
	var steps []any
	for i, p := range []int{20, 17, 18, 11, 14, 9, 15, 14, 24, 1, 19} {
		steps = append(steps, tick(i*20*60, p), optest.TS("2018-09-17 10:00:00")+int64(i*20*60)*1_000_000)
	}
	if got := both(t, s, steps...); got != "+I[XYZ, 2018-09-17T13:00, 13]" {
		t.Errorf("got %s", got)
	}
}

func TestLateRowsAreDroppedAndRowsSorted(t *testing.T) {
	s := greedySpec(false)
	base := optest.TS("2018-09-17 10:00:00")
	// Out of order before the watermark: sorted by time. After the
	// watermark passed 10:00:05, a row of 10:00:04 is late.
	got := both(t, s, tick(4, 12), tick(3, 11), tick(5, 13), base+5_000_001, tick(4, 11), tick(6, 16))
	if got != "+I[XYZ, 13]" {
		t.Errorf("got %s", got)
	}
	op := optest.Must(New(s))
	out := &optest.Out{}
	_ = op.Watermark(base+5_000_001, out)
	_ = op.Process(optest.Batch(tick(4, 11)), out)
	if n, why := op.Dropped(); n != 1 || why != "late" {
		t.Errorf("dropped %d %s", n, why)
	}
}

func TestRefusesEmptyPattern(t *testing.T) {
	s := greedySpec(true)
	s.Terms = []Term{{Var: 0, Min: 0, Max: 1}, {Var: 1, Min: 0, Max: Unbounded}}
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "empty matches") {
		t.Fatalf("err = %v", err)
	}
}

// TestGreedyTimesBlocksTheNextVariable: PATTERN (A B{2,3} C), A price >
// 15, B price > A.price, C TRUE over 17, 19, 21, 25, 18. The match from 17
// took 19, 21, 25 as B; C may then not take 18, which B's condition
// accepts (18 > 17): Flink puts NOT(B's condition) on every edge of the
// state after a greedy B. Only the match from 19 (B 21, 25; C 18) is
// found.
func TestGreedyTimesBlocksTheNextVariable(t *testing.T) {
	s := Spec{
		Keys: []int{cSym}, TimeCol: cTS, Vars: []string{"A", "B", "C"},
		Terms: []Term{{Var: 0, Min: 1, Max: 1}, {Var: 1, Min: 2, Max: 3, Greedy: true}, {Var: 2, Min: 1, Max: 1}},
		Define: []*Expr{
			pred(func(p int64, _ []row.Value) bool { return p > 15 }),
			pred(func(p int64, n []row.Value) bool { return p > n[0].Int64() }, last(0, cPrice)),
			nil,
		},
		Measures: []*Expr{nav(first(0, cPrice)), nav(Nav{Func: NavAgg, Var: 1, Col: cPrice, Agg: aggop.AggCall{Func: aggop.Count, Arg: cPrice, ArgType: row.Type{ID: row.BigInt}}})},
	}
	got := both(t, s, tick(1, 17), tick(2, 19), tick(3, 21), tick(4, 25), tick(5, 18))
	if got != "+I[XYZ, 19, 2]" {
		t.Errorf("got %s", got)
	}
}

// TestWithinReleasesHeldMatch: PATTERN (A B+? C) WITHIN 5 seconds, C AS
// C.price = A.price + 10, over 1, 2, 5, 12 (10:00:01 to :04). The match
// from 2 (B 5, C 12) completes while the one from 1 is still open, so it
// is held back; no row follows, but once the watermark passes 10:00:06
// Flink's advanceTime drops the match from 1 and emits the held one.
func TestWithinReleasesHeldMatch(t *testing.T) {
	s := Spec{
		Keys: []int{cSym}, TimeCol: cTS, Vars: []string{"A", "B", "C"},
		Terms: []Term{{Var: 0, Min: 1, Max: 1}, {Var: 1, Min: 1, Max: Unbounded}, {Var: 2, Min: 1, Max: 1}},
		Define: []*Expr{nil, nil,
			pred(func(p int64, n []row.Value) bool { return p == n[0].Int64()+10 }, last(0, cPrice)),
		},
		Measures: []*Expr{nav(first(0, cPrice)), nav(last(2, cPrice))},
		Within:   5_000_000,
	}
	base := optest.TS("2018-09-17 10:00:00")
	rows := []any{tick(1, 1), tick(2, 2), tick(3, 5), tick(4, 12), base + 5_000_000}
	if got := both(t, s, rows...); got != "+I[XYZ, 2, 12]" {
		t.Errorf("at the end of input: got %q", got)
	}
	op := optest.Must(New(s))
	out := &optest.Out{}
	for _, r := range rows[:4] {
		if err := op.Process(optest.Batch(r.(row.Change)), out); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Watermark(base+5_000_000, out); err != nil {
		t.Fatal(err)
	}
	if got := out.Take(); len(got) != 0 {
		t.Fatalf("emitted while the match from 1 is open: %v", got)
	}
	if err := op.Watermark(base+6_000_001, out); err != nil {
		t.Fatal(err)
	}
	if got := out.Take(); len(got) != 1 || got[0] != "+I[XYZ, 2, 12]" {
		t.Errorf("after the watermark passed 10:00:06: %v", got)
	}
}
