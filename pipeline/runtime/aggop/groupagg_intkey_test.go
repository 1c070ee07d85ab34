package aggop

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestIntKeys holds the integer-key cache to a Go map through its growth,
// over keys spread wide (near ones, far ones, the extremes) and keys that
// fill a range (the direct array), at either end of int64 too, with
// outliers; a value of another type, or NULL, is never found nor cached;
// reset forgets all.
func TestIntKeys(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    func(r *rand.Rand) int64
		direct bool // the keys end in the direct array
	}{
		{"spread", func(r *rand.Rand) int64 {
			switch r.IntN(4) {
			case 0:
				return int64(r.IntN(3000))
			case 1:
				return r.Int64() - math.MaxInt64/2
			case 2:
				return []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
			}
			return int64(r.IntN(100)) << 40 // keys apart by a power of two
		}, false},
		{"dense", func(r *rand.Rand) int64 { return 1000 + int64(r.IntN(20000)) }, true},
		{"dense, growing", func(r *rand.Rand) int64 { return -50 + int64(r.IntN(100)) + int64(r.IntN(3)*r.IntN(15000)) }, true},
		{"dense at the top", func(r *rand.Rand) int64 { return math.MaxInt64 - int64(r.IntN(20000)) }, true},
		{"dense at the bottom", func(r *rand.Rand) int64 { return math.MinInt64 + int64(r.IntN(20000)) }, true},
		{"an outlier grows the direct array's cache", func() func(r *rand.Rand) int64 {
			n := int64(0)
			return func(r *rand.Rand) int64 { // 0..767, then far ones
				if n++; n <= 768 {
					return n
				}
				return n << 40
			}
		}(), true},
		{"dense with outliers", func(r *rand.Rand) int64 {
			if r.IntN(100) == 0 {
				return r.Int64() - math.MaxInt64/2
			}
			return int64(r.IntN(20000))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			c := intKeysOf([]int{0}, nil)
			want := map[int64]int32{}
			for i := range 30000 {
				k := tc.key(r)
				got := c.find(row.BigIntValue(k))
				if s, ok := want[k]; ok != (got >= 0) || ok && s != got {
					t.Fatalf("find(%d) = %d, want %d (present %v)", k, got, s, ok)
				}
				if got < 0 {
					c.add(row.BigIntValue(k), int32(i))
					want[k] = int32(i)
				}
			}
			if c.total != len(want) {
				t.Fatalf("%d keys cached, want %d", c.total, len(want))
			}
			if direct := len(c.direct) > 0; direct != tc.direct {
				t.Fatalf("direct array %v (%d long), want %v", direct, len(c.direct), tc.direct)
			}
			for k, s := range want {
				if got := c.find(row.BigIntValue(k)); got != s {
					t.Fatalf("find(%d) = %d, want %d", k, got, s)
				}
			}
			for range 1000 { // keys not cached
				if k := tc.key(r) ^ 1<<62; c.find(row.BigIntValue(k)) != want[k]-1 && want[k] == 0 {
					t.Fatalf("find(%d) found a key never added", k)
				}
			}
			c.add(row.IntValue(7), 1)
			c.add(row.NullValue, 2)
			c.add(row.StringValue("7"), 3)
			if c.find(row.IntValue(7)) >= 0 || c.find(row.NullValue) >= 0 || c.find(row.StringValue("7")) >= 0 {
				t.Fatal("a value of another type than the column's first was cached")
			}
			c.reset()
			if c.find(row.BigIntValue(0)) >= 0 || c.total != 0 || len(c.direct) != 0 {
				t.Fatal("reset kept keys")
			}
			// After a reset the column's type is set again by the first add.
			c.add(row.IntValue(5), 9)
			if got := c.find(row.IntValue(5)); got != 9 {
				t.Fatalf("INT column: find(5) = %d, want 9", got)
			}
		})
	}
	if intKeysOf([]int{0, 1}, nil) != nil || intKeysOf(nil, nil) != nil {
		t.Fatal("a cache for a key of several columns, or none")
	}
}

// TestIntKeysFits: a batch goes to the integer cache when its first key
// that is not NULL is an integer, and to the index's passes otherwise
// (NULL keys only too).
func TestIntKeysFits(t *testing.T) {
	c := intKeysOf([]int{0}, nil)
	batch := func(vs ...row.Value) []row.Change {
		var cs []row.Change
		for _, v := range vs {
			cs = append(cs, row.Change{Kind: row.Insert, Row: row.Row{v}})
		}
		return cs
	}
	for _, tc := range []struct {
		changes []row.Change
		want    bool
	}{
		{batch(row.BigIntValue(1), row.StringValue("a")), true},
		{batch(row.NullValue, row.NullValue, row.IntValue(3)), true},
		{batch(row.StringValue("1"), row.BigIntValue(1)), false},
		{batch(row.NullValue, row.StringValue("a")), false},
		{batch(row.DoubleValue(1)), false},
		{batch(row.NullValue, row.NullValue), false},
		{nil, false},
	} {
		if got := c.fits(tc.changes, 0); got != tc.want {
			t.Errorf("fits(%v) = %v, want %v", tc.changes, got, tc.want)
		}
	}
}

// TestNthMatchesSort: the selection denseRange takes instead of a sort
// gives the sorted slice's value at every rank, over keys with and
// without repeats, and leaves none greater before it, none less after.
func TestNthMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(300)
		a := make([]int64, n)
		for i := range a {
			if trial%2 == 0 {
				a[i] = r.Int64N(int64(n)) // repeats
			} else {
				a[i] = r.Int64() - 1<<62
			}
		}
		sorted := slices.Sorted(slices.Values(a))
		k := r.IntN(n)
		b := slices.Clone(a)
		if got := nth(b, k); got != sorted[k] {
			t.Fatalf("trial %d: nth(%d) = %d, want %d", trial, k, got, sorted[k])
		}
		for i, v := range b {
			if (i < k && v > b[k]) || (i > k && v < b[k]) {
				t.Fatalf("trial %d: b[%d] = %d on the wrong side of b[%d] = %d", trial, i, v, k, b[k])
			}
		}
	}
}
