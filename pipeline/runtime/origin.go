package runtime

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// Positions of records (issue 14). A source batch's row.Origin names the
// record each change came from (file:line, topic/partition/offset). An
// operator node gives each output batch a derivedOrigin mapping its
// changes to the input changes that caused them, so that an error in any
// later operator or sink still names the source record. An operator says
// which input change it works on with tracker.at before it emits (Calc,
// GroupAgg and Distinct do); a window's results, fired by a watermark,
// come from no one record and have no position.
//
// The cost is an int32 per emitted change and one slice per output batch,
// and nothing at all when the input has no origin. Positions are only
// rendered (a string) when an error names one.

// derivedOrigin is the Origin of an operator's output batch: change i
// came from change from[i] of the input batch whose origin is parent, or
// from no record when from[i] < 0.
type derivedOrigin struct {
	parent row.Origin
	from   []int32
}

// Position implements row.Origin.
func (d *derivedOrigin) Position(i int) string {
	if i < 0 || i >= len(d.from) || d.from[i] < 0 {
		return ""
	}
	return d.parent.Position(int(d.from[i]))
}

// Record implements row.RecordOrigin when the parent does.
func (d *derivedOrigin) Record(i int) (string, int64, bool) {
	if i < 0 || i >= len(d.from) || d.from[i] < 0 {
		return "", 0, false
	}
	ro, ok := d.parent.(row.RecordOrigin)
	if !ok {
		return "", 0, false
	}
	return ro.Record(int(d.from[i]))
}

// tracker is the node's emitter as an operator sees it: at(i) says that
// the changes emitted next are caused by change i of the input batch.
type tracker interface {
	at(i int)
}

// trackerOf returns out's tracker when the changes of in have positions
// to carry, and nil otherwise: the operator then makes no at calls.
func trackerOf(in *row.Batch, out Emitter) tracker {
	if in.Origin == nil {
		return nil
	}
	t, _ := out.(tracker)
	return t
}

// positionOf names the record change i of b came from, or "".
func positionOf(b *row.Batch, i int) string {
	if b == nil || b.Origin == nil {
		return ""
	}
	return b.Origin.Position(i)
}

// changeError describes an operator's failure on change i of in, naming
// the source record the change came from when it is known.
func changeError(op string, in *row.Batch, i int, err error) error {
	kind := in.Changes[i].Kind
	if pos := positionOf(in, i); pos != "" {
		return fmt.Errorf("%s: %s: change %d (%s): %w", op, pos, i, kind, err)
	}
	return fmt.Errorf("%s: change %d (%s): %w", op, i, kind, err)
}
