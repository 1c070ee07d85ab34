package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// A full disk (or a quota, or any other failed write) never leaves the
// output cut mid-record: the write path and publish both end every file
// they were writing at a whole record again before they report the error,
// and the error says how many bytes the sink needed and how many the file
// system has free. Nothing is lost: the bytes a write could not take stay
// in the buffer, and a part a commit could not append stays on disk.

// undoWrite cuts the file a failed write of the buffer went to back to
// where the write began (the buffer starts at a record's start) and puts
// its offset back, so that the whole buffer can be written again later.
// n is what the write got out before it failed.
func (s *Sink) undoWrite(n int, cause error) error {
	at := s.outSize
	if s.staged {
		at = s.cur.Len
	}
	need := int64(len(s.buf))
	where := s.path
	if s.staged {
		where = fmt.Sprintf("%s (its in-progress file %s)", s.path, s.cur.Name)
	}
	if n > 0 {
		if err := cutBack(s.f, at); err != nil {
			s.torn = fmt.Errorf("%s: a failed write of %d bytes (%w) left %d of them after byte %d, and cutting them away failed too: %w; the file ends mid-record until the next start", where, need, cause, n, at, err)
			return s.torn
		}
	}
	return fmt.Errorf("%s: writing %d bytes: %w%s; the file is back at byte %d, the end of its last whole record, and keeps nothing of them",
		where, need, errnoOf(cause), s.freeNote(need), at)
}

// cutBack truncates f to size and moves its offset there.
func cutBack(f *os.File, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	_, err := f.Seek(size, 0)
	return err
}

// rollback undoes a publish that failed while appending parts[i]: the
// output is cut back to where that part starts, a checkpoint's end and so
// a whole record, and synced. The parts before it are in the output, whole
// and synced with it, so they are deleted: that frees their space for the
// next try. parts[i] and those after it stay on disk for that try.
func (s *Sink) rollback(parts []part, i int, cause error) error {
	p := parts[i]
	need := parts[len(parts)-1].Off + parts[len(parts)-1].Len - p.Off
	if err := s.out.Truncate(p.Off); err != nil {
		s.torn = fmt.Errorf("%s: appending %s failed (%w), and cutting the file back to byte %d failed too: %w; the file ends mid-record until the next start, which restores the checkpoint", s.path, p.Name, cause, p.Off, err)
		return s.torn
	}
	s.outSize = p.Off
	if err := s.out.Sync(); err != nil {
		return errors.Join(s.commitError(p, need, cause), fmt.Errorf("%s: fsync after cutting back to byte %d: %w", s.path, p.Off, err))
	}
	dir := filepath.Dir(s.path)
	for _, q := range parts[:i] {
		if err := os.Remove(filepath.Join(dir, q.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errors.Join(s.commitError(p, need, cause), err)
		}
		s.pending = slices.DeleteFunc(s.pending, func(r part) bool { return r.Name == q.Name })
	}
	if errors.As(cause, new(brokenPart)) {
		return cause
	}
	return s.commitError(p, need, cause)
}

// brokenPart is a part that cannot be appended however much room there
// is: its error is reported as it is.
type brokenPart struct{ error }

func (b brokenPart) Unwrap() error { return b.error }

func (s *Sink) commitError(p part, need int64, cause error) error {
	return fmt.Errorf("%s: appending the checkpoint's rows at byte %d: %w%s; the file is back at byte %d, the end of its last whole record, and the rows wait in %s to be appended",
		s.path, p.Off, errnoOf(cause), s.freeNote(need), p.Off, p.Name)
}

// freeNote says how much room the sink needed and, where the system
// tells, how much the output's file system has free.
func (s *Sink) freeNote(need int64) string {
	free, ok := freeBytes(filepath.Dir(s.path))
	if !ok {
		return fmt.Sprintf(" (%d bytes needed)", need)
	}
	return fmt.Sprintf(" (%d bytes needed, %d free)", need, free)
}

// errnoOf drops the operation and the path an *fs.PathError repeats
// (the error names the file itself), keeping the cause for errors.Is.
func errnoOf(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

// dropParts deletes the parts of a run without a state directory that
// failed: no checkpoint names them, and a new run starts afresh, so they
// would only hold the disk's space.
func (s *Sink) dropParts() {
	dir := filepath.Dir(s.path)
	var n int64
	for _, p := range s.pending {
		n += p.Len
		_ = os.Remove(filepath.Join(dir, p.Name))
	}
	if n > 0 {
		s.logger.Warn("file sink: the run failed; rows not yet in the file are dropped with their in-progress files (a run without a state directory starts afresh)", "sink", s.name, "path", s.path, "bytes", n)
	}
	s.pending = nil
}
