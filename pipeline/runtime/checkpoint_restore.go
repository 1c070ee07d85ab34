package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// restore reads the newest checkpoint, checks that it fits the graph and
// hands every node its state. It runs before any node starts.
func (c *coordinator) restore() error {
	if c.opt.Store == nil {
		return nil
	}
	cp, err := c.opt.Store.Latest()
	if err != nil {
		return fmt.Errorf("%w (to start from scratch: etld state reset STATE_DIR %s --pipeline FILE, which also resets what its sources keep outside %s, such as a Kafka group's offsets)", err, c.g.Name, c.opt.Store.Dir())
	}
	// What a killed run left (the parts of a checkpoint it did not
	// store) goes before this run writes anything.
	c.opt.Store.Tidy(cp)
	if cp == nil {
		return nil
	}
	if err := c.fits(cp); err != nil {
		return err
	}
	for _, p := range c.parts {
		if v, ok := c.verdicts[p.node.ID]; ok && v.Restores() {
			p.restored = cp.Find(v.From)
		}
	}
	for _, s := range c.g.Sources {
		comp := s.cp.restored
		if comp == nil || comp.Connector == nil {
			continue
		}
		pos, ok := s.Source.(connector.Positioner)
		if !ok {
			c.log.Warn("source cannot resume from a position: it starts from its beginning", "source", s.Name, "checkpoint", cp.ID)
			continue
		}
		if err := pos.Restore(comp.Connector); err != nil {
			return fmt.Errorf("source %q: restore from checkpoint %d: %w", s.Name, cp.ID, err)
		}
	}
	for _, o := range c.g.Ops {
		comp := o.cp.restored
		if _, ok := o.Op.(operator.Snapshotter); !ok || comp == nil {
			continue
		}
		WidenRestore(c.verdicts[o.ID], o.Op)
		if err := RestoreOperator(c.opt.Store, comp, o.Op); err != nil {
			return fmt.Errorf("transform %q: restore from checkpoint %d: %w", o.Name, cp.ID, err)
		}
	}
	for _, s := range c.g.Sinks {
		comp := s.cp.restored
		sn, ok := s.Sink.(connector.SinkSnapshotter)
		if !ok || comp == nil || comp.Connector == nil {
			continue
		}
		if err := sn.Restore(comp.Connector); err != nil {
			return fmt.Errorf("sink %q: restore from checkpoint %d: %w", s.Name, cp.ID, err)
		}
	}
	c.nextID = cp.ID + 1
	c.g.Checkpoints.Restored.Store(cp.ID)
	if cp.Finished {
		c.log.Info("pipeline finished in an earlier run: nothing left to read; to run it again from the start: etld state reset STATE_DIR PIPELINE --pipeline FILE",
			"pipeline", c.g.Name, "checkpoint", cp.ID, "state", c.opt.Store.Dir())
	} else {
		c.log.Info("restored checkpoint", "pipeline", c.g.Name, "checkpoint", cp.ID, "taken", cp.Time)
	}
	return nil
}

// tellSinks tells every RunAware sink and source whether the run keeps
// state and whether a checkpoint covering it was restored; it runs after
// restore and before any connector opens.
func (c *coordinator) tellSinks() error {
	info := connector.RunInfo{Resumable: c.resumable, Pipeline: c.g.Name}
	tell := func(conn any, restored *checkpoint.Component) error {
		ra, ok := conn.(connector.RunAware)
		if !ok {
			return nil
		}
		if c.opt.Store != nil && info.Instance == "" {
			// Made before any connector opens, so that whatever a sink
			// writes carries it, also in a run killed before its first
			// checkpoint.
			id, since, err := c.opt.Store.Instance()
			if err != nil {
				return err
			}
			info.Instance, info.Since = id, since
			store := c.opt.Store
			info.Fence = func() (uint64, error) { return store.Fence(time.Now()) }
		}
		info.Restored = restored != nil && restored.Connector != nil
		ra.SetRun(info)
		return nil
	}
	for _, s := range c.g.Sinks {
		if err := tell(s.Sink, s.cp.restored); err != nil {
			return err
		}
	}
	for _, s := range c.g.Sources {
		if err := tell(s.Source, s.cp.restored); err != nil {
			return err
		}
	}
	return nil
}

// fits decides for every node what it does with the checkpoint's state
// (compat.go) and refuses a checkpoint that does not fit, naming every
// difference and the choices.
func (c *coordinator) fits(cp *checkpoint.Checkpoint) error {
	if cp.Pipeline != c.g.Name {
		return retry.Permanent(fmt.Errorf("the saved state in %s (checkpoint %d) belongs to pipeline %q, not %q",
			c.opt.Store.Dir(), cp.ID, cp.Pipeline, c.g.Name))
	}
	vs, err := Compare(c.g, cp, c.opt.ResetState)
	if err != nil {
		return retry.Permanent(err)
	}
	// Permanent: running again meets the same state, until the file or
	// the state directory changes.
	if err := Refusals(c.opt.Store.Dir(), cp, vs); err != nil {
		return retry.Permanent(err)
	}
	c.verdicts = map[string]Verdict{}
	for _, v := range vs {
		c.verdicts[v.ID] = v
		switch v.Action {
		case Migrate, Reset, Drop:
			c.log.Info("restore: "+string(v.Action), "pipeline", c.g.Name, "state", v.ID, "why", v.Why)
		case Keep:
			if v.Why != "" {
				c.log.Info("restore: keep", "pipeline", c.g.Name, "state", v.ID, "why", v.Why)
			}
		}
	}
	return nil
}

func describe(n *Node) string {
	if n.Transform != "" {
		// The name is the operator's plan.
		return fmt.Sprintf("transform %q (%s)", n.Transform, n.Name)
	}
	if n.Kind == "transform" {
		// The ID names the transform the operator belongs to; the name is
		// the operator's plan.
		// A source's changelog normalization ("source/NAME/normalize")
		// names its source.
		if parts := strings.SplitN(n.ID, "/", 3); len(parts) == 3 && (parts[0] == "transform" || parts[0] == "source") {
			return fmt.Sprintf("%s %q (%s)", parts[0], parts[1], n.Name)
		}
	}
	return fmt.Sprintf("%s %q", n.Kind, n.Name)
}

// describeID names a component of a checkpoint by its ID alone.
func describeID(id string) string {
	parts := strings.SplitN(id, "/", 3)
	if len(parts) < 2 {
		return id
	}
	return fmt.Sprintf("%s %q", parts[0], parts[1])
}
