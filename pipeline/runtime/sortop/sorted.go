// Package sortop runs event-time operators over their input sorted by
// time: the batch execution of OVER, SESSION and interval joins.
package sortop

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// TimeSorted runs an event-time operator (OVER, SESSION, an interval
// join) in batch execution, where the watermark of a bounded input only
// comes at its end: left alone, such an operator holds every row until
// then (an OVER its rows, a SESSION every session, an interval join its
// whole cache, each row scanning its key's). TimeSorted instead holds
// the input encoded in a state.TimeSort, which spills sorted runs to disk
// past its share of the state budget, and at the end feeds the operator,
// running as in streaming, the rows in time order (a time's rows in
// arrival order) in batches, each followed by the watermark that says no
// earlier row comes (Watermark given the next row's time): the operator
// emits and frees as it goes, and its results are those of the whole
// input seen at once, as no row is late. Flink's batch execution sorts
// the same way (by key first; here the operator keys its own state).
//
// Rows the operator must see at once are handed on in their batch
// (changes other than inserts, a NULL or non-TIMESTAMP time, a short
// row): it fails or drops them as it would anyway, with the positions of
// the records they came from. Errors of sorted rows name no record.
type TimeSorted struct {
	op   operator.Lifecycle
	one  operator.Operator
	two  operator.TwoInput
	cols [2]int // each side's time column
	// watermark is the operator's watermark once every row before time
	// next was fed: what it may emit and free without missing a later row.
	watermark func(next int64) int64
	sort      *state.TimeSort
	budget    int64
	batch     int // rows fed between watermarks (sortBatch; tests set fewer)
	drained   bool
	wm        int64
	widen     map[row.TypeID]row.TypeID // the saved rows' retagging (operator.Widener)
	// spare are the batches of rows fed last that the operator kept
	// nothing of (operator.InputReleaser), decoded into again; fedOdd
	// says the last input batch had rows fed to the operator at once.
	spare  [2]*row.Batch
	fedOdd bool
	codec  sortCodec
	enc    []byte   // a row's encoding, while it is added
	text   row.Text // the strings of the rows fed
}

// sortBatch is how many rows TimeSorted feeds at once between
// watermarks.
const sortBatch = 1024

// TimeSortedJoin is a TimeSorted of two inputs.
type TimeSortedJoin struct{ TimeSorted }

// NewTimeSorted wraps op, an Operator (timeCols[0] its time column:
// a *TimeSorted) or a TwoInput (timeCols its sides': a *TimeSortedJoin),
// built for streaming; watermark is described at TimeSorted.
func NewTimeSorted(op operator.Lifecycle, timeCols [2]int, watermark func(next int64) int64) operator.Lifecycle {
	t := TimeSorted{op: op, cols: timeCols, watermark: watermark, sort: state.NewTimeSort(), wm: operator.NoWatermark, batch: sortBatch}
	t.codec.col = timeCols
	t.one, _ = op.(operator.Operator)
	if two, ok := op.(operator.TwoInput); ok {
		t.two = two
		return &TimeSortedJoin{t}
	}
	return &t
}

// SetStateBudget gives the sort half of the operator's budget (runOp
// calls it): past that it spills, so the operator's own state keeps the
// other half.
func (t *TimeSorted) SetStateBudget(max int64) {
	t.budget = max
	if max > 0 {
		t.sort.SpillAt = max / 2
	}
}

func (t *TimeSorted) Process(in *row.Batch, out operator.Emitter) error { return t.add(0, in, out) }

// ProcessInput implements operator.TwoInput.
func (t *TimeSortedJoin) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	if input < 0 || input > 1 {
		return fmt.Errorf("time sort: input %d of an operator of one input", input)
	}
	return t.add(input, in, out)
}

// add holds in's rows, handing the ones the sort cannot order to the
// operator at once.
func (t *TimeSorted) add(side int, in *row.Batch, out operator.Emitter) error {
	if t.drained {
		return fmt.Errorf("time sort: input after the end")
	}
	col := t.cols[side]
	t.fedOdd = false
	var odd []int
	for i := range in.Changes {
		c := &in.Changes[i]
		if c.Kind != row.Insert || len(c.Row) <= col {
			odd = append(odd, i)
			continue
		}
		v := c.Row[col]
		if id := v.Type(); id != row.Timestamp && id != row.TimestampLTZ {
			odd = append(odd, i)
			continue
		}
		if err := t.hold(side, v.Micros(), c.Row); err != nil {
			return err
		}
	}
	if len(odd) == 0 {
		return nil
	}
	t.fedOdd = true
	sub := &row.Batch{Changes: make([]row.Change, len(odd))}
	for j, i := range odd {
		sub.Changes[j] = in.Changes[i]
	}
	em := out
	if in.Origin != nil {
		sub.Origin = pickedOrigin{in.Origin, odd}
		if tr, ok := out.(operator.Tracker); ok {
			em = &pickedEmitter{out, tr, odd}
		}
	}
	return t.feed(side, sub, em)
}

// hold adds r, of side and time ts, to the sort.
func (t *TimeSorted) hold(side int, ts int64, r row.Row) error {
	t.enc = t.codec.appendRow(t.enc[:0], side, ts, r)
	return t.sort.AddEncoded(side, ts, t.enc)
}

func (t *TimeSorted) feed(side int, b *row.Batch, out operator.Emitter) error {
	if t.two != nil {
		return t.two.ProcessInput(side, b, out)
	}
	return t.one.Process(b, out)
}

// Watermark ignores the input's watermarks but the last: a batch run's
// rows are never late. The last feeds the operator every row, then
// passes it on.
func (t *TimeSorted) Watermark(wm int64, out operator.Emitter) error {
	if wm != operator.MaxWatermark {
		return nil
	}
	if err := t.drain(out); err != nil {
		return err
	}
	return t.op.Watermark(wm, out)
}

// Finish feeds the rows when no final watermark did, then finishes the
// operator.
func (t *TimeSorted) Finish(out operator.Emitter) error {
	if err := t.drain(out); err != nil {
		return err
	}
	return t.op.Finish(out)
}

// drain feeds the operator the rows held, in time order, sortBatch at a
// time (the sides of a join each in a batch of their own: within one
// watermark an interval join's result does not depend on the order of
// its rows), each run of rows followed by the watermark below the next
// row's time.
func (t *TimeSorted) drain(out operator.Emitter) error {
	if t.drained {
		return nil
	}
	t.drained = true
	var (
		ch   chunk // the rows to feed next
		last int64
	)
	flush := func() error {
		if len(ch.sides) == 0 {
			return nil
		}
		batches, err := t.decodeChunk(&ch)
		if err != nil {
			return err
		}
		for side, b := range batches {
			if b != nil {
				if err := t.feed(side, b, out); err != nil {
					return err
				}
				if t.opReleases() {
					t.spare[side] = b
				}
			}
		}
		ch.reset()
		return nil
	}
	err := t.sort.Drain(func(side int, ts int64, enc []byte) error {
		if len(ch.sides) >= t.batch && ts != last {
			if err := flush(); err != nil {
				return err
			}
			if wm := t.watermark(ts); wm > t.wm {
				t.wm = wm
				if err := t.op.Watermark(wm, out); err != nil {
					return err
				}
			}
		}
		ch.add(side, ts, enc)
		last = ts
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// opReleases reports whether the operator kept nothing of the batch it
// was just fed (operator.InputReleaser).
func (t *TimeSorted) opReleases() bool {
	rel, ok := t.op.(operator.InputReleaser)
	return ok && rel.ReleasesInput()
}

// ReleasesInput implements operator.InputReleaser: the rows of an input
// batch are held encoded, so the batch is free once Process returned,
// unless rows of it were fed to an operator that keeps them.
func (t *TimeSorted) ReleasesInput() bool { return !t.fedOdd || t.opReleases() }

// chunk holds the encodings of the rows to feed next, copied (the
// sort's are valid during its call), with their sides and times.
type chunk struct {
	buf   []byte
	ends  []int
	sides []byte
	times []int64
}

func (c *chunk) add(side int, ts int64, enc []byte) {
	c.buf = append(c.buf, enc...)
	c.ends = append(c.ends, len(c.buf))
	c.sides = append(c.sides, byte(side))
	c.times = append(c.times, ts)
}

func (c *chunk) reset() {
	c.buf, c.ends, c.sides, c.times = c.buf[:0], c.ends[:0], c.sides[:0], c.times[:0]
}

// decodeChunk decodes the rows of ch into a batch per side, their
// strings copied into t.text (a chunk of them shares an allocation)
// and their values into an arena per batch, not two allocations a row.
// A side's batch is t.spare's when it has one (taken: reused and
// decoded into), else new.
func (t *TimeSorted) decodeChunk(ch *chunk) ([2]*row.Batch, error) {
	var batches [2]*row.Batch
	start := 0
	for i, side := range ch.sides {
		enc := ch.buf[start:ch.ends[i]]
		start = ch.ends[i]
		b := batches[side]
		if b == nil {
			if b = t.spare[side]; b != nil {
				t.spare[side] = nil
				b.Reuse()
			} else {
				b = row.NewBatch(len(ch.sides), t.width(side))
			}
			batches[side] = b
		}
		r, err := t.codec.decodeRow(b.NewRow(), int(side), ch.times[i], enc, &t.text)
		if err != nil {
			return batches, err
		}
		b.Append(row.Insert, r)
	}
	return batches, nil
}

// width is the width of side's rows, as far as the sort knows it.
func (t *TimeSorted) width(side byte) int {
	if lay := t.codec.lay[side]; lay != nil {
		return lay.Width()
	}
	return 1
}

// CarvesRows implements operator.Carving with the operator's: its rows
// are emitted into the emitter TimeSorted was given (a sorted row's and
// an unsorted one's alike; the latter's picked emitter lends no memory).
func (t *TimeSorted) CarvesRows() bool {
	cv, ok := t.op.(operator.Carving)
	return ok && cv.CarvesRows()
}

// Dropped implements operator.Counters with the operator's.
func (t *TimeSorted) Dropped() (int64, string) {
	if c, ok := t.op.(operator.Counters); ok {
		return c.Dropped()
	}
	return 0, ""
}

// StateEntries implements operator.StateSizer: the rows held and the
// operator's entries.
func (t *TimeSorted) StateEntries() int64 {
	n := t.sort.Len()
	if s, ok := t.op.(operator.StateSizer); ok {
		n += s.StateEntries()
	}
	return n
}

// StateBytes implements operator.StateMemory: the rows held in memory
// (not those in runs on disk) and the operator's state.
func (t *TimeSorted) StateBytes() int64 {
	n := t.sort.MemBytes()
	if s, ok := t.op.(operator.StateMemory); ok {
		n += s.StateBytes()
	}
	return n
}

const timeSortedStateVersion = 0x5a

// Snapshot implements operator.Snapshotter: the rows held (side, row),
// in an order that keeps their order (TimeSort.Each), then the
// operator's snapshot.
func (t *TimeSorted) Snapshot() ([]byte, error) {
	buf := []byte{timeSortedStateVersion}
	buf = binary.AppendUvarint(buf, uint64(t.sort.Len()))
	var r row.Row
	err := t.sort.Each(func(side int, ts int64, enc []byte) error {
		var err error
		if r, err = t.codec.decodeRow(r, side, ts, enc, nil); err != nil {
			return err
		}
		buf = append(buf, byte(side))
		buf = row.AppendRow(buf, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var inner []byte
	if sn, ok := t.op.(operator.Snapshotter); ok {
		if inner, err = sn.Snapshot(); err != nil {
			return nil, err
		}
	}
	return append(buf, inner...), nil
}

// Restore implements operator.Snapshotter.
func (t *TimeSorted) Restore(snap []byte) error {
	sn, _ := t.op.(operator.Snapshotter)
	if len(snap) == 0 || snap[0] != timeSortedStateVersion {
		// A checkpoint taken before batch runs sorted: the operator's
		// own state, its rows waiting for the end.
		if sn == nil {
			return errors.New("time sort: restore: not a snapshot of this operator")
		}
		return sn.Restore(snap)
	}
	d := row.NewDecoder(snap[1:])
	d.SetWiden(t.widen)
	n := d.Uvarint()
	t.sort.Reset()
	for range n {
		side := int(d.Byte())
		r := d.Row()
		if d.Err() != nil {
			break
		}
		if side > 1 || len(r) <= t.cols[side] {
			return fmt.Errorf("time sort: restore: row of side %d with %d columns", side, len(r))
		}
		if err := t.hold(side, r[t.cols[side]].Micros(), r); err != nil {
			return err
		}
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("time sort: restore: %w", err)
	}
	rest := snap[len(snap)-d.Len():]
	if sn == nil {
		if len(rest) > 0 {
			return errors.New("time sort: restore: operator state of an operator without state")
		}
		return nil
	}
	return sn.Restore(rest)
}

// CanWiden implements operator.Widener: the rows held are retagged as
// they are read back; the operator says for its own state.
func (t *TimeSorted) CanWiden() bool {
	w, ok := t.op.(operator.Widener)
	return ok && w.CanWiden()
}

// WidenRestore implements operator.Widener.
func (t *TimeSorted) WidenRestore(w map[row.TypeID]row.TypeID) {
	t.widen = w
	if in, ok := t.op.(operator.Widener); ok {
		in.WidenRestore(w)
	}
}

// pickedOrigin is the origin of some changes of a batch: change i is the
// batch's idx[i].
type pickedOrigin struct {
	in  row.Origin
	idx []int
}

func (p pickedOrigin) Position(i int) string { return p.in.Position(p.idx[i]) }

// pickedEmitter tells the node the change of its batch that change i of
// the picked ones is.
type pickedEmitter struct {
	operator.Emitter
	tr  operator.Tracker
	idx []int
}

func (p *pickedEmitter) At(i int) { p.tr.At(p.idx[i]) }

var (
	_ operator.Operator      = (*TimeSorted)(nil)
	_ operator.TwoInput      = (*TimeSortedJoin)(nil)
	_ operator.Snapshotter   = (*TimeSorted)(nil)
	_ operator.StateMemory   = (*TimeSorted)(nil)
	_ operator.Counters      = (*TimeSorted)(nil)
	_ operator.Widener       = (*TimeSorted)(nil)
	_ operator.InputReleaser = (*TimeSorted)(nil)
	_ operator.Carving       = (*TimeSorted)(nil)
)
