package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// events is a log shared by the fake connectors below, in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// feedSource is an unbounded source fed by the test: each value sent on
// feed becomes a one-row batch (BIGINT key = v % 3, BIGINT v). Its
// position is the number of rows read; it commits by logging.
type feedSource struct {
	ev       *events
	feed     chan int64
	read     int64
	restored []byte
	bounded  int64 // > 0: EOF after this many rows
}

func (s *feedSource) Bounded() bool              { return s.bounded > 0 }
func (s *feedSource) Open(context.Context) error { return nil }
func (s *feedSource) Close(context.Context) error {
	s.ev.add("source close")
	return nil
}
func (s *feedSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	if s.bounded > 0 && s.read >= s.bounded {
		return nil, io.EOF
	}
	select {
	case v := <-s.feed:
		s.read++
		return &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(v % 3), row.BigIntValue(v)}}}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (s *feedSource) Position() ([]byte, error) { return binary.AppendVarint(nil, s.read), nil }
func (s *feedSource) Restore(pos []byte) error {
	v, n := binary.Varint(pos)
	if n <= 0 {
		return errors.New("bad position")
	}
	s.read, s.restored = v, pos
	s.ev.add("source restore %d", v)
	return nil
}
func (s *feedSource) Commit(_ context.Context, state []byte) error {
	v, _ := binary.Varint(state)
	s.ev.add("source commit %d", v)
	return nil
}

// logSink logs every call; Flush can be held by the test. Its snapshot is
// the number of rows written; it is a two-phase sink's shape.
type logSink struct {
	ev      *events
	store   *checkpoint.Store
	hold    chan struct{} // if set, Flush waits for it to be closed
	holding chan struct{} // closed when Flush starts waiting
	mu      sync.Mutex
	rows    []string
	flushed int
}

func (s *logSink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, Retract: true}
}
func (s *logSink) Bind(connector.SinkInput) error { return nil }
func (s *logSink) Open(context.Context) error     { return nil }
func (s *logSink) Close(context.Context) error    { s.ev.add("sink close"); return nil }
func (s *logSink) Write(_ context.Context, b *row.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range b.Changes {
		s.rows = append(s.rows, c.String())
	}
	return nil
}
func (s *logSink) Flush(ctx context.Context) error {
	if s.hold != nil {
		close(s.holding)
		select {
		case <-s.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.hold = nil
	}
	s.mu.Lock()
	s.flushed = len(s.rows)
	s.mu.Unlock()
	s.ev.add("sink flush %d", s.flushed)
	return nil
}
func (s *logSink) Snapshot(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ev.add("sink snapshot %d", len(s.rows))
	return binary.AppendVarint(nil, int64(len(s.rows))), nil
}
func (s *logSink) Restore(state []byte) error {
	v, _ := binary.Varint(state)
	s.ev.add("sink restore %d", v)
	return nil
}
func (s *logSink) Commit(_ context.Context, state []byte) error {
	v, _ := binary.Varint(state)
	stored := int64(-1)
	if s.store != nil {
		// What Commit is promised: the checkpoint is stored already.
		if cp, err := s.store.Latest(); err == nil && cp != nil {
			stored = cp.ID
		}
	}
	s.ev.add("sink commit %d stored %d", v, stored)
	return nil
}

// countGraph is feed -> GROUP BY key COUNT(*), SUM(v) -> sink.
func countGraph(src *feedSource, sink *logSink) *Graph {
	return countGraphWith(src, sink, aggop.GroupAggOptions{})
}

func countGraphWith(src *feedSource, sink *logSink, opt aggop.GroupAggOptions) *Graph {
	g := &Graph{Name: "t"}
	sn := &SourceNode{Node: Node{Name: "src", Kind: "source", Fingerprint: "feed"}, Source: src}
	agg := optest.Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 1, ArgType: optest.TBigInt}}, opt))
	op := &OpNode{Node: Node{Name: "agg", Kind: "transform", Fingerprint: "count"}, Input: &sn.Node, Op: agg}
	g.Sources = []*SourceNode{sn}
	g.Ops = []*OpNode{op}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "log"}, Input: &op.Node, Sink: sink, Mode: connector.Retract}}
	return g
}

type runResult struct{ err chan error }

func start(g *Graph, opt Options) runResult {
	r := runResult{err: make(chan error, 1)}
	go func() { r.err <- Run(context.Background(), g, opt) }()
	return r
}

func (r runResult) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.err:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end")
	}
}

// A checkpoint completes only once the sink has flushed; the commits come
// after the checkpoint is stored; an idle unbounded source does not hold
// checkpoints back (its Read is interrupted).
func TestCheckpointWaitsForSinksAndCommitsAfterStore(t *testing.T) {
	store, err := checkpoint.Open(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	src := &feedSource{ev: ev, feed: make(chan int64)}
	sink := &logSink{ev: ev, store: store, hold: make(chan struct{}), holding: make(chan struct{})}
	g := countGraph(src, sink)
	stop := make(chan struct{})
	run := start(g, Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
	src.feed <- 1
	src.feed <- 2
	<-sink.holding
	// The sink has not acked: nothing may be stored or committed.
	if cp, _ := store.Latest(); cp != nil || g.Checkpoints.Count.Load() != 0 {
		t.Fatalf("checkpoint %v stored while a sink was still flushing", cp)
	}
	for _, e := range ev.list() {
		if strings.Contains(e, "commit") {
			t.Fatalf("%q before the checkpoint completed", e)
		}
	}
	close(sink.hold)
	// The source now waits for data: checkpoints must go on regardless.
	testenv.Eventually(t, 10*time.Second, "two checkpoints with an idle source", func() error {
		if n := g.Checkpoints.Count.Load(); n < 2 {
			return fmt.Errorf("%d checkpoints", n)
		}
		return nil
	})
	close(stop)
	run.wait(t)

	log := ev.list()
	// Every sink commit saw its checkpoint stored, and came after the
	// flush and snapshot of the same barrier.
	commits := 0
	for i, e := range log {
		var n, stored int64
		if _, err := fmt.Sscanf(e, "sink commit %d stored %d", &n, &stored); err != nil {
			continue
		}
		commits++
		if stored < 1 {
			t.Errorf("%q: no checkpoint stored at commit time", e)
		}
		if j := slices.Index(log, fmt.Sprintf("sink snapshot %d", n)); j < 0 || j > i {
			t.Errorf("%q without a snapshot of %d rows before it: %q", e, n, log)
		}
	}
	if commits < 2 {
		t.Errorf("%d sink commits, want one per checkpoint: %q", commits, log)
	}
	// The source commits its final position before it closes.
	last := slices.Index(log, "source close")
	if last < 0 || !slices.Contains(log[:last], "source commit 2") {
		t.Errorf("source closed before committing its final position 2: %q", log)
	}
	if got := g.Checkpoints.LastSize.Load(); got <= 0 {
		t.Errorf("last checkpoint size %d", got)
	}
}

// A stopped run resumes where it stopped: positions, operator state and
// sink state come back, the restored commits are repeated first, and the
// output continues as if there had been no stop.
func TestStopAndResume(t *testing.T) {
	store, _ := checkpoint.Open(t.TempDir(), "t")
	ev := &events{}
	sink := &logSink{ev: ev, store: store}
	src := &feedSource{ev: ev, feed: make(chan int64, 10)}
	for v := range int64(4) {
		src.feed <- v
	}
	g := countGraph(src, sink)
	stop := make(chan struct{})
	run := start(g, Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}})
	testenv.Eventually(t, 10*time.Second, "4 rows read", func() error {
		if n := g.Sources[0].Stats.RowsIn.Load(); n != 4 {
			return fmt.Errorf("%d rows", n)
		}
		return nil
	})
	close(stop)
	run.wait(t)
	if g.Checkpoints.Count.Load() != 1 {
		t.Fatalf("%d checkpoints, want the final one", g.Checkpoints.Count.Load())
	}

	ev2 := &events{}
	sink2 := &logSink{ev: ev2, store: store}
	src2 := &feedSource{ev: ev2, feed: make(chan int64, 10), bounded: 6}
	src2.feed <- 4
	src2.feed <- 5
	g2 := countGraph(src2, sink2)
	start(g2, Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)
	if got := g2.Checkpoints.Restored.Load(); got != 1 {
		t.Errorf("restored checkpoint %d, want 1", got)
	}
	log := ev2.list()
	// 4 rows in gave the sink 5 changes (+I x3, then -U/+U of key 0).
	want := []string{"source restore 4", "sink restore 5"}
	if !slices.Equal(log[:2], want) && !slices.Equal(log[:2], []string{want[1], want[0]}) {
		t.Errorf("restore calls %q, want %q first", log[:2], want)
	}
	if !slices.Contains(log, "source commit 4") || !slices.Contains(log, "sink commit 5 stored 1") {
		t.Errorf("restored state not committed again: %q", log)
	}
	// Keys 4%3=1 and 5%3=2 had counts 2 (1,4) and 1 (2) -> 2 (2,5).
	wantRows := []string{"-U[1, 1, 1]", "+U[1, 2, 5]", "-U[2, 1, 2]", "+U[2, 2, 7]"}
	if !slices.Equal(sink2.rows, wantRows) {
		t.Errorf("after restore the sink got %q, want %q", sink2.rows, wantRows)
	}
	// A finished pipeline restored reads nothing and emits nothing.
	ev3 := &events{}
	sink3 := &logSink{ev: ev3, store: store}
	src3 := &feedSource{ev: ev3, feed: make(chan int64), bounded: 6}
	g3 := countGraph(src3, sink3)
	start(g3, Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)
	if len(sink3.rows) != 0 || g3.Sources[0].Stats.RowsIn.Load() != 0 {
		t.Errorf("finished pipeline ran again: %q", sink3.rows)
	}
	if !slices.Contains(ev3.list(), "sink commit 4 stored 2") {
		t.Errorf("finished checkpoint's commits not repeated: %q", ev3.list())
	}
}

func TestStaleStateIsRefused(t *testing.T) {
	store, _ := checkpoint.Open(t.TempDir(), "t")
	ev := &events{}
	src := &feedSource{ev: ev, feed: make(chan int64, 1), bounded: 1}
	src.feed <- 1
	start(countGraph(src, &logSink{ev: ev}), Options{Checkpoint: CheckpointOptions{Store: store}}).wait(t)

	for _, tc := range []struct {
		name  string
		edit  func(g *Graph)
		wants []string
	}{
		{"operator changed", func(g *Graph) { g.Ops[0].Fingerprint = "count v2" }, []string{`transform "agg" (agg) [transform/agg/0]: the operator itself changed: was count, now count v2`, "--reset-state transform/agg/0"}},
		{"source renamed", func(g *Graph) { g.Sources[0].Name = "src2" }, []string{`source "src" [source/src]: it is gone while operators keep state`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &feedSource{ev: ev, feed: make(chan int64), bounded: 1}
			g := countGraph(src, &logSink{ev: ev})
			tc.edit(g)
			err := Run(context.Background(), g, Options{Checkpoint: CheckpointOptions{Store: store}})
			if err == nil {
				t.Fatal("a pipeline that no longer fits its state ran")
			}
			// Running again meets the same state: retrying cannot help.
			if !retry.IsPermanent(err) {
				t.Errorf("error %q is not marked permanent", err)
			}
			for _, w := range append(tc.wants, "does not fit the edited pipeline", store.Dir(), "rebuild them from the sources' start up to the saved positions with `etld run --backfill`") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			// Removing the state directory would resume sources from
			// positions kept elsewhere (a consumer group's offsets) with
			// empty operators: the message must not advise it.
			if strings.Contains(err.Error(), "remove") {
				t.Errorf("error %q advises removing state", err)
			}
			if src.read != 0 {
				t.Error("the source was read")
			}
		})
	}
}

// runUntilCheckpointed runs g with store until its sources read rows
// rows and two checkpoints completed after that, and returns what kills
// the run as a crash would (no final checkpoint) and waits for its end.
func runUntilCheckpointed(t *testing.T, g *Graph, store *checkpoint.Store, rows int64) (kill func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, g, Options{Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
	}()
	testenv.Eventually(t, 10*time.Second, fmt.Sprintf("%d rows read", rows), func() error {
		var n int64
		for _, s := range g.Sources {
			n += s.Stats.RowsIn.Load()
		}
		if n != rows {
			return fmt.Errorf("%d rows", n)
		}
		return nil
	})
	after := g.Checkpoints.Count.Load()
	testenv.Eventually(t, 10*time.Second, "two checkpoints after the rows", func() error {
		if n := g.Checkpoints.Count.Load(); n < after+2 {
			return fmt.Errorf("%d checkpoints", n)
		}
		return nil
	})
	return func() {
		cancel()
		<-done
	}
}
