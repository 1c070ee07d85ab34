package joinop

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A temporal step: a change on a side (0 orders, 1 versions) or, with
// side -1, a watermark; want is what the join emits for it.
type temporalStep struct {
	side int
	kind row.Kind
	key  any
	at   int64
	val  string
	want []string
}

// order and rate rows are [key, time, value].
func temporalRow(key any, at int64, val string) row.Row {
	k := row.NullValue
	if key != nil {
		k = row.BigIntValue(int64(key.(int)))
	}
	return row.Row{k, row.TimestampValue(at), row.StringValue(val)}
}

// temporalCollector prints [k t v | k t v] with times as integers.
type temporalCollector struct{ got []string }

func (c *temporalCollector) Emit(k row.Kind, r row.Row) {
	var parts []string
	for i, v := range r {
		switch {
		case v.IsNull():
			parts = append(parts, "null")
		case i%3 == 1:
			parts = append(parts, fmt.Sprint(v.Micros()))
		default:
			parts = append(parts, v.String())
		}
	}
	c.got = append(c.got, k.String()+"["+strings.Join(parts[:3], " ")+" | "+strings.Join(parts[3:], " ")+"]")
}

func temporalSpec(left bool) TemporalJoinSpec {
	return TemporalJoinSpec{Left: left, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1, LeftWidth: 3, RightWidth: 3}
}

func runTemporal(t *testing.T, j *TemporalJoin, steps []temporalStep) {
	t.Helper()
	for i, s := range steps {
		var c temporalCollector
		var err error
		if s.side < 0 {
			err = j.Watermark(s.at, &c)
		} else {
			b := &row.Batch{Changes: []row.Change{{Kind: s.kind, Row: temporalRow(s.key, s.at, s.val)}}}
			err = j.ProcessInput(s.side, b, &c)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !slices.Equal(c.got, s.want) {
			t.Errorf("step %d (%+v): got %q, want %q", i, s, c.got, s.want)
		}
	}
}

const (
	kI  = row.Insert
	kUB = row.UpdateBefore
	kUA = row.UpdateAfter
	kD  = row.Delete
)

func tjWM(at int64, want ...string) temporalStep { return temporalStep{side: -1, at: at, want: want} }

var temporalCases = []struct {
	name  string
	left  bool
	steps []temporalStep
}{
	{"version after the order, before the watermark", false, []temporalStep{
		{side: 0, kind: kI, key: 1, at: 10, val: "o1"},
		{side: 1, kind: kI, key: 1, at: 5, val: "r5"},
		tjWM(9), // a version at 10 may still come: nothing yet
		// Flink emits the probe rows at or before the watermark
		// (leftTime <= currentWatermark): a version at 10 after it is late.
		tjWM(10, "+I[1 10 o1 | 1 5 r5]"),
		{side: 1, kind: kUA, key: 1, at: 10, val: "r10"},
		tjWM(11),
	}},
	{"several versions: each order the one valid at its time", false, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "r5"},
		{side: 1, kind: kUA, key: 1, at: 20, val: "r20"},
		{side: 1, kind: kUA, key: 1, at: 30, val: "r30"},
		{side: 0, kind: kI, key: 1, at: 25, val: "o25"},
		{side: 0, kind: kI, key: 1, at: 4, val: "o4"},
		{side: 0, kind: kI, key: 1, at: 20, val: "o20"},
		{side: 0, kind: kI, key: 1, at: 31, val: "o31"},
		tjWM(30, "+I[1 25 o25 | 1 20 r20]", "+I[1 20 o20 | 1 20 r20]"),
		tjWM(100, "+I[1 31 o31 | 1 30 r30]"),
	}},
	{"inner: no version yet drops the order; another key never matches", false, []temporalStep{
		{side: 1, kind: kI, key: 2, at: 1, val: "r"},
		{side: 0, kind: kI, key: 1, at: 3, val: "o"},
		{side: 0, kind: kI, key: nil, at: 3, val: "n"},
		tjWM(50),
	}},
	{"left: delete of a version (-D): an order after it gets NULLs", true, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "r5"},
		{side: 1, kind: kD, key: 1, at: 20, val: "r5"},
		{side: 0, kind: kI, key: 1, at: 10, val: "o10"},
		{side: 0, kind: kI, key: 1, at: 25, val: "o25"},
		{side: 0, kind: kI, key: nil, at: 25, val: "n", want: []string{"+I[null 25 n | null null null]"}},
		tjWM(100, "+I[1 10 o10 | 1 5 r5]", "+I[1 25 o25 | null null null]"),
	}},
	{"inner: -U then +U at one time replace the version", false, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "a"},
		{side: 1, kind: kUB, key: 1, at: 8, val: "a"},
		{side: 1, kind: kUA, key: 1, at: 8, val: "b"},
		{side: 0, kind: kI, key: 1, at: 9, val: "o"},
		{side: 0, kind: kI, key: 1, at: 6, val: "p"},
		tjWM(10, "+I[1 9 o | 1 8 b]", "+I[1 6 p | 1 5 a]"),
	}},
	{"-U with the old version's time is ignored, a -D at it ends the version", true, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "a"},
		{side: 1, kind: kI, key: 2, at: 5, val: "x"},
		{side: 1, kind: kUB, key: 1, at: 5, val: "a"},
		{side: 1, kind: kUA, key: 1, at: 8, val: "b"},
		{side: 1, kind: kD, key: 2, at: 5, val: "x"},
		{side: 0, kind: kI, key: 1, at: 6, val: "p"},
		{side: 0, kind: kI, key: 1, at: 9, val: "o"},
		{side: 0, kind: kI, key: 2, at: 6, val: "q"},
		tjWM(10, "+I[1 6 p | 1 5 a]", "+I[1 9 o | 1 8 b]", "+I[2 6 q | null null null]"),
	}},
	{"changelog probe: each change joins the version valid at its own time, with its kind", true, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "a"},
		{side: 1, kind: kUA, key: 1, at: 15, val: "b"},
		{side: 0, kind: kI, key: 1, at: 10, val: "o"},
		{side: 0, kind: kUB, key: 1, at: 10, val: "o"},
		{side: 0, kind: kUA, key: 1, at: 16, val: "o2"},
		{side: 0, kind: kUB, key: nil, at: 16, val: "n", want: []string{"-U[null 16 n | null null null]"}},
		tjWM(12, "+I[1 10 o | 1 5 a]", "-U[1 10 o | 1 5 a]"),
		{side: 0, kind: kD, key: 1, at: 16, val: "o2"},
		{side: 0, kind: kI, key: 2, at: 20, val: "x"},
		{side: 0, kind: kD, key: 2, at: 20, val: "x"},
		tjWM(30, "+U[1 16 o2 | 1 15 b]", "-D[1 16 o2 | 1 15 b]", "+I[2 20 x | null null null]", "-D[2 20 x | null null null]"),
	}},
	{"late order joins the versions still kept", true, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "a"},
		{side: 1, kind: kUA, key: 1, at: 15, val: "b"},
		tjWM(20),
		{side: 0, kind: kI, key: 1, at: 30, val: "o30"},
		{side: 0, kind: kI, key: 1, at: 7, val: "late"}, // version a was dropped at 20
		tjWM(31, "+I[1 30 o30 | 1 15 b]", "+I[1 7 late | null null null]"),
	}},
}

func TestTemporalJoinChangelog(t *testing.T) {
	for _, tc := range temporalCases {
		t.Run(tc.name, func(t *testing.T) {
			runTemporal(t, NewTemporalJoin(temporalSpec(tc.left)), tc.steps)
		})
	}
}

// A null key gets NULLs at once in a LEFT join, and a deleted version
// stays deleted.
func TestTemporalJoinLeftNullKeyAndDelete(t *testing.T) {
	runTemporal(t, NewTemporalJoin(temporalSpec(true)), []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "r5"},
		{side: 1, kind: kD, key: 1, at: 20, val: "r5"},
		{side: 0, kind: kI, key: 1, at: 10, val: "o10"},
		{side: 0, kind: kI, key: 1, at: 25, val: "o25"},
		{side: 0, kind: kI, key: nil, at: 25, val: "n", want: []string{"+I[null 25 n | null null null]"}},
		tjWM(100, "+I[1 10 o10 | 1 5 r5]", "+I[1 25 o25 | null null null]"),
		{side: 0, kind: kI, key: 1, at: 200, val: "o200"},
		tjWM(operator.MaxWatermark, "+I[1 200 o200 | null null null]"),
	})
}

// Old versions are dropped once the watermark passes a newer one, and a
// key whose last version is a delete leaves no state.
func TestTemporalJoinStateCleanup(t *testing.T) {
	j := NewTemporalJoin(temporalSpec(false))
	runTemporal(t, j, []temporalStep{
		{side: 1, kind: kI, key: 1, at: 5, val: "a"},
		{side: 1, kind: kUA, key: 1, at: 10, val: "b"},
		{side: 1, kind: kUA, key: 1, at: 15, val: "c"},
		{side: 1, kind: kI, key: 2, at: 5, val: "x"},
		{side: 1, kind: kD, key: 2, at: 6, val: "x"},
		{side: 0, kind: kI, key: 1, at: 50, val: "o"},
	})
	if got := j.StateEntries(); got != 6 {
		t.Fatalf("entries before the watermark = %d, want 6", got)
	}
	runTemporal(t, j, []temporalStep{tjWM(12)})
	// key 1 keeps b (valid at 12) and c, and the held order; key 2 none.
	if got := j.StateEntries(); got != 3 {
		t.Fatalf("entries after watermark 12 = %d, want 3", got)
	}
	if _, ok := j.Keys[string(row.KeyOf(nil, temporalRow(2, 0, ""), []int{0}))]; ok {
		t.Errorf("key 2 (deleted) still has state")
	}
	runTemporal(t, j, []temporalStep{tjWM(60, "+I[1 50 o | 1 15 c]")})
	if got := j.StateEntries(); got != 1 {
		t.Fatalf("entries after watermark 60 = %d, want 1 (the valid version)", got)
	}
}

// Restoring a snapshot taken mid-stream gives the same output as not
// stopping.
func TestTemporalJoinSnapshotRestore(t *testing.T) {
	for _, tc := range temporalCases {
		for cut := range len(tc.steps) + 1 {
			t.Run(fmt.Sprintf("%s/cut%d", tc.name, cut), func(t *testing.T) {
				j := NewTemporalJoin(temporalSpec(tc.left))
				runTemporal(t, j, tc.steps[:cut])
				state, err := j.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				r := NewTemporalJoin(temporalSpec(tc.left))
				if err := r.Restore(state); err != nil {
					t.Fatal(err)
				}
				if r.StateEntries() != j.StateEntries() {
					t.Errorf("restored entries %d, want %d", r.StateEntries(), j.StateEntries())
				}
				runTemporal(t, r, tc.steps[cut:])
			})
		}
	}
}

func TestTemporalJoinRestoreRefusesBadState(t *testing.T) {
	j := NewTemporalJoin(temporalSpec(false))
	runTemporal(t, j, temporalCases[1].steps[:4])
	state, _ := j.Snapshot()
	for _, bad := range [][]byte{nil, {9}, state[:len(state)-1], append(slices.Clone(state), 0)} {
		if err := NewTemporalJoin(temporalSpec(false)).Restore(bad); err == nil {
			t.Errorf("Restore(%x) accepted", bad)
		}
	}
}

// A state written before held left changes kept their kind (version 1)
// restores its rows as inserts.
func TestTemporalJoinRestoresVersion1(t *testing.T) {
	state := []byte{temporalStateVersionV1}
	state = binary.AppendVarint(state, operator.NoWatermark)
	state = binary.AppendUvarint(state, 1)
	state = binary.AppendUvarint(state, 1) // one key
	state = binary.AppendUvarint(state, 1) // one held left row
	state = binary.AppendUvarint(state, 1)
	state = row.AppendRow(state, temporalRow(1, 10, "o"))
	state = binary.AppendUvarint(state, 1) // one version
	state = append(state, byte(row.Insert))
	state = row.AppendRow(state, temporalRow(1, 5, "a"))
	j := NewTemporalJoin(temporalSpec(false))
	if err := j.Restore(state); err != nil {
		t.Fatal(err)
	}
	runTemporal(t, j, []temporalStep{tjWM(20, "+I[1 10 o | 1 5 a]")})
}
