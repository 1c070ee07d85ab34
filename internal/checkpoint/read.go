package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Reading a state directory without running its pipelines (`etld state`):
// nothing here writes, so a running daemon's store can be read beside it;
// a checkpoint that a prune removes while it is read is an error, never a
// wrong answer.

// OpenExisting returns the store of pipeline under stateDir for reading:
// unlike Open it makes no directory, and fails when there is none.
func OpenExisting(stateDir, pipeline string) (*Store, error) {
	if pipeline == "" || strings.ContainsAny(pipeline, `/\`) || pipeline == "." || pipeline == ".." {
		return nil, fmt.Errorf("checkpoint: pipeline name %q cannot name a directory", pipeline)
	}
	dir := filepath.Join(stateDir, pipeline)
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: no state of pipeline %q: %w", pipeline, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("checkpoint: %s is not a directory", dir)
	}
	return &Store{dir: dir, keep: DefaultKeep}, nil
}

// Pipelines lists the pipelines with a store under stateDir that holds a
// checkpoint (a MANIFEST), by name.
func Pipelines(stateDir string) ([]string, error) {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(stateDir, e.Name(), manifestName)); err == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// IDs lists the checkpoints the store keeps, oldest first.
func (s *Store) IDs() ([]int64, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var ids []int64
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, filePrefix) || strings.Contains(n, tmpMarker) {
			continue
		}
		if id, err := strconv.ParseInt(strings.TrimPrefix(n, filePrefix), 10, 64); err == nil && n == fileName(id) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// Read returns checkpoint id, which the store keeps (IDs); Latest is
// the one a run restores.
func (s *Store) Read(id int64) (*Checkpoint, error) {
	cp, err := s.readFile(fileName(id))
	if err != nil {
		return nil, err
	}
	if cp.ID != id {
		return nil, fmt.Errorf("checkpoint: %s holds checkpoint %d", fileName(id), cp.ID)
	}
	return cp, nil
}

// readFile decodes the checkpoint file name.
func (s *Store) readFile(name string) (*Checkpoint, error) {
	path := filepath.Join(s.dir, name)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: no %s in %s (the store keeps the last %d)", name, s.dir, s.keep)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	cp, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return cp, nil
}

// FileSize is the size of checkpoint id's file.
func (s *Store) FileSize(id int64) (int64, error) {
	st, err := os.Stat(filepath.Join(s.dir, fileName(id)))
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return st.Size(), nil
}

// Size is how many bytes of the store's files a component's state takes:
// its part's file, or its bytes in the checkpoint file.
func (s *Store) Size(c *Component) (int64, error) {
	if c.RuntimePart == "" {
		return int64(len(c.Runtime) + len(c.Connector)), nil
	}
	if !strings.HasPrefix(c.RuntimePart, partPrefix) || strings.ContainsAny(c.RuntimePart, `/\`) {
		return 0, fmt.Errorf("checkpoint: %q names no part", c.RuntimePart)
	}
	st, err := os.Stat(filepath.Join(s.dir, c.RuntimePart))
	if err != nil {
		return 0, fmt.Errorf("checkpoint: the checkpoint names %s: %w", c.RuntimePart, err)
	}
	return st.Size() + int64(len(c.Connector)), nil
}
