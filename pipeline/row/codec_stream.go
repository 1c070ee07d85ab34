package row

import (
	"errors"
	"fmt"
	"io"
)

// A Decoder over a stream reads an encoding larger than the memory a
// copy of it may take (an operator's state in a checkpoint) through a
// window of streamWindow bytes, refilled as the reads reach its end: it
// holds one window, or the one value larger than a window, never the
// whole encoding. Strings and byte strings it returns are copies.

// streamWindow is the size of a stream decoder's window.
const streamWindow = 64 << 10

// stream is the source of a stream decoder's window.
type stream struct {
	r io.Reader
	// size is at most the number of bytes the stream holds: what Count
	// checks counts against, so that a damaged count cannot make the
	// caller allocate more than the stream could fill.
	size int64
	// base is the stream offset of buf[0]; read the bytes taken from r.
	base, read int64
	eof        bool
	err        error // r's error, other than io.EOF
}

// left is at most the number of bytes of the stream not yet in the
// window.
func (s *stream) left() int {
	return int(min(max(s.size-s.read, 0), int64(maxInt)))
}

const maxInt = int(^uint(0) >> 1)

// NewStreamDecoder reads the encoding r holds, of at most size bytes.
func NewStreamDecoder(r io.Reader, size int64) *Decoder {
	return &Decoder{buf: make([]byte, 0, streamWindow), src: &stream{r: r, size: size}}
}

// pos is the offset of the next byte to read.
func (d *Decoder) pos() int64 {
	if d.src != nil {
		return d.src.base + int64(d.off)
	}
	return int64(d.off)
}

// fill makes up to n bytes after the read offset available in the
// window, reading from the stream (a decoder over bytes has them all),
// and returns how many are.
func (d *Decoder) fill(n int) int {
	s := d.src
	if have := len(d.buf) - d.off; s == nil || have >= n || s.eof {
		return have
	}
	// Move what is left to the front, in a window large enough for n.
	s.base += int64(d.off)
	if cap(d.buf) < n {
		d.buf = append(make([]byte, 0, max(n, 2*cap(d.buf))), d.buf[d.off:]...)
	} else {
		d.buf = d.buf[:copy(d.buf, d.buf[d.off:])]
	}
	d.off = 0
	for len(d.buf) < n && !s.eof {
		m, err := s.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+m]
		s.read += int64(m)
		switch {
		case errors.Is(err, io.EOF):
			s.eof = true
		case err != nil:
			s.eof, s.err = true, err
			if d.err == nil {
				d.err = fmt.Errorf("read at byte %d: %w", s.base+int64(len(d.buf)), err)
			}
		}
	}
	return len(d.buf)
}

// endStream is End for a stream: the stream must end where the reads
// did.
func (d *Decoder) endStream() error {
	if d.err == nil {
		if n := d.fill(1); n > 0 {
			d.Fail("bytes after the end")
		}
	}
	return d.err
}
