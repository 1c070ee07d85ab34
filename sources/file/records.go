package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/etld/etld/pipeline/connector"
	"sync/atomic"
)

const (
	// bufferSize is the read buffer. Records are handed to the decoder
	// straight from it, so it only has to hold a record or two at a time;
	// larger reads than this gain nothing measurable on local disks.
	bufferSize = 256 << 10
)

// maxRecordSize bounds one line, or a record spanning lines when the
// format's own bound (max_record_bytes) is lower. A variable so that tests
// need not fill 64 MiB.
var maxRecordSize = 64 << 20

// splitFunc is bufio.SplitFunc: the decoder's Splitter, or nil for lines.
type splitFunc = func(data []byte, atEOF bool) (advance int, token []byte, err error)

// records cuts a stream into records, as bufio.Scanner does, but keeps what
// the source needs for positions: the byte offset and line number of the
// next record, and the ability to give back the record it just returned.
// Records point into the buffer and are valid until the next call.
//
// bufio.Scanner cannot do this (no offsets, no unread, and an oversize
// token ends the scan), and bufio.Reader would force a copy whenever a
// record has to be handed to a SplitFunc across a refill.
type records struct {
	r     io.Reader
	split splitFunc
	buf   []byte
	// buf[start:end] is unread; in line mode, buf[start:scan] holds no '\n'.
	start, scan, end int
	eof              bool
	// stopped is set once the splitter returned bufio.ErrFinalToken.
	stopped bool
	// bad is the error the splitter returned with the record last
	// returned, which makes it a bad record (a CSV quote that does not
	// close); nil for a record to decode.
	bad error
	// maxBuf is how large buf may grow.
	maxBuf int
	// hold is set while following a file that may grow: the end of the
	// data is not the end of the file, so a record without its end is held
	// back (io.EOF), and the next call reads again.
	hold bool
	// offset and line are those of buf[start] in the file; line is 1-based.
	offset int64
	line   int64
	// prevOffset and prevLine are those of the record last returned, for
	// unread.
	prevOffset int64
	prevLine   int64
	// read counts the bytes read from every reader rd was reset to; it
	// is read by a scrape while Read runs (Source.Bytes).
	read atomic.Int64
	// fresh makes fill never write over bytes it read before: it reads
	// into a new buffer instead of moving the unread part to the front.
	// Records and blocks then stay valid for as long as anyone holds
	// them, for decoders on other goroutines (parallel.go).
	fresh bool
	// bufs, in fresh mode, may have buffers given back to read into
	// again; cur is buf's there, nil when untracked (bufpool.go).
	bufs *bufPool
	cur  *readBuf
	// pending is an error block met after the records it returned, for
	// the next call.
	pending error
	// long is the record too long for the buffer being skipped, or last
	// returned (skipLong).
	long overlong
	// gap is what was read past offset that buf[start:] does not hold:
	// the bytes of a long record skipped so far, or of one given back.
	gap int64
}

// overlong is a record too long for the buffer: its first bytes, its
// line and the bad-record error it is returned with.
type overlong struct {
	sample []byte
	line   int64
	// skipping: its end is still to be read (a followed file's line
	// that is still growing).
	skipping bool
	// returned: it is the record next returned last; replay: unread
	// gave it back, and next returns it again, ending on endLine.
	returned, replay bool
	endLine          int64
	err              error
}

// longSample is how much of a record too long for the buffer its bad
// record holds.
const longSample = 4 << 10

// errTooLong is wrapped in the error next returns for an oversize record.
var errTooLong = errors.New("record too long")

// newRecords returns a reader of lines, or of the records split cuts,
// bounded to maxRecordBytes when they span lines.
func newRecords(split splitFunc, maxRecordBytes int) *records {
	// The splitter has to see a byte past its bound to know it is passed.
	return &records{split: split, buf: make([]byte, bufferSize), line: 1, maxBuf: max(maxRecordSize, maxRecordBytes+1024)}
}

// reset makes rd read r, which is positioned at offset, the start of line.
func (rd *records) reset(r io.Reader, offset, line int64) {
	rd.r = r
	if rd.fresh {
		// Blocks of the last reader may still be in use.
		rd.setBuf(nil)
	}
	rd.pending = nil
	rd.long, rd.gap = overlong{}, 0
	rd.start, rd.scan, rd.end = 0, 0, 0
	rd.eof, rd.stopped = false, false
	rd.offset, rd.line = offset, line
	rd.prevOffset, rd.prevLine = offset, line
}

// next returns the next record and the line it starts on, or io.EOF. A
// line record excludes its "\n" and a "\r" before it; the last line counts
// even without a newline. An error names no file: the caller adds it.
// After a record, rd.bad says whether the splitter found it bad.
func (rd *records) next() (rec []byte, line int64, err error) {
	if rd.long.replay {
		return rd.replayLong()
	}
	rd.prevOffset, rd.prevLine = rd.offset, rd.line
	rd.bad = nil
	rd.long.returned = false
	if rd.long.skipping {
		return rd.skipLong()
	}
	if rd.split == nil {
		return rd.nextLine()
	}
	return rd.nextSplit()
}

func (rd *records) nextLine() ([]byte, int64, error) {
	for {
		if i := bytes.IndexByte(rd.buf[rd.scan:rd.end], '\n'); i >= 0 {
			nl := rd.scan + i
			rec := rd.buf[rd.start:nl]
			rd.consume(nl + 1 - rd.start)
			rd.line++
			return trimCR(rec), rd.prevLine, nil
		}
		rd.scan = rd.end
		if rd.eof && rd.hold {
			rd.eof = false
			return nil, rd.line, io.EOF
		}
		if rd.eof {
			if rd.start == rd.end {
				return nil, rd.line, io.EOF
			}
			rec := rd.buf[rd.start:rd.end]
			rd.consume(rd.end - rd.start)
			return trimCR(rec), rd.prevLine, nil
		}
		if err := rd.fill(); err != nil {
			if errors.Is(err, errTooLong) {
				return rd.skipLong()
			}
			return nil, rd.line, err
		}
	}
}

func trimCR(rec []byte) []byte {
	if n := len(rec); n > 0 && rec[n-1] == '\r' {
		return rec[:n-1]
	}
	return rec
}

func (rd *records) nextSplit() ([]byte, int64, error) {
	for {
		if rd.stopped {
			return nil, rd.line, io.EOF
		}
		data := rd.buf[rd.start:rd.end]
		adv, tok, err := rd.split(data, rd.eof && !rd.hold)
		final := errors.Is(err, bufio.ErrFinalToken)
		if err != nil && tok != nil && adv > 0 && isBadRecord(err) {
			rd.bad, err = err, nil // a bad record: reading goes on after it
		}
		if err != nil && !final {
			return nil, rd.line, err
		}
		if adv < 0 || adv > len(data) {
			return nil, rd.line, fmt.Errorf("format splitter advanced %d bytes of %d", adv, len(data))
		}
		if adv > 0 || tok != nil || final {
			line := rd.line
			if off := tokenOffset(data, tok); off > 0 && off <= adv {
				// A splitter may step over blank lines before a record.
				line += int64(bytes.Count(data[:off], newline))
			}
			rd.line += int64(bytes.Count(data[:adv], newline))
			rd.consume(adv)
			// Nothing after a final token is read, as with bufio.Scanner.
			rd.stopped = final
			if tok == nil {
				rd.prevOffset, rd.prevLine = rd.offset, rd.line
				continue
			}
			return tok, line, nil
		}
		if rd.eof && rd.hold {
			rd.eof = false
			return nil, rd.line, io.EOF
		}
		if rd.eof {
			if len(data) == 0 {
				return nil, rd.line, io.EOF
			}
			return nil, rd.line, fmt.Errorf("incomplete record at end of file (%d bytes left over)", len(data))
		}
		if err := rd.fill(); err != nil {
			if errors.Is(err, errTooLong) {
				return rd.skipLong()
			}
			return nil, rd.line, err
		}
	}
}

var newline = []byte{'\n'}

// isBadRecord reports whether a splitter's error makes its token a bad
// record (connector.Splitter's contract). A function of its own so that
// the target errors.As needs escapes only when there is an error.
func isBadRecord(err error) bool {
	var de *connector.DecodeError
	return errors.As(err, &de)
}

// tokenOffset returns where tok starts inside data when it is a plain
// subslice of it, and -1 when the splitter built it elsewhere.
func tokenOffset(data, tok []byte) int {
	c, t := cap(data), cap(tok)
	if t == 0 || t > c || &data[:c][c-t] != &tok[:t][0] {
		return -1
	}
	return c - t
}

// readPos is the offset in the file of the end of what rd read from it.
func (rd *records) readPos() int64 { return rd.offset + rd.gap + int64(rd.end-rd.start) }

func (rd *records) consume(n int) {
	rd.start += n
	rd.scan = rd.start
	rd.offset += int64(n)
}

// unread gives back the record next last returned, so that the next call
// returns it again and offset and line are those before it. It is valid
// only right after next: the record's bytes are still in the buffer then,
// because next only moves data that has not been returned.
func (rd *records) unread() {
	if rd.long.returned {
		// Its bytes are gone: it is returned again from rd.long.
		rd.gap = rd.offset - rd.prevOffset
		rd.long.endLine = rd.line
		rd.offset, rd.line = rd.prevOffset, rd.prevLine
		rd.long.replay = true
		rd.stopped = false
		return
	}
	rd.start -= int(rd.offset - rd.prevOffset)
	rd.scan = rd.start
	rd.offset, rd.line = rd.prevOffset, rd.prevLine
	rd.stopped = false
}

// fill reads more data after buf[end], first moving the unread part to the
// front or growing the buffer when the unread part is a record too large
// for it.
func (rd *records) fill() error {
	if rd.fresh {
		return rd.fillFresh()
	}
	if rd.start > 0 {
		n := copy(rd.buf, rd.buf[rd.start:rd.end])
		rd.scan -= rd.start
		rd.start, rd.end = 0, n
	}
	if rd.end == len(rd.buf) {
		if len(rd.buf) >= rd.maxBuf {
			return fmt.Errorf("%w: more than %d MiB without a line break", errTooLong, rd.maxBuf>>20)
		}
		grown := make([]byte, min(2*len(rd.buf), rd.maxBuf))
		copy(grown, rd.buf[:rd.end])
		rd.buf = grown
	}
	return rd.readMore()
}

// fillFresh is fill for fresh mode: it reads into the room after
// buf[end], or into a new buffer holding a copy of the unread part, so
// that nothing before end is ever written again.
func (rd *records) fillFresh() error {
	if rd.end == len(rd.buf) {
		unread := rd.end - rd.start
		if unread >= rd.maxBuf {
			return fmt.Errorf("%w: more than %d MiB without a line break", errTooLong, rd.maxBuf>>20)
		}
		size := min(max(freshBufferSize, 2*unread), rd.maxBuf)
		buf := rd.bufs.get(size) // its old bytes are never read: only those read into it
		if buf == nil {
			buf = make([]byte, size)
		}
		copy(buf, rd.buf[rd.start:rd.end])
		rd.scan -= rd.start
		rd.setBuf(buf)
		rd.start, rd.end = 0, unread
	}
	return rd.readMore()
}

// setBuf makes buf the buffer read into, retiring the one before from
// its pool (bufPool.use).
func (rd *records) setBuf(buf []byte) {
	rd.cur = rd.bufs.use(rd.cur, buf)
	rd.buf = buf
}

// freshBufferSize is the size of a new buffer in fresh mode; a variable
// so that tests can cut a file into many buffers.
var freshBufferSize = bufferSize

// readMore reads into buf[end:], which has room.
func (rd *records) readMore() error {
	for range 100 {
		n, err := rd.r.Read(rd.buf[rd.end:])
		rd.end += n
		rd.read.Add(int64(n))
		if err == io.EOF {
			rd.eof = true
			return nil
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}

// splitRec is a record of a block that a format's splitter cut: the
// record (tok), the line it starts on, the splitter's error if it is a
// bad one, and the position (offset, line) of what follows it.
type splitRec struct {
	tok              []byte
	line             int64
	bad              error
	endOffset, endLn int64
}

// block returns the next whole records, about maxBytes of them or at least
// one: either data, whole lines from the line at rd's position on (lines
// mode, or a block the splitter says holds one record per line), or the
// records the splitter cut (recs). It needs fresh mode: the block stays
// valid after later calls. An error comes after the records before it,
// with rd's position at the record that failed; io.EOF at the end.
func (rd *records) block(maxBytes int, lines func([]byte) bool) (data []byte, recs []splitRec, err error) {
	if rd.pending != nil {
		return nil, nil, rd.pending
	}
	rd.prevOffset, rd.prevLine = rd.offset, rd.line
	rd.bad = nil
	for {
		if rd.stopped {
			return nil, nil, io.EOF
		}
		window := rd.buf[rd.start:rd.end]
		cut := bytes.LastIndexByte(window[:min(maxBytes, len(window))], '\n')
		if cut < 0 && len(window) > maxBytes {
			if i := bytes.IndexByte(window[maxBytes:], '\n'); i >= 0 {
				cut = maxBytes + i
			}
		}
		switch {
		case cut >= 0:
			window = window[:cut+1]
		case rd.eof && !rd.hold && len(window) > 0:
			// The last line, without a line break.
		case rd.eof && !rd.hold:
			return nil, nil, io.EOF
		default:
			if err := rd.fill(); errors.Is(err, errTooLong) {
				tok, line, err := rd.skipLong()
				if err != nil {
					return nil, nil, err
				}
				return nil, []splitRec{{tok: tok, line: line, bad: rd.bad, endOffset: rd.offset, endLn: rd.line}}, nil
			} else if err != nil {
				return nil, nil, err
			}
			continue
		}
		if rd.split != nil && !lines(window) {
			return rd.splitBlock(maxBytes)
		}
		rd.consume(len(window))
		rd.line += int64(bytes.Count(window, newline))
		return window, nil, nil
	}
}

// splitBlock cuts about maxBytes of records with the splitter.
func (rd *records) splitBlock(maxBytes int) (data []byte, recs []splitRec, err error) {
	from := rd.offset
	for rd.offset-from < int64(maxBytes) {
		tok, line, err := rd.next()
		if err == io.EOF && len(recs) > 0 {
			break
		}
		if err != nil {
			if len(recs) == 0 {
				return nil, nil, err
			}
			rd.pending = err
			break
		}
		recs = append(recs, splitRec{tok: tok, line: line, bad: rd.bad, endOffset: rd.offset, endLn: rd.line})
	}
	return nil, recs, nil
}

// drained reports whether rd has nothing left to read: it reads ahead
// when its buffer is empty, keeping an error for the next block.
func (rd *records) drained() bool {
	if rd.start == rd.end && !rd.eof && rd.pending == nil {
		if err := rd.fill(); err != nil {
			rd.pending = err
		}
	}
	return rd.pending == nil && ((rd.eof && !rd.hold && rd.start == rd.end) || rd.stopped)
}

// skipLong reads past a record too long for the buffer (it holds maxBuf
// bytes and not the record's end): the record becomes a bad record at
// its line holding its first longSample bytes, and ends where the line it
// starts on ends (a splitter's record too: what follows it on the line
// cannot be told apart from it), so that reading goes on with the next
// line rather than stopping. A followed file's line still growing is
// waited for (io.EOF until its line break comes); offset stays at the
// record's start meanwhile, so that a position never falls inside it.
func (rd *records) skipLong() ([]byte, int64, error) {
	if !rd.long.skipping {
		rd.long = overlong{skipping: true, line: rd.line,
			sample: bytes.Clone(rd.buf[rd.start : rd.start+min(longSample, rd.end-rd.start)])}
		if rd.fresh {
			// Blocks handed out point into buf: read on into another.
			rd.setBuf(make([]byte, freshBufferSize))
			rd.gap += int64(rd.end - rd.start)
			rd.start, rd.scan, rd.end = 0, 0, 0
		}
	}
	for {
		data := rd.buf[rd.start:rd.end]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			rd.gap += int64(i + 1)
			rd.start += i + 1
			rd.scan = rd.start
			rd.line++
			return rd.endLong(int64(i + 1))
		}
		rd.gap += int64(len(data))
		rd.start, rd.scan, rd.end = 0, 0, 0
		switch {
		case rd.eof && rd.hold:
			rd.eof = false
			return nil, rd.line, io.EOF
		case rd.eof:
			return rd.endLong(0)
		}
		if err := rd.readMore(); err != nil {
			return nil, rd.line, err
		}
	}
}

// endLong returns the long record whose end skipLong read; nl is the
// length of its line break (0 at the end of the file).
func (rd *records) endLong(nl int64) ([]byte, int64, error) {
	size := rd.gap - nl
	rd.offset += rd.gap
	rd.gap = 0
	l := &rd.long
	l.skipping, l.returned = false, true
	l.err = fmt.Errorf("%w: a line of %d bytes, more than the %d MiB a record may hold (the record shows its first %d bytes)",
		errTooLong, size, rd.maxBuf>>20, len(l.sample))
	rd.bad = l.err
	return l.sample, l.line, nil
}

// replayLong returns again the long record unread gave back.
func (rd *records) replayLong() ([]byte, int64, error) {
	l := &rd.long
	l.replay = false
	rd.prevOffset, rd.prevLine = rd.offset, rd.line
	rd.offset += rd.gap
	rd.gap = 0
	rd.line = l.endLine
	rd.bad = l.err
	return l.sample, l.line, nil
}
