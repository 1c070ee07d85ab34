// The operators of a run's summary, named by their short ids, and the
// time of every node: its watermark, and where its time went.

package pipeline

import (
	"strings"
	"time"

	"github.com/etld/etld/pipeline/runtime"
)

// Operator is one operator of a run.
type Operator struct {
	// ID is the operator's short name, "<transform>/<kind>#<n>"
	// (plan.NodeInfo.OperatorID), which stays put while the SQL around
	// it changes; Plan is its plan text, which does not; Transform the
	// pipeline file's transform it belongs to.
	ID, Plan, Transform string
	// In counts the changes it received, Out those it sent on.
	In, Out int64
	Time
}

// Time is a node's watermark and the time it spent.
type Time struct {
	// Watermark is the node's watermark as its data set it, zero before
	// the first. WatermarkEnded: the node's input ended since, which
	// sent the watermark to the end of time; the event-time lag, now
	// minus the watermark, means nothing then.
	Watermark      time.Time
	WatermarkEnded bool
	// Busy is the time the node spent on its input (a bounded source:
	// reading too; a sink: writing), Backpressure the time it waited
	// for room in its output.
	Busy, Backpressure time.Duration
}

// Lag is the event-time lag at now: how far the watermark is behind the
// clock; false when there is no watermark or the input ended.
func (t Time) Lag(now time.Time) (time.Duration, bool) {
	if t.Watermark.IsZero() || t.WatermarkEnded {
		return 0, false
	}
	return now.Sub(t.Watermark), true
}

// timeOf reads a node's Time.
func timeOf(st *runtime.Stats) Time {
	t := Time{Busy: time.Duration(st.Busy.Load()), Backpressure: time.Duration(st.Backpressure.Load())}
	if wm, ok, ended := st.DataWatermark(); ok {
		t.Watermark, t.WatermarkEnded = time.UnixMicro(wm).UTC(), ended
	}
	return t
}

// shortName is a node's name in metrics: its short id, else its name.
func shortName(n *runtime.Node) string {
	if n.Short != "" {
		return n.Short
	}
	return n.Name
}

// operators reads the counters of g's operators and UNION ALLs (a join's
// union of its inputs is the join's own part and has no short id).
func operators(g *runtime.Graph) []Operator {
	var out []Operator
	add := func(n *runtime.Node) {
		out = append(out, Operator{ID: n.Short, Plan: n.Name, Transform: n.Transform, In: n.Stats.RowsIn.Load(), Out: n.Stats.RowsOut.Load(), Time: timeOf(&n.Stats)})
	}
	for _, n := range g.Ops {
		add(&n.Node)
	}
	for _, u := range g.Unions {
		if u.Short != "" {
			add(&u.Node)
		}
	}
	return out
}

// writeTimes writes the table of watermarks, when a node has one:
//
//	NODE                  WATERMARK
//	source ev             2024-01-01 00:00:07
//	w/window_aggregate#1  2024-01-01 00:00:05
func (s Summary) writeTimes(b *strings.Builder) {
	rows := [][]string{{"NODE", "WATERMARK"}}
	add := func(name string, t Time) {
		if !t.Watermark.IsZero() {
			rows = append(rows, []string{name, watermarkText(t)})
		}
	}
	for _, c := range s.Sources {
		add("source "+c.Name, c.Time)
	}
	for _, o := range s.Operators {
		add(o.ID, o.Time)
	}
	if len(rows) > 1 {
		writeTable(b, rows, 2)
	}
}

// watermarkText is a watermark as the summary shows it, to the
// millisecond.
func watermarkText(t Time) string {
	text := t.Watermark.Format("2006-01-02 15:04:05.000")
	if t.WatermarkEnded {
		text += " (input ended)"
	}
	return text
}
