package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// A Top-N run as workers keyed by its PARTITION BY keys gives each
// partition's changes as one instance: append-only and retracting
// inputs, with and without the rank number, streaming and batch (RANK),
// with a state TTL, across restores at another number of workers.
func TestKeyedTopNSameAsOneWorker(t *testing.T) {
	type mode struct {
		name     string
		strategy rankop.RankStrategy
		kind     rankop.RankKind
		start    int64
		number   bool
		batch    bool
		retract  bool
		ttl      time.Duration
	}
	for _, m := range []mode{
		{name: "append, top 3", strategy: rankop.AppendFast, kind: rankop.RowNumber, start: 1, number: true},
		{name: "append, top 1 without number", strategy: rankop.AppendFast, kind: rankop.RowNumber, start: 1},
		{name: "append, ranks 2 to 3", strategy: rankop.AppendFast, kind: rankop.RowNumber, start: 2, number: true},
		{name: "retract, top 3", strategy: rankop.Retract, kind: rankop.RowNumber, start: 1, number: true, retract: true},
		{name: "retract, top 3, TTL", strategy: rankop.Retract, kind: rankop.RowNumber, start: 1, number: true, retract: true, ttl: 500 * time.Millisecond},
		{name: "batch, RANK top 3", kind: rankop.Rank, start: 1, number: true, batch: true},
	} {
		for _, keys := range [][]int{{0}, {0, 1}} {
			end := int64(3)
			if !m.number {
				end = 1
			}
			spec := rankop.RankSpec{Partition: keys, Order: []rankop.SortKey{{Col: 2, Desc: true}}, Start: m.start, End: end,
				Kind: m.kind, Strategy: m.strategy, OutputRank: m.number, Batch: m.batch}
			input := windowSteps
			if m.retract {
				input = func(rng *rand.Rand) []keyedStep {
					var steps []keyedStep
					for _, b := range keyedInput(rng, true) {
						steps = append(steps, keyedStep{batch: b})
					}
					return steps
				}
			}
			c := keyedOpCase{
				name: fmt.Sprintf("%s, %d-column key", m.name, len(keys)), keys: keys, outKeys: len(keys), keepsState: true, ttl: m.ttl,
				build: func() (operator.KeyGrouped, error) { return rankop.NewTopN(spec), nil },
			}
			t.Run(c.name, func(t *testing.T) {
				testKeyedSameAsOne(t, []keyedOpCase{c}, input)
				if c.ttl > 0 {
					ttlMatters(t, c, input)
				}
			})
		}
	}
}

// A Top-N's own snapshot, written before it ran keyed (by an etld of
// then), restores into workers: retracting input, ranks numbered.
func TestKeyedTopNRestoresItsOwnSnapshot(t *testing.T) {
	spec := rankop.RankSpec{Partition: []int{0}, Order: []rankop.SortKey{{Col: 2, Desc: true}}, Start: 1, End: 3,
		Kind: rankop.RowNumber, Strategy: rankop.Retract, OutputRank: true}
	c := keyedOpCase{name: "retract, top 3", keys: spec.Partition, outKeys: 1, keepsState: true,
		build: func() (operator.KeyGrouped, error) { return rankop.NewTopN(spec), nil }}
	for seed := range uint64(4) {
		var steps []keyedStep
		for _, b := range keyedInput(rand.New(rand.NewPCG(seed, 37)), true) {
			steps = append(steps, keyedStep{batch: b})
		}
		restoresOwnSnapshot(t, c, steps)
	}
}

// upsertCounts is a running COUNT per (name, number) as a GROUP BY
// emits it: +I at 1, then -U/+U pairs, the count only moving up, over
// keys that arrive over time, in batches of random sizes.
func upsertCounts(rng *rand.Rand) []keyedStep {
	nkeys := 1 + rng.IntN(40)
	counts := map[[2]int]int64{}
	var steps []keyedStep
	for b := range 10 + rng.IntN(40) {
		var changes []row.Change
		for range 1 + rng.IntN(30) {
			k := rng.IntN(min(nkeys, 2+b))
			key := [2]int{k % 7, k}
			r := func(n int64) row.Row {
				return row.Row{row.StringValue(fmt.Sprintf("sensor_%05d", key[0])), row.BigIntValue(int64(key[1])), row.BigIntValue(n)}
			}
			old := counts[key]
			counts[key] = old + 1 + rng.Int64N(3)
			if old == 0 {
				changes = append(changes, row.Change{Kind: row.Insert, Row: r(counts[key])})
				continue
			}
			changes = append(changes, row.Change{Kind: row.UpdateBefore, Row: r(old)}, row.Change{Kind: row.UpdateAfter, Row: r(counts[key])})
		}
		steps = append(steps, keyedStep{batch: &row.Batch{Changes: changes}})
	}
	return steps
}

// A Top-N ranking an updating input by its upsert key
// (UpdateFastStrategy) run as workers keyed by its PARTITION BY keys
// gives each partition's changes as one instance: with and without the
// rank number, a state TTL, across restores at another number of
// workers.
func TestKeyedUpdatableTopNSameAsOneWorker(t *testing.T) {
	for _, m := range []struct {
		name   string
		number bool
		end    int64
		ttl    time.Duration
	}{
		{name: "top 3", number: true, end: 3},
		{name: "top 2 without number", end: 2},
		{name: "top 3, TTL", number: true, end: 3, ttl: 500 * time.Millisecond},
	} {
		spec := rankop.RankSpec{Partition: []int{0}, Order: []rankop.SortKey{{Col: 2, Desc: true}}, Start: 1, End: m.end,
			Kind: rankop.RowNumber, Strategy: rankop.UpdateFast, RowKey: []int{0, 1}, OutputRank: m.number}
		c := keyedOpCase{
			name: m.name, keys: spec.Partition, outKeys: 1, keepsState: true, ttl: m.ttl,
			build: func() (operator.KeyGrouped, error) { return rankop.NewUpdatableTopN(spec) },
		}
		t.Run(c.name, func(t *testing.T) {
			testKeyedSameAsOne(t, []keyedOpCase{c}, upsertCounts)
			if c.ttl > 0 {
				ttlMatters(t, c, upsertCounts)
			}
		})
	}
}

// An UpdatableTopN's own snapshot, written before it ran keyed,
// restores into workers.
func TestKeyedUpdatableTopNRestoresItsOwnSnapshot(t *testing.T) {
	spec := rankop.RankSpec{Partition: []int{0}, Order: []rankop.SortKey{{Col: 2, Desc: true}}, Start: 1, End: 3,
		Kind: rankop.RowNumber, Strategy: rankop.UpdateFast, RowKey: []int{0, 1}, OutputRank: true}
	c := keyedOpCase{name: "top 3", keys: spec.Partition, outKeys: 1, keepsState: true,
		build: func() (operator.KeyGrouped, error) { return rankop.NewUpdatableTopN(spec) }}
	for seed := range uint64(4) {
		restoresOwnSnapshot(t, c, upsertCounts(rand.New(rand.NewPCG(seed, 42))))
	}
}
