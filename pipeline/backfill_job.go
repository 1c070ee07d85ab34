package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
)

// A backfill in steps, so that the pipeline's running version can keep
// serving while the long part runs (the daemon):
//
//   - Replay (long, beside the running version): both plans from the
//     sources' start up to the checkpoint that was the newest when the
//     backfill began (C1), into in-memory tables and a store of their own;
//   - Advance (optional, beside the running version, as often as the
//     caller likes): both replays catch up with the running version's
//     newest checkpoint, so that the last catch-up, with nothing serving,
//     has only what came since to read;
//   - the caller then stops the running version, which takes a final
//     checkpoint (C2);
//   - Finish (short, nothing serves): both plans again, each restored
//     from the state its replay ended with, over the sources' range from
//     C1 (or the checkpoint Advance reached) to C2
//     (connector.RangeRereader), then the sinks get the
//     differences and the rebuilt checkpoint is stored at C2's positions.
//
// With no checkpoint after C1 (the running version stopped before
// taking one, or `etld run --backfill`, where nothing runs meanwhile)
// Finish has nothing to catch up, but for sources replayed from a
// snapshot, whose replays end ahead of C1 (backfill_snapshot.go). Until Finish stores its checkpoint the
// state directory holds only the running version's: a crash anywhere
// before leaves a backfill to do again, from its start.

// The phases of a backfill, as BackfillProgress shows them.
const (
	PhaseReplay  = "replay"   // from the sources' start up to the checkpoint it began at
	PhaseFollow  = "follow"   // catching up with the running version's newest checkpoint (Advance)
	PhaseWaiting = "waiting"  // replayed; waiting for the running version to stop
	PhaseCatchUp = "catch-up" // from that checkpoint up to the running version's final one
	PhaseWrite   = "write"    // giving the sinks the differences, storing the checkpoint
	PhaseDone    = "done"
)

// BackfillJob is a backfill in steps: Replay, then Finish, then Close
// (always, also after an error).
type BackfillJob struct {
	p      *Pipeline
	bp     *backfillPlan
	old    *Pipeline // a plan of the file the state was built with
	tmp    string
	log    *slog.Logger
	edited *replayRun
	oldRun *replayRun
	rows   atomic.Int64
	phase  atomic.Value // string
	// at is the checkpoint the replays reached: bp.cp, then Advance's.
	at     *checkpoint.Checkpoint
	atID   atomic.Int64
	closed sync.Once
	// stateDir is the state directory; began: the sources replayed from
	// a snapshot readied their reads (BeginReread), which Close ends.
	stateDir string
	began    bool
}

// BackfillProgress is where a backfill is.
type BackfillProgress struct {
	// Phase is one of the Phase constants.
	Phase string
	// Checkpoint is the checkpoint the replays run up to (C1), then the
	// one Advance reached.
	Checkpoint int64
	// Operators are the state IDs of the operators it rebuilds.
	Operators []string
	// Rows counts the records its replays read, both plans' together.
	Rows int64
}

// StartBackfill checks a backfill of the pipeline from the newest
// checkpoint in opt.StateDir (the refusal names the reason) and readies
// it: nil and no error when there is nothing to rebuild. Nothing is read
// or written yet.
func (p *Pipeline) StartBackfill(opt BackfillOptions) (*BackfillJob, error) {
	bp, err := p.planBackfill(opt.StateDir)
	if bp == nil || err != nil {
		return nil, err
	}
	j := &BackfillJob{p: p, bp: bp, log: opt.Logger, stateDir: opt.StateDir}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	j.phase.Store(PhaseReplay)
	j.at = bp.cp
	j.atID.Store(bp.cp.ID)
	live(bp.store.Dir(), 1)
	fail := func(err error) (*BackfillJob, error) {
		j.Close()
		return nil, err
	}
	j.old, err = p.again(p.Spec.File+" (as the state was built with it)", bp.oldText)
	if err != nil {
		return fail(fmt.Errorf("backfill: the pipeline file the state was built with no longer loads: %w", err))
	}
	if j.old.Name() != p.Name() {
		return fail(fmt.Errorf("backfill: the state's copy of the pipeline file names pipeline %q, not %q", j.old.Name(), p.Name()))
	}
	// What a backfill killed before its end left goes first: one
	// backfill of a pipeline runs at a time.
	if stale, _ := filepath.Glob(filepath.Join(bp.store.Dir(), ".backfill-*")); len(stale) > 0 {
		for _, d := range stale {
			os.RemoveAll(d)
		}
	}
	if j.tmp, err = os.MkdirTemp(bp.store.Dir(), ".backfill-"); err != nil {
		return fail(fmt.Errorf("backfill: %w", err))
	}
	j.began = true
	ctx, cancel := context.WithTimeout(context.Background(), rereadTimeout)
	err = j.rereaders(ctx, func(ctx context.Context, sr connector.SnapshotRereader) error { return sr.BeginReread(ctx) })
	cancel()
	if err != nil {
		return fail(fmt.Errorf("backfill: %w", err))
	}
	if j.edited, err = newReplayRun(j.tmp, "edited", &j.rows); err != nil {
		return fail(err)
	}
	if j.oldRun, err = newReplayRun(j.tmp, "old", &j.rows); err != nil {
		return fail(err)
	}
	return j, nil
}

// Ranged returns nil when every source can be read again over a range
// of positions (connector.RangeRereader), so that Finish can catch up
// with a running version; else why not: the running version must then
// stop before Replay.
func (j *BackfillJob) Ranged() error { return j.bp.edited.BackfillRanged() }

// BackfillRanged is Ranged for the pipeline's sources, without
// readying a backfill: what `etld validate --against-state` tells.
func (p *Pipeline) BackfillRanged() error {
	var errs []error
	for _, s := range p.Plan.Sources {
		_, snap := s.Conn.(connector.SnapshotRereader)
		if _, ok := s.Conn.(connector.RangeRereader); !ok && !snap {
			errs = append(errs, fmt.Errorf("source %q (type %s) can be read again only from its start", s.Spec.Name, s.Spec.Type))
		}
	}
	return errors.Join(errs...)
}

// Progress says where the backfill is; safe to call while it runs.
func (j *BackfillJob) Progress() BackfillProgress {
	return BackfillProgress{Phase: j.phase.Load().(string), Checkpoint: j.atID.Load(), Operators: j.bp.rebuilt, Rows: j.rows.Load()}
}

// Replay runs both plans from the sources' start up to the checkpoint
// the backfill began at.
func (j *BackfillJob) Replay(ctx context.Context) error {
	cp := j.bp.cp
	j.log.Info("backfill: replaying the edited pipeline up to the checkpoint's positions", "pipeline", j.p.Name(), "checkpoint", cp.ID, "operators", strings.Join(j.bp.rebuilt, " "))
	if err := j.edited.run(ctx, j.bp.edited, j.bp.g, nil, cp); err != nil {
		return fmt.Errorf("backfill: the edited pipeline's replay: %w", err)
	}
	j.log.Info("backfill: replaying the pipeline the state was built with, for what its sinks hold", "pipeline", j.p.Name())
	og, err := j.old.Plan.Graph()
	if err != nil {
		return err
	}
	if err := j.oldRun.run(ctx, j.old, og, nil, cp); err != nil {
		return fmt.Errorf("backfill: the replay of the pipeline the state was built with: %w", err)
	}
	j.phase.Store(PhaseWaiting)
	return nil
}

// Advance catches both replays up with the newest checkpoint of the
// state directory while the running version goes on, and reports
// whether there was one newer than the replays had reached. A
// checkpoint that cannot be read just now (the running version pruning
// it) is no error: there is nothing to advance to yet.
func (j *BackfillJob) Advance(ctx context.Context) (bool, error) {
	cp, err := j.bp.store.Latest()
	if err != nil || cp == nil || cp.ID <= j.at.ID {
		return false, nil
	}
	if ok, err := j.passes(cp); err != nil || !ok {
		// The running version has not reached the replays' snapshot:
		// the backfill follows it, with nothing to read yet.
		j.phase.Store(PhaseFollow)
		return false, err
	}
	j.log.Info("backfill: catching up with the running version's newest checkpoint", "pipeline", j.p.Name(), "from", j.at.ID, "to", cp.ID)
	j.phase.Store(PhaseFollow)
	if err := j.catchUp(ctx, cp); err != nil {
		return false, err
	}
	j.phase.Store(PhaseWaiting)
	j.at = cp
	j.atID.Store(cp.ID)
	return true, nil
}

// Finish catches both replays up with the newest checkpoint of the
// state directory (the running version's final one, once it stopped),
// gives each sink the differences and stores the rebuilt checkpoint,
// which the pipeline's next run restores.
func (j *BackfillJob) Finish(ctx context.Context) (*BackfillReport, error) {
	from := j.at
	store := j.bp.store
	cp, err := store.Latest()
	if err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	if cp == nil || cp.ID < from.ID {
		return nil, fmt.Errorf("backfill: checkpoint %d, which the replay ran up to, is no longer the newest in %s", from.ID, store.Dir())
	}
	passed, err := j.passes(cp)
	if err != nil {
		return nil, err
	}
	if !passed {
		return nil, fmt.Errorf("backfill: checkpoint %d, the newest in %s, is before the position of the snapshot a source was replayed from: the running version stopped before it reached it", cp.ID, store.Dir())
	}
	if cp.ID != from.ID || j.snapshots() {
		j.phase.Store(PhaseCatchUp)
		j.log.Info("backfill: catching up with the running version's final checkpoint", "pipeline", j.p.Name(), "from", from.ID, "to", cp.ID)
		if err := j.catchUp(ctx, cp); err != nil {
			return nil, err
		}
	}
	j.phase.Store(PhaseWrite)
	edited, g := j.bp.edited, j.bp.g
	diffs, err := diffSinks(edited, j.oldRun.tables, j.edited.tables)
	if err != nil {
		return nil, err
	}
	replayed, err := j.edited.state()
	if err != nil {
		return nil, err
	}
	next, err := rebuiltCheckpoint(cp, replayed)
	if err != nil {
		return nil, err
	}
	// The checkpoint must now fit the edited pipeline: a refusal here is
	// a bug of the backfill, never a state to store.
	check, err := runtime.Compare(g, next, nil)
	if err != nil {
		return nil, err
	}
	if err := runtime.Refusals(store.Dir(), next, check); err != nil {
		return nil, fmt.Errorf("backfill: the rebuilt state does not fit: %w", err)
	}
	writer, err := j.p.again(j.p.Spec.File, j.p.text)
	if err != nil {
		return nil, err
	}
	defer writer.Plan.Close()
	report := &BackfillReport{Checkpoint: cp.ID, Operators: j.bp.rebuilt}
	for _, d := range diffs {
		if err := d.write(ctx, writer, store); err != nil {
			return nil, err
		}
		report.Sinks = append(report.Sinks, d.SinkDiff)
	}
	// Write returns the checkpoint's size, not its ID.
	if _, err = store.Write(next); err != nil {
		return nil, fmt.Errorf("backfill: store the rebuilt checkpoint: %w", err)
	}
	report.Stored = next.ID
	if err := store.SetNote(noteFile, j.p.text); err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	j.phase.Store(PhaseDone)
	j.log.Info("backfill: done", "pipeline", j.p.Name(), "checkpoint", report.Stored)
	return report, nil
}

// catchUp runs fresh plans of both files from where their replays
// ended up to to, each restored from its replay's state: a plan's
// connectors run once.
func (j *BackfillJob) catchUp(ctx context.Context, to *checkpoint.Checkpoint) error {
	from := j.at
	for _, r := range []struct {
		run  *replayRun
		text []byte
		file string
		what string
	}{
		{j.edited, j.p.text, j.p.Spec.File, "the edited pipeline"},
		{j.oldRun, j.bp.oldText, j.p.Spec.File + " (as the state was built with it)", "the pipeline the state was built with"},
	} {
		q, err := j.p.again(r.file, r.text)
		if err != nil {
			return err
		}
		g, err := q.Plan.Graph()
		if err == nil {
			err = r.run.run(ctx, q, g, r.run.at, to)
		}
		q.Plan.Close()
		if err != nil {
			return fmt.Errorf("backfill: %s's catch-up from checkpoint %d to %d: %w", r.what, from.ID, to.ID, err)
		}
	}
	return nil
}

// Close releases the plans, ends what the sources replayed from a
// snapshot keep outside (a replication slot) and removes the replays'
// stores. When the sources cannot end their reads (the server is
// away), the store stays: the pipeline's next start ends them
// (endStaleRereads).
func (j *BackfillJob) Close() {
	j.closed.Do(func() {
		j.bp.edited.Plan.Close()
		if j.old != nil {
			j.old.Plan.Close()
		}
		ended := true
		if j.began {
			ctx, cancel := context.WithTimeout(context.Background(), rereadTimeout)
			if err := j.rereaders(ctx, func(ctx context.Context, sr connector.SnapshotRereader) error { return sr.EndReread(ctx) }); err != nil {
				ended = false
				j.log.Error("backfill: the sources replayed from a snapshot did not end their reads; the pipeline's next start tries again", "pipeline", j.p.Name(), "error", err)
			}
			cancel()
		}
		if j.tmp != "" && ended {
			os.RemoveAll(j.tmp)
		}
		live(j.bp.store.Dir(), -1)
	})
}
