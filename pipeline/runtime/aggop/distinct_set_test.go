package aggop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// setAggs are DISTINCT aggregates sharing sets: five over column 0
// (BIGINT, a set of words) with and without FILTERs, two over column 1
// (STRING, a set of Values), one over column 4 (DOUBLE); a LISTAGG
// DISTINCT keeps a map of its own. Columns 2 and 3 are BOOLEAN filters.
var setAggs = []AggCall{
	{Func: CountDistinct, Arg: 0, ArgType: optest.TBigInt},
	{Func: CountDistinct, Arg: 0, ArgType: optest.TBigInt, HasFilter: true, Filter: 2},
	{Func: CountDistinct, Arg: 0, ArgType: optest.TBigInt, HasFilter: true, Filter: 3},
	{Func: Sum, Arg: 0, ArgType: optest.TBigInt, Distinct: true, HasFilter: true, Filter: 2},
	{Func: Max, Arg: 0, ArgType: optest.TBigInt, Distinct: true, HasFilter: true, Filter: 3},
	{Func: Count, Arg: 0, ArgType: optest.TBigInt},
	{Func: CountDistinct, Arg: 1, ArgType: optest.TString, HasFilter: true, Filter: 3},
	{Func: CountDistinct, Arg: 1, ArgType: optest.TString},
	{Func: AvgDistinct, Arg: 4, ArgType: optest.TDouble},
	{Func: ListAgg, Arg: 1, ArgType: optest.TString, Sep: ",", Distinct: true},
}

// setRow is a row over setAggs' columns from rnd, its BIGINT one of
// spread values.
func setRow(rnd *rand.Rand, spread int64) row.Row {
	x := rnd.Int64N(spread) - 2
	r := row.Row{row.BigIntValue(x), row.StringValue(fmt.Sprint("s", x%4)), row.BoolValue(rnd.IntN(3) > 0),
		row.BoolValue(rnd.IntN(2) > 0), row.DoubleValue(float64(x) / 4)}
	if rnd.IntN(7) == 0 {
		r[rnd.IntN(5)] = row.NullValue
	}
	return r
}

// distinctModel is one group's DISTINCT aggregates as maps of signed
// counts, one per aggregate: a value is present while its count is > 0.
type distinctModel []map[row.Value]int64

func (m distinctModel) update(r row.Row, add bool) {
	for i, c := range setAggs {
		if !c.distinct() || c.Func == ListAgg {
			continue
		}
		if c.HasFilter && (r[c.Filter].IsNull() || !r[c.Filter].Bool()) || r[c.Arg].IsNull() {
			continue
		}
		if m[i] == nil {
			m[i] = map[row.Value]int64{}
		}
		if add {
			m[i][r[c.Arg]]++
		} else {
			m[i][r[c.Arg]]--
		}
	}
}

// check compares the store's results for slot id with the model's.
func (m distinctModel) check(t *testing.T, st *Store, id int32, what string) {
	t.Helper()
	got := make([]row.Value, len(setAggs))
	st.Results(id, got)
	for i, c := range setAggs {
		if !c.distinct() || c.Func == ListAgg {
			continue
		}
		var n int64
		var sum float64
		var best row.Value
		for v, k := range m[i] {
			if k <= 0 {
				continue
			}
			n++
			if v.Type() == row.Double {
				sum += v.Float64()
			} else {
				sum += float64(v.Int64())
			}
			if best.IsNull() || row.Compare(v, best) > 0 {
				best = v
			}
		}
		var want row.Value
		switch c.Func {
		case CountDistinct:
			want = row.BigIntValue(n)
		case Sum:
			if n > 0 {
				want = row.BigIntValue(int64(sum))
			}
		case Max:
			want = best
		case AvgDistinct:
			if n > 0 {
				want = row.DoubleValue(sum / float64(n))
			}
		}
		g := got[i]
		if g.Type() == row.Double && want.Type() == row.Double && math.Abs(g.Float64()-want.Float64()) < 1e-9 {
			continue
		}
		if !row.Equal(g, want) {
			t.Fatalf("%s: %s = %s, want %s", what, c, g, want)
		}
	}
}

// TestDistinctSetsMatchModel: random inserts, retractions (some before
// their accumulation) and snapshots of a store whose DISTINCT aggregates
// share sets give each aggregate what a map of its own gives. Over 9
// values the word sets stay small; over 700 they grow several times and,
// with retractions, delete values from long probe runs.
func TestDistinctSetsMatchModel(t *testing.T) {
	for _, c := range []struct {
		insertOnly bool
		spread     int64
	}{{true, 9}, {false, 9}, {true, 700}, {false, 700}} {
		insertOnly := c.insertOnly
		rnd := rand.New(rand.NewPCG(5, uint64(c.spread)))
		st := NewStore(setAggs, insertOnly, false)
		if len(st.sets) != 3 || len(st.sets[0].members) != 5 || !st.sets[0].word || st.sets[1].word {
			t.Fatalf("sets %+v, want 3: five aggregates over column 0 (words), two over column 1, one over column 4", st.sets)
		}
		ids := []int32{st.Alloc(""), st.Alloc("")}
		models := []distinctModel{make(distinctModel, len(setAggs)), make(distinctModel, len(setAggs))}
		var live [2][]row.Row
		for step := range 3000 {
			g := rnd.IntN(2)
			add := true
			r := setRow(rnd, c.spread)
			if !insertOnly && rnd.IntN(3) == 0 {
				add = false
				if n := len(live[g]); n > 0 && rnd.IntN(10) > 0 {
					j := rnd.IntN(n)
					r = live[g][j]
					live[g] = append(live[g][:j], live[g][j+1:]...)
				} // else a retraction before its accumulation
			} else {
				live[g] = append(live[g], r)
			}
			if err := st.Check(r); err != nil {
				t.Fatal(err)
			}
			st.Update(ids[g], r, add)
			models[g].update(r, add)
			what := fmt.Sprintf("insertOnly=%v spread %d step %d", insertOnly, c.spread, step)
			models[g].check(t, st, ids[g], what)
			if step%500 == 499 {
				// A snapshot restores into a new store with the same
				// results, which goes on from there.
				snap := st.AppendState(nil, nil)
				st = NewStore(setAggs, insertOnly, false)
				d := row.NewDecoder(snap)
				st.RestoreState(d, nil)
				if err := d.End(); err != nil {
					t.Fatalf("%s: restore: %v", what, err)
				}
				for k := range ids {
					models[k].check(t, st, ids[k], what+" restored")
				}
			}
		}
	}
}

// TestDistinctSetsMerge: window slices merged equal one slot fed every
// row, for the aggregates sharing sets.
func TestDistinctSetsMerge(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		st := NewStore(setAggs, true, true)
		a, b, all := st.Alloc("a"), st.Alloc("b"), st.Alloc("all")
		m := make(distinctModel, len(setAggs))
		for i := range 1 + trial%20 {
			r := setRow(rnd, 9)
			st.Update(all, r, true)
			m.update(r, true)
			if i%2 == 0 {
				st.Update(a, r, true)
			} else {
				st.Update(b, r, true)
			}
		}
		st.Merge(a, b)
		m.check(t, st, a, fmt.Sprintf("trial %d merged", trial))
		m.check(t, st, all, fmt.Sprintf("trial %d fed once", trial))
	}
}

// compatRows is the fixed input of the checkpoint written before the
// sets (testdata/distinct_maps.snap): group i%3, a retraction of row
// i-7 at every fifth row.
func compatRows() (rows []row.Row, groups []int, adds []bool) {
	rnd := rand.New(rand.NewPCG(11, 12))
	for i := range 400 {
		rows, groups, adds = append(rows, setRow(rnd, 9)), append(groups, i%3), append(adds, true)
		if i%5 == 4 && i >= 10 {
			rows, groups, adds = append(rows, rows[len(rows)-8]), append(groups, groups[len(groups)-8]), append(adds, false)
		}
	}
	return rows, groups, adds
}

// TestDistinctSetsRestoreMapsCheckpoint: a checkpoint of a store from
// before the sets (a map per DISTINCT aggregate, written by main at
// 9c18bf37 from compatRows, with retractions) restores into sets with
// the results of a store fed the same rows, and goes on as it does.
func TestDistinctSetsRestoreMapsCheckpoint(t *testing.T) {
	snap, err := os.ReadFile("testdata/distinct_maps.snap")
	if err != nil {
		t.Fatal(err)
	}
	rows, groups, adds := compatRows()
	fed := NewStore(setAggs, false, false)
	models := make([]distinctModel, 3)
	for g := range models {
		fed.Alloc("")
		models[g] = make(distinctModel, len(setAggs))
	}
	for i, r := range rows {
		fed.Update(int32(groups[i]), r, adds[i])
		models[groups[i]].update(r, adds[i])
	}
	st := NewStore(setAggs, false, false)
	d := row.NewDecoder(snap)
	st.RestoreState(d, nil)
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	got, want := make([]row.Value, len(setAggs)), make([]row.Value, len(setAggs))
	for g := range models {
		models[g].check(t, st, int32(g), fmt.Sprintf("group %d restored", g))
		st.Results(int32(g), got)
		fed.Results(int32(g), want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("group %d restored %v, fed %v", g, got, want)
		}
	}
	// Retracting every row again empties every set.
	for i, r := range rows {
		st.Update(int32(groups[i]), r, !adds[i])
		models[groups[i]].update(r, !adds[i])
	}
	for g := range models {
		models[g].check(t, st, int32(g), fmt.Sprintf("group %d retracted", g))
	}
	st.Results(0, got)
	if got[0].Int64() != 0 || got[7].Int64() != 0 {
		t.Fatalf("after every row retracted: %v", got)
	}
}

// TestDistinctSetsRestoreSetsCheckpoint: checkpoints written by main at
// f3285e58 (STRING values in a Go map per group) from compatRows, over
// inserts only (bits; the retractions left out) and with retractions
// (counts), restore into this store's sets with the results of a store
// fed the same rows, go on as it does with the same rows again, and
// write a checkpoint that restores to the same results.
func TestDistinctSetsRestoreSetsCheckpoint(t *testing.T) {
	rows, groups, adds := compatRows()
	for _, insertOnly := range []bool{true, false} {
		name := "testdata/distinct_sets_retract.snap"
		if insertOnly {
			name = "testdata/distinct_sets_insert.snap"
		}
		snap, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fed := NewStore(setAggs, insertOnly, false)
		for range 3 {
			fed.Alloc("")
		}
		feed := func(st *Store, ms []distinctModel) {
			for i, r := range rows {
				if insertOnly && !adds[i] {
					continue
				}
				st.Update(int32(groups[i]), r, adds[i])
				if ms != nil {
					ms[groups[i]].update(r, adds[i])
				}
			}
		}
		models := make([]distinctModel, 3)
		for g := range models {
			models[g] = make(distinctModel, len(setAggs))
		}
		feed(fed, models)
		restore := func(snap []byte) *Store {
			st := NewStore(setAggs, insertOnly, false)
			d := row.NewDecoder(snap)
			st.RestoreState(d, nil)
			if err := d.End(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return st
		}
		st := restore(snap)
		if g := &st.sets[1]; !g.str || st.strSet(0, g).n == 0 {
			t.Fatalf("%s: the STRING values not restored into a string set: %+v", name, g)
		}
		same := func(what string) {
			got, want := make([]row.Value, len(setAggs)), make([]row.Value, len(setAggs))
			for g := range models {
				models[g].check(t, st, int32(g), fmt.Sprintf("%s: group %d %s", name, g, what))
				st.Results(int32(g), got)
				fed.Results(int32(g), want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: group %d %s %v, fed %v", name, g, what, got, want)
				}
			}
		}
		same("restored")
		feed(st, models)
		feed(fed, nil)
		same("fed again")
		st = restore(st.AppendState(nil, nil))
		same("restored again")
	}
}
