package state

import (
	"cmp"
	"fmt"
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
