package runtime

import (
	"runtime"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestOffHeapGrow grows arrays across the size where they leave the heap
// and through remaps, and checks that contents survive, new elements are
// zero and freeing returns every mapped byte.
func TestOffHeapGrow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []int // successive lengths
	}{
		{"small, heap only", []int{1, 10, 1000}},
		{"one step past the threshold", []int{offHeapMin / 8 * 3}},
		{"element by element", func() []int {
			var s []int
			for n := 1; n < offHeapMin/8*5; n += 97 {
				s = append(s, n)
			}
			return s
		}()},
		{"doubling", []int{1 << 10, 1 << 15, 1 << 16, 1 << 17, 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := &struct{ x int }{}
			h := newOffHeap(owner)
			live := offHeapLive.Load()
			var s []int64
			for _, n := range tc.steps {
				old := len(s)
				s = offHeapGrow(h, s, n)
				if len(s) != n {
					t.Fatalf("len %d, want %d", len(s), n)
				}
				for i := range old {
					if s[i] != int64(i)*7+1 {
						t.Fatalf("grow to %d: element %d = %d, want %d", n, i, s[i], int64(i)*7+1)
					}
				}
				for i := old; i < n; i++ {
					if s[i] != 0 {
						t.Fatalf("grow to %d: new element %d = %d", n, i, s[i])
					}
					s[i] = int64(i)*7 + 1
				}
			}
			big := len(s)*8 >= offHeapMin
			if mapSupported && big != (h.mapped() > 0) {
				t.Fatalf("%d bytes, %d mapped", len(s)*8, h.mapped())
			}
			if got := offHeapLive.Load() - live; got != int64(h.mapped()) {
				t.Fatalf("live counter moved %d, owner maps %d", got, h.mapped())
			}
			offHeapFree(h, s)
			if h.mapped() != 0 || offHeapLive.Load() != live {
				t.Fatalf("after free: %d mapped, live %d, want %d", h.mapped(), offHeapLive.Load(), live)
			}
			runtime.KeepAlive(owner)
		})
	}
}

// TestOffHeapCleanup: an owner that becomes garbage gives its mappings
// back without a call, as an operator dropped after its run does.
func TestOffHeapCleanup(t *testing.T) {
	if !mapSupported {
		t.Skip("no mappings on this platform")
	}
	live := offHeapLive.Load()
	func() {
		g := NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}}, GroupAggOptions{InsertOnly: true})
		b := groupBatch(100_000)
		if err := g.Process(b, &discard{}); err != nil {
			t.Fatal(err)
		}
		if offHeapLive.Load() <= live {
			t.Fatalf("100k groups mapped nothing")
		}
	}()
	// Cleanups run on their own goroutine after a collection: collect
	// and yield until they did, within a bound.
	for i := 0; offHeapLive.Load() > live; i++ {
		if i == 1000 {
			t.Fatalf("%d bytes still mapped after the operator became garbage", offHeapLive.Load()-live)
		}
		runtime.GC()
		runtime.Gosched()
	}
}

// TestRestoreReleases: Restore gives back the memory of the state it
// replaces, so restoring again and again maps no more.
func TestRestoreReleases(t *testing.T) {
	if !mapSupported {
		t.Skip("no mappings on this platform")
	}
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Max, Arg: 0, ArgType: tBigInt}}
	g := NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: true})
	d := NewDistinct()
	for _, tc := range []struct {
		name string
		op   interface {
			Operator
			Snapshotter
			StateEntries() int64
		}
		mapped func() int
	}{
		{"group aggregate", g, func() int { return g.st.mem.mapped() + g.index.mem.mapped() }},
		{"distinct", d, func() int { return d.seen.mem.mapped() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op.Process(groupBatch(100_000), &discard{}); err != nil {
				t.Fatal(err)
			}
			state, err := tc.op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			var once int
			for i := range 3 {
				if err := tc.op.Restore(state); err != nil {
					t.Fatal(err)
				}
				m := tc.mapped()
				if i == 0 {
					once = m
				} else if m != once {
					t.Fatalf("restore %d: %d bytes mapped, %d after the first", i, m, once)
				}
			}
			if once == 0 {
				t.Fatal("100k keys mapped nothing")
			}
			again, err := tc.op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(state) {
				t.Fatal("snapshot after restores differs")
			}
			if n := tc.op.StateEntries(); n != 100_000 {
				t.Fatalf("%d entries, want 100000", n)
			}
		})
	}
}

// groupBatch is n inserts of one BIGINT key each.
func groupBatch(n int) *row.Batch {
	b := row.NewBatch(n, 1)
	for i := range n {
		r := b.NewRow()
		r[0] = row.BigIntValue(int64(i))
		b.Append(row.Insert, r)
	}
	return b
}
