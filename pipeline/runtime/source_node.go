package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The source side of a run: reading batches, evaluating computed columns
// and the watermark, and taking part in checkpoints between two Reads.

func runSource(ctx context.Context, s *SourceNode, fz *fusion, batchSize int, stop <-chan struct{}, co *coordinator) (err error) {
	if fz != nil && fz.local != nil {
		batchSize = max(batchSize, localBatchRows)
	}
	defer s.closeOutputs()
	ctx = retry.WithCounter(ctx, &s.Stats.Retries)
	p := s.cp
	wm, restoredEnd := s.restore()
	// Reads end on stop as well as on cancellation; a stop is an end of
	// input, not an error.
	readCtx, cancelRead := context.WithCancel(ctx)
	defer cancelRead()
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancelRead()
			case <-readCtx.Done():
			}
		}()
	}
	if err := s.Source.Open(readCtx); err != nil {
		_ = s.Source.Close(context.WithoutCancel(ctx))
		if stopped(ctx, readCtx) {
			return s.endUnopened(ctx, co, wm, restoredEnd)
		}
		return fmt.Errorf("open: %w", err)
	}
	defer func() {
		if cerr := s.Source.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	// A restored committer finishes the restored checkpoint's part first:
	// its commit may not have happened before the crash.
	if r := p.restored; r != nil && p.committer != nil {
		if err := p.committer.Commit(ctx, r.Connector); err != nil {
			return fmt.Errorf("commit of restored checkpoint: %w", err)
		}
	}
	if fz != nil && len(fz.readers) > 1 {
		fz.outs = fz.outputs()
	}
	eof := restoredEnd
	for !eof {
		if err := s.control(ctx, co, wm); err != nil {
			return err
		}
		rctx := readCtx
		if p.interrupt != nil {
			if rctx = p.interrupt.begin(readCtx); rctx == nil {
				continue // a barrier or commit is waiting
			}
		}
		c := s.startBusy()
		b, woke, rerr := s.read(rctx, batchSize)
		reading := time.Since(c.start)
		interrupted := p.interrupt != nil && p.interrupt.end(rctx)
		if wm, err = s.forward(ctx, b, fz, wm); err != nil {
			return err
		}
		if wm, err = s.idleSplits(ctx, wm); err != nil {
			return err
		}
		s.stopBusy(c, s.waiting(reading))
		switch {
		case rerr == nil:
			continue
		case woke && ctx.Err() == nil && !stopped(ctx, readCtx):
			continue
		case errors.Is(rerr, io.EOF):
			if s.EventTime != nil {
				// The end of a bounded input closes every window.
				wm = operator.MaxWatermark
				s.Stats.setWatermark(operator.MaxWatermark)
				if err := s.send(ctx, message{kind: msgWatermark, watermark: operator.MaxWatermark}); err != nil {
					return err
				}
			}
			eof = true
		case stopped(ctx, readCtx):
			return s.end(ctx, co, wm, false)
		case interrupted && ctx.Err() == nil:
			continue
		default:
			return fmt.Errorf("read: %w", rerr)
		}
	}
	return s.end(ctx, co, wm, true)
}

// restore sets the node up from its restored checkpoint, if any: the
// watermark and, for a source with splits and event time, the splits'
// watermarks. ended is whether the source had already read to its end.
func (s *SourceNode) restore() (wm int64, ended bool) {
	wm = operator.NoWatermark
	var restoredSplits map[string]int64
	if r := s.cp.restored; r != nil {
		ended = r.Ended
		if w, splits, ok := decodeSourceState(r.Runtime); ok {
			wm, restoredSplits = w, splits
		}
	}
	s.Stats.setWatermark(wm)
	s.splits = nil
	if ss, ok := s.Source.(connector.SplitSource); ok && s.EventTime != nil {
		s.splits = newSplitWatermarks(ss, s.IdleTimeout, restoredSplits, time.Now())
	}
	return wm, ended
}

// endUnopened ends a source that was stopped before its Open returned:
// its checkpoint state is the restored one, reported as ended.
func (s *SourceNode) endUnopened(ctx context.Context, co *coordinator, wm int64, restoredEnd bool) error {
	var pos []byte
	if s.cp.restored != nil {
		pos = s.cp.restored.Connector
	}
	if err := co.report(ctx, report{part: s.cpIndex, ended: true, finished: restoredEnd, runtime: encodeSourceState(wm, s.splits), connector: pos}); err != nil {
		return err
	}
	if err := s.Feed.end(ctx); err != nil {
		return err
	}
	return s.send(ctx, message{kind: msgEnd, stop: co.resumable})
}

// read reads a batch; with split watermarks it first takes the source's
// splits, and returns by the time the next split goes idle (woke), so
// that the watermark moves on without waiting for a record.
func (s *SourceNode) read(ctx context.Context, batchSize int) (*row.Batch, bool, error) {
	if s.splits == nil {
		b, err := s.Source.Read(ctx, batchSize)
		return b, false, err
	}
	s.splits.refresh(time.Now())
	next := s.splits.nextIdle()
	if next.IsZero() {
		b, err := s.Source.Read(ctx, batchSize)
		s.splits.refresh(time.Now())
		return b, false, err
	}
	rctx, cancel := context.WithDeadlineCause(ctx, next, errIdleWake)
	defer cancel()
	b, err := s.Source.Read(rctx, batchSize)
	// The splits the records came from were assigned by now, and so
	// were the others assigned with them, which their records must not
	// make late.
	s.splits.refresh(time.Now())
	return b, err != nil && errors.Is(context.Cause(rctx), errIdleWake), err
}

// idleSplits marks the splits idle that had no record for the idle
// timeout and sends the watermark if that moved it.
func (s *SourceNode) idleSplits(ctx context.Context, wm int64) (int64, error) {
	if s.splits == nil {
		return wm, nil
	}
	next := s.splits.markIdle(time.Now())
	if next <= wm {
		return wm, nil
	}
	s.Stats.setWatermark(next)
	return next, s.send(ctx, message{kind: msgWatermark, watermark: next})
}

// control takes a pending barrier request and runs pending commits,
// between two Reads.
func (s *SourceNode) control(ctx context.Context, co *coordinator, wm int64) error {
	p := s.cp
	select {
	case id := <-p.trigger:
		pos, err := s.position()
		if err != nil {
			return err
		}
		if err := co.report(ctx, report{part: s.cpIndex, id: id, runtime: encodeSourceState(wm, s.splits), connector: pos}); err != nil {
			return err
		}
		if err := s.send(ctx, message{kind: msgBarrier, barrier: id}); err != nil {
			return err
		}
		if err := s.Feed.pass(ctx, id); err != nil {
			return err
		}
	default:
	}
	return p.commitPending(ctx)
}

func (s *SourceNode) position() ([]byte, error) {
	pos, ok := s.Source.(connector.Positioner)
	if !ok {
		return nil, nil
	}
	b, err := pos.Position()
	if err != nil {
		return nil, fmt.Errorf("position: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// end reports the source's final state, ends its stream and waits for the
// final checkpoint's commit before the source is closed.
func (s *SourceNode) end(ctx context.Context, co *coordinator, wm int64, eof bool) error {
	pos, err := s.position()
	if err != nil {
		return err
	}
	if err := co.report(ctx, report{part: s.cpIndex, ended: true, finished: eof, runtime: encodeSourceState(wm, s.splits), connector: pos}); err != nil {
		return err
	}
	if err := s.Feed.end(ctx); err != nil {
		return err
	}
	if err := s.send(ctx, message{kind: msgEnd, stop: !eof && co.resumable}); err != nil {
		return err
	}
	s.closeOutputs()
	return s.cp.waitFinal(ctx, co.done)
}

func encodeWatermark(wm int64) []byte {
	if wm == operator.NoWatermark {
		return nil
	}
	return binary.AppendVarint(nil, wm)
}

// stopped reports whether the read context ended because of a stop
// rather than a failure.
func stopped(ctx, readCtx context.Context) bool {
	return ctx.Err() == nil && readCtx.Err() != nil
}

// prepare evaluates computed columns and the event time of a batch. A
// row on which either fails goes to the source's on_error (Reject) and is
// left out: a NULL event time is a bad record of the source, not a
// failure of the windows downstream. It returns the rows that go out,
// where the watermark cuts them (source_cut.go) and the watermark after
// them.
func (s *SourceNode) prepare(b *row.Batch, wm int64) (*row.Batch, []wmCut, int64, error) {
	if s.Calc == nil && s.EventTime == nil {
		return b, nil, wm, nil
	}
	// out is b until a row is mapped (computed columns) or left out; from
	// then maps out's changes to b's, for their positions.
	out := b
	var from []int32
	split := func(n int) {
		out = &row.Batch{Changes: make([]row.Change, n, b.Len())}
		copy(out.Changes, b.Changes[:n])
		if b.Origin != nil {
			from = make([]int32, n, b.Len())
			for j := range from {
				from[j] = int32(j)
			}
		}
	}
	if s.Calc != nil {
		split(0)
	}
	cut := newCutter(s, wm)
	// The computed rows share slabs of the batch's own.
	var carve func(int) row.Row
	var memo row.Row
	if s.Calc != nil {
		carve, memo = (&freshSlabs{}).carve, s.Calc.newMemo()
	}
	var now time.Time
	if s.splits != nil {
		now = time.Now()
	}
	for i, ch := range b.Changes {
		r, ok := ch.Row, true
		var err error
		if s.Calc != nil {
			r, ok, err = s.Calc.eval(memo, r, carve)
		}
		var cand int64
		var has bool
		if err == nil && ok && s.EventTime != nil {
			cand, has, err = s.EventTime(s.timeRow(r))
		}
		if err != nil {
			if err := s.reject(b, i, err); err != nil {
				return nil, nil, wm, err
			}
			ok = false
		}
		if ok && s.EventTime != nil {
			at := i
			if out != b {
				at = out.Len()
			}
			var rt int64
			if s.RowTime != nil {
				rt = s.RowTime(s.timeRow(r))
			}
			cut.check(at, rt)
			switch {
			case s.splits != nil:
				cut.advance(s.splits.add(s.splits.src.Split(b, i), cand, has, now))
			case has:
				cut.advance(cand)
			}
		}
		switch {
		case !ok && out == b:
			split(i)
		case ok && out != b:
			out.Append(ch.Kind, r)
			if from != nil {
				from = append(from, int32(i))
			}
		}
	}
	if s.picked != nil {
		s.picked.clear(s.timeScratch)
	}
	if out != b && from != nil {
		out.Origin = &derivedOrigin{parent: b.Origin, from: from}
	}
	return out, cut.cuts, cut.run, nil
}

// badRecord describes change i of b, on which the source's computed
// columns or watermark failed with err.
func (s *SourceNode) badRecord(b *row.Batch, i int, err error) connector.BadRecord {
	r := b.Changes[i].Row
	if s.picked != nil {
		r = s.picked.whole(r) // as the row would be without picking
	}
	if s.Gap > 0 && len(r) == s.Columns.Len()+s.Gap {
		// The computed columns' room, perhaps written in part: the
		// record is the decoded row, as Columns names it.
		r = slices.Concat(r[:s.GapAt], r[s.GapAt+s.Gap:])
	}
	bad := rowRecord(b, i, "", s.Columns, r, err)
	if bad.Position == "" {
		bad.Position = "source " + s.Name
	}
	return bad
}

func (s *SourceNode) reject(b *row.Batch, i int, err error) error {
	bad := s.badRecord(b, i, err)
	if s.Feed == nil {
		return bad
	}
	return s.Feed.Reject(bad)
}

// rowRecord describes change i of in, row r of the columns cols, on
// which an expression of transform failed with err: the record it came
// from (its position and location) and the row.
func rowRecord(in *row.Batch, i int, transform string, cols row.Schema, r row.Row, err error) connector.BadRecord {
	return connector.BadRecord{Position: operator.PositionOf(in, i), Location: operator.LocationOf(in, i), Transform: transform,
		Row: r, Columns: cols, Err: err}
}

// forward sends what the source read (b, nil or empty at times) on,
// through its computed columns and watermark unless a fused Calc mapped
// it in the decoders already, with the watermark cut in where a row
// needs it before (source_cut.go), and then the watermark if it
// advanced. It returns the source's watermark.
func (s *SourceNode) forward(ctx context.Context, b *row.Batch, fz *fusion, wm int64) (int64, error) {
	next := wm
	var out *row.Batch
	var cuts []wmCut
	if fo := fusedOf(b); fo != nil && fz != nil && fo.parts != nil {
		return s.forwardParts(ctx, fo, fz, fz.outs, wm)
	} else if fo != nil && fz != nil {
		// Count for the source and for the Calc what they would have.
		s.Stats.RowsIn.Add(int64(fo.records))
		s.Stats.RowsOut.Add(int64(fo.kept))
		fz.readers[0].count(fo, rowsOf(b))
		out = b
		cuts, next = s.fusedCuts(fo, b.Len(), wm)
		if b.Len() == 0 {
			// No node gets the batch, whose filter left nothing:
			// its memory goes back now (a decoder may write it at
			// once: not read after).
			releaseEmpty(b)
			out = nil
		}
	} else if b != nil && b.Len() > 0 {
		s.Stats.RowsIn.Add(int64(row.RecordsIn(b)))
		var err error
		if out, cuts, next, err = s.prepare(b, wm); err != nil {
			return wm, err
		}
		s.Stats.RowsOut.Add(int64(out.Len()))
	}
	if out != nil && out.Len() > 0 {
		var err error
		if wm, err = s.sendCut(ctx, out, cuts, wm); err != nil {
			return wm, err
		}
	}
	if next <= wm {
		return wm, nil
	}
	s.Stats.setWatermark(next)
	return next, s.send(ctx, message{kind: msgWatermark, watermark: next})
}
