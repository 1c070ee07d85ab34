// The operators of a run's summary, named by their short ids, and the
// time of every node: its watermark, and where its time went.

package pipeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
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
	// Lookup, for a lookup join, is what its lookups did.
	Lookup *operator.LookupCounts
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
	// Retries counts the retries of the node's calls to its connector
	// (or, for a lookup join, its table) that waited out a failure.
	Retries int64
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
	t := Time{Busy: time.Duration(st.Busy.Load()), Backpressure: time.Duration(st.Backpressure.Load()), Retries: st.Retries.Load()}
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
	add := func(n *runtime.Node) *Operator {
		out = append(out, Operator{ID: n.Short, Plan: n.Name, Transform: n.Transform, In: n.Stats.RowsIn.Load(), Out: n.Stats.RowsOut.Load(), Time: timeOf(&n.Stats)})
		return &out[len(out)-1]
	}
	for _, n := range g.Ops {
		o := add(&n.Node)
		if l, ok := n.Op.(operator.Looker); ok {
			c := l.LookupCounts()
			o.Lookup = &c
		}
	}
	for _, u := range g.Unions {
		if u.Short != "" {
			add(&u.Node)
		}
	}
	return out
}

// sinkCalls fills a sink's count with its calls' latencies.
func sinkCalls(c *Count, n *runtime.SinkNode, now time.Time) {
	c.Writes, c.Flushes = n.Writes.Snapshot(), n.Flushes.Snapshot()
	c.PendingCall = n.PendingCall(now)
}

// writeTimes writes where each node's time went, with the share of the
// run's time, and the watermarks when there are:
//
//	NODE                  WATERMARK                      BUSY  BACKPRESSURE
//	source ev             2024-01-01 00:00:07.000  12ms (40%)       0s (0%)
//	w/window_aggregate#1  2024-01-01 00:00:07.000   9ms (30%)       0s (0%)
//	sink out                                        1ms (3%)
func (s Summary) writeTimes(b *strings.Builder) {
	marked := false
	for _, c := range s.Sources {
		marked = marked || !c.Watermark.IsZero()
	}
	share := func(d time.Duration) string {
		text := d.Round(time.Millisecond).String()
		if s.Elapsed > 0 {
			text += fmt.Sprintf(" (%.0f%%)", 100*d.Seconds()/s.Elapsed.Seconds())
		}
		return text
	}
	header := []string{"NODE"}
	if marked {
		header = append(header, "WATERMARK")
	}
	rows := [][]string{append(header, "BUSY", "BACKPRESSURE")}
	timed := marked
	add := func(name string, t Time, output bool) {
		timed = timed || t.Busy > 0 || t.Backpressure > 0
		r := []string{name}
		if marked {
			r = append(r, "")
			if !t.Watermark.IsZero() {
				r[1] = watermarkText(t)
			}
		}
		r = append(r, share(t.Busy), "")
		if output {
			r[len(r)-1] = share(t.Backpressure)
		}
		rows = append(rows, r)
	}
	for _, c := range s.Sources {
		add("source "+c.Name, c.Time, true)
	}
	for _, o := range s.Operators {
		add(o.ID, o.Time, true)
	}
	for _, c := range s.Sinks {
		add("sink "+c.Name, c.Time, false)
	}
	if timed {
		writeTable(b, rows, len(header))
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
