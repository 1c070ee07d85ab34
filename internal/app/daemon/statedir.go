package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The daemon's own files in the state directory. A pipeline's directory
// there is named after the pipeline, and a pipeline name never begins
// with a dot, so these never meet one.
const (
	lockFile  = ".daemon.lock"
	filesFile = ".pipeline-files.json"
)

// recordedFiles returns, by pipeline name, the file that last started a
// pipeline of that name on this state directory (none without one).
func (s *Supervisor) recordedFiles() map[string]string {
	files := map[string]string{}
	if s.opt.StateDir == "" {
		return files
	}
	data, err := os.ReadFile(filepath.Join(s.opt.StateDir, filesFile))
	if err == nil {
		err = json.Unmarshal(data, &files)
	}
	if err != nil && !os.IsNotExist(err) {
		s.log.Warn("the record of which file runs each pipeline name cannot be read: of two files that claim one, the first in order gets it", "error", err)
	}
	return files
}

// recordFiles records the files of the units started, for recordedFiles.
func (s *Supervisor) recordFiles(started []*unit) {
	if s.opt.StateDir == "" || len(started) == 0 {
		return
	}
	files := s.recordedFiles()
	changed := false
	for _, u := range started {
		changed = changed || files[u.name] != u.file
		files[u.name] = u.file
	}
	if !changed {
		return
	}
	if err := writeFileAtomic(filepath.Join(s.opt.StateDir, filesFile), files); err != nil {
		s.log.Warn("cannot record which file runs each pipeline name", "error", err)
	}
}

// writeFileAtomic writes v as JSON into a temporary file beside path and
// renames it over path, so that a crash leaves the old record or the new.
func writeFileAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
