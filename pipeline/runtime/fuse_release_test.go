package runtime

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestSlabPool: a slab given back is the next one handed out; a full
// pool drops what it is given; a kept slab too small is not handed out.
func TestSlabPool(t *testing.T) {
	p := newSlabPool()
	a := p.get(8)
	p.put(a)
	if b := p.get(8); &b[0] != &a[0] {
		t.Fatal("a slab given back was not reused")
	}
	for range slabsKept + 10 {
		p.put(make([]row.Value, 4))
	}
	if n := len(p.free); n != slabsKept {
		t.Fatalf("the pool keeps %d slabs, want %d", n, slabsKept)
	}
	if b := p.get(16); len(b) != 16 {
		t.Fatalf("get(16) = %d values", len(b))
	}
}

// TestRelease: release by the node a batch was given to gives a mapped
// batch's slabs back once, and the source's own batch to its recycler
// once; by another node, or of any other batch, it does nothing.
func TestRelease(t *testing.T) {
	p := newSlabPool()
	var reader, stranger Node
	slab := make([]row.Value, 4)
	b := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: slab[:2]}}}
	b.Origin = &fusedOrigin{slabs: [][]row.Value{slab}, pool: p, by: &reader}
	release(b, &stranger)
	if len(p.free) != 0 || b.Len() != 1 {
		t.Fatal("a node the batch was not given to released it")
	}
	release(b, &reader)
	release(b, &reader)
	if n := len(p.free); n != 1 {
		t.Fatalf("%d slabs given back, want 1", n)
	}
	if b.Changes != nil {
		t.Error("a released batch still shows its rows")
	}

	var recycled []*row.Batch
	own := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(1)}}}}
	own.Origin = &fusedOrigin{same: true, recycle: func(b *row.Batch) { recycled = append(recycled, b) }, by: &reader}
	release(own, &reader)
	release(own, &reader)
	if len(recycled) != 1 || recycled[0] != own {
		t.Fatalf("recycled %v, want the batch once", recycled)
	}

	other := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(1)}}}}
	release(other, &reader)
	if other.Len() != 1 {
		t.Error("release touched a batch no fusion made")
	}
}

// TestGroupAggReleasesInput: only the vectorized passes, which keep no
// row, let their input go; row by row a retraction keeps the row that
// emptied its key.
func TestGroupAggReleasesInput(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Max, Arg: 1, ArgType: optest.TBigInt}}
	cases := []struct {
		name string
		opt  aggop.GroupAggOptions
		want bool
	}{
		{"batch", aggop.GroupAggOptions{Batch: true, InsertOnly: true}, true},
		{"mini-batch over inserts", aggop.GroupAggOptions{InsertOnly: true, MiniBatch: true}, true},
		{"mini-batch over updates", aggop.GroupAggOptions{MiniBatch: true}, false},
		{"streaming row by row", aggop.GroupAggOptions{InsertOnly: true}, false},
	}
	for _, tc := range cases {
		if got := optest.Must(aggop.NewGroupAgg([]int{0}, aggs, tc.opt)).ReleasesInput(); got != tc.want {
			t.Errorf("%s: ReleasesInput() = %v, want %v", tc.name, got, tc.want)
		}
	}
	g := optest.Must(aggop.NewGroupAgg([]int{0}, aggs, aggop.GroupAggOptions{Batch: true, InsertOnly: true}))
	g.RowByRow = true
	if g.ReleasesInput() {
		t.Error("row by row (rowByRow) releases its input")
	}
}

// TestSlabRowsOnly: carved rows and a fusion's mapped rows are slabs of
// values alone (an operator that copies its input's values may give them
// back); a source's own batch that a fusion passes on, which its
// recycler takes back with its text, and a batch of parts are not.
func TestSlabRowsOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		origin row.Origin
		want   bool
	}{
		{"carved", &slabOrigin{}, true},
		{"mapped", &fusedOrigin{pool: newSlabPool()}, true},
		{"the source's own", &fusedOrigin{same: true, recycle: func(*row.Batch) {}}, false},
		{"recycled", &fusedOrigin{recycle: func(*row.Batch) {}}, false},
		{"parts", &fusedOrigin{parts: []*row.Batch{{}}}, false},
		{"derived", &derivedOrigin{}, false},
	} {
		if got := operator.SlabRowsOnly(&row.Batch{Origin: tc.origin}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
