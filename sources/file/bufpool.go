package file

import (
	"sync"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A parallel read reads the files into fresh buffers (records' fresh
// mode), which its blocks, the records in them and the STRING values
// decoded from them point into; a buffer was garbage once the reader
// had moved on and nothing pointed into it any more: 2.4 GB of new
// buffers per 10M rows of a 30-column file, each zeroed, faulted in and
// collected (the collector's cycles, paced by them, scanned the batches
// in flight each time). When the runtime gives the batches back through
// TextRecycle (their reader kept no byte of their text: a sink that
// encodes them), bufPool reads into a buffer again once every batch
// decoded from it has come back.
//
// A buffer is reused only when nothing else may point into it: every
// block cut from it was handed out whole, each of its batches came back
// through TextRecycle, none held a refused record (which on_error may
// keep), and none was a batch a fused Calc made from the decoded one
// (whose values point into the buffer too) unless the runtime gives
// those back as well, once every row made of them was written by a sink
// that copies text (MappedTextRecycle). A block cut record by record by the format's
// splitter may lie across two buffers: such a read reuses none from then
// on. A batch that never comes back (an error, a sink node that wrote
// another batch) keeps its buffer from being reused, never more; past
// maxOut batches out at once, reuse stops, so that those are not held.
type bufPool struct {
	mu sync.Mutex
	// on: the runtime gives the batches back through TextRecycle
	// (Source.TextRecycle), before the first Read; off: reuse stopped.
	on, off bool
	free    [][]byte                // buffers of freshBufferSize to read into again
	out     map[*row.Batch]*readBuf // batches handed out, by the buffer their text is in
}

// readBuf is one buffer of a parallel read and what may point into it.
type readBuf struct {
	data []byte
	// blocks cut from the buffer that Read has not handed out whole;
	// batches handed out that have not come back.
	blocks, batches int
	// retired: the read goes on in another buffer. kept: something may
	// keep a pointer into it: it is never reused.
	retired, kept bool
}

// Bounds: the buffers kept to read into again (the blocks in flight
// span a few), and the batches out at once past which reuse stops
// (normally the blocks in flight and the nodes' queues hold a few
// dozen).
const (
	freeBufs = 16
	maxOut   = 512
)

// get returns a buffer of size bytes given back, or nil.
func (p *bufPool) get(size int) []byte {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if size != freshBufferSize || len(p.free) == 0 {
		return nil
	}
	b := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	reusedBufs.Add(1)
	return b
}

// reusedBufs counts the buffers read into again, for tests.
var reusedBufs atomic.Int64

// use retires old, the buffer read into until now (nil: none tracked),
// and returns buf's, nil for none.
func (p *bufPool) use(old *readBuf, buf []byte) *readBuf {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old != nil {
		old.retired = true
		p.reuse(old)
	}
	if buf == nil || p.off || !p.on {
		return nil
	}
	return &readBuf{data: buf}
}

// cut counts a block cut from b (nil: an untracked buffer); it returns b.
func (p *bufPool) cut(b *readBuf) *readBuf {
	if p != nil && b != nil {
		p.mu.Lock()
		b.blocks++
		p.mu.Unlock()
	}
	return b
}

// stop ends reuse: a block's records may lie in two buffers.
func (p *bufPool) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

func (p *bufPool) stopLocked() { p.off, p.free, p.out = true, nil, nil }

// handOut counts batch out, handed out by Read from a block of b; kept:
// its text may be kept elsewhere (a refused record, a batch made from
// the decoded one), so b is never reused.
func (p *bufPool) handOut(b *readBuf, out *row.Batch, kept bool) {
	if p == nil || b == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.off:
	case kept:
		b.kept = true
	case len(p.out) >= maxOut:
		p.stopLocked()
	default:
		if p.out == nil {
			p.out = map[*row.Batch]*readBuf{}
		}
		p.out[out] = b
		b.batches++
	}
}

// blockDone counts a block of b handed out whole.
func (p *bufPool) blockDone(b *readBuf) {
	if p == nil || b == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b.blocks--
	p.reuse(b)
}

// back counts batch b as given back, its text no longer read.
func (p *bufPool) back(b *row.Batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rb, ok := p.out[b]; ok {
		delete(p.out, b)
		rb.batches--
		p.reuse(rb)
	}
}

// reuse frees b's memory to read into again if nothing points into it
// any more.
func (p *bufPool) reuse(b *readBuf) {
	if p.off || b.kept || !b.retired || b.blocks > 0 || b.batches > 0 || len(b.data) != freshBufferSize || len(p.free) >= freeBufs {
		return
	}
	p.free = append(p.free, b.data)
	b.data, b.kept = nil, true // freed once
}

// TextRecycle implements connector.TextRecycler: the batches come back
// with their text no longer read, and a parallel read reuses its read
// buffers (bufPool).
func (s *Source) TextRecycle() func(*row.Batch) {
	if s.bufs == nil {
		s.bufs = &bufPool{on: true}
	}
	s.textBack = true
	return s.recycleText
}

// MappedTextRecycle implements connector.MappedTextRecycler: the batches
// the map made come back once no value of them is read any more, and
// count as given back for their buffer (bufPool.back); they are the
// runtime's, not batches to decode into (Recycle).
func (s *Source) MappedTextRecycle() func(*row.Batch) {
	if s.bufs == nil {
		s.bufs = &bufPool{on: true}
	}
	s.madeBack = true
	return s.bufs.back
}

// keptText reports whether the text of it, an item Read hands out, may
// be kept where no batch given back says it is not: a refused record
// (on_error may keep it), or a batch of a kind the runtime does not give
// back (a batch the map made, or the decoded one, per textBack and
// madeBack).
func (s *Source) keptText(it *item) bool {
	if len(it.bad) > 0 {
		return true
	}
	if it.made {
		return !s.madeBack
	}
	return !s.textBack
}

func (s *Source) recycleText(b *row.Batch) {
	s.bufs.back(b)
	s.Recycle(b)
}

var (
	_ connector.TextRecycler       = (*Source)(nil)
	_ connector.MappedTextRecycler = (*Source)(nil)
)
