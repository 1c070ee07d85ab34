package plan

import (
	"fmt"
)

// Workers of keyed operators. An operator whose state is keyed (a GROUP
// BY, a window aggregate) runs as the pipeline's `parallelism` of
// workers, each owning the keys whose hash falls in its share
// (runtime.Keyed); one that needs every row in one place (a window
// aggregate without GROUP BY keys) runs on one worker, as do the keyed
// families not yet cut in key groups. Explain shows which, and why.

// keyedPayload is the payload of an operator of a keyed family: keyedBy
// says the input columns its workers split rows by, or why it runs on
// one worker.
type keyedPayload interface {
	keyedBy(n *Node) (keys []int, why string)
}

func (g *groupAggOp) keyedBy(*Node) ([]int, string) {
	if len(g.keys) == 0 {
		return nil, "no GROUP BY key: one group"
	}
	return g.keys, ""
}

func (w *windowAggOp) keyedBy(*Node) ([]int, string) {
	switch {
	case w.window.ProcTime:
		return nil, "processing-time windows run on one worker for now"
	case len(w.keys) == 0:
		return nil, "no GROUP BY key: every window is one group"
	}
	return w.keys, ""
}

func (r *rankOp) keyedBy(*Node) ([]int, string) {
	if len(r.spec.Partition) == 0 {
		return nil, "no PARTITION BY: one ranking of all rows"
	}
	return r.spec.Partition, ""
}

func (d *dedupOp) keyedBy(*Node) ([]int, string) {
	if len(d.spec.Key) == 0 {
		return nil, "no PARTITION BY: one row of all"
	}
	return d.spec.Key, ""
}

func (o *overOp) keyedBy(*Node) ([]int, string) {
	switch {
	case len(o.spec.Keys) == 0:
		return nil, "no PARTITION BY: one frame of all rows"
	case o.spec.ProcTime && !o.batch:
		return nil, "processing-time OVER runs on one worker for now"
	}
	return o.spec.Keys, ""
}

func (o *nonTimeOverOp) keyedBy(*Node) ([]int, string) {
	return nil, "OVER ordered by a column that is not a time attribute runs on one worker for now"
}

func (j *joinOp) keyedBy(*Node) ([]int, string) {
	switch {
	case j.interval != nil && len(j.interval.LeftKeys) == 0:
		return nil, "no equality condition: every row meets every row"
	case j.interval != nil:
		return j.interval.LeftKeys, ""
	case j.temporal != nil:
		return nil, "temporal joins run on one worker for now"
	case j.window != nil:
		return nil, "window joins run on one worker for now"
	case len(j.join.LeftKeys) == 0:
		return nil, "no equality condition: every row meets every row"
	case j.join.NullAware:
		return nil, "NOT IN's NULL rule needs every row in one place"
	}
	return j.join.LeftKeys, ""
}

func (w *windowRankOp) keyedBy(*Node) ([]int, string) {
	return nil, "window Top-N runs on one worker for now"
}

// workersText is what explain says of n's workers when the pipeline
// asks for more than one: ", workers=N", or why it has one; "" for an
// operator of no keyed family, or with the default of one worker.
func (p *Plan) workersText(n *Node) string {
	kp, ok := n.op.(keyedPayload)
	if !ok || p.Spec.Parallelism <= 1 {
		return ""
	}
	if _, why := kp.keyedBy(n); why != "" {
		return fmt.Sprintf(", workers=1 (%s)", why)
	}
	return fmt.Sprintf(", workers=%d", p.Spec.Parallelism)
}

func (d *distinctOp) keyedBy(*Node) ([]int, string) {
	return d.keys, ""
}

var (
	_ keyedPayload = (*groupAggOp)(nil)
	_ keyedPayload = (*windowAggOp)(nil)
	_ keyedPayload = (*dedupOp)(nil)
	_ keyedPayload = (*rankOp)(nil)
	_ keyedPayload = (*joinOp)(nil)
)
