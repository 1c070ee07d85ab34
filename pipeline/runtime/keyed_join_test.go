package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A regular join run as workers, both inputs split by the join key,
// gives each key's changes as one instance: every kind, retractions,
// NULL keys, batch mode, a state TTL, across restores at another number
// of workers.

// joinSteps is random changes to a left input [name, number, value, ts]
// and a right one [name, number, other], some retracting an earlier row
// of their input, some with a NULL name, in batches of either input.
func joinSteps(rng *rand.Rand) []keyedStep {
	nkeys := 1 + rng.IntN(20)
	var live [2][]row.Row
	var steps []keyedStep
	for b := range 10 + rng.IntN(30) {
		input := rng.IntN(2)
		var changes []row.Change
		for range 1 + rng.IntN(20) {
			if len(live[input]) > 0 && rng.IntN(4) == 0 {
				i := rng.IntN(len(live[input]))
				changes = append(changes, row.Change{Kind: row.Delete, Row: live[input][i]})
				live[input] = slices.Delete(live[input], i, i+1)
				continue
			}
			k := rng.IntN(min(nkeys, 1+b/2))
			name := row.StringValue(fmt.Sprintf("sensor_%05d", k%7))
			if rng.IntN(15) == 0 {
				name = row.NullValue
			}
			r := row.Row{name, row.BigIntValue(int64(k % 3)), row.BigIntValue(int64(rng.IntN(10)))}
			if input == 0 {
				r = append(r, row.TimestampValue(int64(b)*1_000_000))
			}
			changes = append(changes, row.Change{Kind: row.Insert, Row: r})
			live[input] = append(live[input], r)
		}
		steps = append(steps, keyedStep{batch: &row.Batch{Changes: changes}, input: input})
	}
	return steps
}

func TestKeyedJoinSameAsOneWorker(t *testing.T) {
	type mode struct {
		kind  joinop.JoinKind
		batch bool
		ttl   time.Duration
	}
	for _, m := range []mode{
		{kind: joinop.InnerJoin}, {kind: joinop.LeftJoin}, {kind: joinop.RightJoin}, {kind: joinop.FullJoin},
		{kind: joinop.SemiJoin}, {kind: joinop.AntiJoin},
		{kind: joinop.FullJoin, ttl: time.Second},
		{kind: joinop.InnerJoin, batch: true}, {kind: joinop.LeftJoin, batch: true},
	} {
		for _, keys := range [][]int{{0}, {0, 1}} {
			spec := joinop.JoinSpec{Kind: m.kind, LeftKeys: keys, RightKeys: keys, LeftWidth: 4, RightWidth: 3, Batch: m.batch}
			input := joinSteps
			if m.batch {
				// A batch join's inputs are insert-only.
				input = func(rng *rand.Rand) []keyedStep {
					steps := joinSteps(rng)
					for _, s := range steps {
						s.batch.Changes = slices.DeleteFunc(s.batch.Changes, func(c row.Change) bool { return c.Kind != row.Insert })
					}
					return steps
				}
			}
			nk := len(keys)
			c := keyedOpCase{
				name: fmt.Sprintf("%s, batch %v, TTL %v, %d-column key", m.kind, m.batch, m.ttl, nk),
				keys: keys, two: &[2][]int{keys, keys}, keepsState: true, ttl: m.ttl,
				// A row's key is its left key, or its right one when the
				// left side is padded.
				keyOf: func(r row.Row) row.Row {
					if len(r) > 4 && r[0].IsNull() && !r[4].IsNull() {
						return r[4 : 4+nk]
					}
					return r[:nk]
				},
				build: func() (operator.KeyGrouped, error) { return joinop.NewJoin(spec), nil },
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

// A regular join's own snapshot, written before it ran keyed (by an
// etld of then), restores into workers: both sides' rows and their
// match counts.
func TestKeyedJoinRestoresItsOwnSnapshot(t *testing.T) {
	for _, kind := range []joinop.JoinKind{joinop.InnerJoin, joinop.FullJoin, joinop.AntiJoin} {
		spec := joinop.JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 3}
		c := keyedOpCase{name: kind.String(), keys: spec.LeftKeys, two: &[2][]int{spec.LeftKeys, spec.RightKeys}, keepsState: true,
			keyOf: func(r row.Row) row.Row {
				if len(r) > 4 && r[0].IsNull() && !r[4].IsNull() {
					return r[4:5]
				}
				return r[:1]
			},
			build: func() (operator.KeyGrouped, error) { return joinop.NewJoin(spec), nil }}
		for seed := range uint64(4) {
			restoresOwnSnapshot(t, c, joinSteps(rand.New(rand.NewPCG(seed, 38))))
		}
	}
}
