package state

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TimeSort gives back every row in (time, arrival) order, in memory or
// spilled in runs, over two sides, and Each then Add again keeps that
// order (a snapshot's round trip).
func TestTimeSortOrder(t *testing.T) {
	type in struct {
		side int
		ts   int64
		seq  int
	}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var rows []in
		ts := int64(0)
		for i := range 50 + rng.IntN(500) {
			if rng.IntN(8) == 0 {
				ts -= int64(rng.IntN(10))
			} else {
				ts += int64(rng.IntN(3))
			}
			rows = append(rows, in{side: rng.IntN(2), ts: ts, seq: i})
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, func(a, b in) int { return cmp.Compare(a.ts, b.ts) })
		for _, spill := range []int64{0, 200, 3000} {
			s := NewTimeSort()
			s.SpillAt = spill
			add := func(s *TimeSort, side int, ts int64, r row.Row) {
				if err := s.Add(side, ts, r); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range rows {
				add(s, r.side, r.ts, row.Row{row.BigIntValue(int64(r.seq)), row.StringValue(fmt.Sprint("s", r.seq))})
			}
			if spill == 200 && len(s.runs) < 2 {
				t.Fatalf("seed %d: %d runs spilled at 200 bytes", seed, len(s.runs))
			}
			// A snapshot's round trip: Each, then Add in that order.
			again := NewTimeSort()
			again.SpillAt = spill
			if err := s.Each(func(side int, ts int64, enc []byte) error {
				r, err := row.CopyRow(enc)
				if err != nil {
					return err
				}
				add(again, side, ts, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, got := range []*TimeSort{s, again} {
				if got.Len() != int64(len(rows)) {
					t.Fatalf("seed %d: Len %d, want %d", seed, got.Len(), len(rows))
				}
				var out []in
				if err := got.Drain(func(side int, ts int64, enc []byte) error {
					r, err := row.CopyRow(enc)
					if err != nil {
						return err
					}
					if r[1].Str() != fmt.Sprint("s", r[0].Int64()) {
						return fmt.Errorf("row %v", r)
					}
					out = append(out, in{side: side, ts: ts, seq: int(r[0].Int64())})
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out, want) {
					t.Fatalf("seed %d, spill at %d: got\n%v\nwant\n%v", seed, spill, out, want)
				}
				if got.Len() != 0 || got.MemBytes() != 0 {
					t.Fatalf("seed %d: Drain left %d rows, %d bytes", seed, got.Len(), got.MemBytes())
				}
			}
		}
	}
}

// Rows that come in time order (whatever their side) need no index: the
// sort holds their records alone, a few bytes a row past their encoding,
// not an entry of 24 more; the first row out of order indexes them, and
// the order given back is (time, arrival) either way, times at the
// int64 extremes too (each record holds its time as the difference from
// the one before).
func TestTimeSortInOrderNeedsNoIndex(t *testing.T) {
	type in struct {
		side int
		ts   int64
	}
	for _, tc := range []struct {
		name    string
		rows    []in
		indexed bool
	}{
		{"one side in order, ties", []in{{0, 1}, {0, 1}, {0, 5}, {0, 9}, {0, 9}}, false},
		{"two sides in order between them", []in{{0, 1}, {1, 1}, {1, 2}, {0, 3}, {1, 3}}, false},
		{"extremes in order", []in{{0, math.MinInt64}, {0, -1}, {0, 0}, {0, math.MaxInt64}}, false},
		{"one row back", []in{{0, 1}, {0, 5}, {0, 3}, {0, 5}, {0, 4}}, true},
		{"extremes out of order", []in{{0, math.MaxInt64}, {0, math.MinInt64}, {1, 0}, {0, math.MaxInt64}}, true},
		{"a join's sides in turns", []in{{0, 1}, {0, 2}, {0, 3}, {1, 1}, {1, 2}, {1, 4}, {0, 4}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewTimeSort()
			enc := 0
			for i, r := range tc.rows {
				v := row.Row{row.BigIntValue(int64(i))}
				enc += len(row.AppendRow(nil, v))
				if err := s.Add(r.side, r.ts, v); err != nil {
					t.Fatal(err)
				}
			}
			if s.indexed != tc.indexed {
				t.Fatalf("indexed %v, want %v", s.indexed, tc.indexed)
			}
			if over := s.MemBytes() - int64(enc); !tc.indexed && over > int64(len(tc.rows))*12 {
				t.Fatalf("%d bytes past the encodings of %d rows in order", over, len(tc.rows))
			}
			type out struct {
				in
				seq int64
			}
			var want []out
			for i, r := range tc.rows {
				want = append(want, out{r, int64(i)})
			}
			slices.SortStableFunc(want, func(a, b out) int { return cmp.Compare(a.ts, b.ts) })
			var got []out
			if err := s.Drain(func(side int, ts int64, enc []byte) error {
				r, err := row.CopyRow(enc)
				got = append(got, out{in{side, ts}, r[0].Int64()})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}
