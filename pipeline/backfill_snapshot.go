package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
)

// Sources replayed from a snapshot (connector.SnapshotRereader: change
// data capture, which cannot read its log's past) change the backfill's
// steps:
//
//   - Replay reads a fresh snapshot of each such source, consistent at a
//     position S of its own, at or after the checkpoint the replay
//     began at (C1): both plans end at their snapshots' positions, ahead
//     of C1;
//   - Advance waits until a checkpoint of the running version has
//     passed every such S (connector.PositionComparer), then reads the
//     log from S up to it; Ahead says the replays are still ahead;
//   - Finish refuses a final checkpoint before S (the running version
//     stopped before it got there: the sinks hold older results than
//     the replays' state).
//
// With no running version (`etld run --backfill`, a backfill at the
// daemon's start) the replays would be ahead of the only checkpoint,
// whose results the sinks hold: no snapshot gives the input as it was
// back then. So the version the state was built with runs first, from
// its checkpoint, with its real sinks and checkpoints close together,
// until one passes every S (serveOld): the sinks then hold its results
// at a position the replays can reach, as in the daemon, where it
// serves meanwhile. For results that are a function of the input's
// contents at a position (an upsert sink of a GROUP BY over a CDC
// table) the old plan's replay over the snapshot and the log up to that
// checkpoint is what the sinks hold, and the differences turn it into
// the edited plan's results. Results of the order of changes rather
// than of contents (event-time windows over the log's commit times, a
// deduplication keeping the first row) replay as the snapshot orders
// them, not as the log did: sources with a watermark are refused.

// liveBackfills counts the backfills running in this process, by store
// directory: a store's leftover replay directory with no live backfill
// is one a process that died left.
var (
	liveMu        sync.Mutex
	liveBackfills = map[string]int{}
)

func live(dir string, n int) {
	liveMu.Lock()
	defer liveMu.Unlock()
	if liveBackfills[dir] += n; liveBackfills[dir] <= 0 {
		delete(liveBackfills, dir)
	}
}

func isLive(dir string) bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	return liveBackfills[dir] > 0
}

// rereaders calls fn on each source of a fresh plan of the edited file
// that is replayed from a snapshot, never opened.
func (j *BackfillJob) rereaders(ctx context.Context, fn func(context.Context, connector.SnapshotRereader) error) error {
	return eachRereader(ctx, j.p, fn)
}

func eachRereader(ctx context.Context, p *Pipeline, fn func(context.Context, connector.SnapshotRereader) error) error {
	q, err := p.again(p.Spec.File, p.text)
	if err != nil {
		return err
	}
	defer q.Plan.Close()
	var errs []error
	for _, s := range q.Plan.Sources {
		if sr, ok := s.Conn.(connector.SnapshotRereader); ok {
			if err := fn(ctx, sr); err != nil {
				errs = append(errs, fmt.Errorf("source %q: %w", s.Spec.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// snapshots reports whether a source is replayed from a snapshot.
func (j *BackfillJob) snapshots() bool {
	for _, s := range j.bp.edited.Plan.Sources {
		if _, ok := s.Conn.(connector.SnapshotRereader); ok {
			return true
		}
	}
	return false
}

// passes reports whether cp's positions of the sources replayed from a
// snapshot are at or after where both replays are.
func (j *BackfillJob) passes(cp *checkpoint.Checkpoint) (bool, error) {
	for _, s := range j.bp.edited.Plan.Sources {
		sr, ok := s.Conn.(connector.SnapshotRereader)
		if !ok {
			continue
		}
		id := "source/" + s.Spec.Name
		comp := cp.Find(id)
		if comp == nil {
			return false, fmt.Errorf("backfill: checkpoint %d has no position of source %q", cp.ID, s.Spec.Name)
		}
		for _, r := range []*replayRun{j.edited, j.oldRun} {
			at, ok := r.at[id]
			if !ok {
				continue
			}
			c, err := sr.ComparePositions(comp.Connector, at)
			if err != nil {
				return false, fmt.Errorf("backfill: source %q: %w", s.Spec.Name, err)
			}
			if c < 0 {
				return false, nil
			}
		}
	}
	return true, nil
}

// Ahead reports whether the replays are ahead of the newest checkpoint
// they caught up with (a source replayed from a snapshot taken after
// it): Advance must reach a checkpoint of the running version that
// passed them before Finish.
func (j *BackfillJob) Ahead() bool {
	ok, err := j.passes(j.at)
	return err == nil && !ok
}

// rereadTimeout bounds BeginReread and EndReread: a server that does
// not answer fails the backfill (or leaves the end to the next start)
// rather than holding it.
const rereadTimeout = 30 * time.Second

// serveInterval is the checkpoint interval of the old version's run in
// serveOld: short, so that it stops soon after it passed the snapshots.
const serveInterval = 100 * time.Millisecond

// serveOld runs the version the state was built with, from the newest
// checkpoint, with its sinks, until a checkpoint of it passes the
// replays' snapshots, then stops it (with a final checkpoint) and
// catches the replays up with it: what the daemon's running version
// does meanwhile, for a backfill with none running.
func (j *BackfillJob) serveOld(ctx context.Context) error {
	q, err := j.p.again(j.p.Spec.File+" (as the state was built with it)", j.bp.oldText)
	if err != nil {
		return err
	}
	j.log.Info("backfill: the replays' snapshots are ahead of the checkpoint; running the version the state was built with until it passes them", "pipeline", j.p.Name())
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := q.Run(ctx, RunOptions{StateDir: j.stateDir, Stop: stop, Logger: j.log, checkpointEvery: serveInterval})
		done <- err
	}()
	t := time.NewTicker(serveInterval / 2)
	defer t.Stop()
	stopped := false
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("backfill: the version the state was built with, run up to the replays' snapshots: %w", err)
			}
			cp, err := j.bp.store.Latest()
			if err != nil || cp == nil {
				return fmt.Errorf("backfill: no checkpoint after the version the state was built with ran (%v)", err)
			}
			if ok, err := j.passes(cp); err != nil || !ok {
				return errors.Join(err, fmt.Errorf("backfill: the version the state was built with ended at checkpoint %d, before the replays' snapshots", cp.ID))
			}
			return nil
		case <-t.C:
			if stopped {
				continue
			}
			if cp, err := j.bp.store.Latest(); err == nil && cp != nil && cp.ID > j.at.ID {
				if ok, _ := j.passes(cp); ok {
					close(stop)
					stopped = true
				}
			}
		}
	}
}

// endStaleRereads ends the reads (connector.SnapshotRereader's
// EndReread: a replication slot) of a backfill that a process that
// died left, as its replay directory shows, unless a backfill of the
// pipeline runs in this process. What cannot be ended now is logged and
// tried again at the next start: the run goes on.
func (p *Pipeline) endStaleRereads(ctx context.Context, store *checkpoint.Store, log *slog.Logger) {
	stale, _ := filepath.Glob(filepath.Join(store.Dir(), ".backfill-*"))
	if len(stale) == 0 || isLive(store.Dir()) {
		return
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := eachRereader(ctx, p, func(ctx context.Context, sr connector.SnapshotRereader) error { return sr.EndReread(ctx) }); err != nil {
		log.Error("a backfill that did not end left reads the sources could not end; the next start tries again", "pipeline", p.Name(), "error", err)
		return
	}
	for _, d := range stale {
		os.RemoveAll(d)
	}
}
