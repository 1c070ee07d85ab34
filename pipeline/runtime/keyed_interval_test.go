package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// An interval join run as workers, both inputs split by the join key,
// gives each key's changes as one instance: every kind, rows behind the
// watermark (which match or not by the expiration times one instance
// moves over every key's rows and timers), NULL keys and NULL times,
// across restores at another number of workers.

// intervalSteps is random rows of a left input [name, number, value,
// ts] and a right one [name, number, other, ts], their times moving on
// with jitter, some far behind (late), some NULL, in batches of either
// input with a watermark after some.
func intervalSteps(rng *rand.Rand) []keyedStep {
	const sec = 1_000_000
	nkeys := 1 + rng.IntN(20)
	now := optest.TS("2026-12-06 12:00:00")
	var steps []keyedStep
	for b := range 20 + rng.IntN(60) {
		input := rng.IntN(2)
		var changes []row.Change
		for range 1 + rng.IntN(8) {
			now += int64(rng.IntN(400_000))
			ts := row.TimestampValue(now - int64(rng.IntN(3*sec)))
			switch rng.IntN(8) {
			case 0, 1:
				ts = row.TimestampValue(now - int64(3*sec+rng.IntN(3*sec))) // late, most of them
			case 2:
				ts = row.NullValue
			}
			k := rng.IntN(min(nkeys, 1+b/2))
			name := row.StringValue(fmt.Sprintf("sensor_%05d", k%7))
			if rng.IntN(20) == 0 {
				name = row.NullValue
			}
			changes = append(changes, row.Change{Kind: row.Insert, Row: row.Row{
				name, row.BigIntValue(int64(k % 3)), row.BigIntValue(int64(rng.IntN(100))), ts}})
		}
		steps = append(steps, keyedStep{batch: &row.Batch{Changes: changes}, input: input})
		if rng.IntN(4) != 0 {
			steps = append(steps, keyedStep{wm: now - int64(rng.IntN(2*sec))})
		}
	}
	return steps
}

func intervalCase(kind joinop.JoinKind, keys []int) keyedOpCase {
	const sec = 1_000_000
	spec := joinop.IntervalJoinSpec{Kind: kind, LeftKeys: keys, RightKeys: keys, LeftWidth: 4, RightWidth: 4,
		LeftTime: 3, RightTime: 3, Lower: -2 * sec, Upper: 1 * sec}
	nk := len(keys)
	return keyedOpCase{
		name: fmt.Sprintf("%s, %d-column key", kind, nk), keys: keys, two: &[2][]int{keys, keys},
		late:      true, // rows of a NULL time: Dropped counts them
		unordered: true,
		// A row's key is its left key, or its right one when the left
		// side is padded.
		keyOf: func(r row.Row) row.Row {
			if r[3].IsNull() && r[0].IsNull() && !r[7].IsNull() {
				return r[4 : 4+nk]
			}
			return r[:nk]
		},
		build: func() (operator.KeyGrouped, error) { return joinop.NewIntervalJoin(spec), nil },
	}
}

func TestKeyedIntervalJoinSameAsOneWorker(t *testing.T) {
	var cases []keyedOpCase
	for _, kind := range []joinop.JoinKind{joinop.InnerJoin, joinop.LeftJoin, joinop.RightJoin, joinop.FullJoin} {
		for _, keys := range [][]int{{0}, {0, 1}} {
			cases = append(cases, intervalCase(kind, keys))
		}
	}
	testKeyedSameAsOne(t, cases, intervalSteps)
}

// An interval join's own snapshot, written before it ran keyed (by an
// etld of then), restores into workers: the keys' cached rows and
// timers, the clock and the expiration times.
func TestKeyedIntervalJoinRestoresItsOwnSnapshot(t *testing.T) {
	for _, kind := range []joinop.JoinKind{joinop.InnerJoin, joinop.FullJoin} {
		c := intervalCase(kind, []int{0})
		for seed := range uint64(4) {
			restoresOwnSnapshot(t, c, intervalSteps(rand.New(rand.NewPCG(seed, 39))))
		}
	}
}
