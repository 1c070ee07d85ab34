package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// SELECT DISTINCT over an insert-only input run as workers keyed by
// every column gives each row's first copy as one instance, with and
// without a state TTL, across restores at another number of workers.

// distinctSteps is rows [name, number] of a few values each, repeated
// often, in batches of random sizes; new rows come over time.
func distinctSteps(rng *rand.Rand) []keyedStep {
	n := 2 + rng.IntN(60)
	var steps []keyedStep
	for b := range 10 + rng.IntN(40) {
		var changes []row.Change
		for range 1 + rng.IntN(20) {
			k := rng.IntN(min(n, 2+2*b))
			changes = append(changes, row.Change{Kind: row.Insert, Row: row.Row{
				row.StringValue(fmt.Sprintf("sensor_%05d", k%11)), row.BigIntValue(int64(k / 11))}})
		}
		steps = append(steps, keyedStep{batch: &row.Batch{Changes: changes}})
	}
	return steps
}

func distinctCase(ttl time.Duration) keyedOpCase {
	return keyedOpCase{
		name: fmt.Sprintf("TTL %v", ttl), keys: []int{0, 1}, outKeys: 2, keepsState: true, ttl: ttl,
		build: func() (operator.KeyGrouped, error) { return aggop.NewDistinct(), nil },
	}
}

func TestKeyedDistinctSameAsOneWorker(t *testing.T) {
	testKeyedSameAsOne(t, []keyedOpCase{distinctCase(0), distinctCase(time.Second)}, distinctSteps)
	ttlMatters(t, distinctCase(time.Second), distinctSteps)
}

// A Distinct's own snapshot, written before it ran keyed, restores into
// workers.
func TestKeyedDistinctRestoresItsOwnSnapshot(t *testing.T) {
	for seed := range uint64(4) {
		restoresOwnSnapshot(t, distinctCase(0), distinctSteps(rand.New(rand.NewPCG(seed, 43))))
	}
}
