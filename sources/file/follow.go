package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// Following files (follow: true), as tail -F does.
//
// The source polls: every monitor_interval it globs the pattern and stats
// what it matches. Polling works the same on every file system, network
// and overlay ones included, where inotify misses changes made by other
// hosts or containers, and costs a few system calls per interval; a
// sidecar's log is not latency-critical to the millisecond.
//
// Each file is known by its identity (device and inode), so that a rename
// is not a new file and a new file under an old name (rotation) is. A file
// the pattern no longer names is read to its end, including a last line
// without a newline once it has not grown for an interval, and then
// dropped; a file whose size falls below what was read was truncated and
// is read again from its start. Files are read one at a time: a file that
// the pattern no longer names first, then the least recently modified.

// defaultMonitorInterval is how often a followed source looks for new
// data, rotation, truncation and new files when it has nothing to read.
const defaultMonitorInterval = 200 * time.Millisecond

// headLen is how many leading bytes of a file fingerprint it in positions,
// so that a restore does not resume in another file that got the same
// inode, or at a stale offset in a file rewritten since.
const headLen = 1024

// followed is a file a following source knows.
type followed struct {
	path string
	id   fileID
	f    *os.File
	// offset and line are those of the next record while the file is not
	// the one being read; the records reader has them while it is.
	offset, line int64
	// head fingerprints the first headN bytes, once computed.
	head  string
	headN int64
	// gone is when the pattern stopped naming the file; zero while it
	// does.
	gone time.Time
	// probe holds the file's first bytes, up to probeLen, as read.
	probe []byte
}

// probeLen is how many leading bytes each poll compares to tell a file
// rewritten since from one that only grew.
const probeLen = 64

// sameProbe reports whether the file still starts with the bytes read
// from it, and keeps more of them while fewer than probeLen were read.
func (t *followed) sameProbe(read int64) (bool, error) {
	n := min(read, probeLen)
	if n == 0 {
		return true, nil
	}
	buf := make([]byte, n)
	if _, err := t.f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return false, err
	}
	if !bytes.HasPrefix(buf, t.probe) {
		return false, nil
	}
	t.probe = buf
	return true, nil
}

// follower is a following source's state.
type follower struct {
	interval time.Duration
	files    []*followed
	cur      *followed
	lastPoll time.Time
	// draining is set while cur, gone, is read to its very end.
	draining bool
	// truncations counts the times cur was found truncated and entered
	// again from its start.
	truncations int
	// idle is set when the reader reached the end of the data: the next
	// record is checked to come from the same file content.
	idle bool
}

// openFollow finds what the pattern names now, waiting for nothing: files
// that appear later are picked up as they come.
func (s *Source) openFollow() error {
	if !isGlob(s.pattern) {
		if st, err := os.Stat(s.pattern); err == nil && st.IsDir() {
			return fmt.Errorf("%s is a directory: name a file, or its files with a glob such as %s", s.pattern, filepath.Join(s.pattern, "*.log"))
		}
	}
	if err := s.poll(); err != nil {
		return err
	}
	if s.restore != nil {
		return s.restoreFollow(s.restore)
	}
	return nil
}

func isGlob(pattern string) bool { return strings.ContainsAny(pattern, `*?[\`) }

// poll globs the pattern, tracks the files new to it and marks those it
// no longer names as gone.
func (s *Source) poll() error {
	fl := s.fl
	fl.lastPoll = time.Now()
	paths := []string{s.pattern}
	if isGlob(s.pattern) {
		var err error
		if paths, err = filepath.Glob(s.pattern); err != nil {
			return fmt.Errorf("glob %q: %w", s.pattern, err)
		}
		slices.Sort(paths)
	}
	seen := make(map[*followed]bool, len(fl.files))
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not yet there, or gone between the glob and now
		}
		if err != nil {
			return err
		}
		if st.IsDir() {
			continue
		}
		t := fl.find(idOf(st), p)
		if t == nil {
			f, err := os.Open(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			// The file opened is the one to know, whatever took the
			// name since the Stat.
			fst, err := f.Stat()
			if err != nil {
				f.Close()
				return err
			}
			if t = fl.find(idOf(fst), p); t != nil {
				f.Close()
			} else {
				t = &followed{path: p, id: idOf(fst), f: f, line: 1}
				fl.files = append(fl.files, t)
				s.logger.Info("file source: following", "path", p)
			}
		}
		t.path, t.gone = p, time.Time{}
		seen[t] = true
	}
	for _, t := range fl.files {
		if !seen[t] && t.gone.IsZero() {
			t.gone = fl.lastPoll
			s.logger.Info("file source: the path no longer names the file being followed (rotated or deleted); reading it to its end", "path", t.path)
		}
	}
	return s.checkTruncation()
}

// find returns the known file with identity id, or without identities
// (not a unix system) the one at path.
func (fl *follower) find(id fileID, path string) *followed {
	for _, t := range fl.files {
		if id != (fileID{}) && t.id == id || id == (fileID{}) && t.path == path {
			return t
		}
	}
	return nil
}

// checkTruncation starts a file again from 0 when it became shorter than
// what was read of it (copytruncate rotation, or a truncating writer), or
// when its first bytes changed: a writer that refilled it past the old
// length between two polls.
func (s *Source) checkTruncation() error {
	fl := s.fl
	for _, t := range fl.files {
		st, err := t.f.Stat()
		if err != nil {
			return err
		}
		read := t.offset
		if t == fl.cur {
			read = s.rd.readPos()
		}
		if st.Size() >= read {
			same, err := t.sameProbe(read)
			if err != nil {
				return fmt.Errorf("%s: %w", t.path, err)
			}
			if same {
				continue
			}
		}
		if err := s.restart(t); err != nil {
			return err
		}
	}
	return nil
}

// restart reads t, found truncated, again from its start.
func (s *Source) restart(t *followed) error {
	fl := s.fl
	s.logger.Warn("file source: the file was truncated; reading it again from its start", "path", t.path)
	t.offset, t.line, t.head, t.headN, t.probe = 0, 1, "", 0, nil
	if t != fl.cur {
		return nil
	}
	fl.truncations++
	return s.enter(t)
}

// enter makes t the file being read, from its offset.
func (s *Source) enter(t *followed) error {
	fl := s.fl
	fl.cur, fl.draining = t, false
	s.rd.hold = true
	s.inHeader = s.header != nil
	if s.inHeader && t.offset > 0 {
		// The decoder may map columns by the header: read it again.
		if _, err := t.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		s.rd.reset(t.f, 0, 1)
		if err := s.readHeader(t.path); err != nil {
			return err
		}
	}
	if _, err := t.f.Seek(t.offset, io.SeekStart); err != nil {
		return err
	}
	s.rd.reset(t.f, t.offset, t.line)
	return nil
}

// leave stops reading the current file; it keeps its place.
func (s *Source) leave() {
	fl := s.fl
	if fl.cur == nil {
		return
	}
	fl.cur.offset, fl.cur.line = s.rd.offset, s.rd.line
	fl.cur, fl.draining = nil, false
}

// drop forgets t, which is gone and read to its end.
func (s *Source) drop(t *followed) {
	fl := s.fl
	if fl.cur == t {
		fl.cur, fl.draining = nil, false
	}
	t.f.Close()
	fl.files = slices.DeleteFunc(fl.files, func(u *followed) bool { return u == t })
}

// pick chooses the next file to read: one with unread data, gone files
// first, then in name order. It drops gone files read to their end that
// have not grown for an interval. It returns false when no file has data.
func (s *Source) pick() (bool, error) {
	fl := s.fl
	if time.Since(fl.lastPoll) >= fl.interval {
		if err := s.poll(); err != nil {
			return false, err
		}
	}
	var next *followed
	var nextTime time.Time
	for _, t := range slices.Clone(fl.files) {
		st, err := t.f.Stat()
		if err != nil {
			return false, err
		}
		if st.Size() <= t.offset {
			if !t.gone.IsZero() && time.Since(t.gone) >= fl.interval && st.Size() == t.offset {
				s.drop(t)
			}
			continue
		}
		if next == nil || before(t, st.ModTime(), next, nextTime) {
			next, nextTime = t, st.ModTime()
		}
	}
	if next == nil {
		return false, nil
	}
	return true, s.enter(next)
}

// before orders files to read: gone ones first, then the least recently
// modified (a file rotated within the pattern before its successor, daily
// files in date order), then by name.
func before(a *followed, aTime time.Time, b *followed, bTime time.Time) bool {
	switch {
	case !a.gone.IsZero() && b.gone.IsZero():
		return true
	case a.gone.IsZero() && !b.gone.IsZero():
		return false
	case !a.gone.Equal(b.gone):
		return a.gone.Before(b.gone)
	case !aTime.Equal(bTime):
		return aTime.Before(bTime)
	}
	return a.path < b.path
}

// atEnd is what Read does when the current file has no complete record
// left: look around once an interval has passed. It reports whether to
// read on at once (something changed) rather than wait.
func (s *Source) atEnd() (bool, error) {
	fl := s.fl
	t := fl.cur
	if fl.draining {
		// Read to its very end, the last line without a newline too.
		s.drop(t)
		return true, nil
	}
	if time.Since(fl.lastPoll) < fl.interval {
		return false, nil
	}
	truncations := fl.truncations
	if err := s.poll(); err != nil {
		return false, err
	}
	if fl.truncations != truncations {
		return true, nil // entered again from its start
	}
	if !t.gone.IsZero() && time.Since(t.gone) >= fl.interval {
		// The writer had an interval to finish with it after the
		// rotation: whatever it has not ended with a newline by now is a
		// line all the same.
		fl.draining = true
		s.rd.hold = false
		return true, nil
	}
	for _, u := range fl.files {
		if u == t {
			continue
		}
		st, err := u.f.Stat()
		if err != nil {
			return false, err
		}
		if st.Size() > u.offset {
			s.leave()
			return true, nil
		}
	}
	return false, nil
}

// wait sleeps an interval, or until ctx ends.
func (s *Source) wait(ctx context.Context) error {
	t := time.NewTimer(s.fl.interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readFollow is Read for a followed source: it returns what has arrived,
// and waits only while nothing has.
func (s *Source) readFollow(ctx context.Context, max int) (*row.Batch, error) {
	fl := s.fl
	b := s.newBatch(max)
	for n := 0; b.Len() < max; n++ {
		if n&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				// The runtime cancels a Read to take a checkpoint: hand
				// over what was read and keep going on the next Read, as
				// the Source contract asks; nothing is sticky here.
				if b.Len() > 0 {
					return b, nil
				}
				return nil, err
			}
		}
		if fl.cur == nil {
			ok, err := s.pick()
			if err != nil {
				return s.fail(b, err)
			}
			if !ok {
				if b.Len() > 0 {
					return b, nil
				}
				if err := s.wait(ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		rec, line, err := s.rd.next()
		if err == io.EOF {
			fl.idle = true
			if b.Len() > 0 && !fl.draining {
				return b, nil
			}
			again, err := s.atEnd()
			if err != nil {
				return s.fail(b, err)
			}
			if again {
				continue
			}
			if b.Len() > 0 {
				return b, nil
			}
			if err := s.wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return s.fail(b, fmt.Errorf("%s:%d: %w", fl.cur.path, line, err))
		}
		if fl.idle {
			// New data after a pause: from the same file, or from one
			// truncated and written again past the old length since? Its
			// first bytes, compared after the read, tell.
			fl.idle = false
			if same, err := fl.cur.sameProbe(s.rd.readPos()); err != nil {
				return s.fail(b, fmt.Errorf("%s: %w", fl.cur.path, err))
			} else if !same {
				if err := s.restart(fl.cur); err != nil {
					return s.fail(b, err)
				}
				continue
			}
		}
		if full, err := s.take(b, rec, line, max, fl.cur.path); err != nil {
			return s.fail(b, err)
		} else if full {
			break
		}
	}
	return b, nil
}

// followPos is one file of a followed source's position.
type followPos struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
	// Offset and Line are those of the next record.
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
	// Head is the SHA-256 of the file's first HeadLen bytes, which were
	// read: min(Offset, 1024).
	Head    string `json:"head"`
	HeadLen int64  `json:"head_len"`
}

// followPosition lists every known file read past its start.
func (s *Source) followPosition() ([]followPos, error) {
	fl := s.fl
	var out []followPos
	for _, t := range fl.files {
		offset, line := t.offset, t.line
		if t == fl.cur {
			offset, line = s.rd.offset, s.rd.line
		}
		if offset == 0 {
			continue
		}
		n := min(offset, headLen)
		if t.headN != n {
			h, err := headOf(t.f, n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.path, err)
			}
			t.head, t.headN = h, n
		}
		out = append(out, followPos{Path: t.path, Dev: t.id.Dev, Ino: t.id.Ino, Offset: offset, Line: line, Head: t.head, HeadLen: n})
	}
	return out, nil
}

// headOf fingerprints the first n bytes of f; "" when f is shorter.
func headOf(f *os.File, n int64) (string, error) {
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err == io.EOF {
		return "", nil
	} else if err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}

// restoreFollow puts each file of the position back at its offset: the
// file with the same identity, or at the same path, whose first bytes are
// those read before. A file not found was rotated away or deleted since.
func (s *Source) restoreFollow(p *position) error {
	fl := s.fl
	if p.V == 1 {
		// A position of the bounded source: files before p.File in name
		// order were read.
		for _, t := range fl.files {
			switch {
			case t.path < p.File:
				st, err := t.f.Stat()
				if err != nil {
					return err
				}
				t.offset = st.Size()
			case t.path == p.File:
				t.offset, t.line = p.Offset, p.Line
			}
		}
		return nil
	}
	for _, e := range p.Files {
		var found *followed
		for _, t := range fl.files {
			if t.id == (fileID{Dev: e.Dev, Ino: e.Ino}) && t.id != (fileID{}) && sameHead(t, e) {
				found = t
				break
			}
		}
		if found == nil {
			for _, t := range fl.files {
				if t.path == e.Path && sameHead(t, e) {
					found = t
					break
				}
			}
		}
		if found == nil {
			s.logger.Warn("file source: a file of the checkpoint is gone (rotated away or deleted): what was written to it after the checkpoint is not read", "path", e.Path, "offset", e.Offset)
			continue
		}
		st, err := found.f.Stat()
		if err != nil {
			return err
		}
		if st.Size() < e.Offset {
			s.logger.Warn("file source: the file is shorter than at the checkpoint (truncated); reading it from its start", "path", found.path, "size", st.Size(), "offset", e.Offset)
			continue
		}
		found.offset, found.line = e.Offset, e.Line
	}
	return nil
}

func sameHead(t *followed, e followPos) bool {
	h, err := headOf(t.f, e.HeadLen)
	return err == nil && h != "" && h == e.Head
}

func (s *Source) closeFollow() error {
	var errs []error
	for _, t := range s.fl.files {
		errs = append(errs, t.f.Close())
	}
	s.fl.files, s.fl.cur = nil, nil
	return errors.Join(errs...)
}
