package runtime

import (
	"fmt"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// askingSource is a feedSource that can ask for a checkpoint.
type askingSource struct {
	feedSource
	ask func()
}

func (s *askingSource) AskCheckpoints(ask func()) { s.ask = ask }

// A source that asks for a checkpoint gets one, and its Commit, long
// before the interval is up (an hour here).
func TestSourceAsksForACheckpoint(t *testing.T) {
	ev := &events{}
	src := &askingSource{feedSource: feedSource{ev: ev, feed: make(chan int64)}}
	sink := &logSink{ev: ev}
	g := countGraph(&src.feedSource, sink)
	g.Sources[0].Source = src
	stop := make(chan struct{})
	run := start(g, Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: time.Hour}})
	src.feed <- 1
	src.feed <- 2
	if src.ask == nil {
		t.Fatal("the runtime did not hand the source its ask function before reading")
	}
	asked := time.Now()
	src.ask()
	src.ask() // one pending ask: still at least one checkpoint
	testenv.Eventually(t, 10*time.Second, "a checkpoint the source asked for", func() error {
		for _, e := range ev.list() {
			if e == "source commit 2" {
				return nil
			}
		}
		return fmt.Errorf("no commit of position 2: %q", ev.list())
	})
	if took := time.Since(asked); took > 5*time.Second {
		t.Errorf("the asked checkpoint took %s", took)
	}
	close(stop)
	run.wait(t)
}
