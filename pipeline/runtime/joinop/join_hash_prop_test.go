package joinop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// hashKeyShape is a join key the probe table takes one way or another:
// a single integer-like column (its slots hold the value), a STRING, or
// a composite key (both found through the shared index).
type hashKeyShape struct {
	name  string
	types []row.TypeID // the rows' columns: key columns first, then v
	keys  []int
	// key makes a key column's value, one of few so that keys repeat
	// on both sides; with odd it may make a value of another type than
	// the column's (as a widened column's restored rows carry), which
	// the probe table does not take: on the right side that makes it
	// find an integer key through the index, on the left the change
	// takes Join.change.
	key func(rng *rand.Rand, col int, odd bool) row.Value
}

var hashKeyShapes = []hashKeyShape{
	{name: "bigint", types: []row.TypeID{row.BigInt, row.BigInt}, keys: []int{0}, key: func(rng *rand.Rand, _ int, odd bool) row.Value {
		if odd && rng.IntN(25) == 0 {
			return row.IntValue(int32(rng.IntN(5))) // an INT in a BIGINT column: another key
		}
		return row.BigIntValue(int64(rng.IntN(6)) - 1) // -1 and 0 too: 0 is an empty slot's key
	}},
	{name: "string", types: []row.TypeID{row.String, row.BigInt}, keys: []int{0}, key: func(rng *rand.Rand, _ int, _ bool) row.Value {
		return row.StringValue(fmt.Sprintf("k%d", rng.IntN(6)))
	}},
	{name: "composite", types: []row.TypeID{row.String, row.BigInt, row.BigInt}, keys: []int{0, 1}, key: func(rng *rand.Rand, col int, _ bool) row.Value {
		if col == 0 {
			return row.StringValue(string(rune('a' + rng.IntN(3))))
		}
		return row.BigIntValue(int64(rng.IntN(3)))
	}},
}

// hashStream is a random batch join's input as the union passes it on:
// the right changes (retractions too, unless rightInsertOnly), then the
// left inserts, in batches of 1 to 40 changes; self makes the left rows
// the right ones again (a self-join), in other batches; oddRight lets
// the right side have key values of another type than their column's
// (the left side always may).
func hashStream(rng *rand.Rand, ks hashKeyShape, rightInsertOnly, self, oddRight bool) (right, left []*row.Batch) {
	width := len(ks.types)
	odd := oddRight
	mk := func(i int) row.Row {
		r := make(row.Row, width)
		for c := range width {
			switch {
			case c >= len(ks.keys):
				r[c] = row.BigIntValue(int64(i % 5))
			case rng.IntN(10) == 0:
				r[c] = row.NullValue
			default:
				r[c] = ks.key(rng, c, odd)
			}
		}
		return r
	}
	batches := func(cs []row.Change) []*row.Batch {
		var out []*row.Batch
		for len(cs) > 0 {
			n := min(len(cs), 1+rng.IntN(40))
			out = append(out, &row.Batch{Changes: cs[:n:n]})
			cs = cs[n:]
		}
		return out
	}
	var rcs []row.Change
	var live []row.Row
	for i := range 20 + rng.IntN(200) {
		if !rightInsertOnly && len(live) > 0 && rng.IntN(4) == 0 {
			j := rng.IntN(len(live))
			rcs = append(rcs, row.Change{Kind: row.Delete, Row: live[j]})
			live = slices.Delete(live, j, j+1)
			continue
		}
		r := mk(i)
		if len(live) > 0 && rng.IntN(6) == 0 {
			r = live[rng.IntN(len(live))].Clone() // a duplicate row
		}
		live = append(live, r)
		rcs = append(rcs, row.Change{Kind: row.Insert, Row: r})
	}
	var lcs []row.Change
	odd = true
	if self {
		for _, r := range live {
			lcs = append(lcs, row.Change{Kind: row.Insert, Row: r})
		}
	} else {
		for i := range 50 + rng.IntN(400) {
			lcs = append(lcs, row.Change{Kind: row.Insert, Row: mk(i)})
		}
	}
	return batches(rcs), batches(lcs)
}

// TestHashTableMatchesHeldBatchJoin runs random inputs through each
// kind of batch join twice: as the hash join whose left batches probe
// its probe table (join_hash.go) and as the batch join that holds the
// left rows to the end. Keys of one integer column, of a STRING and of
// two columns; NULL keys, values of another type in the key column,
// duplicates on both sides, a right side with retractions or
// insert-only, a residual or none, a self-join. The changes must be
// the same in the same order, the final table the model's where there
// is one, and the probe table must have been used for the kinds it
// serves.
func TestHashTableMatchesHeldBatchJoin(t *testing.T) {
	for _, ks := range hashKeyShapes {
		for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin} {
			for seed := range uint64(8) {
				rightInsertOnly, residual, self := seed%2 == 0, seed%4 < 2, seed%3 == 2
				name := fmt.Sprintf("%s/%s/rightInsertOnly=%v/residual=%v/self=%v/%d", ks.name, kind, rightInsertOnly, residual, self, seed)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(seed, 3500))
					right, left := hashStream(rng, ks, rightInsertOnly, self, seed == 7)
					w := len(ks.types)
					spec := JoinSpec{Kind: kind, LeftKeys: ks.keys, RightKeys: ks.keys, LeftWidth: w, RightWidth: w,
						LeftTypes: ks.types, RightTypes: ks.types, Batch: true, LeftAppendOnly: true, RightAppendOnly: rightInsertOnly}
					if residual {
						spec.Residual = func(r row.Row) (bool, error) { return r[w-1].Int64() <= r[2*w-1].Int64(), nil }
					}
					held := NewJoin(spec)
					spec.RightFirst = true
					// Some runs emit some columns only (JoinSpec.Output):
					// the held join's rows are projected by the test.
					var output []int
					if seed%4 == 1 || seed%4 == 2 {
						output = []int{2*w - 1, 0, w - 1} // with a residual
						if seed%4 == 2 {
							output = []int{w, w - 1, 0, w} // without
						}
						spec.Output = output
					}
					hash := NewJoin(spec)
					var got joinCollector
					want := projectCollector{cols: output}
					if kind == SemiJoin || kind == AntiJoin {
						want.cols = nil
					}
					for side, bs := range [][]*row.Batch{right, left} {
						for _, b := range bs {
							if err := held.ProcessInput(1-side, b, &want); err != nil {
								t.Fatal(err)
							}
							if err := hash.ProcessInput(1-side, b, &got); err != nil {
								t.Fatal(err)
							}
						}
					}
					used := hash.hash != nil
					serves := kind != RightJoin && kind != FullJoin
					if intKey := used && hash.hash.intKey; intKey != (serves && ks.name == "bigint" && seed != 7) {
						t.Errorf("integer probe table: %v", intKey)
					}
					if err := held.Finish(&want); err != nil {
						t.Fatal(err)
					}
					if err := hash.Finish(&got); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.got, want.got) {
						t.Fatalf("the hash join emits other changes than the held batch join:\n got %q\nwant %q", got.got, want.got)
					}
					if len(got.got) == 0 {
						t.Fatal("no output: the case checks nothing")
					}
					if used != serves {
						t.Errorf("probe table used: %v, want %v", used, serves)
					}
					if !residual && output == nil {
						var stream []sideChange
						for side, bs := range [][]*row.Batch{right, left} {
							for _, b := range bs {
								for _, c := range b.Changes {
									stream = append(stream, sideChange{1 - side, c})
								}
							}
						}
						if table, model := optest.FoldChanges(t, got.got), modelJoinKeys(kind, stream, ks.keys, w); !slices.Equal(table, model) {
							t.Fatalf("final table differs from the model:\n got %q\nwant %q", table, model)
						}
					}
				})
			}
		}
	}
}

// projectCollector collects the changes emitted to it with their rows
// projected to the columns cols (all with cols nil).
type projectCollector struct {
	joinCollector
	cols []int
}

func (c *projectCollector) Emit(k row.Kind, r row.Row) {
	if c.cols != nil {
		pr := make(row.Row, len(c.cols))
		for i, col := range c.cols {
			pr[i] = r[col]
		}
		r = pr
	}
	c.joinCollector.Emit(k, r)
}

// modelJoinKeys is the final table of a join of the final multisets of
// stream's two sides on the key columns keys (= on each: NULL matches
// nothing; values equal as row.KeyOf encodes them), the rows printed as
// optest.FoldChanges prints them.
func modelJoinKeys(kind JoinKind, stream []sideChange, keys []int, w int) []string {
	var sides [2][]row.Row
	for _, s := range stream {
		if s.c.Kind.IsAdd() {
			sides[s.side] = append(sides[s.side], s.c.Row)
			continue
		}
		i := slices.IndexFunc(sides[s.side], func(r row.Row) bool { return slices.EqualFunc(r, s.c.Row, row.Equal) })
		sides[s.side] = slices.Delete(sides[s.side], i, i+1)
	}
	match := func(l, r row.Row) bool {
		var kl, kr []byte
		for _, k := range keys {
			if l[k].IsNull() || r[k].IsNull() {
				return false
			}
		}
		return string(row.KeyOf(kl, l, keys)) == string(row.KeyOf(kr, r, keys))
	}
	var out []string
	add := func(r row.Row) { out = append(out, row.Change{Kind: row.Insert, Row: r}.String()[2:]) }
	matchedR := make([]bool, len(sides[1]))
	for _, l := range sides[0] {
		n := 0
		for i, r := range sides[1] {
			if match(l, r) {
				n++
				matchedR[i] = true
				if kind != SemiJoin && kind != AntiJoin {
					add(append(slices.Clone(l), r...))
				}
			}
		}
		switch {
		case kind == SemiJoin && n > 0, kind == AntiJoin && n == 0:
			add(l)
		case n == 0 && (kind == LeftJoin || kind == FullJoin):
			add(append(slices.Clone(l), make(row.Row, w)...))
		}
	}
	if kind == RightJoin || kind == FullJoin {
		for i, r := range sides[1] {
			if !matchedR[i] {
				add(append(make(row.Row, w), r...))
			}
		}
	}
	slices.Sort(out)
	return out
}
