package operator

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// Positions of records. A source batch's row.Origin names the record
// each change came from (file:line, topic/partition/offset). The engine
// gives each operator's output batch an origin mapping its changes to the
// input changes that caused them, so that an error in any later operator
// or sink still names the source record. An operator says which input
// change it works on (Tracker.At, or EachChange which does it) before it
// emits; a window's results, fired by a watermark, come from no one
// record and have no position.
//
// The cost is an int32 per emitted change and one slice per output batch,
// and nothing at all when the input has no origin. Positions are only
// rendered (a string) when an error names one.

// Tracker is the node's emitter as an operator sees it: At(i) says that
// the changes emitted next are caused by change i of the input batch.
type Tracker interface {
	At(i int)
}

// TrackerOf returns out's tracker when the changes of in have positions
// to carry, and nil otherwise: the operator then makes no at calls.
func TrackerOf(in *row.Batch, out Emitter) Tracker {
	if in.Origin == nil {
		return nil
	}
	t, _ := out.(Tracker)
	return t
}

// ShareOrigin is the Origin of a batch that is a share of another (a
// keyed operator's worker gets the changes of its keys): InputChange
// gives the number of change i in the batch the node received, which
// an error names.
type ShareOrigin interface {
	row.Origin
	InputChange(i int) int
}

// PositionOf names the record change i of b came from, or "".
func PositionOf(b *row.Batch, i int) string {
	if b == nil || b.Origin == nil {
		return ""
	}
	return b.Origin.Position(i)
}

// LocationOf locates in its file the record change i of b came from, or
// returns nil (a source that reads no files, a window's result).
func LocationOf(b *row.Batch, i int) *row.Location {
	if b == nil || b.Origin == nil {
		return nil
	}
	lo, ok := b.Origin.(row.Locator)
	if !ok {
		return nil
	}
	loc, ok := lo.Locate(i)
	if !ok {
		return nil
	}
	return &loc
}

// ChangeError describes an operator's failure on change i of in, naming
// the source record the change came from when it is known.
func ChangeError(op string, in *row.Batch, i int, err error) error {
	pos := PositionOf(in, i)
	if s, ok := in.Origin.(ShareOrigin); ok {
		i = s.InputChange(i)
	}
	if pos != "" {
		return fmt.Errorf("%s: %s: change %d: %w", op, pos, i, err)
	}
	return fmt.Errorf("%s: change %d: %w", op, i, err)
}
