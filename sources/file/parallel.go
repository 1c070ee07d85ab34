package file

// Parallel decode of a bounded source. One goroutine (the reader) cuts
// the files into blocks of whole records, quote-aware: a block without a
// quote is cut at line breaks at memory speed, one with quotes by the
// format's splitter record by record, exactly as the serial reader does.
// Workers, one per core, decode blocks into batches, each with a decoder
// of its own (connector.ParallelDecoder). Read takes the blocks back in
// file order, so that what it returns, the positions it keeps for
// checkpoints, the errors and what goes to on_error (called there, in
// order) do not depend on the number of workers.
//
// A block's bytes are never written again once read (records' fresh
// mode), so a worker decodes records from one string over the block
// without copying them (connector.StringDecoder).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Tuning, variables so that tests can force many blocks and workers.
var (
	// parallelWorkers is the number of decode workers; 0 is GOMAXPROCS,
	// and below 0 reads serially (tests compare the two).
	parallelWorkers = 0
	// blockBytes is about how many bytes of records one block holds:
	// large enough that handing it on costs nothing per record, small
	// enough that the workers start at once and stay busy.
	blockBytes = 128 << 10
)

// parallel is the state of a parallel read: the reader and workers'
// channels, the block Read is taking batches from, and the position after
// the last batch Read returned.
type parallel struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// order has every block in file order, work the same blocks for the
	// workers; order's capacity bounds the blocks in flight.
	order chan *block
	cur   *block
	next  int // of cur.items
	max   int
	// file, offset and line are the position (Position).
	file         int
	offset, line int64
}

// block is a run of whole records of one file, or, with err set, the end
// of the input (io.EOF) or the error that stops it, at offset and line.
type block struct {
	file         int
	offset, line int64 // of the block's first byte
	data         []byte
	buf          *readBuf   // the buffer data is in, when tracked (bufPool)
	recs         []splitRec // when the splitter cut the block
	end, endLine int64      // the position after the block
	// final: no record follows; Read returns the last batch with io.EOF.
	final bool
	err   error
	done  chan struct{} // closed when items are ready
	items []item
}

// item is a batch of a block and the records the decoder refused in it,
// each at the number of changes before it: Read hands those to on_error
// in order, and cuts the batch at the first one the policy fails on.
type item struct {
	b *row.Batch
	// mapped: b is what the runtime's map (MapBatches) made of the
	// decoded batch; made: a batch of its own, not the decoded one
	// filtered in place.
	mapped, made bool
	pos          *row.Positions
	bad          []refused
	end, endLine int64
}

type refused struct {
	at           int
	rec          []byte
	line         int64 // the record's line, for its position
	offset, from int64 // the position before it (offset, line)
	err          error
}

// parallelDecoder returns the decoder of a source that may read in
// parallel, or nil.
func (s *Source) parallelDecoder() connector.ParallelDecoder {
	if s.fl != nil || parallelWorkers < 0 {
		return nil // a followed file grows at its tail: read serially
	}
	pd, _ := s.dec.(connector.ParallelDecoder)
	return pd
}

// startParallel starts the reader and the workers, which decode batches
// of up to max changes.
func (s *Source) startParallel(pd connector.ParallelDecoder, max int) {
	workers := parallelWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &parallel{
		cancel: cancel,
		order:  make(chan *block, 2*workers+2),
		max:    max,
		file:   s.cur, offset: s.rd.offset, line: s.rd.line,
	}
	s.par = p
	s.moveTo(p.file, p.offset, p.line)
	s.rd.fresh = true
	s.rd.bufs = s.bufs
	work := make(chan *block, 2*workers+2)
	full := s.columns
	if fd, ok := s.dec.(connector.FullNestedDecoder); ok && s.paths && !s.updating {
		// Rows with the paths' columns, every value written but the
		// computed columns' room, which the runtime writes before it
		// reads (connector.NestedSource).
		full = fd.WritesNestedRows()
	} else if cd, ok := s.dec.(connector.ColumnDecoder); ok && !s.columns && !s.updating && !s.paths && (!s.projected || keepsProjection(s.dec)) {
		// Told to read every column in order, a ColumnDecoder writes
		// every value of its rows (which is all it changes: not when
		// the planner left columns unread, which selecting all of them
		// would read again, unless it keeps them unread): the batches
		// can then be given back (Recycle), and a mapped batch reused
		// without zeroing (push).
		all := make([]int, s.width)
		for i := range all {
			all[i] = i
		}
		full = cd.DecodeColumns(all)
	}
	s.fullRows.Store(full)
	// The clones are made before the reader, which uses s.dec, starts.
	decs := make([]connector.Decoder, workers)
	for i := range decs {
		decs[i] = pd.Clone()
	}
	p.wg.Add(1 + workers)
	go func() {
		defer p.wg.Done()
		defer close(work)
		defer close(p.order)
		s.readBlocks(ctx, p, work)
	}()
	for _, dec := range decs {
		go func() {
			defer p.wg.Done()
			w := &worker{dec: dec, max: max}
			w.sd, _ = dec.(connector.StringDecoder)
			w.ld, _ = dec.(connector.LineDecoder)
			for b := range work {
				if ctx.Err() == nil {
					s.decodeBlock(b, w)
				}
				close(b.done)
			}
		}()
	}
}

// stopParallel ends the reader and the workers and waits for them.
func (s *Source) stopParallel() {
	if s.par == nil {
		return
	}
	s.par.cancel()
	s.par.wg.Wait()
}

// readBlocks is the reader: it cuts the files into blocks and hands them
// to the workers and to Read, in order, until the end of the input, an
// error, or ctx ends.
func (s *Source) readBlocks(ctx context.Context, p *parallel, work chan<- *block) {
	send := func(b *block) bool {
		select {
		case p.order <- b:
		case <-ctx.Done():
			return false
		}
		if b.err != nil {
			close(b.done)
			return false
		}
		select {
		case work <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	stop := func(err error) {
		send(&block{file: s.cur, offset: s.rd.offset, line: s.rd.line, err: err, done: make(chan struct{})})
	}
	lines := func([]byte) bool { return true }
	if ls, ok := s.dec.(connector.LineSplitter); ok {
		lines = ls.RecordsAreLines
	}
	for ctx.Err() == nil {
		name := s.files[s.cur]
		if s.inHeader {
			if err := s.nextHeader(name); err == io.EOF {
				s.inHeader = false
			} else if err != nil {
				stop(err)
				return
			}
			continue
		}
		b := &block{file: s.cur, offset: s.rd.offset, line: s.rd.line, done: make(chan struct{})}
		data, recs, err := s.rd.block(blockBytes, lines)
		if err == io.EOF {
			if s.cur+1 < len(s.files) {
				if err := s.openFile(s.cur+1, 0, 1); err != nil {
					stop(err)
					return
				}
				continue
			}
			stop(io.EOF)
			return
		}
		if err != nil {
			stop(fmt.Errorf("%s:%d: %w", name, s.rd.line, err))
			return
		}
		b.data, b.recs, b.end, b.endLine = data, recs, s.rd.offset, s.rd.line
		if recs != nil {
			s.bufs.stop()
		} else {
			b.buf = s.bufs.cut(s.rd.cur) // before drained, which may read into a new buffer
		}
		b.final = s.cur+1 == len(s.files) && s.rd.drained()
		if !send(b) {
			return
		}
	}
}

// nextHeader reads the current file's header, when it comes; io.EOF
// when the file holds none. A bad header is an error at its record.
func (s *Source) nextHeader(name string) error {
	rec, line, err := s.rd.next()
	switch {
	case err == io.EOF:
		return io.EOF
	case err != nil:
		return fmt.Errorf("%s:%d: %w", name, line, err)
	case len(rec) == 0:
		return nil
	}
	if err := s.decodeHeader(rec); err != nil {
		s.rd.unread()
		return fmt.Errorf("%s:%d: header: %w", name, line, err)
	}
	s.inHeader = false
	return nil
}

// worker is a decode worker's own state.
type worker struct {
	dec connector.Decoder
	sd  connector.StringDecoder // dec, when it decodes strings
	ld  connector.LineDecoder   // dec, when it finds its lines' ends
	max int
	// spare is a decoded batch the map is done with, for the next one.
	spare *row.Batch
}

// MapBatches implements connector.MappingSource for a source that reads
// in parallel.
func (s *Source) MapBatches(f func(*row.Batch) *row.Batch, fresh bool) bool {
	if s.par != nil || s.parallelDecoder() == nil {
		return false
	}
	s.mapper, s.mapFresh = f, fresh
	return true
}

// push adds a finished item to b, mapped when the source maps and the
// decoder refused none of its records (those go to on_error in order,
// and the runtime's serial way handles the rest of the batch).
func (s *Source) push(b *block, it item, w *worker) {
	if s.mapper != nil && len(it.bad) == 0 {
		if out := s.mapper(it.b); out != nil {
			if s.mapFresh {
				// The mapped rows are new: the decoded batch is the
				// worker's next, zeroed unless its decoder writes
				// every value (the zeroing of a whole-width batch a
				// block costs as much as a column's decode).
				if s.fullRows.Load() {
					it.b.Reuse()
					reusedMapped.Add(1)
				} else {
					it.b.Reset()
				}
				w.spare = it.b
			}
			it.b, it.mapped, it.made = out, true, out != it.b
		}
	}
	b.items = append(b.items, it)
}

// keepsProjection reports whether dec keeps its projection when told to
// decode every column (connector.ProjectionKeeper).
func keepsProjection(dec connector.Decoder) bool {
	pk, ok := dec.(connector.ProjectionKeeper)
	return ok && pk.KeepsProjection()
}

// reusedMapped counts the mapped batches' decoded batches reused without
// zeroing, for tests.
var reusedMapped atomic.Int64

// decodeBlock decodes b into its items, batches of up to max changes.
func (s *Source) decodeBlock(b *block, w *worker) {
	name, id := s.files[b.file], s.ids[b.file]
	dec, sd, max := w.dec, w.sd, w.max
	var it item
	begin := func() {
		nb := w.spare
		if nb == nil {
			select {
			case nb = <-s.spares:
				nb.Reuse() // every value of a row is written (connector.Decoder)
			default:
				nb = row.NewBatch(max, s.width)
			}
		}
		w.spare = nil
		it = item{b: nb, pos: row.NewPositions(max, ":")}
		it.b.Origin = it.pos
	}
	begin()
	// take decodes one record; end and endLine are the position after it.
	var take func(rec string, raw []byte, line, from, fromLine, end, endLine int64, bad error)
	take = func(rec string, raw []byte, line, from, fromLine, end, endLine int64, bad error) {
		before := it.b.Len()
		err := bad
		if err == nil {
			if sd != nil {
				err = sd.DecodeString(rec, it.b)
			} else {
				err = dec.Decode(raw, it.b)
			}
		}
		if err != nil {
			it.b.Changes = it.b.Changes[:before]
			it.bad = append(it.bad, refused{at: before, rec: raw, line: line, offset: from, from: fromLine, err: err})
			return
		}
		if it.b.Len() > max && before > 0 {
			// One record's changes never straddle two batches: it
			// starts the next one.
			it.b.Changes = it.b.Changes[:before]
			s.push(b, it, w)
			begin()
			take(rec, raw, line, from, fromLine, end, endLine, bad)
			return
		}
		it.pos.MarkAt(it.b.Len(), name, id, line, from)
		it.end, it.endLine = end, endLine
		if it.b.Len() >= max {
			s.push(b, it, w)
			begin()
		}
	}
	if b.recs != nil {
		from, fromLine := b.offset, b.line
		for _, r := range b.recs {
			take(unsafe.String(unsafe.SliceData(r.tok), len(r.tok)), r.tok, r.line, from, fromLine, r.endOffset, r.endLn, r.bad)
			from, fromLine = r.endOffset, r.endLn
		}
	} else {
		data := unsafe.String(unsafe.SliceData(b.data), len(b.data))
		line := b.line
		// A splitter leaves the "\r" of a last line without a line break
		// to the decoder, as the serial reader does.
		lastCR := s.rd.split == nil
		for off := 0; off < len(data); {
			if w.ld != nil {
				// The decoder finds the line's end as it reads it. A
				// record it refuses, or whose changes overflow the
				// batch, is taken back and read again below, where its
				// bad record and the batch's end are handled.
				before := it.b.Len()
				n, err := w.ld.DecodeLine(data[off:], it.b)
				if err == nil && it.b.Len() <= max {
					next, nextLine := off+n, line
					if data[next-1] == '\n' {
						nextLine++
					}
					it.pos.MarkAt(it.b.Len(), name, id, line, b.offset+int64(off))
					it.end, it.endLine = b.offset+int64(next), nextLine
					off, line = next, nextLine
					if it.b.Len() == max {
						s.push(b, it, w)
						begin()
					}
					continue
				}
				it.b.Changes = it.b.Changes[:before]
			}
			next, nextLine, nl := len(data), line, bytes.IndexByte(b.data[off:], '\n')
			rec := data[off:]
			if nl >= 0 {
				rec, next, nextLine = data[off:off+nl], off+nl+1, line+1
			}
			if n := len(rec); n > 0 && rec[n-1] == '\r' && (nl >= 0 || lastCR) {
				rec = rec[:n-1]
			}
			take(rec, b.data[off:off+len(rec)], line, b.offset+int64(off), line, b.offset+int64(next), nextLine, nil)
			off, line = next, nextLine
		}
	}
	it.end, it.endLine = b.end, b.endLine
	if it.b.Len() > 0 || len(it.bad) > 0 || len(b.items) == 0 {
		s.push(b, it, w)
	} else {
		w.spare = it.b
		// The records after the last full batch held no rows: the last
		// batch's position is the block's end.
		b.items[len(b.items)-1].end, b.items[len(b.items)-1].endLine = b.end, b.endLine
	}
}

// readParallel is Read of a parallel source: the next batch in file order.
func (s *Source) readParallel(ctx context.Context, max int) (*row.Batch, error) {
	if s.par == nil {
		s.startParallel(s.parallelDecoder(), max)
	}
	p := s.par
	for {
		if p.cur == nil {
			select {
			case b, ok := <-p.order:
				if !ok {
					return nil, errors.New("file source: the reader ended without a reason")
				}
				p.cur, p.next = b, 0
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		b := p.cur
		select {
		case <-b.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if b.err != nil {
			s.moveTo(b.file, b.offset, b.line)
			s.err = b.err
			return nil, b.err
		}
		if p.next == len(b.items) {
			s.bufs.blockDone(b.buf)
			p.cur = nil
			continue
		}
		it := &b.items[p.next]
		p.next++
		out, err := s.settle(b, it)
		if err != nil {
			s.bufs.handOut(b.buf, out, true)
			s.err = err
			if out.Len() > 0 {
				return out, nil
			}
			return nil, err
		}
		// A mapped batch goes out even when its filter left nothing, for
		// the counters of the rows read.
		has := out.Len() > 0 || it.mapped
		if has {
			s.bufs.handOut(b.buf, out, s.keptText(it))
		}
		last := b.final && p.next == len(b.items)
		if last {
			s.err = io.EOF
			if !has {
				return nil, io.EOF
			}
			return out, io.EOF
		}
		if has {
			return out, nil
		}
	}
}

// settle hands the item's refused records to on_error in order and moves
// the position past the item. A policy that fails cuts the batch before
// its record, where the position then stays, and returns the error.
func (s *Source) settle(b *block, it *item) (*row.Batch, error) {
	name := s.files[b.file]
	for _, r := range it.bad {
		if err := s.rejectRecord(r.rec, name, s.ids[b.file], r.line, r.offset, r.err); err != nil {
			it.b.Changes = it.b.Changes[:r.at]
			it.pos.Mark(r.at, name, 0)
			s.moveTo(b.file, r.offset, r.from)
			return it.b, err
		}
	}
	s.moveTo(b.file, it.end, it.endLine)
	return it.b, nil
}

// moveTo sets a parallel read's position.
func (s *Source) moveTo(file int, offset, line int64) {
	p := s.par
	p.file, p.offset, p.line = file, offset, line
	s.parDone.Store(s.before[file] + offset)
}
