package aggop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// keysRow is [STRING key, BIGINT key, BIGINT value]: strings of 0 to 40
// bytes (in the key table's entry and in its arena), some prefixes of
// others, now and then NULL; the BIGINT now and then NULL.
func keysRow(rnd *rand.Rand, keys int) row.Row {
	k := rnd.IntN(keys)
	s := row.StringValue(strings.Repeat("x", k%41) + fmt.Sprint(k/41))
	switch rnd.IntN(16) {
	case 0:
		s = row.NullValue
	case 1:
		s = row.StringValue("")
	}
	n := row.BigIntValue(int64(k % 7))
	if rnd.IntN(16) == 0 {
		n = row.NullValue
	}
	return row.Row{s, n, row.BigIntValue(rnd.Int64N(100))}
}

func keysAggs() []AggCall {
	return []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: Max, Arg: 2, ArgType: optest.TBigInt}}
}

// TestGroupAggStringKeysMatchRows: a STRING key and two-column keys of
// mixed types (either order) in batch mode and with mini-batch: the
// passes give the row by row fold's output and state, also when the
// operator is snapshot halfway and restored into a new one, which then
// takes the rest.
func TestGroupAggStringKeysMatchRows(t *testing.T) {
	for _, keys := range [][]int{{0}, {0, 1}, {1, 0}} {
		for _, opt := range []GroupAggOptions{{Batch: true, InsertOnly: true}, {MiniBatch: true, InsertOnly: true}} {
			t.Run(fmt.Sprintf("%v batch=%v", keys, opt.Batch), func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(7, uint64(len(keys))))
				fast, slow := optest.Must(NewGroupAgg(keys, keysAggs(), opt)), optest.Must(NewGroupAgg(keys, keysAggs(), opt))
				slow.RowByRow = true
				if !fast.Vectorized() || slow.Vectorized() {
					t.Fatal("paths not as set up")
				}
				emitted := 0
				for i, size := range []int{1, 7, 300, 1024, 0, 2000, 64, 5000, 3} {
					if i == 4 { // halfway: the passes go on in a restored operator
						snap, err := fast.Snapshot()
						if err != nil {
							t.Fatal(err)
						}
						fast = optest.Must(NewGroupAgg(keys, keysAggs(), opt))
						if err := fast.Restore(snap); err != nil {
							t.Fatal(err)
						}
					}
					b := &row.Batch{}
					for range size {
						b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: keysRow(rnd, 4000)})
					}
					fo, so := &optest.Out{}, &optest.Out{}
					if err := fast.Process(b, fo); err != nil {
						t.Fatal(err)
					}
					if err := slow.Process(b, so); err != nil {
						t.Fatal(err)
					}
					if opt.MiniBatch {
						if err := fast.Flush(fo); err != nil {
							t.Fatal(err)
						}
						if err := slow.Flush(so); err != nil {
							t.Fatal(err)
						}
					}
					if !slices.Equal(fo.Lines, so.Lines) {
						t.Fatalf("batch %d: outputs differ:\npasses     %v\nrow by row %v", i, fo.Lines, so.Lines)
					}
					emitted += len(fo.Lines)
				}
				if opt.MiniBatch && emitted == 0 {
					t.Fatal("the mini-batches emitted nothing")
				}
				if fast.Groups() < 1000 {
					t.Fatalf("%d groups: the test's keys do not spread", fast.Groups())
				}
				if opt.Batch {
					compareGroupAggs(t, fast, slow)
					return
				}
				fs, err := fast.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				ss, err := slow.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(fs, ss) {
					t.Fatalf("snapshots differ: %d bytes in passes, %d row by row", len(fs), len(ss))
				}
			})
		}
	}
}

// TestGroupAggCollidingKeys: keys whose hashes in the key index are
// equal (found by trying many) are each their own group, whichever comes
// first in a batch and however many times: COUNT(*) and SUM per key
// equal a Go map's.
func TestGroupAggCollidingKeys(t *testing.T) {
	for _, keys := range [][]int{{0}, {0, 1}} {
		g := optest.Must(NewGroupAgg(keys, keysAggs(), GroupAggOptions{Batch: true, InsertOnly: true}))
		rowOf := func(i int) row.Row {
			return row.Row{row.StringValue(fmt.Sprintf("key-%d", i)), row.BigIntValue(int64(i % 3)), row.BigIntValue(int64(i))}
		}
		byHash := map[uint32][]int{}
		var colliding [][]int
		for i := 0; len(colliding) < 8 && i < 1<<21; i++ {
			h := g.index.Hash(g.appendKey(nil, rowOf(i)))
			byHash[h] = append(byHash[h], i)
			if len(byHash[h]) == 2 {
				colliding = append(colliding, byHash[h])
			}
		}
		if len(colliding) < 8 {
			t.Fatalf("%d colliding pairs found", len(colliding))
		}
		rnd := rand.New(rand.NewPCG(1, 1))
		type acc struct{ n, sum int64 }
		want := map[string]acc{}
		for range 20 {
			b := &row.Batch{}
			for range 100 {
				pair := colliding[rnd.IntN(len(colliding))]
				r := rowOf(pair[rnd.IntN(2)])
				b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
				a := want[r[0].String()]
				want[r[0].String()] = acc{a.n + 1, a.sum + r[2].Int64()}
			}
			if err := g.Process(b, &optest.Out{}); err != nil {
				t.Fatal(err)
			}
		}
		out := &optest.Out{}
		if err := g.Finish(out); err != nil {
			t.Fatal(err)
		}
		if len(out.Rows) != len(want) {
			t.Fatalf("keys %v: %d groups, want %d", keys, len(out.Rows), len(want))
		}
		for _, c := range out.Rows {
			r := c.Row
			a := want[r[0].String()]
			if n, sum := r[len(keys)].Int64(), r[len(keys)+1].Int64(); n != a.n || sum != a.sum {
				t.Fatalf("keys %v: group %v: COUNT %d SUM %d, want %d %d", keys, r, n, sum, a.n, a.sum)
			}
		}
	}
}
