package aggop

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A retractable store's state projected to some of its aggregates
// restores a store of those aggregates as if it had seen the same rows
// all along: the same results, bit for bit (a DOUBLE sum's rounding
// history included), then and after more rows. Rows: [BIGINT, DOUBLE,
// STRING], some NULL; each slot's rows added and some retracted.
func TestProjectStateKeepsTheKeptAggregates(t *testing.T) {
	all := []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Max, Arg: 0, ArgType: optest.TBigInt},
		{Func: Sum, Arg: 1, ArgType: optest.TDouble},
		{Func: Min, Arg: 2, ArgType: optest.TString},
		{Func: Avg, Arg: 0, ArgType: optest.TBigInt},
		{Func: Max, Arg: 1, ArgType: optest.TDouble},
		{Func: CountDistinct, Arg: 2, ArgType: optest.TString},
		{Func: ListAgg, Arg: 2, ArgType: optest.TString, Sep: ","},
		{Func: Min, Arg: 0, ArgType: optest.TBigInt},
		{Func: StddevPop, Arg: 1, ArgType: optest.TDouble},
		{Func: Count, Arg: 0, ArgType: optest.TBigInt},
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var keep []int
		for i := range all {
			if rng.IntN(2) == 0 {
				keep = append(keep, i)
			}
		}
		var sub []AggCall
		for _, i := range keep {
			sub = append(sub, all[i])
		}
		full, want := NewStore(all, false, true), NewStore(sub, false, true)
		const slots = 6
		for k := range slots {
			key := string(rune('a' + k))
			full.Alloc(key)
			want.Alloc(key)
		}
		if rng.IntN(2) == 0 {
			full.Release(2)
			want.Release(2)
		}
		live := make([][]row.Row, slots)
		randRow := func() row.Row {
			r := row.Row{row.NullValue, row.NullValue, row.NullValue}
			if rng.IntN(5) > 0 {
				r[0] = row.BigIntValue(rng.Int64N(50) - 25)
			}
			if rng.IntN(5) > 0 {
				r[1] = row.DoubleValue(rng.Float64()*1e6 - 3e5)
			}
			if rng.IntN(5) > 0 {
				r[2] = row.StringValue(string(rune('k' + rng.IntN(6))))
			}
			return r
		}
		step := func(stores ...*Store) {
			for range 400 {
				id := int32(rng.IntN(slots))
				if id == 2 && len(full.Free) > 0 {
					continue
				}
				if n := len(live[id]); n > 0 && rng.IntN(3) == 0 {
					k := rng.IntN(n)
					r := live[id][k]
					live[id] = slices.Delete(live[id], k, k+1)
					for _, s := range stores {
						s.Update(id, r, false)
					}
					continue
				}
				r := randRow()
				live[id] = append(live[id], r)
				for _, s := range stores {
					s.Update(id, r, true)
				}
			}
		}
		step(full, want)
		snap := full.AppendState(nil, nil)
		d := row.NewDecoder(snap)
		projected := ProjectState(d, all, false, true, keep)
		if err := d.End(); err != nil {
			t.Fatalf("seed %d: reading the full state: %v", seed, err)
		}
		got := NewStore(sub, false, true)
		gd := row.NewDecoder(projected)
		got.RestoreState(gd, nil)
		if err := gd.End(); err != nil {
			t.Fatalf("seed %d: restoring the projected state: %v", seed, err)
		}
		check := func(when string) {
			t.Helper()
			if !slices.Equal(got.Keys, want.Keys) || !slices.Equal(got.Free, want.Free) {
				t.Fatalf("seed %d %s: keys %q free %v, want %q %v", seed, when, got.Keys, got.Free, want.Keys, want.Free)
			}
			for id := range int32(slots) {
				g, w := make([]row.Value, len(sub)), make([]row.Value, len(sub))
				got.Results(id, g)
				want.Results(id, w)
				if !slices.EqualFunc(g, w, sameBits) {
					t.Fatalf("seed %d %s: slot %d (keep %v): got %v, want %v", seed, when, id, keep, g, w)
				}
			}
		}
		check("after the restore")
		step(got, want)
		check("after more rows")
	}
}

// sameBits is row.Equal, a DOUBLE compared by its bits.
func sameBits(a, b row.Value) bool {
	if a.Type() == row.Double && b.Type() == row.Double {
		return math.Float64bits(a.Float64()) == math.Float64bits(b.Float64())
	}
	return row.Equal(a, b)
}

// A truncated state fails the decoder rather than projecting garbage.
func TestProjectStateTruncated(t *testing.T) {
	aggs := []AggCall{{Func: Max, Arg: 0, ArgType: optest.TBigInt}, {Func: Sum, Arg: 0, ArgType: optest.TBigInt}}
	s := NewStore(aggs, false, true)
	id := s.Alloc("k")
	s.Update(id, row.Row{row.BigIntValue(3)}, true)
	s.Update(id, row.Row{row.BigIntValue(5)}, true)
	snap := s.AppendState(nil, nil)
	d := row.NewDecoder(snap[:len(snap)-2])
	ProjectState(d, aggs, false, true, []int{1})
	if d.End() == nil {
		t.Fatal("a truncated state projected without an error")
	}
}
