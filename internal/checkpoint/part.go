package checkpoint

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Streamed states. An operator's state can be larger than the memory a
// second copy of it may take (a GROUP BY over millions of keys): such an
// operator writes its snapshot in pieces (operator.StreamSnapshotter)
// into a part file of its own, from its own goroutine at the barrier, and
// the checkpoint file names the part (Component.RuntimePart) instead of
// holding the bytes. Neither side ever holds the whole snapshot: WritePart
// passes it to the file a chunk at a time, OpenPart reads it back the
// same way.
//
// A part file is "ETLDPART", a version byte, then chunks: a uvarint
// length n, n bytes and the CRC-32C of those bytes (4 bytes, little
// endian); a chunk of length 0 ends the part, followed by the total
// length as a uvarint. A truncated or damaged part is refused.
//
// Names: part-<barrier, 20 digits>-<component hash> for a state taken at
// a barrier; part-final-<component hash>-<nanoseconds> for a node's final
// state, which stands in for every later checkpoint of the run. Parts
// live as long as a kept checkpoint may name them (see prune).

const (
	partMagic    = "ETLDPART"
	partVersion  = 1
	partPrefix   = "part-"
	partFinal    = "final-"
	partChunkMax = 1 << 20
)

// partName is the file name of component's part at barrier id, or of its
// final state when id is 0.
func partName(id int64, component string, now time.Time) string {
	h := sha256.Sum256([]byte(component))
	hash := hex.EncodeToString(h[:8])
	if id == 0 {
		return fmt.Sprintf("%s%s%s-%d", partPrefix, partFinal, hash, now.UnixNano())
	}
	return fmt.Sprintf("%s%020d-%s", partPrefix, id, hash)
}

// partBarrier is the barrier of a part's name, 0 for a final state's or
// a name that is not a part's.
func partBarrier(name string) int64 {
	rest, ok := strings.CutPrefix(name, partPrefix)
	if !ok || strings.HasPrefix(rest, partFinal) {
		return 0
	}
	num, _, _ := strings.Cut(rest, "-")
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// WritePart writes component's state at barrier id (0: its final state)
// into a part file, fill writing the state to the writer it is given,
// and returns the part's name, for Component.RuntimePart, and its size.
// It returns once the part is written, before it is durable: its fsync
// and rename run in the background, so that the operator that called it
// at a barrier goes on meanwhile, and Write waits for them before it
// stores a checkpoint that names the part. The part is kept at least
// until a checkpoint written after it no longer names it, or until
// DropUnstored.
func (s *Store) WritePart(id int64, component string, fill func(io.Writer) error) (string, int64, error) {
	name := partName(id, component, time.Now())
	s.mu.Lock()
	if s.pending == nil {
		s.pending = map[string]*partSync{}
	}
	ps := &partSync{done: make(chan struct{})}
	s.pending[name] = ps
	sync := s.syncPart
	s.mu.Unlock()
	f, size, err := s.writeTemp(name, func(w io.Writer) error {
		cw := &chunkWriter{w: w, buf: make([]byte, 0, 64<<10)}
		if _, err := io.WriteString(w, partMagic); err != nil {
			return err
		}
		if _, err := w.Write([]byte{partVersion}); err != nil {
			return err
		}
		if err := fill(cw); err != nil {
			return err
		}
		return cw.close()
	})
	if err != nil {
		ps.err = err
		close(ps.done)
		s.mu.Lock()
		delete(s.pending, name)
		s.mu.Unlock()
		return "", 0, fmt.Errorf("checkpoint: state of %s: %w", component, err)
	}
	if sync == nil {
		sync = (*os.File).Sync
	}
	go func() {
		if err := s.publish(f, name, sync); err != nil {
			ps.err = fmt.Errorf("checkpoint: state of %s: %w", component, err)
		}
		close(ps.done)
	}()
	return name, size, nil
}

// partSync is a part written for a checkpoint not stored yet: done is
// closed once it is durable under its name, or failed (err).
type partSync struct {
	done chan struct{}
	err  error
}

// awaitParts waits until every part cp names that this store wrote is
// durable, and returns the first failure.
func (s *Store) awaitParts(cp *Checkpoint) error {
	for _, c := range cp.Components {
		if c.RuntimePart == "" {
			continue
		}
		s.mu.Lock()
		ps := s.pending[c.RuntimePart]
		s.mu.Unlock()
		if ps == nil {
			continue
		}
		<-ps.done
		if ps.err != nil {
			return ps.err
		}
	}
	return nil
}

// DropUnstored removes the parts written for checkpoints that were not
// stored (a checkpoint in flight when its run failed or stopped, one
// whose write failed), once their writes in the background ended: the
// end of a run calls it, after its last WritePart. Failures only leave
// files behind, which the next checkpoint's pruning removes.
func (s *Store) DropUnstored() {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	for name, ps := range pending {
		<-ps.done
		os.Remove(filepath.Join(s.dir, name))
	}
}

// OpenPart opens a part that a checkpoint names, for reading its state
// back (one this store is writing, once it is durable); the reader
// checks every chunk and fails on a damaged or short part.
func (s *Store) OpenPart(name string) (*Part, error) {
	if !strings.HasPrefix(name, partPrefix) || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("checkpoint: %q names no part", name)
	}
	s.mu.Lock()
	ps := s.pending[name]
	s.mu.Unlock()
	if ps != nil {
		if <-ps.done; ps.err != nil {
			return nil, ps.err
		}
	}
	path := filepath.Join(s.dir, name)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the checkpoint names %s: %w", name, err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head := make([]byte, len(partMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil || string(head[:len(partMagic)]) != partMagic {
		f.Close()
		return nil, fmt.Errorf("checkpoint: %s is not a state part", path)
	}
	if v := head[len(partMagic)]; v != partVersion {
		f.Close()
		return nil, fmt.Errorf("checkpoint: %s: part version %d, this etld reads %d", path, v, partVersion)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &Part{f: f, r: br, path: path, size: info.Size()}, nil
}

// chunkWriter frames what it is given into checksummed chunks of at most
// partChunkMax bytes, holding no more than one chunk.
type chunkWriter struct {
	w     io.Writer
	buf   []byte
	total uint64
	hdr   []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := partChunkMax - len(c.buf)
		take := min(room, len(p))
		c.buf = append(c.buf, p[:take]...)
		p = p[take:]
		if len(c.buf) >= partChunkMax {
			if err := c.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	c.hdr = binary.AppendUvarint(c.hdr[:0], uint64(len(c.buf)))
	sum := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(c.buf, castagnoli))
	if err := writeAll(c.w, c.hdr, c.buf, sum); err != nil {
		return err
	}
	c.total += uint64(len(c.buf))
	c.buf = c.buf[:0]
	return nil
}

// close writes the last chunk, the end mark and the total length.
func (c *chunkWriter) close() error {
	if err := c.flush(); err != nil {
		return err
	}
	end := binary.AppendUvarint([]byte{0}, c.total)
	_, err := c.w.Write(end)
	return err
}

// Part reads a part's state back, a chunk at a time, checking each.
type Part struct {
	f     *os.File
	r     *bufio.Reader
	path  string
	size  int64 // the file's
	chunk []byte
	off   int
	total uint64
	done  bool
}

// Read reads the part's state; it fails on a damaged or short part.
func (c *Part) Read(p []byte) (int, error) {
	for c.off == len(c.chunk) {
		if c.done {
			return 0, io.EOF
		}
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.chunk[c.off:])
	c.off += n
	return n, nil
}

// next reads the next chunk, or the end mark.
func (c *Part) next() error {
	damaged := func(what string, err error) error {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("checkpoint: %s is damaged: %s: %w", c.path, what, err)
	}
	n, err := binary.ReadUvarint(c.r)
	if err != nil {
		return damaged("chunk length", err)
	}
	if n == 0 {
		total, err := binary.ReadUvarint(c.r)
		if err != nil {
			return damaged("total length", err)
		}
		if total != c.total {
			return damaged("length", fmt.Errorf("%d bytes read, the part says %d", c.total, total))
		}
		c.done, c.chunk, c.off = true, c.chunk[:0], 0
		return nil
	}
	if n > partChunkMax {
		return damaged("chunk length", fmt.Errorf("%d bytes, at most %d", n, partChunkMax))
	}
	if cap(c.chunk) < int(n) {
		c.chunk = make([]byte, n)
	}
	c.chunk, c.off = c.chunk[:n], 0
	var sum [4]byte
	if _, err := io.ReadFull(c.r, c.chunk); err != nil {
		return damaged("chunk", err)
	}
	if _, err := io.ReadFull(c.r, sum[:]); err != nil {
		return damaged("chunk checksum", err)
	}
	if crc32.Checksum(c.chunk, castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
		return damaged("chunk", errors.New("checksum mismatch"))
	}
	c.total += n
	return nil
}

// Close closes the part's file.
func (c *Part) Close() error { return c.f.Close() }

// Size is at most the number of bytes of state the part holds: its
// file's size.
func (c *Part) Size() int64 { return c.size }

// pruneParts removes the parts no kept checkpoint may name: those not
// being written for a checkpoint still to come (pending), not named by
// the newest checkpoint, and either a final state's (the newest names
// the run's final states), taken at a barrier before the oldest kept
// checkpoint, or at one after the newest (a run that ended before it
// stored the checkpoint of that barrier). Called with s.mu held.
func (s *Store) pruneParts(newest *Checkpoint, oldestKept int64) {
	named := map[string]bool{}
	newestID := int64(0)
	if newest != nil {
		newestID = newest.ID
		for _, c := range newest.Components {
			if c.RuntimePart != "" {
				named[c.RuntimePart] = true
				delete(s.pending, c.RuntimePart)
			}
		}
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, partPrefix) || strings.Contains(n, tmpMarker) || named[n] || s.pending[n] != nil {
			continue
		}
		if id := partBarrier(n); id == 0 || id < oldestKept || id > newestID {
			os.Remove(filepath.Join(s.dir, n))
		}
	}
}

// SetPartSync replaces the fsync of part files (tests hold it, or fail
// it, to see what waits for it).
func (s *Store) SetPartSync(sync func(*os.File) error) {
	s.mu.Lock()
	s.syncPart = sync
	s.mu.Unlock()
}
