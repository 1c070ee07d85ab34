package windowop

import (
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// changelogStep is one change of a (time in minutes, key, value) row, or
// a watermark (minutes) when wmMins is not 0.
type changelogStep struct {
	kind   row.Kind
	min    int64
	k      string
	v      int64
	wmMins int64
}

var changelogAggs = []aggop.AggCall{
	{Func: aggop.CountStar, Arg: -1},
	{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt},
	{Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt},
	{Func: aggop.Count, Arg: 2, ArgType: optest.TBigInt, Distinct: true},
}

// TestWindowAggChangelog: over a changelog (WindowOptions.Updating) -U and
// -D retract their row from the windows of its time, a group whose rows
// all went is not emitted, and a retraction for a window that fired is
// late and dropped, as Flink's window aggregate over a CDC source
// (WindowAggregateITCase). Each case runs straight and snapshotted and
// restored into a new operator after every step: the same output.
func TestWindowAggChangelog(t *testing.T) {
	ins, del, ub, ua := row.Insert, row.Delete, row.UpdateBefore, row.UpdateAfter
	cases := []struct {
		name  string
		spec  WindowSpec
		steps []changelogStep
		want  string
	}{
		{"tumble: retractions, a moved row, an emptied group, a late delete",
			WindowSpec{Kind: Tumble, Size: 5 * optest.Minute},
			[]changelogStep{
				{kind: ins, min: 1, k: "a", v: 10}, {kind: ins, min: 2, k: "a", v: 30}, {kind: ins, min: 3, k: "b", v: 5},
				{kind: del, min: 2, k: "a", v: 30},                                 // MAX falls back to 10
				{kind: ub, min: 3, k: "b", v: 5}, {kind: ua, min: 6, k: "b", v: 7}, // b moves to [5, 10): [0, 5) loses it
				{kind: ins, min: 7, k: "c", v: 1}, {kind: del, min: 7, k: "c", v: 1}, // c's group empties
				{wmMins: 5},
				{kind: del, min: 1, k: "a", v: 10}, // late: [0, 5) fired
				{kind: ins, min: 8, k: "b", v: 7},
				{wmMins: 10},
			},
			"+I[a, 0, 5, 1, 10, 10, 1] +I[b, 5, 10, 2, 14, 7, 1]"},
		{"hop: a retraction leaves the windows of its slice",
			WindowSpec{Kind: Hop, Size: 4 * optest.Minute, Slide: 2 * optest.Minute},
			[]changelogStep{
				{kind: ins, min: 1, k: "a", v: 1}, {kind: ins, min: 3, k: "a", v: 2}, {kind: del, min: 1, k: "a", v: 1},
				{wmMins: 6},
			},
			"+I[a, 0, 4, 1, 2, 2, 1] +I[a, 2, 6, 1, 2, 2, 1]"},
		{"cumulate: a group emptied in its first step, filled in the next",
			WindowSpec{Kind: Cumulate, Size: 4 * optest.Minute, Step: 2 * optest.Minute},
			[]changelogStep{
				{kind: ins, min: 1, k: "a", v: 4}, {kind: del, min: 1, k: "a", v: 4}, {kind: ins, min: 3, k: "a", v: 6},
				{wmMins: 4},
			},
			"+I[a, 0, 4, 1, 6, 6, 1]"},
	}
	for _, c := range cases {
		for _, restore := range []bool{false, true} {
			name := c.name
			if restore {
				name += "/restored after each step"
			}
			t.Run(name, func(t *testing.T) {
				newOp := func() *WindowAgg {
					return optest.Must(NewWindowAgg(c.spec, []int{1}, changelogAggs, WindowOptions{Updating: true}))
				}
				g := newOp()
				out := &optest.Out{}
				for _, s := range c.steps {
					var err error
					if s.wmMins != 0 {
						err = g.Watermark(s.wmMins*optest.Minute-1000, out)
					} else {
						b := optest.Batch(row.Change{Kind: s.kind, Row: row.Row{row.TimestampValue(s.min * optest.Minute), row.StringValue(s.k), row.BigIntValue(s.v)}})
						err = g.Process(b, out)
					}
					if err != nil {
						t.Fatal(err)
					}
					if restore {
						snap, err := g.Snapshot()
						if err != nil {
							t.Fatal(err)
						}
						g = newOp()
						if err := g.Restore(snap); err != nil {
							t.Fatal(err)
						}
					}
				}
				var got []string
				for _, ch := range out.Changes() {
					got = append(got, optestLine(ch.Kind, ch.Row))
				}
				slices.Sort(got)
				if g := strings.Join(got, " "); g != c.want {
					t.Errorf("got  %s\nwant %s", g, c.want)
				}
			})
		}
	}
}

// optestLine writes a window aggregate's row with its window bounds in
// minutes.
func optestLine(k row.Kind, r row.Row) string {
	parts := []string{r[0].String(), minutes(r[1]), minutes(r[2])}
	for _, v := range r[4:] {
		parts = append(parts, v.String())
	}
	return k.String() + "[" + strings.Join(parts, ", ") + "]"
}

func minutes(v row.Value) string { return row.BigIntValue(v.Micros() / optest.Minute).String() }
