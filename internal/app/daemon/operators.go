package daemon

import (
	"github.com/etld/etld/pipeline"
)

// OperatorStatus is one operator of a pipeline, named by its short id
// (plan.NodeInfo.OperatorID, the `operator` label of /metrics), with its
// plan text beside it. Its counters add up every run of this version of
// the file.
type OperatorStatus struct {
	Operator  string `json:"operator"`
	Plan      string `json:"plan"`
	Transform string `json:"transform,omitempty"`
	In        int64  `json:"rows_in"`
	Out       int64  `json:"rows_out"`
}

// operatorTotals adds finished runs' operator counters, by id.
type operatorTotals map[string]OperatorStatus

func (t operatorTotals) add(ops []pipeline.Operator) {
	for _, o := range ops {
		old, ok := t[o.ID]
		if !ok {
			old = OperatorStatus{Operator: o.ID, Plan: o.Plan, Transform: o.Transform}
		}
		old.In += o.In
		old.Out += o.Out
		t[o.ID] = old
	}
}

// operators lists the unit's operators in the order of its plan, the
// finished runs' counters added to the current run's (cur). Call with
// u.mu held.
func (u *unit) operators(cur []pipeline.Operator) []OperatorStatus {
	now := operatorTotals{}
	now.add(cur)
	var out []OperatorStatus
	if u.plan == nil {
		return nil
	}
	for _, n := range u.plan.Nodes {
		id := n.OperatorID
		b, inBase := u.opBase[id]
		c, inCur := now[id]
		if id == "" || !inBase && !inCur {
			continue // not an operator, or one that runs as its input (a renaming)
		}
		o := c
		if !inCur {
			o = b
		}
		o.In, o.Out = b.In+c.In, b.Out+c.Out
		out = append(out, o)
	}
	return out
}
