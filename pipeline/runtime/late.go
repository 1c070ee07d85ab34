package runtime

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Late rows kept: with the pipeline's late_rows policy an operator that
// drops rows behind the watermark (operator.LateReporter) says which,
// and its node hands each to the policy's dead letters (Node.Late) as a
// record naming the source record it came from and the operator that
// refused it, instead of only counting it.

// lateStep wraps a node's step so that the rows its operator drops as
// late go to n.Late.
func (n *OpNode) lateStep(step func(m message, em *batchEmitter) error) func(m message, em *batchEmitter) error {
	lr, ok := n.Op.(operator.LateReporter)
	if !ok || n.Late == nil {
		return step
	}
	// The late rows' records are made as the operator reports them, their
	// rows copied: by the time it returns, it may have given the batch's
	// rows back (release) to the decoders, which write the next rows
	// into them.
	var late []connector.BadRecord
	var cur message
	lr.ReportLate(func(i int) {
		bad := n.lateRecord(cur.batch, cur.input, i)
		bad.Row = slices.Clone(bad.Row)
		late = append(late, bad)
	})
	return func(m message, em *batchEmitter) error {
		late, cur = late[:0], m
		err := step(m, em)
		cur = message{}
		if err != nil {
			return err
		}
		for _, bad := range late {
			if err := n.Late.Reject(bad); err != nil {
				return err
			}
		}
		clear(late)
		return nil
	}
}

// lateRecord describes change i of in, from the operator's input input,
// which the operator dropped as late.
func (n *OpNode) lateRecord(in *row.Batch, input, i int) connector.BadRecord {
	name := n.Name
	if n.Short != "" {
		name = n.Short + " (" + n.Name + ")"
	}
	err := fmt.Errorf("late row: %s dropped it, its event time being at or behind the watermark %s", name, watermarkText(n.Stats.Watermark.Load()))
	cols := n.LateColumns
	if input < len(n.LateInputs) {
		cols = n.LateInputs[input]
	}
	return rowRecord(in, i, n.Transform, cols, in.Changes[i].Row, err)
}

func watermarkText(wm int64) string {
	if wm == operator.NoWatermark {
		return "(none yet)"
	}
	return time.UnixMicro(wm).UTC().Format("2006-01-02 15:04:05.999999")
}

// passLate and endLate tell the late rows' dead letters what the node's
// Feed is told: a barrier passed, the end.
func (n *OpNode) passLate(ctx context.Context, id int64) error { return n.Late.pass(ctx, id) }
func (n *OpNode) endLate(ctx context.Context) error            { return n.Late.end(ctx) }
