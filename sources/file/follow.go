package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
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
// the pattern no longer names (renamed, or deleted while open) is rotated
// away, but its writer may still hold it: it is read on through the
// descriptor opened before, until no data has arrived in it for
// rotate_wait; then its last line is read even without a newline, and it
// is closed. A file whose size falls below what was read was truncated
// and is read again from its start. Files are read one at a time: those
// rotated away first, then the least recently modified.

// defaultMonitorInterval is how often a followed source looks for new
// data, rotation, truncation and new files when it has nothing to read.
const defaultMonitorInterval = 200 * time.Millisecond

// defaultRotateWait is how long a rotated file is read on after its last
// data arrived: Fluent Bit's tail input waits as long (rotate_wait).
// Writers that flush at longer intervals need a longer one.
const defaultRotateWait = 5 * time.Second

// newFollower checks the options of a followed source and returns its
// state; nil when the source does not follow.
func newFollower(cfg Config) (*follower, error) {
	if !cfg.Follow {
		switch {
		case cfg.MonitorInterval != 0:
			return nil, connector.Errorf("monitor_interval", "applies only with follow: true")
		case cfg.RotateWait != nil:
			return nil, connector.Errorf("rotate_wait", "applies only with follow: true")
		case cfg.RotatedPath != "":
			return nil, connector.Errorf("rotated_path", "applies only with follow: true")
		}
		return nil, nil
	}
	fl := &follower{interval: cfg.MonitorInterval, rotateWait: defaultRotateWait, rotatedPath: cfg.RotatedPath}
	switch {
	case fl.interval < 0:
		return nil, connector.Errorf("monitor_interval", "must be > 0, such as 200ms (0: the default)")
	case fl.interval == 0:
		fl.interval = defaultMonitorInterval
	}
	if w := cfg.RotateWait; w != nil {
		switch {
		case *w <= 0:
			return nil, connector.Errorf("rotate_wait", "must be positive, such as 5s")
		case *w < fl.interval:
			return nil, connector.Errorf("rotate_wait", "%v is shorter than monitor_interval (%v), how often a rotated file is looked at", *w, fl.interval)
		}
		fl.rotateWait = *w
	}
	// The default under a long monitor_interval.
	fl.rotateWait = max(fl.rotateWait, fl.interval)
	if _, err := filepath.Match(cfg.RotatedPath, ""); err != nil {
		return nil, connector.Errorf("rotated_path", "bad glob %q: %v", cfg.RotatedPath, err)
	}
	return fl, nil
}

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
	// readTo is how far the file was read when the reader last reached
	// the end of its data, a record without its end held back: it has
	// something new to read only once it is longer. Never below offset.
	readTo int64
	// size is the file's size when last looked at, and grew when it was
	// first seen at that size or when the file went: a rotated file is
	// quiet once grew is rotate_wait ago.
	size int64
	grew time.Time
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
	// rotateWait is how long a rotated file must be quiet to be let go of.
	rotateWait time.Duration
	// rotatedPath is the rotated_path glob; "" when not given.
	rotatedPath string
	files       []*followed
	cur         *followed
	lastPoll    time.Time
	// draining is set while cur, rotated away and quiet, is read to its
	// very end.
	draining bool
	// idle is set when the reader reached the end of the data: the next
	// record is checked to come from the same file content.
	idle bool
	// left counts the files whose records the source let go of since
	// its state began (rotated away and dropped, truncated, gone at a
	// restore), kept in the position: a backfill cannot read those
	// records again (reread.go).
	left int
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
				t = &followed{path: p, id: idOf(fst), f: f, line: 1, size: fst.Size(), grew: fl.lastPoll}
				fl.files = append(fl.files, t)
				s.logger.Info("file source: following", "path", p)
			}
		}
		t.path, t.gone = p, time.Time{}
		seen[t] = true
	}
	for _, t := range fl.files {
		if !seen[t] && t.gone.IsZero() {
			// The writer may hold it still: the grace starts now.
			t.gone, t.grew = fl.lastPoll, fl.lastPoll
			s.logger.Info("file source: the path no longer names the file being followed (rotated or deleted); reading it on until it has been quiet for rotate_wait", "path", t.path, "rotate_wait", fl.rotateWait)
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
		read := t.readTo
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
	t.offset, t.line, t.readTo, t.head, t.headN, t.probe = 0, 1, 0, "", 0, nil
	fl.left++
	if t != fl.cur {
		return nil
	}
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

// leave stops reading the current file, which the reader read to the end
// of its data; it keeps its place.
func (s *Source) leave() {
	fl := s.fl
	if fl.cur == nil {
		return
	}
	fl.cur.offset, fl.cur.line = s.rd.offset, s.rd.line
	fl.cur.readTo = max(s.rd.readPos(), fl.cur.offset)
	fl.cur, fl.draining = nil, false
}

// drop forgets t, rotated away, quiet for rotate_wait and read to its end.
func (s *Source) drop(t *followed) {
	fl := s.fl
	if fl.cur == t {
		fl.cur, fl.draining = nil, false
	}
	s.logger.Info("file source: done with a rotated file: read to its end, and quiet for rotate_wait", "path", t.path, "offset", s.placeOf(t))
	t.f.Close()
	fl.left++
	fl.files = slices.DeleteFunc(fl.files, func(u *followed) bool { return u == t })
}

// placeOf is the offset of t's next record.
func (s *Source) placeOf(t *followed) int64 {
	if t == s.fl.cur {
		return s.rd.offset
	}
	return t.offset
}

// pick chooses the next file to read: one with data it has not read,
// rotated files first, then the least recently modified. A rotated file
// quiet for rotate_wait is read to its very end, the last record without
// its end too, or dropped if it was. It returns false when no file has
// data.
func (s *Source) pick() (bool, error) {
	fl := s.fl
	if time.Since(fl.lastPoll) >= fl.interval {
		if err := s.poll(); err != nil {
			return false, err
		}
	}
	now := time.Now()
	var next *followed
	var nextTime time.Time
	var drain bool
	for _, t := range slices.Clone(fl.files) {
		st, err := t.f.Stat()
		if err != nil {
			return false, err
		}
		size := st.Size()
		if size != t.size {
			t.size, t.grew = size, now
		}
		quiet := !t.gone.IsZero() && now.Sub(t.grew) >= fl.rotateWait
		switch {
		case quiet && size == t.offset:
			s.drop(t)
			continue
		case size > t.readTo, quiet && size > t.offset:
		default:
			continue // nothing new; or shorter, for poll to find truncated
		}
		if next == nil || before(t, st.ModTime(), next, nextTime) {
			next, nextTime, drain = t, st.ModTime(), quiet
		}
	}
	if next == nil {
		return false, nil
	}
	if err := s.enter(next); err != nil {
		return false, err
	}
	if drain {
		// What the writer has not ended by now, it never will.
		fl.draining = true
		s.rd.hold = false
	}
	return true, nil
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
// left: drop it if it was being drained; else, once an interval has
// passed, leave it for pick to look around (it may be rotated away and
// quiet, truncated, or another file may have data). It reports whether to
// read on at once rather than wait.
func (s *Source) atEnd() bool {
	fl := s.fl
	if fl.draining {
		s.drop(fl.cur)
		return true
	}
	if time.Since(fl.lastPoll) < fl.interval {
		return false
	}
	s.leave()
	return true
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
			if s.atEnd() {
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
		if full, err := s.take(b, rec, line, max, fl.cur.path, fl.cur.id.String()); err != nil {
			return s.fail(b, err)
		} else if full {
			break
		}
	}
	return b, nil
}

func (s *Source) closeFollow() error {
	var errs []error
	for _, t := range s.fl.files {
		errs = append(errs, t.f.Close())
	}
	s.fl.files, s.fl.cur = nil, nil
	return errors.Join(errs...)
}
