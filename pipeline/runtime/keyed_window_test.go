package runtime_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// A keyed event-time operator (a window aggregate) run as workers must
// give, key by key, the changes one instance gives, drop and report
// the same late rows, whatever the number of workers, and across a
// checkpoint restored with another number of workers: the watermark
// reaches every worker, and a worker that owns no key with state gets
// the clock back all the same.

// keyedStep is a batch (of input input, for a two-input operator) or,
// when batch is nil, a watermark.
type keyedStep struct {
	batch *row.Batch
	input int
	wm    int64
}

// keyedOpCase is a keyed operator under test: outKeys leading output
// columns are its key.
type keyedOpCase struct {
	name    string
	keys    []int
	outKeys int
	build   func() (operator.KeyGrouped, error)
	// late: some rounds must drop late rows; keepsState: the operator
	// holds state after the end (a deduplication's keys).
	late, keepsState bool
	// ttl, when set, is the operator's state TTL, on a clock that moves
	// 250 ms a step.
	ttl time.Duration
	// two, when set, are the keys of a two-input operator's inputs
	// (keys is then two[0]); keyOf, when set, is an output row's key
	// (else its first outKeys columns).
	two   *[2][]int
	keyOf func(r row.Row) row.Row
	// unordered: each key's changes are compared as a multiset (an
	// interval join's inserts, which come in the order of its cache, as
	// Flink's come in its map's: a restore orders the cache by time).
	unordered bool
}

// keyedRun is what a run gave: the output by key, the late rows
// reported (step:change) and the late count.
type keyedRun struct {
	out     byKey
	late    []string
	dropped int64
}

// runKeyedSteps feeds steps to c's operator as n workers; restart, when
// > 0, snapshots it before that step and goes on in an operator of
// restartN workers restored from it.
func runKeyedSteps(t *testing.T, c keyedOpCase, n int, steps []keyedStep, restart, restartN int) keyedRun {
	t.Helper()
	var run keyedRun
	at := 0
	clock := func() time.Time { return time.UnixMilli(1_700_000_000_000 + int64(at)*250) }
	var two *runtime.KeyedTwo
	build := func(n int) *runtime.Keyed {
		var k *runtime.Keyed
		var err error
		if c.two != nil {
			if two, err = runtime.NewKeyedTwo(c.two[0], c.two[1], n, c.build); err == nil {
				k = two.Keyed
			}
		} else {
			k, err = runtime.NewKeyed(c.keys, n, c.build)
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.ttl > 0 {
			s, ok := k.Op().(operator.TTLSetter)
			if !ok {
				t.Fatalf("%T takes no TTL", k.Op())
			}
			s.SetStateTTL(operator.StateTTL{TTL: c.ttl, Now: clock})
		}
		k.ReportLate(func(i int) { run.late = append(run.late, fmt.Sprintf("%d:%d", at, i)) })
		return k
	}
	op := build(n)
	out := &collect{}
	for i, s := range steps {
		at = i
		if i == restart && restart > 0 {
			var err error
			if restartN%2 == 0 {
				var snap []byte
				if snap, err = op.Snapshot(); err == nil {
					op = build(restartN)
					err = op.Restore(snap)
				}
			} else {
				var buf bytes.Buffer
				if err = op.SnapshotTo(&buf); err == nil {
					op = build(restartN)
					err = op.RestoreFrom(&buf, int64(buf.Len()))
				}
			}
			if err != nil {
				t.Fatalf("restore %d workers from %d: %v", restartN, n, err)
			}
		}
		feedKeyed(t, op, two, s, out)
	}
	run.out = endKeyed(t, c, op, out)
	run.dropped, _ = op.Dropped()
	if !c.keepsState && op.StateEntries() != 0 {
		t.Fatalf("%d workers (restart %d as %d): %d state entries left after the end", n, restart, restartN, op.StateEntries())
	}
	return run
}

// windowSteps is random rows [name, number, value, ts] over a few keys,
// their times moving on with jitter, cut in batches with a watermark
// after some: rows behind it are late.
func windowSteps(rng *rand.Rand) []keyedStep {
	const sec = 1_000_000
	nkeys := 1 + rng.IntN(30)
	base := optest.TS("2026-12-06 12:00:00")
	now := base
	var steps []keyedStep
	for b := range 10 + rng.IntN(40) {
		var changes []row.Change
		for range 1 + rng.IntN(30) {
			now += int64(rng.IntN(800_000))
			ts := now - int64(rng.IntN(6*sec)) // out of order
			if rng.IntN(10) == 0 {
				ts -= 15 * sec // late, most of them
			}
			// Keys come in over time: a restore early on finds workers
			// that own no key with state, and then get keys.
			k := rng.IntN(min(nkeys, 1+b/2))
			changes = append(changes, row.Change{Kind: row.Insert, Row: row.Row{
				row.StringValue(fmt.Sprintf("sensor_%05d", k%13)), row.BigIntValue(int64(k)),
				row.BigIntValue(int64(rng.IntN(100) - 20)), row.TimestampValue(ts)}})
		}
		steps = append(steps, keyedStep{batch: &row.Batch{Changes: changes}})
		if rng.IntN(2) == 0 {
			steps = append(steps, keyedStep{wm: now - int64(rng.IntN(3*sec))})
		}
	}
	return steps
}

func windowCases() []keyedOpCase {
	const sec = 1_000_000
	specs := []struct {
		name string
		spec windowop.WindowSpec
	}{
		{"TUMBLE", windowop.WindowSpec{Kind: windowop.Tumble, TimeCol: 3, Size: 10 * sec}},
		{"HOP", windowop.WindowSpec{Kind: windowop.Hop, TimeCol: 3, Slide: 5 * sec, Size: 15 * sec}},
		{"CUMULATE", windowop.WindowSpec{Kind: windowop.Cumulate, TimeCol: 3, Step: 4 * sec, Size: 12 * sec}},
	}
	var cases []keyedOpCase
	for _, s := range specs {
		for _, batch := range []bool{false, true} {
			for _, keys := range [][]int{{0}, {0, 1}} {
				name := fmt.Sprintf("%s, %d-column key", s.name, len(keys))
				if batch {
					name += ", batch"
				}
				cases = append(cases, keyedOpCase{name: name, keys: keys, outKeys: len(keys), late: !batch, build: func() (operator.KeyGrouped, error) {
					return windowop.NewWindowAgg(s.spec, keys, keyedAggs(true), windowop.WindowOptions{Batch: batch})
				}})
			}
		}
	}
	return cases
}

func TestKeyedWindowSameAsOneWorker(t *testing.T) {
	testKeyedSameAsOne(t, windowCases(), windowSteps)
}

// testKeyedSameAsOne runs each case over random steps with 1 to 4
// workers, and restored with another number at a random step, and
// wants what one worker gives.
func testKeyedSameAsOne(t *testing.T, cases []keyedOpCase, input func(*rand.Rand) []keyedStep) {
	rounds := 20
	if testing.Short() || raceEnabled {
		rounds = 4
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			late := false
			for seed := range uint64(rounds) {
				rng := rand.New(rand.NewPCG(seed, 35))
				steps := input(rng)
				want := runKeyedSteps(t, c, 1, steps, 0, 0)
				if len(want.out) == 0 {
					t.Fatal("no output: the test proves nothing")
				}
				late = late || want.dropped > 0
				check := func(got keyedRun, what string) {
					t.Helper()
					if !sameByKey(got.out, want.out, false) {
						t.Fatalf("seed %d, %s:\n%s", seed, what, diffByKey(got.out, want.out))
					}
					if got.dropped != want.dropped || !slices.Equal(got.late, want.late) {
						t.Fatalf("seed %d, %s: %d late rows %v, want %d %v", seed, what, got.dropped, got.late, want.dropped, want.late)
					}
				}
				for n := 2; n <= 4; n++ {
					check(runKeyedSteps(t, c, n, steps, 0, 0), fmt.Sprintf("%d workers", n))
				}
				for _, nn := range [][2]int{{2, 3}, {3, 1}, {1, 4}, {4, 2}} {
					at := 1 + rng.IntN(len(steps))
					check(runKeyedSteps(t, c, nn[0], steps, at, nn[1]), fmt.Sprintf("%d workers restored as %d before step %d", nn[0], nn[1], at))
				}
			}
			if c.late && !late {
				t.Fatal("no late row in any round: the late path is untested")
			}
		})
	}
}

// A window aggregate's own snapshot, written before it ran keyed,
// restores into any number of workers, clock included.
func TestKeyedWindowRestoresItsOwnSnapshot(t *testing.T) {
	c := windowCases()[2] // HOP
	restoresOwnSnapshot(t, c, windowSteps(rand.New(rand.NewPCG(3, 35))))
}

// restoresOwnSnapshot runs the first half of steps on c's operator
// itself (as a checkpoint of an etld from before the operator ran keyed
// holds it), restores that snapshot into three workers, runs the rest
// there: the output by key and the late count are one worker's.
func restoresOwnSnapshot(t *testing.T, c keyedOpCase, steps []keyedStep) {
	t.Helper()
	want := runKeyedSteps(t, c, 1, steps, 0, 0)
	plain := optest.Must(c.build())
	half := len(steps) / 2
	out := &collect{}
	feed := func(op operator.KeyGrouped, s keyedStep) error {
		switch {
		case s.batch != nil && c.two != nil:
			return op.(operator.TwoInput).ProcessInput(s.input, s.batch, out)
		case s.batch != nil:
			return op.(operator.Operator).Process(s.batch, out)
		default:
			return op.Watermark(s.wm, out)
		}
	}
	for _, s := range steps[:half] {
		if err := feed(plain, s); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := plain.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var op *runtime.Keyed
	var two *runtime.KeyedTwo
	if c.two != nil {
		if two, err = runtime.NewKeyedTwo(c.two[0], c.two[1], 3, c.build); err == nil {
			op = two.Keyed
		}
	} else {
		op, err = runtime.NewKeyed(c.keys, 3, c.build)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Restore(snap); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps[half:] {
		feedKeyed(t, op, two, s, out)
	}
	got := endKeyed(t, c, op, out)
	if !sameByKey(got, want.out, false) {
		t.Fatal(diffByKey(got, want.out))
	}
	if d, _ := op.Dropped(); d != want.dropped {
		t.Fatalf("%d late rows, want %d", d, want.dropped)
	}
}

// feedKeyed gives step s to op (two, when not nil, is op as a two-input
// operator).
func feedKeyed(t *testing.T, op *runtime.Keyed, two *runtime.KeyedTwo, s keyedStep, out *collect) {
	t.Helper()
	var err error
	switch {
	case s.batch != nil && two != nil:
		err = two.ProcessInput(s.input, s.batch, out)
	case s.batch != nil:
		err = op.Process(s.batch, out)
	default:
		err = op.Watermark(s.wm, out)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// endKeyed ends op's input and returns all it emitted by key.
func endKeyed(t *testing.T, c keyedOpCase, op *runtime.Keyed, out *collect) byKey {
	t.Helper()
	if err := op.Watermark(operator.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	got := byKey{}
	if c.keyOf == nil {
		got.add(c.outKeys, out.lines)
	} else {
		for _, l := range out.lines {
			key := fmt.Sprint(c.keyOf(l.Row))
			got[key] = append(got[key], l.String())
		}
	}
	if c.unordered {
		for _, v := range got {
			slices.Sort(v)
		}
	}
	return got
}

// SESSION windows per key: sessions merge per key, late rows are those
// whose merged session ended by the watermark.
func sessionCases() []keyedOpCase {
	const sec = 1_000_000
	var cases []keyedOpCase
	for _, batch := range []bool{false, true} {
		for _, keys := range [][]int{{0}, {0, 1}} {
			cases = append(cases, keyedOpCase{
				name: fmt.Sprintf("SESSION, %d-column key, batch %v", len(keys), batch), keys: keys, outKeys: len(keys), late: !batch,
				build: func() (operator.KeyGrouped, error) {
					return windowop.NewSessionAgg(3, 2*sec, keys, keyedAggs(true), windowop.WindowOptions{Batch: batch})
				}})
		}
	}
	return cases
}

func TestKeyedSessionSameAsOneWorker(t *testing.T) {
	testKeyedSameAsOne(t, sessionCases(), windowSteps)
}

// A session window aggregate's own snapshot, written before it ran
// keyed, restores into workers, clock included.
func TestKeyedSessionRestoresItsOwnSnapshot(t *testing.T) {
	for seed := range uint64(4) {
		restoresOwnSnapshot(t, sessionCases()[0], windowSteps(rand.New(rand.NewPCG(seed, 41))))
	}
}

// TestKeyedCarvesRowsOfOneWorker: a Keyed whose one worker carves its
// rows (a window aggregate) carves them into the node's emitter, which
// it emits into itself; several workers emit into their own, which lend
// no memory.
func TestKeyedCarvesRowsOfOneWorker(t *testing.T) {
	for _, n := range []int{1, 2} {
		k, err := runtime.NewKeyed([]int{0}, n, func() (operator.KeyGrouped, error) {
			return windowop.NewSessionAgg(3, 2_000_000, []int{0}, keyedAggs(true), windowop.WindowOptions{})
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := k.CarvesRows(); got != (n == 1) {
			t.Errorf("%d workers: CarvesRows %v", n, got)
		}
	}
}
