package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// An OVER aggregate run as workers keyed by its PARTITION BY keys gives
// each partition's rows as one instance: ROWS and RANGE frames, bounded
// and not, the row functions, late rows (behind the watermark, or
// behind a bounded frame's last emitted row and cleanup timers), batch
// mode with LEAD, a state TTL, across restores at another number of
// workers.

func overAggs() []aggop.AggCall {
	return []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Min, Arg: 0, ArgType: row.Type{ID: row.String}},
	}
}

func overCase(name string, keys []int, spec windowop.OverSpec, batch bool, ttl time.Duration) keyedOpCase {
	spec.Keys, spec.TimeCol, spec.Aggs = keys, 3, overAggs()
	spec.Funcs = []windowop.RowFunc{{Kind: windowop.Lag, Arg: 2, Offset: 1, Default: -1}, {Kind: windowop.RowNumber}, {Kind: windowop.Rank}, {Kind: windowop.DenseRank}}
	if batch {
		spec.Funcs = append(spec.Funcs, windowop.RowFunc{Kind: windowop.Lead, Arg: 2, Offset: 2, Default: 1})
	}
	return keyedOpCase{
		name: fmt.Sprintf("%s, %d-column key, batch %v, TTL %v", name, len(keys), batch, ttl), keys: keys, outKeys: len(keys),
		late: !batch, keepsState: true, ttl: ttl,
		build: func() (operator.KeyGrouped, error) {
			return windowop.NewOverAgg(spec, windowop.WindowOptions{Batch: batch})
		},
	}
}

func overCases() []keyedOpCase {
	const sec = 1_000_000
	frames := []struct {
		name string
		spec windowop.OverSpec
	}{
		{"ROWS 3 PRECEDING", windowop.OverSpec{Rows: true, Preceding: 3}},
		{"ROWS UNBOUNDED", windowop.OverSpec{Rows: true, Preceding: windowop.Unbounded}},
		{"RANGE 5 s PRECEDING", windowop.OverSpec{Preceding: 5 * sec}},
		{"RANGE UNBOUNDED", windowop.OverSpec{Preceding: windowop.Unbounded}},
	}
	var cases []keyedOpCase
	for _, f := range frames {
		for _, keys := range [][]int{{0}, {0, 1}} {
			for _, batch := range []bool{false, true} {
				cases = append(cases, overCase(f.name, keys, f.spec, batch, 0))
			}
		}
	}
	return cases
}

func TestKeyedOverSameAsOneWorker(t *testing.T) {
	testKeyedSameAsOne(t, overCases(), windowSteps)
}

// With times in whole seconds, rows of one time meet: a ROWS frame
// orders them by arrival (a restored worker numbers new rows after the
// ones it got), a RANGE frame makes them peers.
func TestKeyedOverTiesSameAsOneWorker(t *testing.T) {
	var cases []keyedOpCase
	for _, c := range overCases() {
		if len(c.keys) == 1 {
			cases = append(cases, c)
		}
	}
	testKeyedSameAsOne(t, cases, func(rng *rand.Rand) []keyedStep {
		const sec = 1_000_000
		steps := windowSteps(rng)
		for _, s := range steps {
			if s.batch == nil {
				continue
			}
			for i := range s.batch.Changes {
				r := s.batch.Changes[i].Row
				r[3] = row.TimestampValue(r[3].Micros() / sec * sec)
			}
		}
		return steps
	})
}

// With a state TTL, a partition idle past it is forgotten by its worker
// as by one instance (its next row starts from empty state), across
// restores at another number of workers.
func TestKeyedOverTTL(t *testing.T) {
	const sec = 1_000_000
	var cases []keyedOpCase
	for _, spec := range []windowop.OverSpec{{Rows: true, Preceding: 3}, {Preceding: 5 * sec}, {Preceding: windowop.Unbounded}} {
		cases = append(cases, overCase(spec.String(), []int{0}, spec, false, 2*time.Second))
	}
	testKeyedSameAsOne(t, cases, windowSteps)
	// A bounded RANGE frame's cleanup timers free an idle partition
	// before its TTL would: the TTL shows in the others.
	ttlMatters(t, cases[0], windowSteps)
	ttlMatters(t, cases[2], windowSteps)
}

// An OVER aggregate's own snapshot, written before it ran keyed (by an
// etld of then), restores into workers: partitions, waiting rows,
// cleanup timers and the watermark.
func TestKeyedOverRestoresItsOwnSnapshot(t *testing.T) {
	for _, c := range overCases() {
		if c.name[:5] != "RANGE" || c.keys[0] != 0 {
			continue
		}
		for seed := range uint64(3) {
			restoresOwnSnapshot(t, c, windowSteps(rand.New(rand.NewPCG(seed, 40))))
		}
	}
}
