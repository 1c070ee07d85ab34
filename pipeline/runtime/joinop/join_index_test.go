package joinop

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// The key bytes an index by value gives a key id (what the keyed split
// hashes to a key group, and what a turn to bytes holds) are row.KeyOf's
// of the value, for every integer-like type.
func TestJoinIntKeyBytes(t *testing.T) {
	for _, v := range []row.Value{
		row.BoolValue(true), row.BoolValue(false), row.IntValue(-7), row.IntValue(math.MaxInt32),
		row.BigIntValue(math.MinInt64), row.BigIntValue(123456789), row.DateValue(-1),
		row.TimeOfDayValue(3_600_000_000), row.TimestampValue(-5), row.TimestampLTZValue(1 << 50),
	} {
		if !intKeyType(v.Type()) || !plainInt(v, v.Type()) {
			t.Fatalf("%v: not a plain integer-like key", v)
		}
		want := row.KeyOf(nil, row.Row{v}, []int{0})
		if got := intKeyBytes(nil, v.Type(), uint64(v.Int64())); !bytes.Equal(got, want) {
			t.Errorf("%v (%v): %x, want row.KeyOf's %x", v, v.Type(), got, want)
		}
	}
}

// keyedStream is joinStream's changes with the key as kind says: a
// BIGINT ("int"), its digits as a STRING ("string", or "long" past a
// key table entry's inline bytes), or the whole row a two-column key
// ("two").
func keyedStream(kind string, stream []sideChange) []sideChange {
	if kind != "string" && kind != "long" {
		return stream
	}
	out := make([]sideChange, len(stream))
	for i, s := range stream {
		r := slices.Clone(s.c.Row)
		if !r[0].IsNull() && kind == "long" {
			r[0] = row.StringValue(fmt.Sprintf("a customer of id %020d", r[0].Int64()))
		} else if !r[0].IsNull() {
			r[0] = row.StringValue(fmt.Sprint(r[0].Int64()))
		}
		out[i] = sideChange{s.side, row.Change{Kind: s.c.Kind, Row: r}}
	}
	return out
}

// feedBatches feeds stream to j in batches of up to size changes of one
// side (a side's run of changes cut at size), and returns its changes.
func feedBatches(t *testing.T, j *Join, stream []sideChange, size int) []string {
	t.Helper()
	var c joinCollector
	for at := 0; at < len(stream); {
		end := at
		var b row.Batch
		for end < len(stream) && end-at < size && stream[end].side == stream[at].side {
			b.Changes = append(b.Changes, stream[end].c)
			end++
		}
		if err := j.ProcessInput(stream[at].side, &b, &c); err != nil {
			t.Fatal(err)
		}
		at = end
	}
	return c.got
}

// A join of one integer-like key of the same type on both sides keeps its
// keys by value (joinIndex.ints) and reads a batch's state ahead of its
// changes; any other key keeps them by bytes. Either way a join emits
// the same changes, in the same order, as a join that knows no types
// (whose keys are bytes), for every kind, with retractions and NULL keys,
// in batches of one change and of hundreds (readAhead's chunks, where a
// change adds or drops a key a later one of its chunk reads); a
// snapshot of one restores into the other and goes on alike; and its
// key groups (SnapshotGroups) are the same bytes.
func TestJoinKeysByValue(t *testing.T) {
	kinds := []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin}
	for _, key := range []struct {
		name  string
		keys  []int
		types []row.TypeID
		ints  bool
	}{
		{"int", []int{0}, []row.TypeID{row.BigInt, row.BigInt}, true},
		{"string", []int{0}, []row.TypeID{row.String, row.BigInt}, false},
		{"long", []int{0}, []row.TypeID{row.String, row.BigInt}, false},
		{"two", []int{0, 1}, []row.TypeID{row.BigInt, row.BigInt}, false},
	} {
		for k := range len(kinds) + 1 {
			// The last: NOT IN, a null-aware anti join (its NULL-keyed
			// left rows on a side of their own, keyed by bytes).
			kind, notIn := AntiJoin, true
			if k < len(kinds) {
				kind, notIn = kinds[k], false
			}
			for _, appendOnly := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/not-in=%v/append-only=%v", key.name, kind, notIn, appendOnly)
				t.Run(name, func(t *testing.T) {
					var stream []sideChange
					for _, s := range keyedStream(key.name, joinStream(3, 1200)) {
						if !appendOnly || s.c.Kind == row.Insert {
							stream = append(stream, s)
						}
					}
					spec := func(typed bool) JoinSpec {
						s := joinSpec2(kind)
						s.NullAware = notIn
						s.LeftKeys, s.RightKeys = key.keys, key.keys
						s.LeftAppendOnly, s.RightAppendOnly = appendOnly, appendOnly
						if typed {
							s.LeftTypes, s.RightTypes = key.types, key.types
						}
						return s
					}
					half := len(stream) / 2
					bytesJoin := NewJoin(spec(false))
					want := feedBatches(t, bytesJoin, stream[:half], 1)
					for _, size := range []int{1, 5, 300} {
						j := NewJoin(spec(true))
						if got := j.sides[0].index.ints != nil; got != key.ints {
							t.Fatalf("keys by value: %v, want %v", got, key.ints)
						}
						if got := feedBatches(t, j, stream[:half], size); !slices.Equal(got, want) {
							t.Fatalf("batches of %d: other changes than keys by bytes: %s", size, firstDiff(got, want))
						}
						if size == 300 {
							checkSameGroups(t, bytesJoin, j)
						}
						if enc := len(j.sides[0].kbuf) + len(j.sides[1].kbuf); key.ints && enc > 0 {
							t.Fatalf("keys by value: %d bytes of keys encoded", enc)
						}
					}
					typed := NewJoin(spec(true))
					feedBatches(t, typed, stream[:half], 300)
					var snaps [][]byte
					for _, from := range []*Join{typed, bytesJoin} {
						snap, err := from.Snapshot()
						if err != nil {
							t.Fatal(err)
						}
						snaps = append(snaps, snap)
					}
					rest := feedBatches(t, bytesJoin, stream[half:], 1)
					final := optest.FoldChanges(t, append(slices.Clone(want), rest...))
					// Each form's snapshot restored into a join of either
					// form: the two go on with the same changes (a restored
					// join may meet a key's rows in another order than the
					// uninterrupted one), and end with its table.
					for _, snap := range snaps {
						var after [2][]string
						for i, typed := range []bool{true, false} {
							to := NewJoin(spec(typed))
							if err := to.Restore(snap); err != nil {
								t.Fatal(err)
							}
							after[i] = feedBatches(t, to, stream[half:], 300)
							if got := optest.FoldChanges(t, append(slices.Clone(want), after[i]...)); !slices.Equal(got, final) {
								t.Errorf("restored (typed %v): another table: %s", typed, firstDiff(got, final))
							}
						}
						if !slices.Equal(after[0], after[1]) {
							t.Errorf("restored: keys by value emit other changes: %s", firstDiff(after[0], after[1]))
						}
					}
				})
			}
		}
	}
}

// firstDiff describes where got first differs from want.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("change %d is %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d changes, want %d", len(got), len(want))
}

// checkSameGroups wants the key-group parts of a and b byte for byte.
func checkSameGroups(t *testing.T, a, b *Join) {
	t.Helper()
	parts := func(j *Join) map[int][]byte {
		m := map[int][]byte{}
		if err := j.SnapshotGroups(func(g int, p []byte) error { m[g] = slices.Clone(p); return nil }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	pa, pb := parts(a), parts(b)
	if len(pa) != len(pb) {
		t.Fatalf("%d key groups, want %d", len(pb), len(pa))
	}
	for g, p := range pa {
		if !bytes.Equal(pb[g], p) {
			t.Fatalf("key group %d differs", g)
		}
	}
}

// A value of the key's column in another form than its type (an INT in a
// BIGINT column, as a widened column's restored rows may be) turns the
// index to bytes, every key keeping its id: the keys held before still
// match, and the odd value matches as its bytes do (an INT 2 is not the
// BIGINT 2, as row.KeyOf has it).
func TestJoinKeysByValueTurnToBytes(t *testing.T) {
	for _, kind := range []JoinKind{InnerJoin, FullJoin} {
		var stream []sideChange
		for i, s := range joinStream(5, 400) {
			if i == 200 || i == 250 {
				r := slices.Clone(s.c.Row)
				r[0] = row.IntValue(2)
				stream = append(stream, sideChange{s.side, row.Change{Kind: row.Insert, Row: r}})
			}
			stream = append(stream, s)
		}
		spec := joinSpec2(kind)
		want := feedBatches(t, NewJoin(spec), stream, 1)
		spec.LeftTypes, spec.RightTypes = []row.TypeID{row.BigInt, row.BigInt}, []row.TypeID{row.BigInt, row.BigInt}
		for _, size := range []int{1, 64} {
			j := NewJoin(spec)
			got := feedBatches(t, j, stream, size)
			if !slices.Equal(got, want) {
				t.Errorf("%s, batches of %d: other changes than keys by bytes: %s", kind, size, firstDiff(got, want))
			}
			if x := j.sides[0].index; x.ints != nil || x.ids == nil || j.sides[1].index != x {
				t.Errorf("%s: the index did not turn to bytes (or the sides no longer share it)", kind)
			}
		}
	}
}

// A state TTL on a join of keys by value: rows expire, and their keys
// leave the index, as with keys by bytes; a restore keeps the ages.
func TestJoinKeysByValueTTL(t *testing.T) {
	stream := joinStream(9, 600)
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, FullJoin, AntiJoin} {
		run := func(typed bool) ([]string, int) {
			clock := optest.NewFakeClock()
			spec := joinSpec2(kind)
			if typed {
				spec.LeftTypes, spec.RightTypes = []row.TypeID{row.BigInt, row.BigInt}, []row.TypeID{row.BigInt, row.BigInt}
			}
			mk := func() *Join {
				j := NewJoin(spec)
				j.SetStateTTL(operator.StateTTL{TTL: 20 * time.Second, Now: clock.Now})
				return j
			}
			j := mk()
			var got []string
			for at := 0; at < len(stream); at += 50 {
				clock.Set(int64(at / 5))
				if at == 300 {
					snap, err := j.Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					j = mk()
					if err := j.Restore(snap); err != nil {
						t.Fatal(err)
					}
				}
				got = append(got, feedBatches(t, j, stream[at:min(at+50, len(stream))], 50)...)
			}
			clock.Set(1000)
			j.sweep(1 << 20)
			return got, j.sides[0].index.len()
		}
		want, wantKeys := run(false)
		got, keys := run(true)
		if !slices.Equal(got, want) {
			t.Errorf("%s: other changes than keys by bytes: %s", kind, firstDiff(got, want))
		}
		if keys != wantKeys {
			t.Errorf("%s: %d keys left after the sweep, want %d", kind, keys, wantKeys)
		}
	}
}
