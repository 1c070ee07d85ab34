package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/etld/etld/pipeline"
)

// An edit of a running pipeline with `backfill: true` that its saved
// state does not fit is backfilled while the running version keeps
// serving (pipeline.BackfillJob):
//
//  1. the reload checks the backfill (a refusal leaves the running
//     version as it is, with the reason) and starts it in the background:
//     the edited plan and the running one are replayed from the sources'
//     start up to the newest checkpoint (C1), while the running version
//     goes on reading, writing and checkpointing; its state shows as
//     `backfilling`, with the phase and the rows replayed; the replays
//     then follow the running version's newest checkpoint (follow) so
//     that little is left for the next step;
//  2. then, under the reload lock, the running version is stopped (a
//     final checkpoint C2), both replays catch up over the sources' range
//     C1..C2, the sinks get the differences, the rebuilt checkpoint is
//     stored and the edited version starts from it. Only this short
//     catch-up has no version serving.
//
// A backfill that fails leaves the running version running (restarted
// from C2 when the failure came after the stop) and shows the reason as
// the file's reload error: never `retrying`. A newer edit, the file's
// removal or the daemon's shutdown cancels a backfill before its
// catch-up. A crash at any point leaves the running version's
// checkpoints: at the next start the edited file's run backfills
// (blocking: nothing runs yet to serve meanwhile).
//
// Sources replayed from a fresh snapshot (connector.SnapshotRereader:
// PostgreSQL's logical replication) are ahead of the running version
// after the replay: the follow step first waits for a checkpoint of it
// past their snapshots, then reads their log from there.
//
// Sources that cannot be read again over a range of positions
// (connector.RangeRereader) cannot catch up: the running version then
// stops first and the edited one backfills at its start, as before.

// backfilling is a backfill in the background and the version it runs
// for.
type backfilling struct {
	job    *pipeline.BackfillJob
	c      *change
	cancel context.CancelFunc
	done   chan struct{}
	// takingOver: the version it runs beside stopped for the catch-up
	// (takeOver); guarded by that unit's mu.
	takingOver bool
}

// BackfillStatus is a running backfill, in /pipelines.
type BackfillStatus struct {
	// Phase: replay (from the sources' start up to Checkpoint), follow
	// (catching up with the running version's newest checkpoint),
	// waiting, catch-up (the running version stopped), write.
	Phase      string   `json:"phase"`
	Checkpoint int64    `json:"checkpoint"`
	Operators  []string `json:"operators"`
	// RowsReplayed counts the records the replays read, both plans'.
	RowsReplayed int64 `json:"rows_replayed"`
	// Serving: the previous version runs meanwhile. A backfill that a
	// run makes before it starts (at the daemon's start, after a crash)
	// has none serving.
	Serving bool `json:"serving"`
	// TakingOver: the previous version stopped for the catch-up, and
	// the edited one starts once the sinks have the differences (a
	// fraction of a second by design: follow). The pipeline stays ready
	// (Supervisor.Ready): a planned hand-over, as a reload's.
	TakingOver bool `json:"taking_over,omitempty"`
}

// startBackfill readies, for a change of a live pipeline with
// `backfill: true` whose state its edit does not fit, a backfill that
// runs beside the old version (c.bf), or refuses the change with the
// reason. A change whose sources cannot catch up is left to the old way:
// apply stops the old version and the new one backfills at its start.
func (s *Supervisor) startBackfill(c *change) {
	job, err := c.p.StartBackfill(pipeline.BackfillOptions{StateDir: s.opt.StateDir, Logger: s.opt.Logger.With("component", "backfill", "pipeline", c.p.Name())})
	switch {
	case err != nil:
		c.p.Plan.Close()
		c.p, c.err = nil, err
	case job == nil:
		// Nothing to rebuild: an edit the state fits.
	case job.Ranged() != nil:
		s.log.Info("backfill: a source can be read again only from its start, so the running version stops while the backfill runs", "pipeline", c.p.Name(), "why", job.Ranged().Error())
		job.Close()
	default:
		c.bf = job
	}
}

// backfillInBackground starts c's backfill beside old, the version
// that keeps running.
func (s *Supervisor) backfillInBackground(old *unit, c *change) {
	ctx, cancel := context.WithCancel(s.ctx)
	b := &backfilling{job: c.bf, c: c, cancel: cancel, done: make(chan struct{})}
	old.mu.Lock()
	old.bf = b
	old.mu.Unlock()
	s.log.Info("pipeline file changed: backfilling the edit while the running version serves", "pipeline", old.name, "file", c.file)
	go func() {
		defer close(b.done)
		defer cancel()
		err := b.job.Replay(ctx)
		if err == nil {
			err = s.follow(ctx, b.job)
		}
		if err == nil && s.hook != nil {
			err = s.hook(pipeline.PhaseWaiting)
		}
		if err != nil {
			if ctx.Err() != nil {
				// Cancelled: whatever the replay made of it.
				err = context.Canceled
			}
			s.endBackfill(old, b, err)
			return
		}
		s.takeOver(ctx, old, b)
	}()
}

// Following the running version: after the replay, the backfill catches
// up with its newest checkpoint again and again while it serves, as long
// as a catch-up takes longer than followEnough (at most followRounds
// times): the last catch-up, with nothing serving, then has about that
// long to read.
const (
	followEnough = time.Second
	followRounds = 10
	// aheadPoll is how often the backfill looks for a checkpoint of the
	// running version past its snapshots.
	aheadPoll = 50 * time.Millisecond
)

// follow runs the catch-ups beside the running version. Replays of a
// source read from a snapshot (change data capture) are ahead of the
// running version until one of its checkpoints passes the snapshot:
// the first catch-up waits for it, however long that takes (a newer
// edit, the file's removal or the shutdown cancels it).
func (s *Supervisor) follow(ctx context.Context, job *pipeline.BackfillJob) error {
	if job.Ahead() {
		t := time.NewTicker(aheadPoll)
		defer t.Stop()
		for job.Ahead() {
			if _, err := job.Advance(ctx); err != nil || !job.Ahead() {
				if err != nil {
					return err
				}
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	for range followRounds {
		began := time.Now()
		advanced, err := job.Advance(ctx)
		if err != nil || !advanced || time.Since(began) < followEnough {
			return err
		}
	}
	return nil
}

// errCrash is what a test's hook returns to stop a backfill as a kill
// of the process would: nothing more is done, not even cleaning up.
var errCrash = errors.New("crash")

// takeOver stops old, finishes the backfill and starts the edited
// version, under the reload lock: no reload runs meanwhile.
func (s *Supervisor) takeOver(ctx context.Context, old *unit, b *backfilling) {
	s.reload.Lock()
	defer s.reload.Unlock()
	s.mu.Lock()
	current, closed := s.units[old.file] == old, s.closed
	s.mu.Unlock()
	if ctx.Err() != nil || !current || closed {
		s.endBackfill(old, b, context.Canceled)
		return
	}
	s.log.Info("backfill: replayed; stopping the running version to catch up with its final checkpoint", "pipeline", old.name, "file", old.file)
	old.mu.Lock()
	b.takingOver = true
	old.mu.Unlock()
	// The edited version, or after a failure the old one again, starts
	// next.
	old.stopForReplace(s.opt.StopTimeout)
	var report *pipeline.BackfillReport
	err := error(nil)
	if s.hook != nil {
		err = s.hook(pipeline.PhaseCatchUp)
	}
	if errors.Is(err, errCrash) {
		old.mu.Lock()
		old.bf = nil
		old.mu.Unlock()
		return
	}
	if err == nil {
		report, err = b.job.Finish(ctx)
	}
	b.job.Close()
	c := b.c
	if err != nil {
		// The old version stopped: it starts again from its final
		// checkpoint, which the failed backfill left as it was.
		s.endBackfill(old, b, err) // closes c.p
		p, lerr := s.load(old.file, old.data)
		if lerr != nil {
			logError(s.log, "backfill failed and the running version does not load again", lerr, "pipeline", old.name, "error", lerr)
			old.mu.Lock()
			old.replacing = false // nothing replaces it: not ready
			old.mu.Unlock()
			return
		}
		u := newUnit(s, old.file, old.data, old.hash, p)
		u.setReloadError(old.reloadErrorText(), c.data, err)
		if s.put(old.file, u) {
			s.recordFiles([]*unit{u})
			go u.run(p)
		} else {
			p.Plan.Close()
		}
		return
	}
	s.log.Info("backfill: done; the edited version starts", "pipeline", old.name, "file", old.file, "report", report.String())
	u := newUnit(s, c.file, c.data, c.hash, c.p)
	if !s.put(c.file, u) {
		c.p.Plan.Close()
		return
	}
	s.recordFiles([]*unit{u})
	go u.run(c.p)
}

// endBackfill ends a backfill that did not take over: old keeps
// running, showing why (nothing when a newer reload cancelled it).
func (s *Supervisor) endBackfill(old *unit, b *backfilling, err error) {
	b.job.Close()
	old.mu.Lock()
	if old.bf == b {
		old.bf = nil
	}
	old.mu.Unlock()
	if errors.Is(err, context.Canceled) {
		b.c.p.Plan.Close()
		return
	}
	b.c.p.Plan.Close()
	msg := s.opt.Secrets.Redact(err.Error())
	logError(s.log, "backfill of the changed pipeline file failed; the previous version keeps running", err, "pipeline", old.name, "file", old.file, "error", msg)
	old.setReloadError("backfill failed: "+msg, b.c.data, err)
}

// cancelBackfill cancels the unit's backfill, if any: a newer content,
// the file's removal, or the shutdown. It does not wait: the backfill
// may be waiting for the reload lock its caller holds, and ends when it
// gets it, writing nothing (its replays write only to a directory of
// their own). The channel returned is closed when it has ended (nil:
// there was none).
func (u *unit) cancelBackfill() <-chan struct{} {
	u.mu.Lock()
	b := u.bf
	u.bf = nil
	u.mu.Unlock()
	if b == nil {
		return nil
	}
	b.cancel()
	return b.done
}

// pendingHash is the content hash the unit's backfill runs for; u may
// be nil (a new file).
func (u *unit) pendingHash() (h [32]byte, ok bool) {
	if u == nil {
		return h, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.bf == nil {
		return h, false
	}
	return u.bf.c.hash, true
}

// backfillStatus is the unit's backfill in /pipelines: one beside this
// version, or the one its run makes before it starts; u.mu held.
func (u *unit) backfillStatus() *BackfillStatus {
	var p pipeline.BackfillProgress
	switch {
	case u.bf != nil:
		p = u.bf.job.Progress()
	case u.startBf != nil:
		p = u.startBf()
	default:
		return nil
	}
	taking := u.bf != nil && u.bf.takingOver
	return &BackfillStatus{Phase: p.Phase, Checkpoint: p.Checkpoint, Operators: p.Operators, RowsReplayed: p.Rows, Serving: u.bf != nil && !taking, TakingOver: taking}
}

// backfillingAtStart follows the backfill the unit's run makes before it
// starts (pipeline.RunOptions.Backfilling): at the daemon's start, after
// a crash, or when the sources cannot catch up with a running version.
func (u *unit) backfillingAtStart(progress func() pipeline.BackfillProgress) {
	u.mu.Lock()
	u.startBf = progress
	u.mu.Unlock()
	if progress != nil && u.s.hook != nil {
		_ = u.s.hook(hookAtStart)
	}
}

// hookAtStart is the phase a test's hook is called at when a run begins
// a backfill before it starts.
const hookAtStart = "at-start"

// reloadErrorText is the unit's reload error, redacted.
func (u *unit) reloadErrorText() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.reloadErr
}
