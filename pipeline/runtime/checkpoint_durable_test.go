package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
)

// heldSync is a part fsync the test holds: started is closed when the
// first one begins, and every one waits for release.
type heldSync struct {
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func newHeldSync() *heldSync {
	return &heldSync{started: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldSync) sync(f *os.File) error {
	h.once.Do(func() { close(h.started) })
	<-h.release
	return f.Sync()
}

// TestBarrierDoesNotWaitForPartSync: an operator whose state goes into a
// part passes the barrier on once the part is written, before it is
// durable (its fsync runs meanwhile), so the sink downstream flushes for
// the barrier while the fsync is held; the checkpoint completes, and the
// source and sink commit, only once the part is durable.
func TestBarrierDoesNotWaitForPartSync(t *testing.T) {
	store, err := checkpoint.Open(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	held := newHeldSync()
	store.SetPartSync(held.sync)
	ev := &events{}
	src := &feedSource{ev: ev, feed: make(chan int64, 4)}
	sink := &logSink{ev: ev, store: store, hold: make(chan struct{}), holding: make(chan struct{})}
	g := countGraph(src, sink)
	g.Sinks[0].FlushInterval = time.Hour // the only flush is the barrier's
	src.feed <- 1
	src.feed <- 2
	stop := make(chan struct{})
	run := start(g, Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
	<-held.started
	select {
	case <-sink.holding:
	case <-time.After(10 * time.Second):
		close(held.release)
		t.Fatal("the sink got no barrier while the aggregate's part was being made durable: the barrier waits for the fsync")
	}
	close(sink.hold)
	testenv.Eventually(t, 10*time.Second, "the sink flushed for the barrier", func() error {
		if !slices.Contains(ev.list(), "sink flush 2") {
			return fmt.Errorf("events %q", ev.list())
		}
		return nil
	})
	if n := g.Checkpoints.Count.Load(); n != 0 {
		t.Fatalf("%d checkpoints complete while a part was not durable", n)
	}
	for _, e := range ev.list() {
		if strings.Contains(e, "commit") {
			t.Fatalf("%q before the part was durable", e)
		}
	}
	close(held.release)
	testenv.Eventually(t, 10*time.Second, "a checkpoint once the part is durable", func() error {
		if n := g.Checkpoints.Count.Load(); n < 1 {
			return fmt.Errorf("%d checkpoints", n)
		}
		return nil
	})
	close(stop)
	run.wait(t)
	if !slices.Contains(ev.list(), "source commit 2") {
		t.Errorf("no commit of the source's position: %q", ev.list())
	}
}

// failFlushSink is a logSink whose Flush fails.
type failFlushSink struct{ logSink }

func (s *failFlushSink) Flush(context.Context) error { return errors.New("target gone") }

// unstoredParts lists the part files (written, or being written) in
// store's directory that its newest checkpoint does not name.
func unstoredParts(t *testing.T, store *checkpoint.Store) []string {
	t.Helper()
	cp, err := store.Latest()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(store.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "part-") {
			continue
		}
		named := false
		for _, c := range cpComponents(cp) {
			named = named || c.RuntimePart == n
		}
		if !named {
			out = append(out, n)
		}
	}
	return out
}

func cpComponents(cp *checkpoint.Checkpoint) []checkpoint.Component {
	if cp == nil {
		return nil
	}
	return cp.Components
}

// TestUnstoredPartsAreRemoved: the parts an operator wrote for a
// checkpoint that is never stored are gone when the run ends, without a
// next run: a checkpoint whose sink fails to flush, one whose part
// cannot be made durable, and one in flight when the run is cancelled.
func TestUnstoredPartsAreRemoved(t *testing.T) {
	t.Run("sink fails", func(t *testing.T) {
		store, _ := checkpoint.Open(t.TempDir(), "t")
		ev := &events{}
		src := &feedSource{ev: ev, feed: make(chan int64, 4)}
		src.feed <- 1
		g := countGraph(src, nil)
		g.Sinks[0].Sink = &failFlushSink{logSink{ev: ev}}
		g.Sinks[0].FlushInterval = time.Hour
		err := Run(context.Background(), g, Options{Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
		if err == nil || !strings.Contains(err.Error(), "target gone") {
			t.Fatalf("run ended with %v, want the sink's failure", err)
		}
		if left := unstoredParts(t, store); len(left) > 0 {
			t.Errorf("parts of the failed checkpoint left behind: %q", left)
		}
	})
	t.Run("part not durable", func(t *testing.T) {
		store, _ := checkpoint.Open(t.TempDir(), "t")
		store.SetPartSync(func(*os.File) error { return errors.New("disk gone") })
		ev := &events{}
		src := &feedSource{ev: ev, feed: make(chan int64, 4)}
		src.feed <- 1
		g := countGraph(src, &logSink{ev: ev, store: store})
		err := Run(context.Background(), g, Options{Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
		if err == nil || !strings.Contains(err.Error(), "disk gone") {
			t.Fatalf("run ended with %v, want the fsync's failure", err)
		}
		if cp, _ := store.Latest(); cp != nil {
			t.Errorf("checkpoint %d stored with a part that is not durable", cp.ID)
		}
		if left := unstoredParts(t, store); len(left) > 0 {
			t.Errorf("parts of the failed checkpoint left behind: %q", left)
		}
		for _, e := range ev.list() {
			if strings.Contains(e, "commit") {
				t.Errorf("%q for a checkpoint that was not stored", e)
			}
		}
	})
	t.Run("cancelled in flight", func(t *testing.T) {
		store, _ := checkpoint.Open(t.TempDir(), "t")
		ev := &events{}
		src := &feedSource{ev: ev, feed: make(chan int64, 4)}
		src.feed <- 1
		sink := &logSink{ev: ev, store: store, hold: make(chan struct{}), holding: make(chan struct{})}
		g := countGraph(src, sink)
		g.Sinks[0].FlushInterval = time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, g, Options{Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
		}()
		<-sink.holding // checkpoint 1 is in flight: the aggregate wrote its part
		if left := unstoredParts(t, store); len(left) == 0 {
			t.Fatal("no part written for checkpoint 1")
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("a cancelled run ended without an error")
		}
		if left := unstoredParts(t, store); len(left) > 0 {
			t.Errorf("parts of the checkpoint in flight left behind: %q", left)
		}
	})
	t.Run("left by a killed run", func(t *testing.T) {
		store, _ := checkpoint.Open(t.TempDir(), "t")
		ev := &events{}
		src := &feedSource{ev: ev, feed: make(chan int64, 4)}
		src.feed <- 1
		kill := runUntilCheckpointed(t, countGraph(src, &logSink{ev: ev}), store, 1)
		kill()
		cp, err := store.Latest()
		if err != nil || cp == nil {
			t.Fatalf("latest %v, %v", cp, err)
		}
		// A part of the next checkpoint, which the kill kept from being
		// stored; the restore reads the parts the latest names.
		orphan := filepath.Join(store.Dir(), fmt.Sprintf("part-%020d-0123456789abcdef", cp.ID+1))
		if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		again, _ := checkpoint.Open(filepath.Dir(store.Dir()), "t")
		co := newCoordinator(countGraph(&feedSource{ev: ev, feed: make(chan int64)}, &logSink{ev: ev}), CheckpointOptions{Store: again})
		if err := co.restore(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after the restore, the killed run's part is still there (%v)", err)
		}
	})
}
