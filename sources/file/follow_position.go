package file

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A followed source's position, and the restart from it.
//
// A restart finds each file of the position by its identity (device and
// inode) and its first bytes: among the files path matches, then among
// those rotated_path matches, for a file rotated away while etld was
// stopped. Only where the system has no inodes is a file found by its
// path instead. A file found nowhere was deleted, or renamed out of
// sight: what was unread of it is lost, and logged as such.

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
	// Size is the file's size when the position was taken, so that a
	// restart that cannot find the file can say how much of it is lost
	// at least. Absent from positions taken before it was added.
	Size int64 `json:"size,omitempty"`
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
		st, err := t.f.Stat()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.path, err)
		}
		out = append(out, followPos{Path: t.path, Dev: t.id.Dev, Ino: t.id.Ino, Offset: offset, Line: line, Head: t.head, HeadLen: n, Size: st.Size()})
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

// restoreFollow puts each file of the position back at its offset. A new
// file under a checkpointed name is not in the position, so it is read
// from its start.
func (s *Source) restoreFollow(p *position) error {
	fl := s.fl
	fl.left = p.Left
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
				t.offset, t.readTo = st.Size(), st.Size()
			case t.path == p.File:
				t.offset, t.line, t.readTo = p.Offset, p.Line, p.Offset
			}
		}
		return nil
	}
	for _, e := range p.Files {
		found, err := s.locate(e)
		if err != nil {
			return err
		}
		if found == nil {
			s.lost(e)
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
		found.offset, found.line, found.readTo = e.Offset, e.Line, e.Offset
	}
	return nil
}

// locate finds the checkpoint's file e: among the files path matches,
// then among those rotated_path does, which it starts to follow as
// rotated away. nil means it is nowhere to be found.
func (s *Source) locate(e followPos) (*followed, error) {
	fl := s.fl
	for _, t := range fl.files {
		if isFile(t, e) {
			return t, nil
		}
	}
	if fl.rotatedPath == "" {
		return nil, nil
	}
	id := fileID{Dev: e.Dev, Ino: e.Ino}
	if id == (fileID{}) {
		return nil, nil // without an identity a rotated file cannot be told
	}
	paths, err := filepath.Glob(fl.rotatedPath)
	if err != nil {
		return nil, fmt.Errorf("rotated_path %q: %w", fl.rotatedPath, err)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.IsDir() || idOf(st) != id {
			continue // not it, or gone since the glob
		}
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		now := time.Now()
		t := &followed{path: p, id: idOf(st), f: f, line: 1, size: st.Size(), grew: now, gone: now}
		if !isFile(t, e) {
			f.Close()
			continue
		}
		fl.files = append(fl.files, t)
		s.logger.Info("file source: found a file of the checkpoint rotated away; reading it on until it has been quiet for rotate_wait", "path", p, "was", e.Path, "offset", e.Offset)
		return t, nil
	}
	return nil, nil
}

// isFile reports whether t is the checkpoint's file e: the same identity,
// or where the system has none the same path, and the same first bytes.
func isFile(t *followed, e followPos) bool {
	id := fileID{Dev: e.Dev, Ino: e.Ino}
	if t.id != (fileID{}) && id != (fileID{}) {
		if t.id != id {
			return false
		}
	} else if t.path != e.Path {
		return false
	}
	h, err := headOf(t.f, e.HeadLen)
	return err == nil && h != "" && h == e.Head
}

// lost logs a file of the checkpoint that is found nowhere: what it held
// after the checkpoint's offset is gone, at least what was unread of it
// then, and whatever was written to it after.
func (s *Source) lost(e followPos) {
	s.fl.left++
	attrs := []any{"path", e.Path, "offset", e.Offset, "unread_bytes_at_checkpoint", max(0, e.Size-e.Offset)}
	if s.fl.rotatedPath == "" {
		attrs = append(attrs, "hint", "if it was rotated, set rotated_path to a glob of the rotated names, such as "+e.Path+".*, to have it found")
	}
	s.logger.Warn("file source: a file of the checkpoint is gone (deleted, or renamed to a name neither path nor rotated_path matches): what it held after the checkpoint's offset is lost, its unread bytes at the checkpoint and any written since", attrs...)
}
