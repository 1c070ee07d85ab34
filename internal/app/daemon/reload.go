package daemon

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/spec"
)

// MaxFileSize is the largest pipeline file the daemon reads. A pipeline
// is a page of YAML; a larger entry (a link to a device, a log written
// into the directory by mistake) would otherwise be read into memory
// whole.
const MaxFileSize = 1 << 20

// entry is one pipeline file of the directory as a reload reads it.
type entry struct {
	file string
	data []byte
	hash [32]byte
	err  error // it cannot be read
}

// scan lists the pipeline files of the directory, in file order. Only a
// directory that cannot be read is an error: an entry that cannot be read
// is listed with its error, and fails alone.
func (s *Supervisor) scan() ([]entry, error) {
	dirents, err := os.ReadDir(s.opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("pipelines directory: %w", err)
	}
	var out []entry
	for _, d := range dirents {
		ext := filepath.Ext(d.Name())
		// NAME_test.yaml holds the unit tests of NAME.yaml (etld test).
		if (ext != ".yaml" && ext != ".yml") || spec.IsTestFile(d.Name()) {
			continue
		}
		path := filepath.Join(s.opt.Dir, d.Name())
		data, err := readPipelineFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			// Removed since ReadDir: simply gone. A symbolic link to
			// nothing is still there, and fails.
			if _, lerr := os.Lstat(path); errors.Is(lerr, fs.ErrNotExist) {
				continue
			}
		}
		e := entry{file: path, data: data, err: err}
		if err == nil {
			e.hash = sha256.Sum256(data)
		}
		out = append(out, e)
	}
	return out, nil
}

// readPipelineFile reads a regular file of at most MaxFileSize bytes,
// through symbolic links (Kubernetes mounts a ConfigMap's files so). It
// opens without blocking and checks the open file again, so that a named
// pipe put in the file's place after the first check cannot hang the
// reload.
func readPipelineFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes, the most a pipeline file may have", path, MaxFileSize)
	}
	return data, nil
}

// regular refuses what is not a regular file of at most MaxFileSize.
func regular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		if fi.Size() > MaxFileSize {
			return fmt.Errorf("%s: larger than %d bytes (%d), the most a pipeline file may have", path, MaxFileSize, fi.Size())
		}
		return nil
	}
	kind := "a " + m.Type().String()
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		kind = "a device"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("%s: not a regular file (%s): a pipeline file must be one, or a symbolic link to one", path, kind)
}

// ReloadResult says what a Reload did.
type ReloadResult struct {
	Started, Stopped, Restarted, Unchanged, Failed []string // file paths
	// Backfilling are the files whose edit is backfilled while their
	// running version serves; it is replaced when the backfill is done.
	Backfilling []string
}

// change is a file whose content the supervisor has not run, or whose
// last outcome depended on more than its content.
type change struct {
	entry
	old *unit
	p   *pipeline.Pipeline // nil when err is set
	err error
	// recheck: err came from the file system or from another file (a
	// name clash), so the next reload tries again, changed or not.
	recheck bool
	// bf is the backfill that runs beside old before p replaces it.
	bf *pipeline.BackfillJob
}

var errShuttingDown = errors.New("daemon is shutting down")

// Reload makes the running set match the directory. It returns an error
// only when the directory cannot be read (then nothing changes); a file
// that does not load, or cannot be read, is reported in its Status and in
// the result, and the others load.
func (s *Supervisor) Reload() (ReloadResult, error) {
	s.reload.Lock()
	defer s.reload.Unlock()
	var res ReloadResult
	entries, err := s.scan()
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return res, errShuttingDown
	}
	current := maps.Clone(s.units)
	s.mu.Unlock()

	s.stopRemoved(current, entries, &res)
	var changes []*change
	for _, e := range entries {
		old := current[e.file]
		if h, ok := old.pendingHash(); ok && e.err == nil && h == e.hash {
			// The edit being backfilled: it takes over when done.
			res.Backfilling = append(res.Backfilling, e.file)
			continue
		}
		if old != nil {
			// A newer content (or the running one again) replaces the
			// edit being backfilled, if any.
			old.cancelBackfill()
		}
		if e.err == nil && old != nil && old.hash == e.hash && !old.recheck {
			// The file holds what runs again: an edit refused before was
			// reverted, and there is nothing left to fix.
			if old.setReloadError("", nil, nil) {
				s.log.Info("pipeline file is back to the running version: its refused edit is forgotten", "pipeline", old.name, "file", e.file)
			}
			res.Unchanged = append(res.Unchanged, e.file)
			continue
		}
		c := &change{entry: e, old: old, err: e.err, recheck: e.err != nil}
		if c.err == nil {
			s.opt.Secrets.AddFrom(e.data, s.opt.Lookup)
			c.p, c.err = s.load(e.file, e.data)
		}
		changes = append(changes, c)
	}
	s.claimNames(current, changes)
	s.checkState(changes)
	return res, s.apply(changes, &res)
}

// checkState refuses each edit of a running pipeline whose saved state
// does not fit the new version (an operator changed, pipeline.CheckState),
// or, for a file with `backfill: true`, whose backfill would be refused
// (startBackfill, which also readies the backfill that runs beside the
// old version), before apply stops the old one: the old version keeps
// running and the new one shows as refused with the reason, as a file
// that does not load does, rather than failing, or retrying, over the
// same state.
func (s *Supervisor) checkState(changes []*change) {
	if s.opt.StateDir == "" {
		return
	}
	for _, c := range changes {
		if c.p == nil || c.old == nil || !c.old.live() || c.old.name != c.p.Name() {
			continue
		}
		if c.p.Spec.Backfill {
			// The edit may change operators: a backfill rebuilds them,
			// beside the running version when it can (backfill.go).
			s.startBackfill(c)
			continue
		}
		if err := c.p.CheckState(s.opt.StateDir); err != nil {
			c.p.Plan.Close()
			c.p, c.err = nil, err
		}
	}
}

// stopRemoved stops the pipelines whose files are gone, first: their
// names become free for the others.
func (s *Supervisor) stopRemoved(current map[string]*unit, entries []entry, res *ReloadResult) {
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		present[e.file] = true
	}
	for _, file := range slices.Sorted(maps.Keys(current)) {
		if present[file] {
			continue
		}
		u := current[file]
		s.log.Info("pipeline file removed: stopping", "pipeline", u.name, "file", file)
		u.cancelBackfill()
		u.stopWithin(s.opt.StopTimeout)
		s.mu.Lock()
		delete(s.units, file)
		s.mu.Unlock()
		delete(current, file)
		res.Stopped = append(res.Stopped, file)
	}
}

// claimNames refuses each loaded file whose pipeline name another file
// keeps, since a name names checkpoint state. A name stays with the file
// whose version runs under it: unchanged, changed under the same name, or
// refused with its old version going on. A name no file runs under goes
// to the file last recorded with it in the state directory (so that after
// a restart of etld a copy that sorts first does not take over the
// original's checkpoints), else to the first file in order.
func (s *Supervisor) claimNames(current map[string]*unit, changes []*change) {
	changed := make(map[string]*change, len(changes))
	for _, c := range changes {
		changed[c.file] = c
	}
	owner := map[string]string{}
	held := map[string]bool{}
	for file, u := range current {
		c := changed[file]
		keeps := c == nil || (c.p == nil && u.live()) || (c.p != nil && c.p.Name() == u.name)
		if u.name != "" && keeps {
			owner[u.name], held[u.name] = file, true
		}
	}
	recorded := s.recordedFiles()
	for _, c := range changes {
		if c.p == nil || held[c.p.Name()] {
			continue
		}
		if _, ok := owner[c.p.Name()]; !ok || recorded[c.p.Name()] == c.file {
			owner[c.p.Name()] = c.file
		}
	}
	for _, c := range changes {
		if c.p == nil || owner[c.p.Name()] == c.file {
			continue
		}
		name, pos := c.p.Name(), c.p.Spec.NamePos
		c.p.Plan.Close()
		c.p, c.recheck = nil, true
		c.err = spec.Errorf(pos, "name", "pipeline name %q is already used by %s; names must be unique (they name checkpoint state)", name, owner[name])
	}
}

// apply stops the versions that changes replace, all before any new one
// starts: a new version never runs beside its old one, nor beside the
// old version of a file that gives its name up in this reload.
func (s *Supervisor) apply(changes []*change, res *ReloadResult) error {
	for _, c := range changes {
		if c.old != nil && c.p != nil && c.bf == nil {
			s.log.Info("pipeline file changed: restarting", "pipeline", c.p.Name(), "file", c.file)
			c.old.stopForReplace(s.opt.StopTimeout)
		}
	}
	var started []*unit
	defer func() { s.recordFiles(started) }()
	for i, c := range changes {
		if c.err != nil {
			res.Failed = append(res.Failed, c.file)
			s.refuse(c)
			continue
		}
		if c.bf != nil {
			res.Backfilling = append(res.Backfilling, c.file)
			c.old.setReloadError("", nil, nil)
			s.backfillInBackground(c.old, c)
			continue
		}
		if c.old != nil {
			res.Restarted = append(res.Restarted, c.file)
		} else {
			s.log.Info("starting pipeline", "pipeline", c.p.Name(), "file", c.file)
			res.Started = append(res.Started, c.file)
		}
		u := newUnit(s, c.file, c.data, c.hash, c.p)
		if !s.put(c.file, u) {
			// Shutdown began while this reload ran: start nothing more.
			for _, rest := range changes[i:] {
				if rest.p != nil {
					rest.p.Plan.Close()
				}
			}
			return errShuttingDown
		}
		started = append(started, u)
		go u.run(c.p)
	}
	return nil
}

// refuse shows why a changed file did not load: beside its old version,
// which keeps running (a typo must not stop a working pipeline), or as a
// failed file.
func (s *Supervisor) refuse(c *change) {
	msg := s.opt.Secrets.Redact(c.err.Error())
	if c.old != nil && c.old.live() {
		logError(s.log, "changed pipeline file does not load; the previous version keeps running", c.err, "pipeline", c.old.name, "file", c.file, "error", msg)
		c.old.setReloadError(msg, c.data, c.err)
		return
	}
	if c.old != nil {
		c.old.stopWithin(s.opt.StopTimeout)
	}
	logError(s.log, "pipeline file does not load", c.err, "file", c.file, "error", msg)
	s.put(c.file, brokenUnit(c, msg))
}
