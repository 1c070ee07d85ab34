package joinop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// An append-only join side's rows (joinSide.appendOnly): each key's rows
// one run of bytes in one of the side's pages.
//
// The pages are of a fixed size (runPageBytes), mapped outside the Go
// heap (state.OffHeap), and filled one after the other; a run that would
// not fit in a shared page gets a page of its own. Nothing ever copies
// the whole of them: before the pages, the runs lived in one []byte that
// grew by append, and every growth copied (and zeroed) all of it, a
// fifth of a join's CPU over Nexmark's bids (q4, q9), while the old copy
// and the GC's headroom over a heap array held two to three times the
// rows' bytes in RSS.

// runPageBytes is the size of a shared page of runs; a run of more than
// half of it gets a page of its own.
const runPageBytes = 4 << 20

// joinRun is an append-only side's rows of one key: the bytes at Off (a
// runRef: page and offset) hold them, N bytes of them, each as its match
// count (4 bytes, little-endian; none on a side that keeps no match
// counts, joinSide.noMatches), its encoding's length (uvarint) and its
// encoding (the side's row.Layout); the run may grow in place up to
// Space bytes.
type joinRun struct {
	state.RowSlot
	rows uint32
}

// runPages are an append-only side's pages of runs.
type runPages struct {
	pages [][]byte // nil where a page was freed
	solo  []bool   // by page: it holds one run alone
	cur   int      // the shared page being filled, -1 for none
	used  int      // bytes of cur handed out
	dead  int      // bytes of shared pages left behind by moved runs
	total int      // bytes of shared pages
	mem   *state.OffHeap
}

// runRef makes the reference of offset off in page p.
func runRef(p, off int) uint64 { return uint64(p)<<32 | uint64(off) }

// at returns the bytes from ref to its page's end.
func (rp *runPages) at(ref uint64) []byte { return rp.pages[ref>>32][uint32(ref):] }

// alloc returns the place of a new run of space bytes.
func (rp *runPages) alloc(space int) uint64 {
	if space > runPageBytes/2 {
		rp.pages = append(rp.pages, state.OffHeapMake[byte](rp.mem, space))
		rp.solo = append(rp.solo, true)
		return runRef(len(rp.pages)-1, 0)
	}
	if rp.cur < 0 || rp.used+space > len(rp.pages[rp.cur]) {
		rp.pages = append(rp.pages, state.OffHeapMake[byte](rp.mem, runPageBytes))
		rp.solo = append(rp.solo, false)
		rp.cur, rp.used = len(rp.pages)-1, 0
		rp.total += runPageBytes
	}
	at := runRef(rp.cur, rp.used)
	rp.used += space
	return at
}

// free gives a moved run's place back: its page when alone there, else
// dead bytes until compact.
func (rp *runPages) free(r *joinRun) {
	p := int(r.Off >> 32)
	if rp.solo[p] {
		state.OffHeapFree(rp.mem, rp.pages[p])
		rp.pages[p] = nil
		return
	}
	rp.dead += int(r.Space)
}

// growInPlace reports whether run r, at the end of the page being
// filled, can grow to space bytes where it is, and if so takes them.
func (rp *runPages) growInPlace(r *joinRun, space int) bool {
	p, off := int(r.Off>>32), int(uint32(r.Off))
	if p != rp.cur || off+int(r.Space) != rp.used || off+space > len(rp.pages[p]) {
		return false
	}
	rp.used = off + space
	return true
}

// bytes is the pages' memory.
func (rp *runPages) bytes() int64 {
	n := 0
	for _, p := range rp.pages {
		n += len(p)
	}
	return int64(n)
}

// appendRun appends r with assoc matches to key kid's run. A full run
// grows where it is when it ends the page being filled, else moves to a
// new place with twice the room; the bytes it leaves are compacted away
// once they are a third of the shared pages.
func (s *joinSide) appendRun(kid int32, r row.Row, assoc int32) {
	s.rbuf = s.layout.Append(s.rbuf[:0], r)
	head := s.runHead()
	var lbuf [binary.MaxVarintLen64]byte
	lw := binary.PutUvarint(lbuf[:], uint64(len(s.rbuf)))
	n := uint32(head + lw + len(s.rbuf))
	rp := &s.runPages
	if rp.mem == nil && rp.pages == nil {
		rp.cur, rp.mem = -1, state.NewOffHeap(s)
	}
	run := &s.runs[kid]
	if run.N+n > run.Space {
		space := max(2*run.Space, run.N+n, 32)
		if run.N == 0 || !rp.growInPlace(run, int(space)) {
			at := rp.alloc(int(space))
			if run.N > 0 {
				copy(rp.at(at), rp.at(run.Off)[:run.N])
			}
			if run.Space > 0 {
				rp.free(run)
			}
			run.Off = at
		}
		run.Space = space
	}
	dst := rp.at(run.Off + uint64(run.N))[:n]
	if head > 0 {
		binary.LittleEndian.PutUint32(dst, uint32(assoc))
	}
	copy(dst[head:], lbuf[:lw])
	copy(dst[head+lw:], s.rbuf)
	run.N += n
	run.rows++
	s.size++
	s.compactRunsIfSparse()
}

// runHead is the bytes of a run's row before its length: its match
// count, if the side keeps them.
func (s *joinSide) runHead() int {
	if s.noMatches {
		return 0
	}
	return 4
}

// compactRunsIfSparse copies the live runs of shared pages into new
// pages once moved runs left a third of them behind (runs double, so
// they leave about as much as they hold: at a half this would rarely
// run). A run keeps its room to grow.
func (s *joinSide) compactRunsIfSparse() {
	rp := &s.runPages
	if rp.dead < runPageBytes || rp.dead*3 < rp.total {
		return
	}
	old := *rp
	rp.pages, rp.solo, rp.cur, rp.used, rp.dead, rp.total = nil, nil, -1, 0, 0, 0
	for i := range s.runs {
		run := &s.runs[i]
		if run.Space == 0 {
			continue
		}
		p := int(run.Off >> 32)
		if old.solo[p] {
			// A page of its own stays as it is, under a new number.
			rp.pages = append(rp.pages, old.pages[p])
			rp.solo = append(rp.solo, true)
			old.pages[p] = nil
			run.Off = runRef(len(rp.pages)-1, int(uint32(run.Off)))
			continue
		}
		at := rp.alloc(int(run.Space))
		copy(rp.at(at), old.at(run.Off)[:run.N])
		run.Off = at
	}
	for _, p := range old.pages {
		state.OffHeapFree(rp.mem, p)
	}
}
