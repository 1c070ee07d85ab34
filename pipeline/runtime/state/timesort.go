package state

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/etld/etld/pipeline/row"
)

// TimeSort holds the rows of a bounded input (of one or two sides), each
// with its event time, and gives them back in time order, rows of one
// time in arrival order: the order in which an event-time operator of a
// batch run must see them. Rows are kept encoded (row.AppendRow) in one
// byte array off the Go heap (OffHeap: not scanned, not counted toward
// the GC's goal, grown in place); past SpillAt bytes the rows held are
// sorted and written to a temporary file (a run), and Drain merges the
// runs.
//
// Input that arrives in time order, as files and topics mostly do, is
// never sorted and needs no index: while every row comes at or after the
// one before it (whatever its side), the array's own order is the
// answer, and each record carries its time (as the difference from the
// record before it) and its length. The first row out of that order
// builds the index from the records, an entry of 24 bytes a row in an
// array per side, and from then on each side checks its order as rows
// come: the two sides of a join (which come in turns, batch by batch) are
// merged, not sorted. Why: at 10M rows the entries were 240 MB of fresh
// memory, and touching fresh pages (their faults and the kernel's
// zeroing) cost more than the rest of the sort.
type TimeSort struct {
	// SpillAt is the memory (bytes) past which the rows held go to a run
	// on disk; 0 never spills.
	SpillAt int64
	// Dir is where runs are written; "" is os.TempDir().
	Dir string

	heap *OffHeap
	// buf holds a record a row: its side byte, the zig-zag varint of its
	// time minus the previous record's (lastTs), the uvarint length of
	// its encoding, the encoding.
	buf     []byte
	lastTs  int64
	memRows int64 // the records in buf
	// indexed: the rows in buf are out of (time, arrival) order, and ents
	// index them per side; until then ents are empty.
	indexed bool
	scratch []byte
	ents    [2][]sortEnt
	sorted  [2]bool // a side's entries are in (time, arrival) order
	runs    []*os.File
	rows    int64
}

// sortEnt is a row's time and the place of its encoding; its offset
// orders rows of one time by arrival.
type sortEnt struct {
	ts  int64
	off int64
	n   int64
}

// NewTimeSort returns an empty sort.
func NewTimeSort() *TimeSort {
	s := &TimeSort{sorted: [2]bool{true, true}}
	s.heap = NewOffHeap(s)
	return s
}

// Len is the number of rows held, in memory and in runs.
func (s *TimeSort) Len() int64 { return s.rows }

// MemBytes is the memory the rows held in memory take.
func (s *TimeSort) MemBytes() int64 {
	return int64(len(s.buf)) + int64(len(s.ents[0])+len(s.ents[1]))*24
}

// Add holds r of side (0 or 1) at event time ts, in row.AppendRow's
// encoding.
func (s *TimeSort) Add(side int, ts int64, r row.Row) error {
	s.scratch = row.AppendRow(s.scratch[:0], r)
	return s.AddEncoded(side, ts, s.scratch)
}

// AddEncoded holds a copy of enc, a row of side (0 or 1) at event time
// ts in an encoding of the caller's (not empty), which Each and Drain
// give back as it is.
func (s *TimeSort) AddEncoded(side int, ts int64, enc []byte) error {
	if !s.indexed && s.memRows > 0 && ts < s.lastTs {
		s.index()
	}
	s.buf = OffHeapReserve(s.heap, s.buf, 1+2*binary.MaxVarintLen64+len(enc))
	s.buf = append(s.buf, byte(side))
	s.buf = binary.AppendVarint(s.buf, ts-s.lastTs) // wraps and unwraps alike at the extremes
	s.buf = binary.AppendUvarint(s.buf, uint64(len(enc)))
	off := int64(len(s.buf))
	s.buf = append(s.buf, enc...)
	s.lastTs = ts
	if s.indexed {
		s.addEnt(side, sortEnt{ts: ts, off: off, n: int64(len(enc))})
	}
	s.memRows++
	s.rows++
	if s.SpillAt > 0 && s.MemBytes() > s.SpillAt {
		return s.spill()
	}
	return nil
}

// addEnt appends e to side's index, noting when it breaks its order.
func (s *TimeSort) addEnt(side int, e sortEnt) {
	es := s.ents[side]
	if n := len(es); n > 0 && s.sorted[side] && e.ts < es[n-1].ts {
		s.sorted[side] = false
	}
	s.ents[side] = append(OffHeapReserve(s.heap, es, 1), e)
}

// index builds the entries of the records in buf: the first row out of
// order came.
func (s *TimeSort) index() {
	s.indexed = true
	_ = s.eachRecord(func(side int, ts int64, off, n int64) error {
		s.addEnt(side, sortEnt{ts: ts, off: off, n: n})
		return nil
	})
}

// eachRecord calls f with each record of buf in its order: its side,
// time and the offset and length of its encoding.
func (s *TimeSort) eachRecord(f func(side int, ts, off, n int64) error) error {
	b, ts := s.buf, int64(0)
	for off := 0; off < len(b); {
		side := int(b[off])
		d, w := binary.Varint(b[off+1:])
		off += 1 + w
		n, w := binary.Uvarint(b[off:])
		off += w
		ts += d
		if err := f(side, ts, int64(off), int64(n)); err != nil {
			return err
		}
		off += int(n)
	}
	return nil
}

func entBefore(a, b *sortEnt) bool { return a.ts < b.ts || a.ts == b.ts && a.off < b.off }

func (s *TimeSort) sortMem() {
	for side := range s.ents {
		if !s.sorted[side] {
			slices.SortFunc(s.ents[side], func(a, b sortEnt) int {
				if c := cmp.Compare(a.ts, b.ts); c != 0 {
					return c
				}
				return cmp.Compare(a.off, b.off)
			})
			s.sorted[side] = true
		}
	}
}

// eachMem calls f with the rows in memory in (time, arrival) order.
func (s *TimeSort) eachMem(f func(side int, ts int64, enc []byte) error) error {
	if !s.indexed {
		return s.eachRecord(func(side int, ts, off, n int64) error { return f(side, ts, s.buf[off:off+n]) })
	}
	s.sortMem()
	a, b := s.ents[0], s.ents[1]
	for len(a) > 0 || len(b) > 0 {
		var e *sortEnt
		side := 0
		if len(b) == 0 || len(a) > 0 && entBefore(&a[0], &b[0]) {
			e, a = &a[0], a[1:]
		} else {
			e, b, side = &b[0], b[1:], 1
		}
		if err := f(side, e.ts, s.buf[e.off:e.off+e.n]); err != nil {
			return err
		}
	}
	return nil
}

// clearMem drops the rows in memory, keeping the arrays' room.
func (s *TimeSort) clearMem() {
	s.buf = s.buf[:0]
	s.ents[0], s.ents[1] = s.ents[0][:0], s.ents[1][:0]
	s.sorted = [2]bool{true, true}
	s.indexed, s.lastTs, s.memRows = false, 0, 0
}

// spill writes the rows in memory, sorted, to a new run.
func (s *TimeSort) spill() error {
	if len(s.buf) == 0 {
		return nil
	}
	f, err := os.CreateTemp(s.Dir, "etld-sort-*")
	if err != nil {
		return fmt.Errorf("sort: spill: %w", err)
	}
	// The file is ours alone: unlinked at once, it goes with the process.
	_ = os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<16)
	var hdr []byte
	_ = s.eachMem(func(side int, ts int64, enc []byte) error {
		hdr = binary.AppendVarint(hdr[:0], ts)
		hdr = binary.AppendUvarint(hdr, uint64(1+len(enc)))
		hdr = append(hdr, byte(side))
		w.Write(hdr)
		w.Write(enc)
		return nil
	})
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("sort: spill: %w", err)
	}
	s.runs = append(s.runs, f)
	s.clearMem()
	return nil
}

// Each calls f with every row held, each run in its order then the rows
// in memory in theirs (time order); enc is the row's
// encoding, valid during the call. Adding the rows again in this order
// keeps their order in Drain (a snapshot's).
func (s *TimeSort) Each(f func(side int, ts int64, enc []byte) error) error {
	for _, run := range s.runs {
		if _, err := run.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		rd := runReader{r: bufio.NewReaderSize(run, 1<<16)}
		for rd.next() {
			if err := f(int(rd.rec[0]), rd.ts, rd.rec[1:]); err != nil {
				return err
			}
		}
		if rd.err != nil {
			return rd.err
		}
	}
	return s.eachMem(f)
}

// Drain calls f with every row held in (time, arrival) order and leaves
// the sort empty; enc is the row's encoding, valid during the call. An
// error of f stops it.
func (s *TimeSort) Drain(f func(side int, ts int64, enc []byte) error) error {
	defer s.Reset()
	if len(s.runs) == 0 {
		return s.eachMem(f)
	}
	if err := s.spill(); err != nil {
		return err
	}
	rds := make([]*runReader, 0, len(s.runs))
	for _, run := range s.runs {
		if _, err := run.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		rd := &runReader{r: bufio.NewReaderSize(run, 1<<16)}
		if rd.next() {
			rds = append(rds, rd)
		} else if rd.err != nil {
			return rd.err
		}
	}
	// A merge of the runs by time, a tie to the earlier run (the earlier
	// arrival): the runs are few, a linear pick is enough.
	for len(rds) > 0 {
		best := 0
		for i := 1; i < len(rds); i++ {
			if rds[i].ts < rds[best].ts {
				best = i
			}
		}
		rd := rds[best]
		if err := f(int(rd.rec[0]), rd.ts, rd.rec[1:]); err != nil {
			return err
		}
		if !rd.next() {
			if rd.err != nil {
				return rd.err
			}
			rds = slices.Delete(rds, best, best+1)
		}
	}
	return nil
}

// Reset drops every row and run.
func (s *TimeSort) Reset() {
	for _, run := range s.runs {
		run.Close()
	}
	s.runs = nil
	s.heap.Release()
	s.buf, s.ents, s.scratch, s.rows = nil, [2][]sortEnt{}, nil, 0
	s.sorted = [2]bool{true, true}
	s.indexed, s.lastTs, s.memRows = false, 0, 0
}

// runReader reads a run's records one at a time.
type runReader struct {
	r   *bufio.Reader
	ts  int64
	rec []byte
	err error
}

func (rd *runReader) next() bool {
	ts, err := binary.ReadVarint(rd.r)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			rd.err = fmt.Errorf("sort: read run: %w", err)
		}
		return false
	}
	n, err := binary.ReadUvarint(rd.r)
	if err == nil && n > 1<<40 {
		err = fmt.Errorf("record of %d bytes", n)
	}
	if err == nil {
		if uint64(cap(rd.rec)) < n {
			rd.rec = make([]byte, n)
		}
		rd.rec = rd.rec[:n]
		_, err = io.ReadFull(rd.r, rd.rec)
	}
	if err != nil || n == 0 {
		rd.err = fmt.Errorf("sort: read run: %v", err)
		return false
	}
	rd.ts = ts
	return true
}
