package windowop

import (
	"bytes"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// pieces records what SnapshotTo writes, and its largest write.
type pieces struct {
	bytes.Buffer
	largest int
}

func (p *pieces) Write(b []byte) (int, error) {
	p.largest = max(p.largest, len(b))
	return p.Buffer.Write(b)
}

// TestWindowAggSnapshotTo: a window aggregate's open windows are written
// in pieces, never whole; RestoreFrom gives an operator that fires the
// same results.
func TestWindowAggSnapshotTo(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	mk := func() *WindowAgg {
		return optest.Must(NewWindowAgg(WindowSpec{Kind: Hop, Size: 10 * optest.Minute, Slide: 5 * optest.Minute}, []int{1}, aggs, WindowOptions{}))
	}
	g := mk()
	for from := 0; from < 60_000; from += 1000 {
		b := &row.Batch{}
		for k := from; k < from+1000; k++ {
			b.Append(row.Insert, row.Row{row.TimestampValue(hhmm("08:00") + int64(k%600)*1_000_000), row.BigIntValue(int64(k % 30_000)), row.BigIntValue(int64(k))})
		}
		if err := g.Process(b, &optest.Discard{}); err != nil {
			t.Fatal(err)
		}
	}
	var got pieces
	if err := g.SnapshotTo(&got); err != nil {
		t.Fatal(err)
	}
	if got.largest > pieceBytes+64<<10 || got.largest >= got.Len()/2 {
		t.Errorf("a write of %d bytes for a snapshot of %d: not in pieces", got.largest, got.Len())
	}
	r := mk()
	if err := r.RestoreFrom(bytes.NewReader(got.Bytes()), int64(got.Len())); err != nil {
		t.Fatal(err)
	}
	fire := func(op *WindowAgg) []string {
		out := &optest.Out{}
		if err := op.Watermark(hhmm("09:00"), out); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out.Lines)
		return out.Lines
	}
	want, restored := fire(g), fire(r)
	if len(want) == 0 || !slices.Equal(restored, want) {
		t.Fatalf("restored operator fired %d rows, the original %d (equal %v)", len(restored), len(want), slices.Equal(restored, want))
	}
}

// TestSessionTableSnapshotTo: a session table's held rows are written in
// pieces; RestoreFrom gives an operator that emits the same rows.
func TestSessionTableSnapshotTo(t *testing.T) {
	mk := func() *SessionTable {
		return optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: optest.Minute}, Keys: []int{1}}))
	}
	g := mk()
	for from := 0; from < 60_000; from += 1000 {
		b := &row.Batch{}
		for k := from; k < from+1000; k++ {
			b.Append(row.Insert, row.Row{row.TimestampValue(hhmm("08:00") + int64(k%60)*1_000_000), row.BigIntValue(int64(k % 20_000)), row.StringValue("a payload")})
		}
		if err := g.Process(b, &optest.Discard{}); err != nil {
			t.Fatal(err)
		}
	}
	var got pieces
	if err := g.SnapshotTo(&got); err != nil {
		t.Fatal(err)
	}
	if got.largest > pieceBytes+4<<10 || got.largest >= got.Len()/2 {
		t.Errorf("a write of %d bytes for a snapshot of %d: not in pieces", got.largest, got.Len())
	}
	r := mk()
	if err := r.RestoreFrom(bytes.NewReader(got.Bytes()), int64(got.Len())); err != nil {
		t.Fatal(err)
	}
	fire := func(op *SessionTable) []string {
		out := &optest.Out{}
		if err := op.Watermark(hhmm("09:00"), out); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out.Lines)
		return out.Lines
	}
	want, restored := fire(g), fire(r)
	if len(want) != 60_000 || !slices.Equal(restored, want) {
		t.Fatalf("restored operator emitted %d rows, the original %d (equal %v)", len(restored), len(want), slices.Equal(restored, want))
	}
}
