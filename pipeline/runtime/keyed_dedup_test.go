package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// A deduplication run as workers keyed by its PARTITION BY keys gives
// each key's changes as one instance, in every mode: processing time
// (first, last), event time (last; first, which waits for the watermark
// and drops late rows), batch.
func TestKeyedDedupSameAsOneWorker(t *testing.T) {
	var cases []keyedOpCase
	for _, m := range []struct {
		name                 string
		rowTime, last, batch bool
	}{
		{"processing time, first", false, false, false},
		{"processing time, last", false, true, false},
		{"event time, last", true, true, false},
		{"event time, first", true, false, false},
		{"event time, first, batch", true, false, true},
		{"processing time, last, batch", false, true, true},
	} {
		for _, keys := range [][]int{{0}, {0, 1}} {
			spec := rankop.DedupSpec{Key: keys, TimeCol: 3, RowTime: m.rowTime, KeepLast: m.last, Batch: m.batch}
			cases = append(cases, keyedOpCase{
				name: fmt.Sprintf("%s, %d-column key", m.name, len(keys)), keys: keys, outKeys: len(keys),
				late: m.rowTime && !m.last && !m.batch, keepsState: true,
				build: func() (operator.KeyGrouped, error) { return rankop.NewDedup(spec), nil },
			})
		}
	}
	testKeyedSameAsOne(t, cases, windowSteps)
}

// With a state TTL, a key idle past it is forgotten by its worker as by
// one instance (the next row is a first row again), across restores at
// another number of workers.
func TestKeyedDedupTTL(t *testing.T) {
	var cases []keyedOpCase
	for _, last := range []bool{false, true} {
		spec := rankop.DedupSpec{Key: []int{0}, TimeCol: 3, KeepLast: last}
		cases = append(cases, keyedOpCase{
			name: fmt.Sprintf("processing time, keep last %v", last), keys: spec.Key, outKeys: 1, keepsState: true, ttl: 2 * time.Second,
			build: func() (operator.KeyGrouped, error) { return rankop.NewDedup(spec), nil },
		})
	}
	testKeyedSameAsOne(t, cases, windowSteps)
	for _, c := range cases {
		ttlMatters(t, c, windowSteps)
	}
}

// ttlMatters fails unless c's TTL forgets state in some of a few
// rounds: without it the output differs.
func ttlMatters(t *testing.T, c keyedOpCase, input func(*rand.Rand) []keyedStep) {
	t.Helper()
	for seed := range uint64(5) {
		steps := input(rand.New(rand.NewPCG(seed, 35)))
		plain := c
		plain.ttl = 0
		if !sameByKey(runKeyedSteps(t, c, 2, steps, 0, 0).out, runKeyedSteps(t, plain, 2, steps, 0, 0).out, false) {
			return
		}
	}
	t.Fatalf("%s: the TTL forgot nothing: the test proves nothing", c.name)
}

// A deduplication's own snapshot, written before it ran keyed (by an
// etld of then), restores into workers, its watermark included.
func TestKeyedDedupRestoresItsOwnSnapshot(t *testing.T) {
	spec := rankop.DedupSpec{Key: []int{0, 1}, TimeCol: 3, RowTime: true}
	c := keyedOpCase{name: "event time, first", keys: spec.Key, outKeys: 2, late: true, keepsState: true,
		build: func() (operator.KeyGrouped, error) { return rankop.NewDedup(spec), nil }}
	for seed := range uint64(4) {
		restoresOwnSnapshot(t, c, windowSteps(rand.New(rand.NewPCG(seed, 36))))
	}
}
