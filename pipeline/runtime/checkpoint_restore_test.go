package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// streamedKinds are the operators that snapshot in pieces, each with a
// state of several MB: fresh makes an empty one, fill gives it its state.
var streamedKinds = []struct {
	name  string
	fresh func() operator.StreamSnapshotter
	fill  func(t *testing.T, op operator.StreamSnapshotter)
}{
	{"GroupAgg", func() operator.StreamSnapshotter {
		return optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
	}, func(t *testing.T, op operator.StreamSnapshotter) {
		for _, in := range optest.BenchPool(300, 1024, 300_000, 1) {
			if err := op.(operator.Operator).Process(in, &optest.Discard{}); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"Join", func() operator.StreamSnapshotter {
		return joinop.NewJoin(joinop.JoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2})
	}, func(t *testing.T, op operator.StreamSnapshotter) {
		fillRows(t, 200_000, func(k int) row.Row {
			return row.Row{row.BigIntValue(int64(k)), row.StringValue("some payload text")}
		}, func(b *row.Batch) error { return op.(operator.TwoInput).ProcessInput(0, b, &optest.Discard{}) })
	}},
	{"WindowAgg", func() operator.StreamSnapshotter {
		aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
		return optest.Must(windowop.NewWindowAgg(windowop.WindowSpec{Kind: windowop.Tumble, Size: 10 * optest.Minute}, []int{1}, aggs, windowop.WindowOptions{}))
	}, func(t *testing.T, op operator.StreamSnapshotter) {
		fillRows(t, 300_000, func(k int) row.Row {
			return row.Row{row.TimestampValue(int64(k%600) * 1_000_000), row.BigIntValue(int64(k)), row.BigIntValue(int64(k))}
		}, func(b *row.Batch) error { return op.(operator.Operator).Process(b, &optest.Discard{}) })
	}},
	{"SessionTable", func() operator.StreamSnapshotter {
		return optest.Must(windowop.NewSessionTable(windowop.WindowTable{Spec: windowop.WindowSpec{Kind: windowop.Session, Gap: optest.Minute}, Keys: []int{1}}))
	}, func(t *testing.T, op operator.StreamSnapshotter) {
		fillRows(t, 200_000, func(k int) row.Row {
			return row.Row{row.TimestampValue(int64(k%60) * 1_000_000), row.BigIntValue(int64(k % 50_000)), row.StringValue("a payload")}
		}, func(b *row.Batch) error { return op.(operator.Operator).Process(b, &optest.Discard{}) })
	}},
}

// fillRows gives process n rows made by mk, a thousand at a time.
func fillRows(t *testing.T, n int, mk func(k int) row.Row, process func(*row.Batch) error) {
	t.Helper()
	for from := 0; from < n; from += 1000 {
		b := &row.Batch{}
		for k := from; k < from+1000; k++ {
			b.Append(row.Insert, mk(k))
		}
		if err := process(b); err != nil {
			t.Fatal(err)
		}
	}
}

// allocated is the number of bytes f allocates on the Go heap.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestRestoreStreamsParts: the engine restores an operator's part a
// chunk at a time, never the whole part in one buffer: restoring from
// the part allocates no more than restoring from the same bytes already
// in memory, besides a few buffers of a chunk's size; the restored
// operator snapshots the same bytes. A checkpoint holding the state
// whole (format version 1) still restores.
func TestRestoreStreamsParts(t *testing.T) {
	for _, k := range streamedKinds {
		t.Run(k.name, func(t *testing.T) {
			op := k.fresh()
			k.fill(t, op)
			store, err := checkpoint.Open(t.TempDir(), "t")
			if err != nil {
				t.Fatal(err)
			}
			part, size, err := store.WritePart(1, "transform/q/0", op.SnapshotTo)
			if err != nil {
				t.Fatal(err)
			}
			if size < 4<<20 {
				t.Fatalf("a part of %d bytes: too small to tell", size)
			}
			var want bytes.Buffer
			if err := op.SnapshotTo(&want); err != nil {
				t.Fatal(err)
			}
			whole, streamed := k.fresh(), k.fresh()
			var errWhole, errStreamed error
			fromBytes := allocated(func() {
				errWhole = RestoreOperator(store, &checkpoint.Component{Runtime: want.Bytes()}, whole.(operator.Lifecycle))
			})
			fromPart := allocated(func() {
				errStreamed = RestoreOperator(store, &checkpoint.Component{RuntimePart: part}, streamed.(operator.Lifecycle))
			})
			if errWhole != nil || errStreamed != nil {
				t.Fatalf("restore from bytes: %v; from the part: %v", errWhole, errStreamed)
			}
			for _, r := range []operator.StreamSnapshotter{whole, streamed} {
				var got bytes.Buffer
				if err := r.SnapshotTo(&got); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("a restored operator snapshots %d bytes, want the %d it was restored from (%v)", got.Len(), want.Len(), err)
				}
			}
			extra := int64(fromPart) - int64(fromBytes)
			t.Logf("part %d bytes; restore from bytes allocated %d, from the part %d", size, fromBytes, fromPart)
			if extra > 3<<20 {
				t.Errorf("restoring from the part allocated %d bytes more than from bytes in memory (part %d bytes): the part is read whole", extra, size)
			}
		})
	}
}

// errReader fails after its bytes.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

// TestRestoreStreamErrors: a streamed restore whose part ends early, or
// whose reader fails, fails with the cause, for every kind.
func TestRestoreStreamErrors(t *testing.T) {
	for _, k := range streamedKinds {
		t.Run(k.name, func(t *testing.T) {
			op := k.fresh()
			k.fill(t, op)
			var snap bytes.Buffer
			if err := op.SnapshotTo(&snap); err != nil {
				t.Fatal(err)
			}
			half := snap.Bytes()[:snap.Len()/2]
			if err := k.fresh().RestoreFrom(bytes.NewReader(half), int64(len(half))); err == nil {
				t.Error("restored half a snapshot")
			}
			cause := fmt.Errorf("disk gone")
			err := k.fresh().RestoreFrom(&errReader{r: bytes.NewReader(half), err: cause}, int64(snap.Len()))
			if err == nil || !errors.Is(err, cause) {
				t.Errorf("a failing reader: %v, want %v", err, cause)
			}
		})
	}
}
