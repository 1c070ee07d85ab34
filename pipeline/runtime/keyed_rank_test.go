package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

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
