package windowop

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// sessionSnapshotInput feeds a SESSION aggregate and a SESSION table the
// same rows: keys (STRING, BIGINT) short and long, sessions that merge,
// a watermark that fires some, a late row.
func sessionSnapshotInput(t *testing.T) (*SessionAgg, *SessionTable) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 3, ArgType: optest.TBigInt}}
	g := optest.Must(NewSessionAgg(0, 5*optest.Minute, []int{1, 2}, aggs, WindowOptions{}))
	tab := optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: 5 * optest.Minute, TimeCol: 0}, Keys: []int{1, 2}}))
	out := &optest.Out{}
	long := "a key long enough to leave the inline bytes"
	steps := []struct {
		min  int64
		name string
		k, v int64
	}{{0, "a", 1, 10}, {1, long, 2, 20}, {12, "a", 1, 30}, {6, "a", 1, 40}, {3, "b", 1, 50}, {-1, "", 0, 0}, {20, long, 2, 60}, {2, "c", 3, 70}, {30, "a", 1, 80}, {22, "b", 1, 90}}
	for _, s := range steps {
		if s.min < 0 {
			if err := g.Watermark(10*optest.Minute, out); err != nil {
				t.Fatal(err)
			}
			if err := tab.Watermark(10*optest.Minute, out); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b := optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.TimestampValue(s.min * optest.Minute), row.StringValue(s.name), row.BigIntValue(s.k), row.BigIntValue(s.v)}})
		if err := g.Process(b, out); err != nil {
			t.Fatal(err)
		}
		if err := tab.Process(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return g, tab
}

// The snapshots of sessionSnapshotInput's operators as main wrote them
// before the session set kept its keys in a key table and reused its
// sessions (e21bb9e2): the layout did not change.
const (
	sessionAggSnapshot = "" +
		"0180989abc040a02080580d0d2ae0580dcdfcc07020280a8a9d70280b4b6f504030380b0b4f80880bcc1960b040580c8" +
		"ceb40d80d4dbd20f010680e8ecea0980f4f9880c000705000e070001620300010000000000000002b401020e07000161" +
		"0300010000000000000002a001020e0700016103000100000000000000023c020e070001610300010000000000000002" +
		"50023807002b61206b6579206c6f6e6720656e6f75676820746f206c656176652074686520696e6c696e652062797465" +
		"7303000200000000000000027802"
	sessionTableSnapshot = "" +
		"0180989abc040a02080580d0d2ae0580dcdfcc07020e070001610300010000000000000001040a80d0d2ae0507016103" +
		"02033c80a8a9d70280b4b6f504030e070001610300010000000000000001040a80a8a9d7020701610302035080b0b4f8" +
		"0880bcc1960b053807002b61206b6579206c6f6e6720656e6f75676820746f206c656176652074686520696e6c696e65" +
		"2062797465730300020000000000000001040a80b0b4f808072b61206b6579206c6f6e6720656e6f75676820746f206c" +
		"656176652074686520696e6c696e652062797465730304037880c8ceb40d80d4dbd20f060e0700016103000100000000" +
		"00000001040a80c8ceb40d070161030203a00180e8ecea0980f4f9880c070e070001620300010000000000000001040a" +
		"80e8ecea09070162030203b401"
)

// TestSessionSnapshotsUnchanged checks that SessionAgg and SessionTable
// write the bytes they wrote before, restore them, and go on from them
// as the operators that were not restarted do.
func TestSessionSnapshotsUnchanged(t *testing.T) {
	g, tab := sessionSnapshotInput(t)
	a, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tab.SnapshotTo(&b); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(a); got != sessionAggSnapshot {
		t.Fatalf("session aggregate snapshot\n%s\nwant\n%s", got, sessionAggSnapshot)
	}
	if got := hex.EncodeToString(b.Bytes()); got != sessionTableSnapshot {
		t.Fatalf("session table snapshot\n%s\nwant\n%s", got, sessionTableSnapshot)
	}
	g2, tab2 := sessionSnapshotInput(t)
	saved, _ := hex.DecodeString(sessionAggSnapshot)
	if err := g2.Restore(saved); err != nil {
		t.Fatal(err)
	}
	saved, _ = hex.DecodeString(sessionTableSnapshot)
	if err := tab2.Restore(saved); err != nil {
		t.Fatal(err)
	}
	if again, err := g2.Snapshot(); err != nil || hex.EncodeToString(again) != sessionAggSnapshot {
		t.Fatalf("restored session aggregate writes %x, %v", again, err)
	}
	finish := func(op interface {
		Finish(operator.Emitter) error
	}) []string {
		out := &optest.Out{}
		if err := op.Finish(out); err != nil {
			t.Fatal(err)
		}
		return out.Take()
	}
	if got, want := finish(g2), finish(g); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("restored session aggregate emits\n%q\nwant\n%q", got, want)
	}
	if got, want := finish(tab2), finish(tab); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("restored session table emits\n%q\nwant\n%q", got, want)
	}
}
