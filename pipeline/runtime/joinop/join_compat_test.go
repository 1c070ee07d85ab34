package joinop

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// Join snapshots written before the side state moved into row arenas
// (version 1, and version 2 with TTL times; same layout since): each
// restores into today's join, which then goes on as the old one did.
func TestJoinRestoresOldSnapshots(t *testing.T) {
	long := "a long value that is longer than twelve bytes"
	uniq := joinSpec2(LeftJoin)
	uniq.RightUnique = []int{0}
	notIn := joinSpec2(AntiJoin)
	notIn.NullAware = true
	notIn.RightWidth = 1
	tests := []struct {
		name  string
		spec  JoinSpec
		ttl   bool
		state string
		steps []optest.TTLStep
	}{
		// FULL JOIN after +I[1,a] +I[1,a] +I[2,b] (left), +I[2,y] +I[3,z]
		// (right), +I[4,<long>] (left).
		{"full", joinSpec2(FullJoin), false,
			"01000302030207016102000203040701620101020308072d61206c6f6e672076616c75652074686174206973206c6f6e676572207468616e207477656c7665206279746573010002020304070179010102030607017a01000000000000",
			[]optest.TTLStep{
				{At: 0, Side: 1, In: optest.Ins(1, "x"), Want: []string{"-D[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, x]", "+I[1, a, 1, x]"}},
				{At: 0, Side: 0, In: optest.Del(2, "b"), Want: []string{"-D[2, b, 2, y]", "+I[null, null, 2, y]"}},
				{At: 0, Side: 1, In: optest.Del(3, "z"), Want: []string{"-D[null, null, 3, z]"}},
				{At: 0, Side: 1, In: optest.Ins(4, "w"), Want: []string{"-D[4, " + long + ", null, null]", "+I[4, " + long + ", 4, w]"}},
				{At: 0, Side: 0, In: optest.Del(1, "a"), Want: []string{"-D[1, a, 1, x]"}},
			}},
		// LEFT JOIN, right unique on k, after +I[1,m] (left), +I[1,a]
		// (right), +I[2,n] (left), +I[3,c] (right).
		{"unique", uniq, false,
			"01000202030207016d010102030407016e010002020302070161010102030607016301000000000000",
			[]optest.TTLStep{
				{At: 0, Side: 1, In: optest.UB(1, "a"), Want: []string{"-U[1, m, 1, a]", "+I[1, m, null, null]"}},
				{At: 0, Side: 1, In: optest.UA(1, "b"), Want: []string{"-D[1, m, null, null]", "+I[1, m, 1, b]"}},
				{At: 0, Side: 0, In: optest.Ins(3, "o"), Want: []string{"+I[3, o, 3, c]"}},
			}},
		// NOT IN after +I[1,a] +I[null,n] (left), +I[2] (right), +I[3,c]
		// (left).
		{"not in", notIn, false,
			"0100020203020701610100020306070163010001010304010001020007016e010002000000",
			[]optest.TTLStep{
				{At: 0, Side: 1, In: optest.Del(2), Want: []string{"+I[null, n]"}},
				{At: 0, Side: 1, In: optest.Ins(3), Want: []string{"-D[3, c]", "-D[null, n]"}},
			}},
		// LEFT JOIN with a 10 s TTL: +I[1,a] (left) at 1 s, +I[1,x]
		// (right) and +I[2,b] (left) at 5 s.
		{"ttl", joinSpec2(LeftJoin), true,
			"020002020302070161010190eeabfef962020304070162010090eeabfef96201020302070178010190eeabfef9620000000000",
			[]optest.TTLStep{
				{At: 12, Side: 0, In: optest.Ins(1, "c"), Want: []string{"+I[1, c, 1, x]"}},
				{At: 16, Side: 1, In: optest.Ins(1, "y"), Want: []string{"+I[1, c, 1, y]"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, err := hex.DecodeString(tt.state)
			if err != nil {
				t.Fatal(err)
			}
			clock := optest.NewFakeClock()
			j := NewJoin(tt.spec)
			if tt.ttl {
				j.SetStateTTL(operator.StateTTL{TTL: optest.TTL10s, Now: clock.Now})
			}
			if err := j.Restore(state); err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				clock.Set(s.At)
				out := &optest.Out{}
				if err := j.ProcessInput(s.Side, &row.Batch{Changes: []row.Change{s.In}}, out); err != nil {
					t.Fatal(err)
				}
				got := out.Take()
				if tt.name == "not in" {
					slices.Sort(got)
				}
				if !slices.Equal(got, s.Want) {
					t.Errorf("step %d (%s): got %q, want %q", i, s.In, got, s.Want)
				}
			}
		})
	}
}

// An interval join snapshot written while its cache was Go maps (same
// version and layout since): FULL JOIN after left +I[1,100,a]
// +I[1,100,b], right +I[1,103,x], left +I[2,104,c], right
// +I[NULL,105,n], watermark 90, right +I[3,120,z].
const goldenIntervalJoin = "01b4019e010b00040a0300020000000000000000f40101d001010303040ad001070163000000020000010000ec0101d2010103000ad20107016e000a030003000000000000000000008a0201f001010303060af00107017a000a0300010000000000000000ec0101c801020303020ac801070161010303020ac80107016201e80101ce01010303020ace0107017801"

func TestIntervalJoinRestoresOldSnapshot(t *testing.T) {
	state, err := hex.DecodeString(goldenIntervalJoin)
	if err != nil {
		t.Fatal(err)
	}
	j := NewIntervalJoin(ijSpec(FullJoin))
	if err := j.Restore(state); err != nil {
		t.Fatal(err)
	}
	if got := j.StateEntries(); got != 6 {
		t.Fatalf("restored %d rows, want 6", got)
	}
	runIJ(t, j, []ijStep{
		{0, 3, 118, "w", []string{"+I[3 118 w | 3 120 z]"}},
		{1, 1, 101, "y", []string{"+I[1 100 a | 1 101 y]", "+I[1 100 b | 1 101 y]"}},
		ijWM(operator.MaxWatermark-1, "+I[2 104 c | null null null]", "+I[null null null | null 105 n]"),
	})
	if got := j.StateEntries(); got != 0 {
		t.Errorf("%d rows left after the last watermark", got)
	}
}

// A LEFT JOIN of append-only sides (BIGINT, STRING, TIMESTAMP, DOUBLE
// each) as a join wrote it while its sides stored AppendRow's encoding:
// left +I[1,a,1000,0.5] twice, +I[2,null,null,null],
// +I[3,<long>,-5,-2.25], right +I[1,x,7,1.5], +I[4,,0,2.0].
const goldenAppendOnlyJoin = "0100040403020701610ad00f05000000000000e03f01010403020701610ad00f05000000000000e03f0101040304000000010004030607326c6f6e672074657874206c6f6e672074657874206c6f6e672074657874206c6f6e672074657874206c6f6e672074657874200a090500000000000002c00100020403020701780a0e05000000000000f83f010004030807000a0005000000000000004001000000000000"

func appendOnlySpec(types bool) JoinSpec {
	spec := JoinSpec{Kind: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 4, LeftAppendOnly: true, RightAppendOnly: true}
	if types {
		spec.LeftTypes = []row.TypeID{row.BigInt, row.String, row.Timestamp, row.Double}
		spec.RightTypes = spec.LeftTypes
	}
	return spec
}

// The sides now store rows by their columns' types (row.Layout), and a
// snapshot still writes AppendRow's encoding: the old snapshot restores,
// the join goes on from it, and the same changes make the same bytes.
func TestAppendOnlyJoinSnapshotFormat(t *testing.T) {
	ts := row.TimestampValue
	long := strings.Repeat("long text ", 5)
	state, err := hex.DecodeString(goldenAppendOnlyJoin)
	if err != nil {
		t.Fatal(err)
	}
	for _, types := range []bool{true, false} {
		j := NewJoin(appendOnlySpec(types))
		if err := j.Restore(state); err != nil {
			t.Fatal(err)
		}
		for i, s := range []optest.TTLStep{
			{Side: 1, In: optest.Ins(2, "y", ts(9), 3.0), Want: []string{"-D[2, null, null, null, null, null, null, null]", "+I[2, null, null, null, 2, y, 1970-01-01T00:00:00.000009, 3.0]"}},
			{Side: 1, In: optest.Ins(3, nil, nil, nil), Want: []string{"-D[3, " + long + ", 1969-12-31T23:59:59.999995, -2.25, null, null, null, null]", "+I[3, " + long + ", 1969-12-31T23:59:59.999995, -2.25, 3, null, null, null]"}},
			{Side: 0, In: optest.Ins(4, "b", ts(1), 0.0), Want: []string{"+I[4, b, 1970-01-01T00:00:00.000001, 0.0, 4, , 1970-01-01T00:00, 2.0]"}},
			{Side: 1, In: optest.Ins(1, "z", ts(2), 1.0), Want: []string{"+I[1, a, 1970-01-01T00:00:00.001, 0.5, 1, z, 1970-01-01T00:00:00.000002, 1.0]", "+I[1, a, 1970-01-01T00:00:00.001, 0.5, 1, z, 1970-01-01T00:00:00.000002, 1.0]"}},
		} {
			out := &optest.Out{}
			if err := j.ProcessInput(s.Side, &row.Batch{Changes: []row.Change{s.In}}, out); err != nil {
				t.Fatal(err)
			}
			if got := out.Take(); !slices.Equal(got, s.Want) {
				t.Errorf("types %v, step %d (%s): got %q, want %q", types, i, s.In, got, s.Want)
			}
		}
	}
	j := NewJoin(appendOnlySpec(true))
	for _, s := range []struct {
		side int
		c    row.Change
	}{
		{0, optest.Ins(1, "a", ts(1000), 0.5)},
		{0, optest.Ins(1, "a", ts(1000), 0.5)},
		{0, optest.Ins(2, nil, nil, nil)},
		{0, optest.Ins(3, long, ts(-5), -2.25)},
		{1, optest.Ins(1, "x", ts(7), 1.5)},
		{1, optest.Ins(4, "", ts(0), 2.0)},
	} {
		if err := j.ProcessInput(s.side, &row.Batch{Changes: []row.Change{s.c}}, &optest.Out{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if h := hex.EncodeToString(got); h != goldenAppendOnlyJoin {
		t.Errorf("snapshot of the same changes:\n got %s\nwant %s", h, goldenAppendOnlyJoin)
	}
}
