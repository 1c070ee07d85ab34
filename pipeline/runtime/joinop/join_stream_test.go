package joinop

import (
	"bytes"
	"testing"

	"github.com/etld/etld/pipeline/row"
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

// TestJoinSnapshotTo: a regular join's state is written in pieces, never
// whole, and RestoreFrom gives a join with the same state.
func TestJoinSnapshotTo(t *testing.T) {
	j := NewJoin(joinSpec2(LeftJoin))
	for side := range 2 {
		for from := 0; from < 50_000; from += 1000 {
			b := &row.Batch{}
			for k := from; k < from+1000; k++ {
				b.Append(row.Insert, row.Row{row.BigIntValue(int64(k)), row.StringValue("some payload text")})
			}
			if err := j.ProcessInput(side, b, &optest.Discard{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got pieces
	if err := j.SnapshotTo(&got); err != nil {
		t.Fatal(err)
	}
	if got.largest > pieceBytes+4<<10 || got.largest >= got.Len()/2 {
		t.Errorf("a write of %d bytes for a snapshot of %d: not in pieces", got.largest, got.Len())
	}
	r := NewJoin(joinSpec2(LeftJoin))
	if err := r.RestoreFrom(bytes.NewReader(got.Bytes()), int64(got.Len())); err != nil {
		t.Fatal(err)
	}
	again, err := r.Snapshot()
	if err != nil || !bytes.Equal(again, got.Bytes()) || r.StateEntries() != j.StateEntries() {
		t.Fatalf("restored %d entries of %d; snapshot equal %v (%v)", r.StateEntries(), j.StateEntries(), bytes.Equal(again, got.Bytes()), err)
	}
}
