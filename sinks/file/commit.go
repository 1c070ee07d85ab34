package file

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/etld/etld/internal/durable"
)

// part is an in-progress file: Len bytes that go at offset Off of the
// output once published. Name is a file name in the output's directory.
type part struct {
	Name string `json:"name"`
	Off  int64  `json:"offset"`
	Len  int64  `json:"length"`
}

// state is what Snapshot returns and Commit and Restore take. It is JSON
// so that a person can read a checkpoint.
type state struct {
	// V is the encoding's version.
	V int `json:"v"`
	// Path is the output, as the path option named it: a checkpoint
	// taken writing another file does not fit this sink.
	Path string `json:"path"`
	// Size is the output's length once Parts are published.
	Size int64 `json:"size"`
	// Parts are the parts not yet published, in output order; they end
	// at Size.
	Parts []part `json:"parts,omitempty"`
}

const stateVersion = 1

// partSuffix ends every in-progress file's name; partPrefix starts it.
const partSuffix = ".inprogress"

func (s *Sink) partPrefix() string { return "." + filepath.Base(s.path) + ".part-" }

// WriteFiles implements connector.FileWriter: the output, and a part's
// name as the runs name them (run id, sequence number).
func (s *Sink) WriteFiles() []string {
	return []string{s.path, filepath.Join(filepath.Dir(s.path), s.partPrefix()+"0123456789abcdef-0"+partSuffix)}
}

// runID names this run's parts, so that no two runs ever write a part of
// the same name: a restore may still need the parts of an earlier run.
func runID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// newPart creates the part the next bytes go to.
func (s *Sink) newPart() error {
	name := fmt.Sprintf("%s%s-%d%s", s.partPrefix(), s.run, s.seq, partSuffix)
	s.seq++
	dir := filepath.Dir(s.path)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	s.f = f
	s.cur = &part{Name: name, Off: s.end}
	// The part must survive a crash once a checkpoint names it.
	s.syncDirs = append(s.syncDirs, dir)
	return nil
}

// closePart ends the current part, if any: it becomes pending. Its bytes
// were flushed and synced before.
func (s *Sink) closePart() error {
	if s.cur == nil {
		return nil
	}
	err := s.f.Close()
	s.pending = append(s.pending, *s.cur)
	s.f, s.cur = nil, nil
	return err
}

// Snapshot makes everything written durable, ends the current part and
// returns the parts a Commit is to publish. From the first call on, rows
// go to parts instead of the output.
func (s *Sink) Snapshot(ctx context.Context) ([]byte, error) {
	if s.out == nil {
		return nil, s.errorf("snapshot before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.flush(); err != nil {
		return nil, err
	}
	if err := s.closePart(); err != nil {
		return nil, err
	}
	if !s.staged {
		// What went straight to the output is synced: it is published.
		s.staged, s.f = true, nil
	}
	out, err := json.Marshal(state{V: stateVersion, Path: s.path, Size: s.end, Parts: s.pending})
	if err != nil {
		return nil, s.errorf("encode state: %w", err)
	}
	return out, nil
}

// Commit publishes the parts st names (what a Snapshot returned): their
// bytes are appended to the output, which is synced, and they are deleted.
// Parts already published are skipped, so Commit can be repeated.
func (s *Sink) Commit(ctx context.Context, st []byte) error {
	if s.out == nil {
		return s.errorf("commit before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := s.decodeState(st)
	if err != nil {
		return s.errorf("commit: %w", err)
	}
	if err := s.publish(p.Parts); err != nil {
		return err
	}
	s.covered = true
	return nil
}

// Restore makes Open bring the output back to the checkpoint st was taken
// at (see the package doc).
func (s *Sink) Restore(st []byte) error {
	if s.out != nil || s.closed {
		return s.errorf("restore after open")
	}
	p, err := s.decodeState(st)
	if err != nil {
		return s.errorf("restore: %w", err)
	}
	s.restored = &p
	return nil
}

// recover is Open's part of a Restore: truncate what was written after
// the checkpoint, publish what it left pending, delete the other parts.
func (s *Sink) recover(st state) error {
	published := st.Size
	if len(st.Parts) > 0 {
		published = st.Parts[0].Off
	}
	if s.outSize < published {
		return s.errorf("the file holds %d bytes, but the checkpoint being restored had published %d: it was changed outside etld; to start afresh, remove it and the pipeline's checkpoint state", s.outSize, published)
	}
	if s.outSize > st.Size {
		s.logger.Info("file sink: truncating rows written after the checkpoint; they are written again", "sink", s.name, "path", s.path, "from", s.outSize, "to", st.Size)
		if err := s.out.Truncate(st.Size); err != nil {
			return err
		}
		if err := s.out.Sync(); err != nil {
			return err
		}
		s.outSize = st.Size
	}
	s.staged, s.f, s.covered = true, nil, true
	if err := s.publish(st.Parts); err != nil {
		return err
	}
	s.end = st.Size
	return s.removeParts()
}

// publish writes the bytes of parts that the output lacks after it, syncs
// it and deletes the parts. A part cut short by a crash is completed. It
// needs no more free space than the bytes it adds: the first part of an
// empty output is renamed onto it; the others are copied, and a copy that
// fails (a full disk) is rolled back to the part's start (see rollback).
func (s *Sink) publish(parts []part) error {
	if s.torn != nil {
		return s.torn
	}
	// Close passes s.pending itself, which the deletions below edit in
	// place: go over a copy.
	parts = slices.Clone(parts)
	wrote := false
	dir := filepath.Dir(s.path)
	for i, p := range parts {
		if s.outSize >= p.Off+p.Len {
			continue
		}
		if s.outSize < p.Off {
			return s.errorf("cannot publish %s at offset %d: the file ends at %d", p.Name, p.Off, s.outSize)
		}
		renamed, err := s.renamePart(filepath.Join(dir, p.Name), p)
		if err != nil {
			return err
		}
		if !renamed {
			if err := s.copyPart(filepath.Join(dir, p.Name), p); err != nil {
				return s.rollback(parts, i, err)
			}
		}
		wrote = true
	}
	if wrote {
		if err := s.out.Sync(); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if err := os.Remove(filepath.Join(dir, p.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		s.pending = slices.DeleteFunc(s.pending, func(q part) bool { return q.Name == p.Name })
	}
	// The deletions need no directory sync: a part that comes back after
	// a crash is skipped, its bytes being in the output, and deleted again.
	return nil
}

// discard deletes the parts of a resumable run that stopped before its
// first checkpoint, leaving the output as the run found it: no checkpoint
// covers those rows, and the next run writes them again.
func (s *Sink) discard() error {
	dir := filepath.Dir(s.path)
	var n int64
	for _, p := range s.pending {
		n += p.Len
		if err := os.Remove(filepath.Join(dir, p.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if n > 0 {
		s.logger.Info("file sink: the run stopped before its first checkpoint; its rows are not published, and the next run writes them again", "sink", s.name, "path", s.path, "bytes", n)
	}
	s.pending = nil
	return nil
}

// renamePart publishes p by renaming it onto the output when that needs
// nothing but the rename: the output is empty and p starts it, the output
// is a regular file under one name only (a rename would cut another hard
// link or a symbolic link off it) with p's owner and permissions, and p
// holds exactly its bytes. Copying instead would need p's size twice on disk.
// The rename and the directory are synced before it returns, since later
// commits append to the new file.
func (s *Sink) renamePart(path string, p part) (bool, error) {
	if s.outSize != 0 || p.Off != 0 || !s.outRegular {
		return false, nil
	}
	outSt, err := os.Lstat(s.path)
	if err != nil {
		return false, nil
	}
	openSt, err := s.out.Stat()
	if err != nil || !os.SameFile(outSt, openSt) || outSt.Size() != 0 {
		return false, nil
	}
	partSt, err := os.Stat(path)
	if err != nil || partSt.Size() != p.Len || !replaceable(outSt, partSt) {
		// A part that is gone or short: copyPart says so.
		return false, nil
	}
	if err := os.Rename(path, s.path); err != nil {
		return false, err
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY, 0)
	if err != nil {
		return false, err
	}
	old := s.out
	s.out, s.outSize = f, p.Len
	if s.f == old {
		s.f = f
	}
	if err := old.Close(); err != nil {
		return true, err
	}
	if err := durable.SyncDir(filepath.Dir(s.path)); err != nil {
		return true, err
	}
	return true, nil
}

// copyPart appends the bytes of p from the output's current end on.
func (s *Sink) copyPart(path string, p part) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return brokenPart{s.errorf("the in-progress file %s holding bytes %d to %d of the output is gone: the output cannot be completed; to start afresh, remove it and the pipeline's checkpoint state", p.Name, p.Off, p.Off+p.Len)}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	from := s.outSize - p.Off
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	if _, err := s.out.Seek(s.outSize, io.SeekStart); err != nil {
		return err
	}
	// *os.File to *os.File through a LimitedReader: copy_file_range.
	n, err := io.Copy(s.out, io.LimitReader(f, p.Len-from))
	s.outSize += n
	if err != nil {
		return err
	}
	if n != p.Len-from {
		return brokenPart{s.errorf("the in-progress file %s holds %d bytes, the checkpoint counted %d", p.Name, from+n, p.Len)}
	}
	return nil
}

// removeParts deletes every in-progress file of this output: after a
// restore, those that hold rows written after the checkpoint; on a fresh
// start, those a crashed run left.
func (s *Sink) removeParts() error {
	dir := filepath.Dir(s.path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	prefix := s.partPrefix()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, partSuffix) || s.isOurs(name) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		s.logger.Debug("file sink: removed an in-progress file of an earlier run", "sink", s.name, "file", name)
	}
	return nil
}

// isOurs reports whether name is a part of this run.
func (s *Sink) isOurs(name string) bool {
	return strings.HasPrefix(name, s.partPrefix()+s.run+"-")
}

// decodeState checks st strictly: it names files Commit and Restore
// delete, so only parts of this output are accepted.
func (s *Sink) decodeState(st []byte) (state, error) {
	var p state
	dec := json.NewDecoder(bytes.NewReader(st))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("state %.64q is not a file sink state: %w", st, err)
	}
	if dec.More() {
		return p, fmt.Errorf("state %.64q: data after the state", st)
	}
	if p.V != stateVersion {
		return p, fmt.Errorf("state %.64q: version %d, want %d", st, p.V, stateVersion)
	}
	if p.Path != s.path {
		return p, fmt.Errorf("the checkpoint was taken writing %s, and the sink now writes %s; to start afresh, reset the pipeline's state (etld state reset)", p.Path, s.path)
	}
	end := p.Size
	if len(p.Parts) > 0 {
		end = p.Parts[0].Off
	}
	if end < 0 {
		return p, fmt.Errorf("state %.64q: negative offset", st)
	}
	for _, q := range p.Parts {
		switch {
		case q.Off != end || q.Len <= 0 || q.Len > math.MaxInt64-end:
			return p, fmt.Errorf("state %.64q: part %s at %d+%d does not follow at %d", st, q.Name, q.Off, q.Len, end)
		case q.Name != filepath.Base(q.Name) || !strings.HasPrefix(q.Name, s.partPrefix()) || !strings.HasSuffix(q.Name, partSuffix):
			return p, fmt.Errorf("state %.64q: %q is not an in-progress file of %s", st, q.Name, s.path)
		}
		end += q.Len
	}
	if end != p.Size {
		return p, fmt.Errorf("state %.64q: the parts end at %d, not at size %d", st, end, p.Size)
	}
	return p, nil
}
