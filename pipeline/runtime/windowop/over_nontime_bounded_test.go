package windowop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestNonTimeBoundedRowsChangelog: ROWS BETWEEN 1 PRECEDING AND CURRENT
// ROW; a row arriving in the middle updates the one row after it only,
// a row leaving likewise, and a row whose results stay the same is not
// re-emitted.
func TestNonTimeBoundedRowsChangelog(t *testing.T) {
	steps := []ntStep{
		{optest.Ins("a", 1, 10), []string{"+I[a, 1, 10, 10, 1]"}},
		{optest.Ins("a", 3, 30), []string{"+I[a, 3, 30, 40, 2]"}},
		{optest.Ins("a", 4, 40), []string{"+I[a, 4, 40, 70, 2]"}},
		{optest.Ins("a", 2, 20), []string{"+I[a, 2, 20, 30, 2]", "-U[a, 3, 30, 40, 2]", "+U[a, 3, 30, 50, 2]"}},
		{optest.Del("a", 3, 30), []string{"-D[a, 3, 30, 50, 2]", "-U[a, 4, 40, 70, 2]", "+U[a, 4, 40, 60, 2]"}},
		{optest.UB("a", 2, 20), []string{"-D[a, 2, 20, 30, 2]", "-U[a, 4, 40, 60, 2]", "+U[a, 4, 40, 50, 2]"}},
		{optest.UA("a", 2, 30), []string{"+U[a, 2, 30, 40, 2]", "-U[a, 4, 40, 50, 2]", "+U[a, 4, 40, 70, 2]"}},
		// The same results after the change: nothing more is emitted.
		{optest.Ins("a", 0, 0), []string{"+I[a, 0, 0, 0, 1]", "-U[a, 1, 10, 10, 1]", "+U[a, 1, 10, 10, 2]"}},
		{optest.Del("a", 9, 9), nil}, // not held: ignored
	}
	spec := NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Bounded: true, Preceding: 1, Aggs: ntSumCount}
	for after := -1; after < len(steps); after++ {
		runNonTime(t, spec, WindowOptions{}, steps, after)
	}
}

// TestNonTimeBoundedRowsRandom feeds random inserts, deletes and updates
// of distinct order values (so that ties cannot make two right answers)
// and checks after each change that the folded output is the frames of
// the rows held, computed directly.
func TestNonTimeBoundedRowsRandom(t *testing.T) {
	for _, n := range []int{0, 1, 3, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			spec := NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Bounded: true, Preceding: n, Aggs: ntSumCount}
			g := optest.Must(NewNonTimeOver(spec, WindowOptions{}))
			out := &optest.Out{}
			held := map[string]map[int]int{} // partition -> order -> value
			table := map[string]int{}
			for step := range 400 {
				k := []string{"a", "b"}[rng.IntN(2)]
				if held[k] == nil {
					held[k] = map[int]int{}
				}
				s := rng.IntN(40)
				var in row.Change
				if v, ok := held[k][s]; ok {
					in = optest.Del(k, s, v)
					if rng.IntN(2) == 0 {
						in = optest.UB(k, s, v)
					}
					delete(held[k], s)
				} else {
					v := rng.IntN(100)
					in = optest.Ins(k, s, v)
					if rng.IntN(2) == 0 {
						in = optest.UA(k, s, v)
					}
					held[k][s] = v
				}
				if err := g.Process(optest.Batch(in), out); err != nil {
					t.Fatal(err)
				}
				for _, line := range out.Take() {
					body := line[2:]
					if line[0] == '+' {
						table[body]++
						continue
					}
					if table[body] == 0 {
						t.Fatalf("step %d: %s retracts a row not in the table", step, line)
					}
					if table[body]--; table[body] == 0 {
						delete(table, body)
					}
				}
				var got, want []string
				for r, c := range table {
					for range c {
						got = append(got, r)
					}
				}
				for p, rows := range held {
					order := slices.Sorted(func(yield func(int) bool) {
						for s := range rows {
							if !yield(s) {
								return
							}
						}
					})
					for i, s := range order {
						var sum, cnt int
						for _, o := range order[max(0, i-n) : i+1] {
							sum += rows[o]
							cnt++
						}
						want = append(want, fmt.Sprintf("[%s, %d, %d, %d, %d]", p, s, rows[s], sum, cnt))
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("step %d (%s): table\n%s\nwant\n%s", step, in, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// TestNonTimeBoundedRowsRefused: ranks take no bounded frame, nor RANGE.
func TestNonTimeBoundedRowsRefused(t *testing.T) {
	for _, s := range []NonTimeSpec{
		{Order: 1, Rows: true, Bounded: true, Preceding: 2, Funcs: []FuncKind{RowNumber}},
		{Order: 1, Bounded: true, Preceding: 2, Aggs: ntSumCount},
		{Order: 1, Rows: true, Bounded: true, Preceding: -1, Aggs: ntSumCount},
	} {
		if _, err := NewNonTimeOver(s, WindowOptions{}); err == nil {
			t.Errorf("%+v is accepted", s)
		}
	}
}

// TestNonTimeBoundedRowsBatch: in batch mode each row is emitted once at
// the end with its frame's results.
func TestNonTimeBoundedRowsBatch(t *testing.T) {
	spec := NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Bounded: true, Preceding: 1, Aggs: ntSumCount}
	g := optest.Must(NewNonTimeOver(spec, WindowOptions{Batch: true}))
	out := &optest.Out{}
	if err := g.Process(optest.Batch(optest.Ins("a", 3, 30), optest.Ins("a", 1, 10), optest.Ins("a", 2, 20)), out); err != nil {
		t.Fatal(err)
	}
	if got := out.Take(); len(got) > 0 {
		t.Fatalf("emitted before the end: %q", got)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a, 1, 10, 10, 1]", "+I[a, 2, 20, 30, 2]", "+I[a, 3, 30, 50, 2]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
