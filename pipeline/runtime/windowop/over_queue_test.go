package windowop

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// Rows of the queue tests: [ts, k STRING, j BIGINT, v BIGINT, d DOUBLE,
// s STRING], NULLs in j, v, d and s.
var queueAggs = []aggop.AggCall{
	{Func: aggop.Sum, Arg: 3, ArgType: optest.TBigInt},
	{Func: aggop.Max, Arg: 3, ArgType: optest.TBigInt},
	{Func: aggop.Min, Arg: 4, ArgType: optest.TDouble},
	{Func: aggop.CountStar, Arg: -1},
	{Func: aggop.Max, Arg: 5, ArgType: optest.TString},
	{Func: aggop.Avg, Arg: 4, ArgType: optest.TDouble},
	{Func: aggop.Min, Arg: 3, ArgType: optest.TBigInt},
	{Func: aggop.Count, Arg: 4, ArgType: optest.TDouble},
	{Func: aggop.Max, Arg: 3, ArgType: optest.TBigInt, Distinct: true}, // stays in the store
	{Func: aggop.Sum, Arg: 4, ArgType: optest.TDouble},
}

// queueStep is an input row or, with r nil, a watermark at ts; with
// more, a batch of r and more's rows.
type queueStep struct {
	ts   int64
	r    row.Row
	more []row.Row
}

// batch is the step's rows as one input batch.
func (s queueStep) batch() *row.Batch {
	b := optest.Batch(row.Change{Kind: row.Insert, Row: s.r})
	for _, r := range s.more {
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
	}
	return b
}

// queueSteps are n random rows over a few partitions, their times
// mostly rising with ties and some out of order (late in streaming),
// and watermarks between them.
func queueSteps(rng *rand.Rand, n int) []queueStep {
	var steps []queueStep
	base := int64(1_600_000_000_000_000)
	now, wm := base, base-1
	for range n {
		if rng.IntN(8) == 0 {
			wm = max(wm, now-int64(rng.IntN(4))*optest.Minute)
			steps = append(steps, queueStep{ts: wm})
			continue
		}
		now += int64(rng.IntN(3)) * optest.Minute / 2 // ties: a third of the rows
		ts := now
		if rng.IntN(6) == 0 {
			ts -= int64(rng.IntN(6)) * optest.Minute
		}
		r := row.Row{row.TimestampValue(ts), row.StringValue(fmt.Sprintf("p%d", rng.IntN(4))),
			row.NullValue, row.NullValue, row.NullValue, row.NullValue}
		if rng.IntN(6) > 0 {
			r[2] = row.BigIntValue(int64(rng.IntN(2)))
		}
		if rng.IntN(5) > 0 {
			r[3] = row.BigIntValue(int64(rng.IntN(21) - 10))
		}
		if rng.IntN(5) > 0 {
			r[4] = row.DoubleValue(float64(rng.IntN(41)-20) * 0.25)
		}
		if rng.IntN(5) > 0 {
			r[5] = row.StringValue(strings.Repeat("x", rng.IntN(4)) + string(rune('a'+rng.IntN(5))))
		}
		steps = append(steps, queueStep{ts: ts, r: r})
	}
	return steps
}

// runQueued feeds steps to an OVER built by mk, snapshotting it after
// step restoreAfter (-1: never) and restoring into a fresh one from
// mkRestore, and returns its output lines and late count. In sorted
// mode the rows go in time order (arrival order within a time), each
// time's in one batch after the watermark below it, as
// sortop.TimeSorted feeds them.
func runQueued(t *testing.T, mk, mkRestore func() *OverAgg, opt WindowOptions, steps []queueStep, restoreAfter int) ([]string, int64) {
	t.Helper()
	if opt.Sorted {
		var rows []queueStep
		for _, s := range steps {
			if s.r != nil {
				rows = append(rows, s)
			}
		}
		slices.SortStableFunc(rows, func(a, b queueStep) int { return cmp.Compare(a.ts, b.ts) })
		steps = steps[:0:0]
		for i, s := range rows {
			if i > 0 && rows[i-1].ts == s.ts {
				last := &steps[len(steps)-1]
				last.more = append(last.more, s.r)
				continue
			}
			steps = append(steps, queueStep{ts: OverSortedWatermark(s.ts)}, s)
		}
	}
	g := mk()
	out := &optest.Out{}
	for i, s := range steps {
		if s.r == nil {
			if err := g.Watermark(s.ts, out); err != nil {
				t.Fatal(err)
			}
		} else if err := g.Process(s.batch(), out); err != nil {
			t.Fatal(err)
		}
		if i == restoreAfter {
			snap, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g = mkRestore()
			if err := g.Restore(snap); err != nil {
				t.Fatalf("restore after step %d: %v", i, err)
			}
		}
	}
	if err := g.Watermark(operator.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	n, _ := g.Dropped()
	return out.Take(), n
}

// The MIN and MAX kept in queues give what the store's retractable
// MIN/MAX gives, row for row: random rows (STRING and composite
// partition keys, NULLs, ties in time, late rows), ROWS 0..20 PRECEDING
// and RANGE frames, streaming, batch and batch over sorted input, with
// and without a snapshot and restore on the way.
func TestOverQueuesEqualTheStore(t *testing.T) {
	modes := []WindowOptions{{}, {Batch: true}, {Batch: true, Sorted: true}}
	var late int64 // rows dropped as late in streaming, over all runs
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 35))
		steps := queueSteps(rng, 300)
		for _, keys := range [][]int{{1}, {1, 2}} {
			var specs []OverSpec
			for n := range int64(21) {
				specs = append(specs, OverSpec{Keys: keys, Rows: true, Preceding: n, Aggs: queueAggs})
			}
			for _, m := range []int64{0, 1, 3, 10} {
				specs = append(specs, OverSpec{Keys: keys, Preceding: m * optest.Minute, Aggs: queueAggs})
			}
			for _, spec := range specs {
				for _, opt := range modes {
					general := func() *OverAgg { return optest.Must(newOverAgg(spec, opt, false)) }
					queued := func() *OverAgg { return optest.Must(newOverAgg(spec, opt, true)) }
					if queued().ext == nil {
						t.Fatalf("%s: no queues", spec)
					}
					want, wantLate := runQueued(t, general, general, opt, steps, -1)
					late += wantLate
					restore := rng.IntN(len(steps))
					for _, after := range []int{-1, restore} {
						got, late := runQueued(t, queued, queued, opt, steps, after)
						if !slices.Equal(got, want) || late != wantLate {
							t.Fatalf("seed %d keys %v %s %+v restore after %d: queues (late %d)\n%s\nstore (late %d)\n%s",
								seed, keys, spec, opt, after, late, strings.Join(got, "\n"), wantLate, strings.Join(want, "\n"))
						}
					}
				}
			}
		}
	}
	if late == 0 {
		t.Fatal("no row came late: the inputs test less than they should")
	}
}

// A streaming OVER's state written when its store held MIN and MAX
// (before they were kept in queues: no overSortedMark) restores into an
// OVER that queues them: the same output after as if it had run on, the
// DOUBLE sums bit for bit; as key group parts of version 1 too.
func TestOverRestoresStateWithoutQueues(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 36))
		steps := queueSteps(rng, 300)
		for _, spec := range []OverSpec{
			{Keys: []int{1, 2}, Rows: true, Preceding: int64(rng.IntN(12)), Aggs: queueAggs},
			{Keys: []int{1}, Preceding: int64(1+rng.IntN(4)) * optest.Minute, Aggs: queueAggs},
		} {
			general := func() *OverAgg { return optest.Must(newOverAgg(spec, WindowOptions{}, false)) }
			queued := func() *OverAgg { return optest.Must(newOverAgg(spec, WindowOptions{}, true)) }
			want, wantLate := runQueued(t, general, general, WindowOptions{}, steps, -1)
			after := len(steps) / 2
			if snap, err := general().Snapshot(); err != nil || snap[0]&overSortedMark != 0 {
				t.Fatalf("the store's layout is marked as queued (%v)", err)
			}
			got, late := runQueued(t, general, queued, WindowOptions{}, steps, after)
			if !slices.Equal(got, want) || late != wantLate {
				t.Fatalf("seed %d %s: restored into queues (late %d)\n%s\nwant (late %d)\n%s",
					seed, spec, late, strings.Join(got, "\n"), wantLate, strings.Join(want, "\n"))
			}

			// The same through key group parts of version 1.
			g := general()
			out := &optest.Out{}
			for _, s := range steps[:after] {
				if s.r == nil {
					if err := g.Watermark(s.ts, out); err != nil {
						t.Fatal(err)
					}
				} else if err := g.Process(optest.Batch(row.Change{Kind: row.Insert, Row: s.r}), out); err != nil {
					t.Fatal(err)
				}
			}
			var parts [][]byte
			if err := g.SnapshotGroups(func(_ int, b []byte) error {
				if b[0] != overGroupsVersion {
					t.Fatalf("part version %d, want %d", b[0], overGroupsVersion)
				}
				b = slices.Clone(b)
				b[0] = 1
				parts = append(parts, b)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			shared, err := g.SnapshotShared()
			if err != nil {
				t.Fatal(err)
			}
			r := queued()
			if err := r.RestoreGroups(parts); err != nil {
				t.Fatal(err)
			}
			if err := r.RestoreShared([][]byte{shared}); err != nil {
				t.Fatal(err)
			}
			for _, s := range steps[after:] {
				if s.r == nil {
					if err := r.Watermark(s.ts, out); err != nil {
						t.Fatal(err)
					}
				} else if err := r.Process(optest.Batch(row.Change{Kind: row.Insert, Row: s.r}), out); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Watermark(operator.MaxWatermark, out); err != nil {
				t.Fatal(err)
			}
			if got := out.Take(); !slices.Equal(got, want) {
				t.Fatalf("seed %d %s: restored from version-1 parts\n%s\nwant\n%s", seed, spec, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// A state whose MIN and MAX are queued does not restore into an OVER
// that keeps them in its store (another query): refused, not misread.
func TestOverRefusesQueuedStateForTheStore(t *testing.T) {
	spec := OverSpec{Keys: []int{1}, Rows: true, Preceding: 2, Aggs: queueAggs}
	g := optest.Must(newOverAgg(spec, WindowOptions{}, true))
	if err := g.Process(optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.TimestampValue(1), row.StringValue("a"),
		row.NullValue, row.BigIntValue(1), row.NullValue, row.NullValue}}), &optest.Out{}); err != nil {
		t.Fatal(err)
	}
	snap, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := optest.Must(newOverAgg(spec, WindowOptions{}, false)).Restore(snap); err == nil || !strings.Contains(err.Error(), "layout") {
		t.Fatalf("restored a queued state into the store's layout: %v", err)
	}
}
