package daemon

import (
	"time"

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
	TimeStatus
}

// TimeStatus is a source's or an operator's watermark, from the current
// run (the last run's when none runs).
type TimeStatus struct {
	// Watermark is the watermark its data gave, absent before the
	// first; WatermarkEnded says the input ended since (the watermark
	// then stands at the end of time).
	Watermark      *time.Time `json:"watermark,omitempty"`
	WatermarkEnded bool       `json:"watermark_ended,omitempty"`
	// LagSeconds is the event-time lag: how far the watermark is behind
	// the clock, while the input has not ended.
	LagSeconds *float64 `json:"event_time_lag_seconds,omitempty"`
}

// timeStatus is t as /pipelines shows it at now.
func timeStatus(t pipeline.Time, now time.Time) TimeStatus {
	var st TimeStatus
	if !t.Watermark.IsZero() {
		wm := t.Watermark
		st.Watermark, st.WatermarkEnded = &wm, t.WatermarkEnded
	}
	if lag, ok := t.Lag(now); ok {
		s := lag.Seconds()
		st.LagSeconds = &s
	}
	return st
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
// finished runs' counters added to the current run's (cur), with the
// levels (watermarks) of levels, the current run's or the last one's.
// Call with u.mu held.
func (u *unit) operators(cur, levels []pipeline.Operator, at time.Time) []OperatorStatus {
	now := operatorTotals{}
	now.add(cur)
	times := map[string]pipeline.Time{}
	for _, o := range levels {
		times[o.ID] = o.Time
	}
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
		o.TimeStatus = timeStatus(times[id], at)
		out = append(out, o)
	}
	return out
}
