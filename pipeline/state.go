package pipeline

import (
	"fmt"
	"strings"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// StateDump receives an operator's state as tables of rows: DumpState
// sets In and Out, the operator's columns, and calls Table and Row.
type StateDump = operator.StateDump

// DumpState lists the state the operator with state ID id
// ("transform/NAME/N") holds in checkpoint cp of store, without running
// anything: the pipeline's plan builds a fresh operator, the checkpoint
// restores it, and it lists its state into d. The operator must be the
// one the checkpoint was taken of (the same fingerprint).
func (p *Pipeline) DumpState(store *checkpoint.Store, cp *checkpoint.Checkpoint, id string, d *StateDump) error {
	comp := cp.Find(id)
	if comp == nil {
		return fmt.Errorf("checkpoint %d of pipeline %s holds no state of %s", cp.ID, p.Name(), id)
	}
	g, err := p.Plan.Graph()
	if err != nil {
		return err
	}
	var on *runtime.OpNode
	for _, o := range g.Ops {
		if o.ID == id {
			on = o
		}
	}
	switch {
	case on == nil && strings.HasSuffix(id, "/inputs"):
		return fmt.Errorf("%s is the rows a join's inputs hold back until its build input ended: not an operator's state that can be listed", id)
	case on == nil:
		return fmt.Errorf("pipeline %s has no operator %s: the checkpoint is of another version of the file", p.Name(), id)
	case on.Fingerprint != comp.Fingerprint:
		return fmt.Errorf("operator %s of pipeline %s changed since checkpoint %d: was %s, now %s", id, p.Name(), cp.ID, comp.Fingerprint, on.Fingerprint)
	}
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

// StateFingerprints gives the fingerprint of each node with state, by
// state ID: what the checkpoint's must equal for a run to restore it.
func (p *Pipeline) StateFingerprints() (map[string]string, error) {
	g, err := p.Plan.Graph()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range g.Ops {
		out[o.ID] = o.Fingerprint
	}
	return out, nil
}
