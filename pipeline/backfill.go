package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/spec"
)

// A backfill rebuilds the state of operators that an edit changed (an
// added aggregate, a changed key or join condition: runtime.Compare
// refuses them) from the sources' start, instead of starting them empty:
//
//  1. it refuses, naming the reason, unless every source can read its
//     input again up to the newest checkpoint's position
//     (connector.Rereader) or be replayed from a fresh snapshot
//     (connector.SnapshotRereader: backfill_snapshot.go) and every sink that reads a changed operator's
//     transform runs in upsert mode;
//  2. the edited plan runs from the sources' start up to that
//     checkpoint's positions, into an in-memory table per sink: its
//     operators end with the state a run of the edited pipeline would
//     have had there, and the tables are what its sinks would hold;
//  3. the plan of the file the state was built with (the copy the state
//     directory keeps, noteFile) runs the same way: its tables are what
//     the sinks hold from the running pipeline;
//  4. each sink is given only the differences: upsert sinks the rows
//     that differ and a delete for each key gone; a sink of another mode
//     whose rows would change refuses the backfill before anything is
//     written;
//  5. a new checkpoint is stored: the old one's source positions and
//     sink state with the rebuilt operators' state. The run that follows
//     restores it and goes on from those positions.
//
// A crash before step 5 leaves the old checkpoint: the next backfill
// does it all again, and gives the sinks the same rows again, which an
// upsert sink takes as it took them.

// noteFile names the copy of the pipeline file that the state in the
// state directory is built with.
const noteFile = "pipeline-file"

// BackfillOptions tune a backfill.
type BackfillOptions struct {
	// StateDir is the state directory the pipeline's checkpoints are in.
	StateDir string
	// Logger receives a line per step; nil discards them.
	Logger *slog.Logger
}

// BackfillReport says what a backfill did.
type BackfillReport struct {
	// Checkpoint is the checkpoint it rebuilt from, Stored the one it
	// wrote; 0 when there was nothing to backfill.
	Checkpoint, Stored int64
	// Operators are the state IDs of the operators it rebuilt.
	Operators []string
	// Sinks says what each sink was given.
	Sinks []SinkDiff
}

// SinkDiff is what a backfill gave one sink.
type SinkDiff struct {
	Sink                         string
	Upserted, Deleted, Unchanged int
}

func (r *BackfillReport) String() string {
	if r == nil || r.Stored == 0 {
		return "backfill: nothing to rebuild: the saved state fits the pipeline\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "backfill: rebuilt %s from the sources' start up to checkpoint %d; stored checkpoint %d\n", strings.Join(r.Operators, ", "), r.Checkpoint, r.Stored)
	for _, s := range r.Sinks {
		fmt.Fprintf(&b, "  sink %s: %d rows upserted, %d deleted, %d unchanged\n", s.Sink, s.Upserted, s.Deleted, s.Unchanged)
	}
	return b.String()
}

// again plans the pipeline's file once more: a plan's connectors run
// once.
func (p *Pipeline) again(file string, text []byte) (*Pipeline, error) {
	lookup := p.lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	q, err := Parse(file, text, lookup, p.env)
	if err != nil {
		return nil, err
	}
	q.lookup = lookup
	return q, nil
}

// Backfill rebuilds the operators of the pipeline that the newest
// checkpoint in opt.StateDir refuses (see above), gives the sinks the
// differences and stores a checkpoint the pipeline's next run restores.
// With nothing refused it does nothing and says so; a refusal names the
// source, sink or operator and why.
func (p *Pipeline) Backfill(ctx context.Context, opt BackfillOptions) (*BackfillReport, error) {
	return p.backfill(ctx, opt, nil)
}

// backfill is Backfill, telling watch (if set) how to follow it.
func (p *Pipeline) backfill(ctx context.Context, opt BackfillOptions, watch func(func() BackfillProgress)) (*BackfillReport, error) {
	j, err := p.StartBackfill(opt)
	if j == nil || err != nil {
		return nil, err
	}
	defer j.Close()
	if watch != nil {
		watch(j.Progress)
		defer watch(nil)
	}
	if err := j.Replay(ctx); err != nil {
		return nil, err
	}
	if j.Ahead() {
		if err := j.serveOld(ctx); err != nil {
			return nil, err
		}
	}
	return j.Finish(ctx)
}

// backfillPlan is what a backfill starts from: the newest checkpoint,
// a fresh plan of the edited file (to replay), the operators to rebuild
// and the text of the file the state was built with.
type backfillPlan struct {
	store   *checkpoint.Store
	cp      *checkpoint.Checkpoint
	edited  *Pipeline
	g       *runtime.Graph
	rebuilt []string
	oldText []byte
}

// CheckBackfill returns the refusal a backfill of the pipeline from
// the newest checkpoint under stateDir would meet, nil when it would go
// ahead or there is nothing to rebuild: what the daemon checks before it
// stops a running version for an edited file with `backfill: true`.
func (p *Pipeline) CheckBackfill(stateDir string) error {
	if _, err := os.Stat(filepath.Join(stateDir, p.Name())); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	bp, err := p.planBackfill(stateDir)
	if bp != nil {
		bp.edited.Plan.Close()
	}
	return err
}

// planBackfill checks what a backfill from the newest checkpoint under
// stateDir needs; nil and no error when there is nothing to rebuild.
func (p *Pipeline) planBackfill(stateDir string) (*backfillPlan, error) {
	if stateDir == "" {
		return nil, errors.New("backfill: needs a state directory: without one there is no state to rebuild")
	}
	store, err := checkpoint.Open(stateDir, p.Name())
	if err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		return nil, err
	}
	if cp.Format != 0 && cp.Format < 4 {
		return nil, fmt.Errorf("backfill: checkpoint %d is of format %d, whose operator IDs a rebuilt checkpoint cannot keep: run the pipeline once unedited first", cp.ID, cp.Format)
	}
	edited, err := p.again(p.Spec.File, p.text)
	if err != nil {
		return nil, err
	}
	bp := &backfillPlan{store: store, cp: cp, edited: edited}
	fail := func(err error) (*backfillPlan, error) {
		edited.Plan.Close()
		return nil, err
	}
	if bp.g, err = edited.Plan.Graph(); err != nil {
		return fail(err)
	}
	vs, err := runtime.Compare(bp.g, cp, nil)
	if err != nil {
		return fail(err)
	}
	if bp.rebuilt, err = p.backfillable(edited, bp.g, cp, vs); err != nil || len(bp.rebuilt) == 0 {
		return fail(err)
	}
	if bp.oldText, err = store.Note(noteFile); err != nil {
		return fail(fmt.Errorf("backfill: %w", err))
	}
	switch {
	case bp.oldText == nil:
		return fail(fmt.Errorf("backfill: the state in %s keeps no copy of the pipeline file it was built with (a run of an etld before backfills kept none), so what the sinks hold cannot be told: run the unedited pipeline once to keep one, or start the operators empty with --reset-state", store.Dir()))
	case len(bp.oldText) == 0:
		return fail(fmt.Errorf("backfill: operators of the state in %s started empty mid-input (--reset-state, or a transform added by an edit), so no run of a file from the sources' start gives what the sinks hold: start afresh with `etld state reset`, or start the changed operators empty with --reset-state", store.Dir()))
	}
	return bp, nil
}

// backfillable returns the state IDs of the operators of the edited plan
// that cp's state refuses, or an error naming what a backfill cannot
// rebuild: a refusal that is not an operator's, a source that cannot
// read its input again up to its position, an operator's transform read
// by a sink not in upsert mode, dead letters (the replay would write
// them again).
func (p *Pipeline) backfillable(edited *Pipeline, g *runtime.Graph, cp *checkpoint.Checkpoint, vs []runtime.Verdict) ([]string, error) {
	var ids []string
	var errs []error
	refusedTransforms := map[string]bool{}
	transformOf := map[string]string{}
	for _, o := range g.Ops {
		transformOf[o.ID] = o.Transform
	}
	for _, v := range vs {
		if v.Action != runtime.Refuse {
			continue
		}
		t, ok := transformOf[v.ID]
		if !ok && strings.HasPrefix(v.ID, "transform/") {
			// An operator gone from a transform whose others keep their
			// state: the rebuilt state is the edited plan's alone.
			ids = append(ids, v.ID)
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%s [%s]: %s: a backfill rebuilds operators of the pipeline, not this", v.Name, v.ID, v.Why))
			continue
		}
		ids = append(ids, v.ID)
		refusedTransforms[t] = true
	}
	if len(ids) == 0 && len(errs) == 0 {
		return nil, nil
	}
	if len(g.DeadLetters) > 0 {
		errs = append(errs, errors.New("the pipeline sets rows aside as dead letters: the replay would set them aside again"))
	}
	for _, s := range edited.Plan.Sources {
		name := "source/" + s.Spec.Name
		comp := cp.Find(name)
		rr, ok := s.Conn.(connector.Rereader)
		sr, snap := s.Conn.(connector.SnapshotRereader)
		switch {
		case comp == nil:
			errs = append(errs, spec.Errorf(s.Spec.Pos, "sources."+s.Spec.Name, "source %q is new: the checkpoint has no position up to which to read it again", s.Spec.Name))
		case snap && s.Spec.Watermark != nil:
			// A snapshot replays the table's contents, not the history of
			// changes that the running version's windows saw: every row
			// would fall at the snapshot's time, and the windows would
			// hold other rows than they did (Flink rebuilds no such state
			// from a CDC snapshot either).
			errs = append(errs, spec.Errorf(s.Spec.Pos, "sources."+s.Spec.Name, "source %q (type %s) is replayed from a fresh snapshot, which holds the table's rows and not the history of its changes: event time (its watermark) over that history cannot be rebuilt", s.Spec.Name, s.Spec.Type))
		case snap:
			if err := sr.RereadSnapshot(comp.Connector); err != nil {
				errs = append(errs, spec.Errorf(s.Spec.Pos, "sources."+s.Spec.Name, "source %q cannot be replayed from a snapshot: %v", s.Spec.Name, err))
			}
		case !ok:
			errs = append(errs, spec.Errorf(s.Spec.Pos, "sources."+s.Spec.Name, "source %q (type %s) cannot read its input again up to a checkpoint's position", s.Spec.Name, s.Spec.Type))
		default:
			if err := rr.RereadTo(comp.Connector); err != nil {
				errs = append(errs, spec.Errorf(s.Spec.Pos, "sources."+s.Spec.Name, "source %q cannot be read again up to checkpoint %d's position: %v", s.Spec.Name, cp.ID, err))
			}
		}
	}
	if err := snapshotsNeedRanges(edited); err != nil {
		errs = append(errs, err)
	}
	for _, s := range edited.Plan.Sinks {
		if s.Input == nil || s.Input.Transform == nil || !refusedTransforms[s.Input.Transform.Name] || s.Mode == connector.Upsert {
			continue
		}
		errs = append(errs, spec.Errorf(s.Spec.Pos, "sinks."+s.Spec.Name, "sink %q runs in %s mode: it cannot take the changes that turn the old results of transform %q into the new ones (an upsert sink, by key, can)", s.Spec.Name, s.Mode, s.Input.Transform.Name))
	}
	if len(errs) > 0 {
		slices.Sort(ids)
		return nil, fmt.Errorf("backfill of %s refused: %w", strings.Join(ids, ", "), errors.Join(errs...))
	}
	slices.Sort(ids)
	return ids, nil
}

// snapshotsNeedRanges refuses a pipeline with a source replayed from a
// snapshot (ahead of the checkpoint) beside one that can be read again
// only from its start: the replays must catch up with a later
// checkpoint, over a range of every source's positions.
func snapshotsNeedRanges(edited *Pipeline) error {
	var snap string
	for _, s := range edited.Plan.Sources {
		if _, ok := s.Conn.(connector.SnapshotRereader); ok {
			snap = s.Spec.Name
			break
		}
	}
	if snap == "" {
		return nil
	}
	var errs []error
	for _, s := range edited.Plan.Sources {
		_, ranged := s.Conn.(connector.RangeRereader)
		_, isSnap := s.Conn.(connector.SnapshotRereader)
		if _, ok := s.Conn.(connector.Rereader); ok && !ranged && !isSnap {
			errs = append(errs, spec.Errorf(s.Spec.Pos, "sources."+s.Spec.Name, "source %q (type %s) can be read again only from its start, but source %q is replayed from a fresh snapshot, ahead of the checkpoint: the replays must then read every source on up to a later checkpoint, over a range of positions", s.Spec.Name, s.Spec.Type, snap))
		}
	}
	return errors.Join(errs...)
}

// rebuiltCheckpoint is cp with its operators' state replaced by the
// state of the replay's final checkpoint: the sources' positions (where
// the replay stopped), the sinks' own state and the dead letters' stay
// cp's.
func rebuiltCheckpoint(cp *checkpoint.Checkpoint, replayed *replayState) (*checkpoint.Checkpoint, error) {
	next := &checkpoint.Checkpoint{ID: cp.ID + 1, Pipeline: cp.Pipeline, Time: time.Now(), Finished: cp.Finished}
	for _, c := range cp.Components {
		if !strings.HasPrefix(c.ID, "transform/") {
			next.Components = append(next.Components, c)
		}
	}
	for _, c := range replayed.cp.Components {
		if !strings.HasPrefix(c.ID, "transform/") {
			continue
		}
		if c.RuntimePart != "" {
			// The part is a file of the replay's store, gone with it.
			part, err := replayed.store.OpenPart(c.RuntimePart)
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(part)
			part.Close()
			if err != nil {
				return nil, fmt.Errorf("backfill: read the state of %s: %w", c.ID, err)
			}
			c.Runtime, c.RuntimePart = data, ""
		}
		next.Components = append(next.Components, c)
	}
	return next, nil
}

// prepareState runs the backfill a run asks for, then keeps the file's
// text in the store (noteFile) when the run will restore the newest
// checkpoint (or there is none): its state is then built with this
// file, and a later backfill replays it for what the sinks hold. A run
// that the checkpoint refuses keeps the copy as it was; one in which an
// operator starts empty mid-input (reset, or new in an edit) leaves an
// empty copy, which no later run but a backfill replaces.
func (p *Pipeline) prepareState(ctx context.Context, store *checkpoint.Store, g *runtime.Graph, opt RunOptions) error {
	if opt.Backfill || p.Spec.Backfill {
		r, err := p.backfill(ctx, BackfillOptions{StateDir: opt.StateDir, Logger: opt.Logger}, opt.Backfilling)
		if err != nil {
			return err
		}
		if opt.Backfilled != nil && (r != nil || opt.Backfill) {
			opt.Backfilled(r)
		}
	}
	if p.text == nil {
		return nil
	}
	p.endStaleRereads(ctx, store, opt.Logger)
	cp, err := store.Latest()
	if err != nil {
		return err
	}
	text := p.text
	prev, err := store.Note(noteFile)
	if err != nil {
		return err
	}
	if prev != nil && len(prev) == 0 {
		// Operators started mid-input before: that stays true until a
		// backfill or a reset of the whole pipeline.
		text = prev
	}
	if cp != nil {
		vs, err := runtime.Compare(g, cp, opt.ResetState)
		if err != nil || runtime.Refusals(store.Dir(), cp, vs) != nil {
			return nil // the run refuses it, with the reasons
		}
		for _, v := range vs {
			if strings.HasPrefix(v.ID, "transform/") && (v.Action == runtime.Reset || v.Action == runtime.Fresh) {
				// The operator starts empty mid-input: no file read
				// from the start gives what its sinks will hold, and an
				// empty copy says so to a later backfill.
				text = []byte{}
				break
			}
		}
	}
	return store.SetNote(noteFile, text)
}
