package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// SourceReset is what resetting one source did outside the state
// directory.
type SourceReset struct {
	Source string
	// Did says what was reset, "" when the source keeps nothing outside
	// the state directory.
	Did string
}

// ResetSources resets what the pipeline's sources keep outside its state
// directory (connector.Resetter: a Kafka consumer group's committed
// offsets, a PostgreSQL replication slot's position), so that a run
// without a checkpoint starts as a first run does. The sources are the
// plan's, never opened. It stops at the first source that fails, and
// returns what the ones before it did.
func (p *Pipeline) ResetSources(ctx context.Context) ([]SourceReset, error) {
	var out []SourceReset
	for _, s := range p.Plan.Sources {
		r, ok := s.Conn.(connector.Resetter)
		if !ok {
			out = append(out, SourceReset{Source: s.Spec.Name})
			continue
		}
		did, err := r.Reset(ctx)
		if err != nil {
			return out, fmt.Errorf("source %q: reset: %w", s.Spec.Name, err)
		}
		out = append(out, SourceReset{Source: s.Spec.Name, Did: did})
	}
	return out, nil
}

// RemoveState removes the pipeline's state directory under stateDir
// (every checkpoint, its parts and its identity), reporting whether
// there was one: the next run starts from nothing. The caller resets
// the sources first (ResetSources), else a Kafka source resumes from
// its group's committed offsets into empty operators.
func (p *Pipeline) RemoveState(stateDir string) (bool, error) {
	dir := filepath.Join(stateDir, p.Name())
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return true, fmt.Errorf("remove the state of pipeline %s: %w", p.Name(), err)
	}
	return true, nil
}

// ResetOperators writes a new newest checkpoint to store, a copy of cp
// in which the operators name matches (a state ID, TRANSFORM/KIND#N, or
// a transform's name for all of its operators, as `etld run
// --reset-state` takes them) hold the empty state of a fresh operator
// of the pipeline's plan, under the plan's IDs and state schemas: the
// next run restores them empty beside the others, which keep their
// state, and the sources keep their positions. It returns the state IDs
// reset. A join's held-back inputs go with the join.
func (p *Pipeline) ResetOperators(store *checkpoint.Store, cp *checkpoint.Checkpoint, name string) ([]string, error) {
	if cp.Format != 0 && cp.Format < 4 {
		return nil, fmt.Errorf("checkpoint %d is of format %d, whose operator IDs a rewritten checkpoint cannot keep: run the pipeline once (a checkpoint of format %d), or reset the whole pipeline", cp.ID, cp.Format, checkpoint.Version)
	}
	g, err := p.Plan.Graph()
	if err != nil {
		return nil, err
	}
	vs, err := runtime.Compare(g, cp, []string{name})
	if err != nil {
		return nil, err
	}
	plain, err := runtime.Compare(g, cp, nil)
	if err != nil {
		return nil, err
	}
	from := map[string]string{} // node ID -> the saved state it takes
	for _, v := range plain {
		if v.From != "" {
			from[v.ID] = v.From
		}
	}
	ops := map[string]*runtime.OpNode{}
	for _, o := range g.Ops {
		ops[o.ID] = o
	}
	skip := map[string]bool{}
	var fresh []checkpoint.Component
	var ids []string
	for _, v := range vs {
		if v.Action != runtime.Reset {
			continue
		}
		if !strings.HasPrefix(v.ID, "transform/") {
			return nil, fmt.Errorf("%s names %s, not an operator: a source's position or a sink's state is reset with the whole pipeline", name, v.ID)
		}
		ids = append(ids, v.ID)
		skip[v.ID] = true
		if f := from[v.ID]; f != "" {
			skip[f] = true
		}
		o := ops[v.ID]
		if o == nil {
			continue // saved state no node takes, or a join's held-back inputs: dropped
		}
		sn, ok := o.Op.(operator.Snapshotter)
		if !ok {
			continue
		}
		state, err := sn.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("operator %s: the state of a fresh one: %w", v.ID, err)
		}
		fresh = append(fresh, checkpoint.Component{ID: o.ID, Fingerprint: o.Fingerprint, Runtime: state, StateTTL: o.StateTTL})
	}
	next := &checkpoint.Checkpoint{ID: cp.ID + 1, Pipeline: cp.Pipeline, Time: time.Now(), Finished: cp.Finished}
	for _, c := range cp.Components {
		if !skip[c.ID] {
			next.Components = append(next.Components, c)
		}
	}
	next.Components = append(next.Components, fresh...)
	if _, err := store.Write(next); err != nil {
		return nil, err
	}
	// The reset operators start empty mid-input: no file read from the
	// start gives what their sinks hold (backfill.go).
	if err := store.SetNote(noteFile, []byte{}); err != nil {
		return nil, err
	}
	return ids, nil
}
