package aggop

import (
	"bytes"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
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

// TestGroupAggSnapshotTo: a streamed snapshot is Snapshot's bytes, in
// pieces no larger than about stateFlushBytes (never the whole state),
// with and without a state TTL; RestoreFrom restores it to the same
// state. (The aggregates keep no maps, whose order in a snapshot is
// Go's map order, so that the bytes can be compared.)
func TestGroupAggSnapshotTo(t *testing.T) {
	aggs := []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
		{Func: Max, Arg: 1, ArgType: optest.TBigInt},
		{Func: FirstValue, Arg: 0, ArgType: row.Type{ID: row.String}},
	}
	for _, ttl := range []time.Duration{0, time.Hour} {
		g := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: true}))
		if ttl > 0 {
			g.SetStateTTL(operator.StateTTL{TTL: ttl, Now: func() time.Time { return time.UnixMilli(1_000_000) }})
		}
		for from := 0; from < 100_000; from += 1000 {
			b := &row.Batch{}
			for i := from; i < from+1000; i++ {
				b.Append(row.Insert, row.Row{row.StringValue(string(rune('a'+i%26)) + string(rune(i))), row.BigIntValue(int64(i % 97))})
			}
			if err := g.Process(b, &optest.Discard{}); err != nil {
				t.Fatal(err)
			}
		}
		want, err := g.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		var got pieces
		if err := g.SnapshotTo(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("ttl %v: SnapshotTo wrote %d bytes that differ from Snapshot's %d", ttl, got.Len(), len(want))
		}
		if got.largest > stateFlushBytes+64<<10 || got.largest >= len(want)/2 {
			t.Errorf("ttl %v: a write of %d bytes for a snapshot of %d: not in pieces", ttl, got.largest, len(want))
		}
		r := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: true}))
		if ttl > 0 {
			r.SetStateTTL(operator.StateTTL{TTL: ttl, Now: func() time.Time { return time.UnixMilli(1_000_000) }})
		}
		if err := r.RestoreFrom(bytes.NewReader(got.Bytes()), int64(got.Len())); err != nil {
			t.Fatal(err)
		}
		again, err := r.Snapshot()
		if err != nil || !bytes.Equal(again, want) || r.Groups() != g.Groups() {
			t.Fatalf("ttl %v: restored %d groups of %d, snapshot equal %v (%v)", ttl, r.Groups(), g.Groups(), bytes.Equal(again, want), err)
		}
	}
}
