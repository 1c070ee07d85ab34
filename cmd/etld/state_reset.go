package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline"
)

// resetTimeout bounds what a reset waits for the servers of the sources
// (a Kafka broker, a PostgreSQL server) that hold positions.
const resetTimeout = 60 * time.Second

// stateReset starts a pipeline, or one operator of it, anew: `etld
// state reset STATE_DIR PIPELINE [OPERATOR] --pipeline FILE`.
//
// The whole pipeline: first what its sources keep outside the state
// directory (connector.Resetter: a Kafka group's committed offsets, a
// replication slot's position), then its state directory. In that
// order, so that a failure leaves the checkpoints, from which the next
// run still resumes consistently (a checkpoint's positions win over
// the outside ones); removing the directory alone, as etld once
// advised, made a Kafka source resume from its group's offsets with
// empty operators: a silently wrong table. A pipeline without state is
// still reset outside: that is the state a directory removed by hand
// left.
//
// One operator: a new checkpoint in which it holds a fresh operator's
// empty state (pipeline.ResetOperators); the sources keep their
// positions, as with `etld run --reset-state`, and nothing outside is
// touched.
//
// The daemon's lock on the state directory (which `etld run --state-dir`
// takes too) is taken for the reset: a running etld would write its
// next checkpoint over it (and its sources
// commit their positions again).
func stateReset(pos []string, f stateFlags, w io.Writer) error {
	stateDir, name := pos[0], pos[1]
	// A state directory removed by hand still leaves the sources' outside
	// positions to reset; there is no daemon to lock out then.
	st, err := os.Stat(stateDir)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("state directory %s: not a directory", stateDir)
	case err == nil:
		release, err := daemon.LockStateDir(stateDir)
		if err != nil {
			var held *daemon.HeldError
			if errors.As(err, &held) {
				return fmt.Errorf("state_dir %s is held by a running etld (pid %s: a daemon, or an etld run with --state-dir): its next checkpoint would undo the reset, and its sources hold the positions to reset; stop it first", stateDir, held.Holder)
			}
			return err
		}
		defer release()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("state directory %s: %w", stateDir, err)
	}
	p, err := statePipeline(f.pipeline, name)
	if err != nil {
		return err
	}
	defer p.Plan.Close()
	if len(pos) == 3 {
		return resetOperator(stateDir, p, pos[2], f, w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	done, err := p.ResetSources(ctx)
	for _, d := range done {
		if d.Did != "" {
			fmt.Fprintf(w, "source %s: %s\n", d.Source, d.Did)
		}
	}
	if err != nil {
		return fmt.Errorf("%w; the state directory is left as it was", err)
	}
	removed, err := p.RemoveState(stateDir)
	if err != nil {
		return err
	}
	if removed {
		fmt.Fprintf(w, "removed the state of pipeline %s in %s: its next run starts from nothing\n", name, stateDir)
	} else {
		fmt.Fprintf(w, "pipeline %s had no state in %s: its next run starts from nothing\n", name, stateDir)
	}
	return nil
}

// resetOperator starts one operator (or a transform's operators) empty.
func resetOperator(stateDir string, p *pipeline.Pipeline, op string, f stateFlags, w io.Writer) error {
	store, err := checkpoint.OpenExisting(stateDir, p.Name())
	if err != nil {
		return err
	}
	cp, err := readCheckpoint(store, 0)
	if err != nil {
		return err
	}
	if f.checkpoint != 0 && f.checkpoint != cp.ID {
		return &usageError{fmt.Sprintf("--checkpoint %d: a reset writes a checkpoint after the newest, %d", f.checkpoint, cp.ID)}
	}
	ids, err := p.ResetOperators(store, cp, op)
	if err != nil {
		return err
	}
	for _, id := range ids {
		fmt.Fprintf(w, "reset %s: it starts empty at the next run (checkpoint %d), which reads on from the sources' positions in checkpoint %d\n", shortName(id), cp.ID+1, cp.ID)
	}
	return nil
}
