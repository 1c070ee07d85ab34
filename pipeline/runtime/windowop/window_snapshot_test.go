package windowop

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// windowSnapshotInput feeds a window aggregate of spec rows with keys
// (STRING, BIGINT) short and long: windows that fire at a watermark
// (freeing slots that later keys reuse), a late row, rows out of order.
func windowSnapshotInput(t *testing.T, spec WindowSpec) *WindowAgg {
	g := optest.Must(NewWindowAgg(spec, []int{1, 2}, snapshotAggs, WindowOptions{}))
	out := &optest.Out{}
	long := "a key long enough to leave the inline bytes"
	steps := []struct {
		min  int64
		name string
		k, v int64
	}{{0, "a", 1, 10}, {1, long, 2, 20}, {5, "a", 1, 30}, {3, "b", 1, 40}, {-1, "", 0, 0}, {1, "c", 1, 45},
		{9, long, 2, 50}, {7, "c", 3, 60}, {12, "a", 1, 70}, {8, "b", 1, 80}, {13, "d", 4, 90}}
	for _, s := range steps {
		if s.min < 0 {
			if err := g.Watermark(6*optest.Minute, out); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b := optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.TimestampValue(s.min * optest.Minute), row.StringValue(s.name), row.BigIntValue(s.k), row.BigIntValue(s.v)}})
		if err := g.Process(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

var snapshotAggs = []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 3, ArgType: optest.TBigInt}}

var snapshotSpecs = []WindowSpec{
	{Kind: Hop, Size: 4 * optest.Minute, Slide: 2 * optest.Minute},
	{Kind: Cumulate, Size: 8 * optest.Minute, Step: 2 * optest.Minute},
}

// groupsHex is a window aggregate's key group parts, "k:hex" joined by
// spaces.
func groupsHex(t *testing.T, g *WindowAgg) string {
	var parts []string
	if err := g.SnapshotGroups(func(k int, b []byte) error {
		parts = append(parts, fmt.Sprintf("%d:%x", k, b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(parts, " ")
}

// The snapshots of windowSnapshotInput's operators (whole, and by key
// group) as main wrote them while the store kept a key string per slot
// (bfe6d1c4): the layout did not change when the keys moved to the
// window's key table.
var windowSnapshots = []struct{ whole, groups string }{
	{
		"" +
			"0180a8a9d7020a020580e0e1c90380989abc0480d0d2ae0580888ba10680c0c393070480a8a9d702010280e0e1c90301" +
			"0380989abc0402050080888ba1060201040006000e070001620300010000000000000002a001020e0700016103000100" +
			"000000000000028c01020e0700016103000100000000000000023c020e07000163030003000000000000000278020e07" +
			"0001640300040000000000000002b401023807002b61206b6579206c6f6e6720656e6f75676820746f206c6561766520" +
			"74686520696e6c696e6520627974657303000200000000000000026402",
		"" +
			"0:010200000000 68:01000280a8a9d702010080888ba10601010002250e0700016103000100000000000000023c020e" +
			"0700016103000100000000000000028c0102 69:01000180989abc0401000001130e0700016203000100000000000000" +
			"02a00102 74:01000180989abc04010000013c3807002b61206b6579206c6f6e6720656e6f75676820746f206c656176" +
			"652074686520696e6c696e6520627974657303000200000000000000026402 81:01000180888ba10601000001130e07" +
			"0001640300040000000000000002b40102 115:01000180e0e1c90301000001120e07000163030003000000000000000" +
			"27802",
	},
	{
		"" +
			"0180a8a9d7020a00000380e0e1c903010080989abc0402030780888ba106020608020080e0e1c903040405010280e0e1" +
			"c90380989abc040009000e07000163030003000000000000000278020e07000162030001000000000000000250020e07" +
			"00016303000100000000000000025a023807002b61206b6579206c6f6e6720656e6f75676820746f206c656176652074" +
			"686520696e6c696e65206279746573030002000000000000000264020e07000161030001000000000000000450043807" +
			"002b61206b6579206c6f6e6720656e6f75676820746f206c656176652074686520696e6c696e65206279746573030002" +
			"000000000000000228020e0700016103000100000000000000028c01020e070001620300010000000000000002a00102" +
			"0e070001640300040000000000000002b40102",
		"" +
			"48:010000020080e0e1c903010080e0e1c90380989abc040001120e0700016303000100000000000000025a02 68:010" +
			"00180888ba1060100020080e0e1c903010180e0e1c90380989abc040002250e0700016103000100000000000000028c0" +
			"1020e0700016103000100000000000000045004 69:01000180989abc040100020080e0e1c903010180e0e1c90380989" +
			"abc040002250e070001620300010000000000000002a001020e0700016203000100000000000000025002 74:0100018" +
			"0989abc040100020080e0e1c903010180e0e1c90380989abc040002783807002b61206b6579206c6f6e6720656e6f756" +
			"76820746f206c656176652074686520696e6c696e65206279746573030002000000000000000264023807002b61206b6" +
			"579206c6f6e6720656e6f75676820746f206c656176652074686520696e6c696e6520627974657303000200000000000" +
			"000022802 81:01000180888ba1060100020080e0e1c9030080e0e1c90380989abc040001130e0700016403000400000" +
			"00000000002b40102 115:01000180e0e1c9030100020080e0e1c9030080e0e1c90380989abc040001120e0700016303" +
			"000300000000000000027802",
	},
}

// TestWindowSnapshotsUnchanged checks that WindowAgg writes the bytes it
// wrote before, whole and by key group, restores them both ways, and
// goes on from them as the operator that was not restarted does.
func TestWindowSnapshotsUnchanged(t *testing.T) {
	for i, spec := range snapshotSpecs {
		g := windowSnapshotInput(t, spec)
		a, err := g.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		want := windowSnapshots[i]
		if got := hex.EncodeToString(a); got != want.whole {
			t.Errorf("%s snapshot\n%s\nwant\n%s", spec.Kind, got, want.whole)
		}
		if got := groupsHex(t, g); got != want.groups {
			t.Errorf("%s key groups\n%s\nwant\n%s", spec.Kind, got, want.groups)
		}
		if t.Failed() {
			continue
		}
		finish := func(g *WindowAgg) []string {
			out := &optest.Out{}
			if err := g.Finish(out); err != nil {
				t.Fatal(err)
			}
			return out.Take()
		}
		// Restored whole: the same bytes again, the same rows in the
		// same order.
		g2 := optest.Must(NewWindowAgg(spec, []int{1, 2}, snapshotAggs, WindowOptions{}))
		saved, _ := hex.DecodeString(want.whole)
		if err := g2.Restore(saved); err != nil {
			t.Fatal(err)
		}
		if again, err := g2.Snapshot(); err != nil || hex.EncodeToString(again) != want.whole {
			t.Fatalf("%s: restored aggregate writes %x, %v", spec.Kind, again, err)
		}
		// Restored from its key groups: the same rows (a window's keys in
		// the order of their groups).
		g3 := optest.Must(NewWindowAgg(spec, []int{1, 2}, snapshotAggs, WindowOptions{}))
		var parts [][]byte
		for _, p := range strings.Fields(want.groups) {
			b, _ := hex.DecodeString(p[strings.IndexByte(p, ':')+1:])
			parts = append(parts, b)
		}
		shared, _ := g.SnapshotShared()
		if err := g3.RestoreGroups(parts); err != nil {
			t.Fatal(err)
		}
		if err := g3.RestoreShared([][]byte{shared}); err != nil {
			t.Fatal(err)
		}
		rows := finish(g)
		if got := finish(g2); !slices.Equal(got, rows) || len(rows) == 0 {
			t.Fatalf("%s: restored aggregate emits\n%q\nwant\n%q", spec.Kind, got, rows)
		}
		got := finish(g3)
		slices.Sort(got)
		slices.Sort(rows)
		if !slices.Equal(got, rows) {
			t.Fatalf("%s: aggregate restored from key groups emits\n%q\nwant\n%q", spec.Kind, got, rows)
		}
	}
}
