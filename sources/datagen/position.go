package datagen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A position is, in order: a version byte; the rows emitted (uvarint); the
// PCG state (uvarint length, then its MarshalBinary bytes); the number of
// sequence counters (uvarint), then for each its column name (uvarint
// length, bytes) and the index of its next value (uvarint).
//
// Counters are kept by column name so that a position survives an edited
// pipeline: a sequence column added since starts from its start, one
// removed is ignored.
const positionVersion = 1

func (s *Source) marshalPosition() ([]byte, error) {
	state, err := s.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("datagen %s: position: %w", s.name, err)
	}
	buf := []byte{positionVersion}
	buf = binary.AppendUvarint(buf, uint64(s.emitted))
	buf = binary.AppendUvarint(buf, uint64(len(state)))
	buf = append(buf, state...)
	buf = binary.AppendUvarint(buf, uint64(len(s.seqs)))
	for _, i := range s.seqs {
		c := &s.cols[i]
		buf = binary.AppendUvarint(buf, uint64(len(c.name)))
		buf = append(buf, c.name...)
		buf = binary.AppendUvarint(buf, c.seq.next)
	}
	return buf, nil
}

// posReader reads a position and says at which byte it went wrong.
type posReader struct {
	buf []byte
	off int
	err error
}

func (r *posReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("malformed position at byte %d: %s", r.off, what)
	}
}

func (r *posReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		r.fail("bad or missing " + what)
		return 0
	}
	r.off += n
	return v
}

func (r *posReader) bytes(what string) []byte {
	n := r.uvarint(what + " length")
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf)-r.off) {
		r.fail(what + " longer than the position")
		return nil
	}
	b := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

func (s *Source) unmarshalPosition(pos []byte) error {
	if len(pos) == 0 {
		return errors.New("empty position")
	}
	if pos[0] != positionVersion {
		return fmt.Errorf("position version %d, want %d", pos[0], positionVersion)
	}
	r := &posReader{buf: pos, off: 1}
	emitted := r.uvarint("row count")
	state := r.bytes("generator state")
	n := r.uvarint("sequence count")
	counters := map[string]uint64{}
	for i := uint64(0); i < n && r.err == nil; i++ {
		name := r.bytes("sequence column name")
		next := r.uvarint("sequence counter")
		counters[string(name)] = next
	}
	if r.err == nil && r.off != len(pos) {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return r.err
	}
	if emitted > math.MaxInt64 {
		return fmt.Errorf("row count %d out of range", emitted)
	}
	// Unmarshal into a copy, so that a failed Restore leaves the source as
	// it was.
	pcg := s.pcg
	if err := pcg.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("generator state: %w", err)
	}
	s.pcg, s.emitted = pcg, int64(emitted)
	for _, i := range s.seqs {
		if next, ok := counters[s.cols[i].name]; ok {
			s.cols[i].seq.next = next
		}
	}
	return nil
}
