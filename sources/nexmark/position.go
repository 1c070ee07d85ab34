package nexmark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A position is, in order: a version byte; the events emitted (uvarint);
// the generator's state (8 bytes, little-endian); the base time in ms
// (varint). The base time is kept so that a restored run goes on with the
// same event times even where base_time was not set.
const positionVersion = 1

func (s *Source) marshalPosition() []byte {
	buf := []byte{positionVersion}
	buf = binary.AppendUvarint(buf, uint64(s.emitted))
	buf = binary.LittleEndian.AppendUint64(buf, s.rng.seed)
	return binary.AppendVarint(buf, s.gen.baseTime)
}

func (s *Source) unmarshalPosition(pos []byte) error {
	if len(pos) == 0 {
		return errors.New("empty position")
	}
	if pos[0] != positionVersion {
		return fmt.Errorf("position version %d, want %d", pos[0], positionVersion)
	}
	off := 1
	emitted, n := binary.Uvarint(pos[off:])
	if n <= 0 {
		return fmt.Errorf("malformed position at byte %d: bad or missing event count", off)
	}
	off += n
	if emitted > math.MaxInt64 {
		return fmt.Errorf("event count %d out of range", emitted)
	}
	if len(pos)-off < 8 {
		return fmt.Errorf("malformed position at byte %d: generator state cut short", off)
	}
	state := binary.LittleEndian.Uint64(pos[off:])
	off += 8
	base, n := binary.Varint(pos[off:])
	if n <= 0 {
		return fmt.Errorf("malformed position at byte %d: bad or missing base time", off)
	}
	off += n
	if off != len(pos) {
		return fmt.Errorf("malformed position at byte %d: trailing bytes", off)
	}
	s.emitted, s.rng.seed, s.gen.baseTime = int64(emitted), state, base
	return nil
}
