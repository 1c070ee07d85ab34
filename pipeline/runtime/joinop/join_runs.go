package joinop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// An append-only join side's rows (joinSide.appendOnly): each key's rows
// a chain of blocks in the side's pages.
//
// The pages are of a fixed size (runPageBytes), mapped outside the Go
// heap (state.OffHeap), and filled one after the other; a block that
// would not fit in a shared page gets a page of its own. A block is never
// moved: a key whose last block is full gets a new one, twice as large up
// to runBlockMax, linked after it. Before the pages, the rows lived in
// one []byte that grew by append, and every growth copied (and zeroed)
// all of it, a fifth of a join's CPU over Nexmark's bids (q4, q9); then
// each key's rows were one run that moved to a place twice as large when
// full, whose copies, and the compaction of the places they left, were
// still a twentieth of q23's CPU and a third of the pages' bytes.

// runPageBytes is the size of a shared page of blocks; a block of more
// than half of it gets a page of its own.
const runPageBytes = 4 << 20

// runBlockMax is the room past which a key's next block does not grow:
// a key of many rows is a chain of blocks of this size.
const runBlockMax = 64 << 10

// A block is its header, the place of the next block (8 bytes,
// little-endian; noBlock for none) and the bytes of rows it holds (4
// bytes, written when the next block is linked: the last block's are
// its joinRun's used), then its rows.
const (
	blockHead = 12
	noBlock   = ^uint64(0)
)

// joinRun is an append-only side's rows of one key: the blocks from head
// to tail, the tail with used of its space bytes of rows. A row is its
// match count (4 bytes, little-endian; none on a side that keeps no
// match counts, joinSide.noMatches), its encoding's length (uvarint)
// and its encoding (the side's row.Layout); no row spans two blocks.
type joinRun struct {
	head, tail        uint64
	used, space, rows uint32
}

// runPages are an append-only side's pages of blocks.
type runPages struct {
	pages [][]byte
	cur   int // the shared page being filled, -1 for none
	used  int // bytes of cur handed out
	mem   *state.OffHeap
}

// runRef makes the reference of offset off in page p.
func runRef(p, off int) uint64 { return uint64(p)<<32 | uint64(off) }

// at returns the bytes from ref to its page's end.
func (rp *runPages) at(ref uint64) []byte { return rp.pages[ref>>32][uint32(ref):] }

// block returns the place of a new block of space bytes of rows, its
// header written: no next block.
func (rp *runPages) block(space int) uint64 {
	n := blockHead + space
	var at uint64
	switch {
	case n > runPageBytes/2:
		rp.pages = append(rp.pages, state.OffHeapMake[byte](rp.mem, n))
		at = runRef(len(rp.pages)-1, 0)
	default:
		if rp.cur < 0 || rp.used+n > len(rp.pages[rp.cur]) {
			rp.pages = append(rp.pages, state.OffHeapMake[byte](rp.mem, runPageBytes))
			rp.cur, rp.used = len(rp.pages)-1, 0
		}
		at = runRef(rp.cur, rp.used)
		rp.used += n
	}
	binary.LittleEndian.PutUint64(rp.at(at), noBlock)
	return at
}

// bytes is the pages' memory.
func (rp *runPages) bytes() int64 {
	n := 0
	for _, p := range rp.pages {
		n += len(p)
	}
	return int64(n)
}

// appendRun appends r with assoc matches to key kid's rows: into its
// last block, or a new one linked after it when that is full.
func (s *joinSide) appendRun(kid int32, r row.Row, assoc int32) {
	s.rbuf = s.layout.Append(s.rbuf[:0], r)
	head := s.runHead()
	var lbuf [binary.MaxVarintLen64]byte
	lw := binary.PutUvarint(lbuf[:], uint64(len(s.rbuf)))
	n := uint32(head + lw + len(s.rbuf))
	rp := &s.runPages
	s.offHeap()
	run := &s.runs[kid]
	switch {
	case run.rows == 0:
		run.head = rp.block(int(n))
		run.tail, run.used, run.space = run.head, 0, n
	case run.used+n > run.space:
		space := max(min(2*run.space, runBlockMax), n)
		at := rp.block(int(space))
		tail := rp.at(run.tail)
		binary.LittleEndian.PutUint64(tail, at)
		binary.LittleEndian.PutUint32(tail[8:], run.used)
		run.tail, run.used, run.space = at, 0, space
	}
	dst := rp.at(run.tail + blockHead + uint64(run.used))[:n]
	if head > 0 {
		binary.LittleEndian.PutUint32(dst, uint32(assoc))
	}
	copy(dst[head:], lbuf[:lw])
	copy(dst[head+lw:], s.rbuf)
	run.used += n
	run.rows++
	s.size++
}

// runHead is the bytes of a run's row before its length: its match
// count, if the side keeps them.
func (s *joinSide) runHead() int {
	if s.noMatches {
		return 0
	}
	return 4
}
