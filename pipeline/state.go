package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// StateDump receives an operator's state as tables of rows: DumpState
// sets In and Out, the operator's columns, and calls Table and Row.
type StateDump = operator.StateDump

// StateVerdict is what a run does with one node's saved state.
type StateVerdict = runtime.Verdict

// The actions of a StateVerdict.
const (
	StateKeep    = runtime.Keep
	StateMigrate = runtime.Migrate
	StateFresh   = runtime.Fresh
	StateReset   = runtime.Reset
	StateDrop    = runtime.Drop
	StateRefuse  = runtime.Refuse
)

// DumpState lists the state the operator with state ID id
// ("transform/NAME/KIND#N", or the ID the checkpoint holds it under: a
// former name, a checkpoint of format 3) holds in checkpoint cp of
// store, without running anything: the pipeline's plan builds a fresh
// operator, the checkpoint restores it, and it lists its state into d.
// The operator's state must fit it (runtime.Compare keeps or migrates
// it).
func (p *Pipeline) DumpState(store *checkpoint.Store, cp *checkpoint.Checkpoint, id string, d *StateDump) error {
	comp := cp.Find(id)
	if comp == nil {
		return fmt.Errorf("checkpoint %d of pipeline %s holds no state of %s", cp.ID, p.Name(), id)
	}
	g, err := p.Plan.Graph()
	if err != nil {
		return err
	}
	vs, err := runtime.Compare(g, cp, nil)
	if err != nil {
		return err
	}
	var v *runtime.Verdict
	for i := range vs {
		if vs[i].From == id || vs[i].ID == id && vs[i].Action != runtime.Fresh {
			v = &vs[i]
		}
	}
	var on *runtime.OpNode
	for _, o := range g.Ops {
		if v != nil && o.ID == v.ID {
			on = o
		}
	}
	switch {
	case on == nil && strings.HasSuffix(id, "/inputs"):
		return fmt.Errorf("%s is the rows a join's inputs hold back until its build input ended: not an operator's state that can be listed", id)
	case on == nil:
		return fmt.Errorf("pipeline %s has no operator %s: the checkpoint is of another version of the file", p.Name(), id)
	case !v.Restores():
		return fmt.Errorf("operator %s of pipeline %s does not fit checkpoint %d: %s", id, p.Name(), cp.ID, v.Why)
	}
	runtime.WidenRestore(*v, on.Op)
	if err := runtime.RestoreOperator(store, comp, on.Op); err != nil {
		return fmt.Errorf("operator %s: restore from checkpoint %d: %w", id, cp.ID, err)
	}
	return p.dumpOp(on, d)
}

// dumpOp lists the state on's operator holds now.
func (p *Pipeline) dumpOp(on *runtime.OpNode, d *StateDump) error {
	dumper, ok := on.Op.(operator.StateDumper)
	if !ok {
		return fmt.Errorf("operator %s (%s): listing its state is not supported", on.ID, on.Name)
	}
	in, out, ok := p.Plan.StateColumns(on.ID)
	if !ok {
		return fmt.Errorf("operator %s: the plan names no columns of it", on.ID)
	}
	d.In, d.Out = in, out
	if err := dumper.DumpState(d); err != nil {
		return fmt.Errorf("operator %s: %w", on.ID, err)
	}
	return nil
}

// StateVerdicts says what a run of the pipeline restored from cp would
// do with each operator's, source's and sink's saved state (keep,
// migrate, new, reset, drop or refuse), resetting the nodes reset names
// (`--reset-state`): what `etld validate --against-state` shows.
func (p *Pipeline) StateVerdicts(cp *checkpoint.Checkpoint, reset []string) ([]StateVerdict, error) {
	g, err := p.Plan.Graph()
	if err != nil {
		return nil, err
	}
	return runtime.Compare(g, cp, reset)
}

// CheckState returns the refusal a run of the pipeline would meet with
// the newest checkpoint its state has under stateDir (nil when it fits,
// or when there is none): what the daemon checks before it stops a
// running version for an edited file, so that an edit whose state does
// not fit leaves the old version running.
func (p *Pipeline) CheckState(stateDir string) error {
	if _, err := os.Stat(filepath.Join(stateDir, p.Name())); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	store, err := checkpoint.OpenExisting(stateDir, p.Name())
	if err != nil {
		return err
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		// A damaged state directory is the run's to report.
		return nil
	}
	vs, err := p.StateVerdicts(cp, nil)
	if err != nil {
		return err
	}
	return runtime.Refusals(store.Dir(), cp, vs)
}
