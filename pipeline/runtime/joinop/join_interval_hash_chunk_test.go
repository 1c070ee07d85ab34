package joinop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The batch interval hash join's rows, held in chunks a few rows and
// bytes long (many chunks, rows whose encoding does not fit the rest of
// a chunk), give the rows and snapshots they give in chunks of the
// default sizes: inner and left joins, self-joins, whole and narrowed
// rows, restored midway.
func TestIntervalHashJoinChunks(t *testing.T) {
	const sec = int64(1_000_000)
	types := []row.TypeID{row.BigInt, row.String, row.Timestamp}
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 3))
		spec := IntervalJoinSpec{Kind: []JoinKind{InnerJoin, LeftJoin}[seed%2], LeftKeys: []int{int(seed / 2 % 2)}, RightKeys: []int{int(seed / 2 % 2)},
			LeftWidth: 3, RightWidth: 3, LeftTypes: types, RightTypes: types, LeftTime: 2, RightTime: 2, Lower: -2 * sec, Upper: sec, Sorted: true}
		if seed%3 != 0 {
			spec.Output = []int{4, 0}
		}
		self := seed%4 >= 2
		var rows [2][]row.Row
		for side := range rows {
			for i := range 60 + rng.IntN(60) {
				k := row.BigIntValue(int64(rng.IntN(6)))
				if rng.IntN(12) == 0 {
					k = row.NullValue
				}
				rows[side] = append(rows[side], row.Row{k, row.StringValue(fmt.Sprintf("s%d-%d", side, i%7) + string(make([]byte, rng.IntN(20)))),
					row.TimestampValue(int64(rng.IntN(40)) * sec / 2)})
			}
		}
		if self {
			rows[1] = rows[0]
		}
		run := func(shift, chunk int) ([]string, []byte) {
			defer func(s, c int) { ihRowsShift, ihChunk = s, c }(ihRowsShift, ihChunk)
			ihRowsShift, ihChunk = shift, chunk
			build := func() *IntervalHashJoin {
				j := NewIntervalHashJoin(spec, NewIntervalJoin(spec))
				if self {
					j.SetSameInputs()
				}
				return j
			}
			j := build()
			var out rowsCollector
			var snap []byte
			half := len(rows[0]) / 2
			feed := func(from, to int) {
				for side := range rows {
					end := to
					if side == 1 && !self {
						end = min(len(rows[1]), to*len(rows[1])/len(rows[0]))
						from = min(from*len(rows[1])/len(rows[0]), end)
					}
					var b row.Batch
					for _, r := range rows[side][from:end] {
						b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
					}
					if err := j.ProcessInput(side, &b, &out); err != nil {
						t.Fatal(err)
					}
				}
			}
			feed(0, half)
			snap, err := j.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			j = build()
			if err := j.Restore(snap); err != nil {
				t.Fatal(err)
			}
			feed(half, len(rows[0]))
			if err := j.Watermark(operator.MaxWatermark, &out); err != nil {
				t.Fatal(err)
			}
			slices.Sort(out.got)
			return out.got, snap
		}
		want, wantSnap := run(ihRowsShift, ihChunk)
		got, gotSnap := run(2, 16)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: in small chunks\ngot  %q\nwant %q", seed, got, want)
		}
		if !bytes.Equal(gotSnap, wantSnap) {
			t.Fatalf("seed %d: the snapshots differ", seed)
		}
		if len(want) < 20 {
			t.Fatalf("seed %d: %d rows: the case checks little", seed, len(want))
		}
	}
}
