package joinop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// An append-only join side's rows (joinSide.appendOnly): each key's rows
// one run of bytes in the side's runArena.

// joinRun is an append-only side's rows of one key: runArena[off:off+n]
// holds them, each as its match count (4 bytes, little-endian), its
// encoding's length (uvarint) and its encoding (row.AppendRow); the run
// may grow in place up to space bytes.
type joinRun struct {
	state.RowSlot // the run's bytes in runArena
	rows          uint32
}

// appendRun appends r with assoc matches to key kid's run. A full run
// grows where it is when it is the arena's last, else moves to the end
// with twice the room; the bytes it leaves are compacted away once they
// are a third of the arena.
func (s *joinSide) appendRun(kid int32, r row.Row, assoc int32) {
	s.rbuf = row.AppendRow(s.rbuf[:0], r)
	s.ebuf = binary.LittleEndian.AppendUint32(s.ebuf[:0], uint32(assoc))
	s.ebuf = binary.AppendUvarint(s.ebuf, uint64(len(s.rbuf)))
	s.ebuf = append(s.ebuf, s.rbuf...)
	n := uint32(len(s.ebuf))
	run := &s.runs[kid]
	if run.N+n > run.Space {
		space := max(2*run.Space, run.N+n, 32)
		if run.N > 0 && run.Off+uint64(run.Space) == uint64(len(s.runArena)) {
			s.runArena = growZero(s.runArena, int(run.Off)+int(space))
		} else {
			off := len(s.runArena)
			s.runArena = append(s.runArena, s.runArena[run.Off:run.Off+uint64(run.N)]...)
			s.runArena = growZero(s.runArena, off+int(space))
			s.runDead += int(run.Space)
			run.Off = uint64(off)
		}
		run.Space = space
	}
	copy(s.runArena[run.Off+uint64(run.N):], s.ebuf)
	run.N += n
	run.rows++
	s.size++
	s.compactRunsIfSparse()
}

// growZero extends b to length n with zero bytes.
func growZero(b []byte, n int) []byte {
	if n <= len(b) {
		return b
	}
	return append(b, make([]byte, n-len(b))...)
}

// compactRunsIfSparse copies the live runs into a new arena once moved
// runs left a third of it behind (runs double, so they leave about as
// much as they hold: at a half this would rarely run).
func (s *joinSide) compactRunsIfSparse() {
	if s.runDead < 1<<20 || s.runDead*3 < len(s.runArena) {
		return
	}
	arena := state.CompactSlots(s.runArena, len(s.runArena)-s.runDead, s.runs, func(r *joinRun) *state.RowSlot { return &r.RowSlot })
	s.runArena, s.runDead = arena, 0
}
