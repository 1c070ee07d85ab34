package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/etld/etld/internal/durable"
)

// partStore holds the files of a directory sink: a directory on disk
// (diskStore) or a prefix of object storage (s3Store). Names are relative
// to the sink's path and use /.
//
// A part is written through the partFile createPart returns; checkpoint
// makes what was written durable and returns what resumePart needs
// (upload: "" on disk, where the length is enough); finish ends a
// complete part and returns what publish needs; publish makes it visible
// under its final name, whole, and is idempotent.
type partStore interface {
	abs(name string) string
	createPart(ctx context.Context, name string) (partFile, error)
	resumePart(ctx context.Context, name string, size int64, upload string) (partFile, error)
	checkpoint(ctx context.Context, f partFile) (upload string, err error)
	finish(ctx context.Context, f partFile) (upload string, err error)
	publish(ctx context.Context, from, to, upload string) error
	// keeps names the hidden files an upload state needs (a tail).
	keeps(upload string) []string
	// create writes a small hidden file (a spill), durable once synced.
	create(ctx context.Context, name string) (partFile, error)
	read(ctx context.Context, name string) ([]byte, error)
	touch(ctx context.Context, name string) error
	remove(ctx context.Context, name string) error
	sync() error
	walk(ctx context.Context, keep func(name string) bool) ([]string, error)
}

// partFile is a part, or a spill, being written.
type partFile interface {
	io.Writer
	Sync() error
	Close() error
}

// store holds the files of a directory sink: the part files, in progress
// under hidden names and published under their final ones, the spills of
// rows a part holds in memory, and the success files. Every name is
// relative to the sink's path and uses /. The directory sink does all its
// file operations through it, so that another store (object storage)
// can take its place: a part is written as one stream, synced, and
// published whole under its final name, never seen half written there.
type diskStore struct {
	root string
	// dirs are directories with new entries that sync has not made
	// durable yet.
	dirs map[string]bool
}

func newDiskStore(root string) *diskStore { return &diskStore{root: root, dirs: map[string]bool{}} }

func (s *diskStore) abs(name string) string { return filepath.Join(s.root, filepath.FromSlash(name)) }

func (s *diskStore) createPart(ctx context.Context, name string) (partFile, error) {
	return s.createFile(name)
}

func (s *diskStore) create(ctx context.Context, name string) (partFile, error) {
	return s.createFile(name)
}

// checkpoint: the sink synced the file, and its length is the state.
func (s *diskStore) checkpoint(ctx context.Context, f partFile) (string, error) { return "", nil }

// finish syncs and closes the complete part.
func (s *diskStore) finish(ctx context.Context, f partFile) (string, error) {
	return "", errors.Join(f.Sync(), f.Close())
}

func (s *diskStore) keeps(string) []string { return nil }

func (s *diskStore) read(ctx context.Context, name string) ([]byte, error) {
	return os.ReadFile(s.abs(name))
}

// createFile makes a new file name, its directories too, and opens it for
// writing; it replaces a file of that name (one an earlier life left).
func (s *diskStore) createFile(name string) (*os.File, error) {
	p := s.abs(name)
	if err := s.mkdirs(filepath.Dir(p)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	s.dirs[filepath.Dir(p)] = true
	return f, nil
}

// mkdirs creates dir and its missing parents, noting each parent that
// gets a new entry.
func (s *diskStore) mkdirs(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := s.mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	s.dirs[filepath.Dir(dir)] = true
	return nil
}

// resume opens the in-progress file name for writing at size, cutting
// away what a crashed life wrote after it.
func (s *diskStore) resumePart(ctx context.Context, name string, size int64, upload string) (partFile, error) {
	f, err := os.OpenFile(s.abs(name), os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the in-progress file %s that the checkpoint names is gone: the part cannot be completed; to start afresh, remove the output and reset the pipeline's state (etld state reset)", s.abs(name))
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() < size {
		err = fmt.Errorf("the in-progress file %s holds %d bytes, the checkpoint counted %d", s.abs(name), st.Size(), size)
	}
	if err == nil {
		err = cutBack(f, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// publish renames the in-progress file from to its final name to. It is
// idempotent: a part already renamed (an earlier commit of the same
// checkpoint) is left as it is.
func (s *diskStore) publish(ctx context.Context, from, to, upload string) error {
	err := os.Rename(s.abs(from), s.abs(to))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(s.abs(to)); serr == nil {
			return nil
		}
		return fmt.Errorf("the in-progress file %s that the checkpoint names is gone, and so is %s: the part is lost; to start afresh, remove the output and reset the pipeline's state (etld state reset)", s.abs(from), s.abs(to))
	}
	if err != nil {
		return err
	}
	s.dirs[filepath.Dir(s.abs(to))] = true
	return nil
}

// touch writes the empty file name (a success file), durably.
func (s *diskStore) touch(ctx context.Context, name string) error {
	f, err := s.createFile(name)
	if err != nil {
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	return s.sync()
}

// remove deletes name; a file already gone is no error.
func (s *diskStore) remove(ctx context.Context, name string) error {
	if err := os.Remove(s.abs(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// sync makes the new entries durable.
func (s *diskStore) sync() error {
	for dir := range s.dirs {
		if err := durable.SyncDir(dir); err != nil {
			return err
		}
		delete(s.dirs, dir)
	}
	return nil
}

// walk lists every file under the root whose name keep accepts, in
// Hive partition directories (name=value) and the root itself.
func (s *diskStore) walk(ctx context.Context, keep func(name string) bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == s.root {
				return filepath.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(s.root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && !strings.Contains(d.Name(), "=") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(rel) {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}
