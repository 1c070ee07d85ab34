package runtime_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// endEmitter is a worker whose Finish emits n rows (its index, j), after
// wait (when set) returns, failing after fail rows when fail >= 0.
type endEmitter struct {
	i, n, fail int
	wait       func() error
}

func (e *endEmitter) Watermark(int64, operator.Emitter) error { return nil }
func (e *endEmitter) Finish(out operator.Emitter) error {
	if e.wait != nil {
		if err := e.wait(); err != nil {
			return err
		}
	}
	for j := range e.n {
		if j == e.fail {
			return fmt.Errorf("worker %d failed", e.i)
		}
		out.Emit(row.Insert, row.Row{row.BigIntValue(int64(e.i)), row.BigIntValue(int64(j))})
	}
	return nil
}
func (e *endEmitter) Snapshot() ([]byte, error)                        { return nil, nil }
func (e *endEmitter) Restore([]byte) error                             { return nil }
func (e *endEmitter) SnapshotGroups(func(g int, b []byte) error) error { return nil }
func (e *endEmitter) RestoreGroups([][]byte) error                     { return nil }
func (e *endEmitter) Process(*row.Batch, operator.Emitter) error       { return nil }

// countingEmitter counts rows and closes reached when it has seen at.
type countingEmitter struct {
	rows    []row.Row
	at      int
	reached chan struct{}
}

func (c *countingEmitter) Emit(_ row.Kind, r row.Row) {
	c.rows = append(c.rows, r)
	if len(c.rows) == c.at {
		close(c.reached)
	}
}

func keyedEnds(t *testing.T, workers []*endEmitter) *runtime.Keyed {
	t.Helper()
	next := 0
	k, err := runtime.NewKeyed([]int{0}, len(workers), func() (operator.KeyGrouped, error) {
		w := workers[next]
		w.i, next = next, next+1
		return w, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// At the end the first worker's changes reach the node's emitter while
// the others still run (they are not all held until the last ends), and
// the changes go out worker after worker.
func TestKeyedEndStreamsWorkerAfterWorker(t *testing.T) {
	const n = 5000
	out := &countingEmitter{at: n, reached: make(chan struct{})}
	last := &endEmitter{n: n, fail: -1, wait: func() error {
		select {
		case <-out.reached:
			return nil
		case <-time.After(20 * time.Second):
			return errors.New("the first worker's changes did not reach the emitter while the last ran")
		}
	}}
	k := keyedEnds(t, []*endEmitter{{n: n, fail: -1}, {n: n, fail: -1}, last})
	if err := k.Finish(out); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 3*n {
		t.Fatalf("%d rows, want %d", len(out.rows), 3*n)
	}
	for i, r := range out.rows {
		if w, j := r[0].Int64(), r[1].Int64(); w != int64(i/n) || j != int64(i%n) {
			t.Fatalf("row %d is worker %d's %d, want worker %d's %d", i, w, j, i/n, i%n)
		}
	}
}

// A worker's error is the end's, and no later worker's change goes out
// after it.
func TestKeyedEndStopsAtAWorkersError(t *testing.T) {
	for _, failing := range []int{0, 1, 2} {
		ws := []*endEmitter{{n: 3000, fail: -1}, {n: 3000, fail: -1}, {n: 3000, fail: -1}}
		ws[failing].fail = 2500
		out := &countingEmitter{at: -1}
		err := keyedEnds(t, ws).Finish(out)
		if want := fmt.Sprintf("worker %d failed", failing); err == nil || err.Error() != want {
			t.Fatalf("worker %d failing: error %v, want %q", failing, err, want)
		}
		for _, r := range out.rows {
			if w := r[0].Int64(); w > int64(failing) {
				t.Fatalf("worker %d failing: worker %d's row went out", failing, w)
			}
		}
		if len(out.rows) < failing*3000 {
			t.Fatalf("worker %d failing: %d rows, want those of the workers before it", failing, len(out.rows))
		}
	}
}
