package optest

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// wStep is one call of a widening case: a change on an input (side, for
// a two-input operator) or, with wm > 0, a watermark.
type wStep struct {
	side int
	wm   int64
	c    row.Change
}

// widenCase is an operator whose state keeps the key column (its rows,
// and its keys: a partition's, a join key, a row's own) and the steps
// it is driven with, built from a key value of the type under test.
type widenCase struct {
	name  string
	op    func() operator.Lifecycle
	ttl   bool  // a state TTL on: the saved keys' ages are read too
	cols  []int // the columns that widen; all of the narrow type when nil
	steps func(key func(int) row.Value) []wStep
}

func ins(side int, vals ...any) wStep { return wStep{side: side, c: Ins(vals...)} }

func ltz(us int64) row.Value { return row.TimestampLTZValue(us) }

func widenCases() []widenCase {
	// rows cycles keys 0..3 over n rows on input side, each with text.
	rows := func(side, n int, key func(int) row.Value, more func(i int) []any) []wStep {
		var out []wStep
		for i := range n {
			out = append(out, ins(side, append([]any{key(i % 4)}, more(i)...)...))
		}
		return out
	}
	text := func(i int) []any { return []any{string(rune('a' + i%3))} }
	join := func(kind joinop.JoinKind) func(key func(int) row.Value) []wStep {
		return func(key func(int) row.Value) []wStep {
			var out []wStep
			for i := range 12 {
				out = append(out, ins(i%2, key(i/2%4), string(rune('a'+i))))
			}
			return out
		}
	}
	// timed cycles keys 0..3 over 16 rows 5 s apart (column 1, a
	// TIMESTAMP), a watermark 10 s behind after every fourth.
	timed := func(key func(int) row.Value) []wStep {
		var out []wStep
		for i := range 16 {
			at := int64(i) * 5_000_000
			out = append(out, ins(0, key(i%4), row.TimestampValue(at)))
			if i%4 == 3 {
				out = append(out, wStep{wm: at - 10_000_000})
			}
		}
		return out
	}
	count := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	return []widenCase{
		{name: "tumble", steps: timed, op: func() operator.Lifecycle {
			return Must(windowop.NewWindowAgg(windowop.WindowSpec{Kind: windowop.Tumble, TimeCol: 1, Size: Minute}, []int{0}, count, windowop.WindowOptions{}))
		}},
		{name: "hop", steps: timed, op: func() operator.Lifecycle {
			return Must(windowop.NewWindowAgg(windowop.WindowSpec{Kind: windowop.Hop, TimeCol: 1, Size: Minute, Slide: Minute / 2}, []int{0}, count, windowop.WindowOptions{}))
		}},
		{name: "cumulate", steps: timed, op: func() operator.Lifecycle {
			return Must(windowop.NewWindowAgg(windowop.WindowSpec{Kind: windowop.Cumulate, TimeCol: 1, Size: Minute, Step: Minute / 2}, []int{0}, count, windowop.WindowOptions{}))
		}},
		{name: "session", steps: timed, op: func() operator.Lifecycle {
			return Must(windowop.NewSessionAgg(1, 30_000_000, []int{0}, count, windowop.WindowOptions{}))
		}},
		{name: "over", steps: timed, op: func() operator.Lifecycle {
			return Must(windowop.NewOverAgg(windowop.OverSpec{Keys: []int{0}, TimeCol: 1, Preceding: Minute, Aggs: count}, windowop.WindowOptions{}))
		}},
		{name: "dedup keep first", ttl: true,
			op: func() operator.Lifecycle { return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1}) },
			steps: func(key func(int) row.Value) []wStep {
				return rows(0, 12, key, text)
			}},
		{name: "dedup keep last", ttl: true,
			op: func() operator.Lifecycle {
				return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true})
			},
			steps: func(key func(int) row.Value) []wStep { return rows(0, 12, key, text) }},
		{name: "top-n", ttl: true,
			op: func() operator.Lifecycle { return rankop.NewTopN(topNSpec(rankop.Retract, false, 1, 2)) },
			steps: func(key func(int) row.Value) []wStep {
				return rows(0, 16, key, func(i int) []any { return []any{"x", key(i % 5)} })
			}},
		{name: "top-n update-fast", ttl: true,
			op: func() operator.Lifecycle { return Must(rankop.NewUpdatableTopN(updateFastSpec(false, 1, 2))) },
			steps: func(key func(int) row.Value) []wStep {
				var out []wStep
				for i := range 16 {
					out = append(out, wStep{c: UA(key(i%3), string(rune('a'+i%4)), key(i))})
				}
				return out
			}},
		{name: "over ordered by a non-time column", ttl: true,
			op: func() operator.Lifecycle {
				return Must(windowop.NewNonTimeOver(windowop.NonTimeSpec{Keys: []int{0}, Order: 1,
					Aggs: []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}}, windowop.WindowOptions{}))
			},
			steps: func(key func(int) row.Value) []wStep {
				return rows(0, 12, key, func(i int) []any { return []any{key(i % 5)} })
			}},
		{name: "distinct", ttl: true,
			op: func() operator.Lifecycle { return aggop.NewDistinct() },
			steps: func(key func(int) row.Value) []wStep {
				return rows(0, 12, key, func(i int) []any { return []any{string(rune('a' + i%2))} })
			}},
		{name: "intersect all", ttl: true, cols: []int{0},
			op: func() operator.Lifecycle { return Must(aggop.NewSetOp(aggop.IntersectAll, 1, false)) },
			steps: func(key func(int) row.Value) []wStep {
				return rows(0, 12, key, func(i int) []any { return []any{int32(i / 4 % 2)} })
			}},
		{name: "join", ttl: true, op: func() operator.Lifecycle { return joinop.NewJoin(joinSpec2(joinop.InnerJoin)) }, steps: join(joinop.InnerJoin)},
		{name: "full join", ttl: true, op: func() operator.Lifecycle { return joinop.NewJoin(joinSpec2(joinop.FullJoin)) }, steps: join(joinop.FullJoin)},
		{name: "interval join",
			op: func() operator.Lifecycle {
				return joinop.NewIntervalJoin(joinop.IntervalJoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0},
					LeftWidth: 3, RightWidth: 3, LeftTime: 1, RightTime: 1, Lower: -10, Upper: 5})
			},
			steps: func(key func(int) row.Value) []wStep {
				var out []wStep
				for i := range 16 {
					out = append(out, ins(i%2, key(i%4), ltz(int64(i*2)), string(rune('a'+i))))
					if i%4 == 3 {
						out = append(out, wStep{wm: int64(i*2 - 8)})
					}
				}
				return out
			}},
		{name: "temporal join",
			op: func() operator.Lifecycle { return joinop.NewTemporalJoin(temporalSpec(true)) },
			steps: func(key func(int) row.Value) []wStep {
				var out []wStep
				for i := range 16 {
					out = append(out, ins(1-i%2, key(i%3), ltz(int64(i*10)), string(rune('a'+i))))
					if i%5 == 4 {
						out = append(out, wStep{wm: int64(i*10 - 25)})
					}
				}
				return out
			}},
		{name: "window join",
			op: func() operator.Lifecycle { return joinop.NewWindowJoin(wjSpec(joinop.LeftJoin)) },
			steps: func(key func(int) row.Value) []wStep {
				var out []wStep
				for i := range 16 {
					start := int64(i/4) * 10
					out = append(out, ins(i%2, key(i%3), ltz(start), ltz(start+10), string(rune('a'+i))))
					if i%4 == 3 && i > 4 {
						out = append(out, wStep{wm: start - 1})
					}
				}
				return out
			}},
	}
}

// widened is s with the values of the columns cols (all when nil) of
// type from retagged to to: the same input read under the wider type.
func widened(s []wStep, cols []int, from, to row.TypeID) []wStep {
	out := make([]wStep, len(s))
	for i, st := range s {
		out[i] = st
		if st.wm != 0 {
			continue
		}
		r := st.c.Row.Clone()
		for j, v := range r {
			if v.IsNull() || v.Type() != from || cols != nil && !slices.Contains(cols, j) {
				continue
			}
			if to == row.BigInt {
				r[j] = row.BigIntValue(v.Int64())
			} else {
				r[j] = row.DoubleValue(v.Float64())
			}
		}
		out[i].c.Row = r
	}
	return out
}

// drive runs steps on op and returns what each step emitted, sorted
// within the step (a step's changes may come in map order).
func drive(t *testing.T, op operator.Lifecycle, steps []wStep) []string {
	t.Helper()
	var lines []string
	for i, s := range steps {
		out := &Out{}
		var err error
		switch {
		case s.wm != 0:
			err = op.Watermark(s.wm, out)
		case isTwo(op):
			err = op.(operator.TwoInput).ProcessInput(s.side, Batch(s.c), out)
		default:
			err = op.(operator.Operator).Process(Batch(s.c), out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got := out.Take()
		slices.Sort(got)
		lines = append(lines, got...)
	}
	return lines
}

func isTwo(op operator.Lifecycle) bool {
	_, ok := op.(operator.TwoInput)
	return ok
}

// TestWidenRestoreContinuesAsWide: each operator, driven with a column
// of INT (FLOAT) values up to a cut, snapshotted, and restored into a
// new one told to widen INT to BIGINT (FLOAT to DOUBLE), then driven
// with the rest of the input under the wide type, emits after the cut
// what an operator driven with the wide type from the start emits: its
// saved keys and rows meet the wide ones (a row's key, a partition, a
// join key, a state TTL's entry). Restored without the widening, it
// emits something else: the case shows the retagging.
func TestWidenRestoreContinuesAsWide(t *testing.T) {
	kinds := []struct {
		name     string
		from, to row.TypeID
		key      func(int) row.Value
	}{
		{"INT to BIGINT", row.Int, row.BigInt, func(i int) row.Value { return row.IntValue(int32(i)) }},
		{"FLOAT to DOUBLE", row.Float, row.Double, func(i int) row.Value { return row.FloatValue(float32(i) + 0.5) }},
	}
	for _, tc := range widenCases() {
		for _, kind := range kinds {
			t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
				clock := NewFakeClock()
				mk := func() operator.Lifecycle {
					op := tc.op()
					if tc.ttl {
						op.(operator.TTLSetter).SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
					}
					return op
				}
				narrow := tc.steps(kind.key)
				wide := widened(narrow, tc.cols, kind.from, kind.to)
				differs := false
				for cut := 1; cut < len(narrow); cut++ {
					ref := mk()
					drive(t, ref, wide[:cut])
					want := drive(t, ref, wide[cut:])

					a := mk()
					drive(t, a, narrow[:cut])
					snap, err := a.(operator.Snapshotter).Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					b := mk()
					w, ok := b.(operator.Widener)
					if !ok || !w.CanWiden() {
						t.Fatalf("%T cannot widen", b)
					}
					w.WidenRestore(map[row.TypeID]row.TypeID{kind.from: kind.to})
					if err := b.(operator.Snapshotter).Restore(snap); err != nil {
						t.Fatalf("cut %d: restore: %v", cut, err)
					}
					if got := drive(t, b, wide[cut:]); !slices.Equal(got, want) {
						t.Fatalf("cut %d: restored widened, then\n %q\nwant (wide from the start)\n %q", cut, got, want)
					}

					plain := mk()
					if err := plain.(operator.Snapshotter).Restore(snap); err != nil {
						t.Fatal(err)
					}
					differs = differs || !slices.Equal(drive(t, plain, wide[cut:]), want)
				}
				if !differs {
					t.Error("restored without widening it emits the same at every cut: the case shows nothing")
				}
			})
		}
	}
}
