package daemon

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// What the web console shows beyond Status: a file with its errors at
// their lines, and a sample of the changes reaching the sinks.

// FileError is one validation error of a pipeline file, at its line.
type FileError struct {
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// FileView is what /pipelines/{name}/file shows: the file's text as it is
// on disk, which holds ${VAR} references and never their values (and is
// passed through the secrets redactor all the same, for a value written
// out literally elsewhere), with the errors that kept it from loading.
type FileView struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	State State  `json:"state"`
	// Refused is set when the text is a newer version of a running
	// pipeline's file that did not load (the old version keeps running).
	Refused bool        `json:"refused,omitempty"`
	Text    string      `json:"text"`
	Errors  []FileError `json:"errors"`
}

// fileErrors lists err's errors with their positions, redacted. An error
// that names no position gets line 0: the page shows it above the file.
func fileErrors(err error, redact func(string) string) []FileError {
	if err == nil {
		return nil
	}
	var list spec.List
	list.Add(err)
	out := make([]FileError, 0, len(list))
	for _, e := range list {
		out = append(out, FileError{Line: e.Pos.Line, Col: e.Pos.Col, Path: e.Path, Message: redact(e.Msg)})
	}
	return out
}

// File returns the file view of the pipeline called name.
func (s *Supervisor) File(name string) (FileView, bool) {
	u := s.byName(name)
	if u == nil {
		return FileView{}, false
	}
	red := s.opt.Secrets.Redact
	u.mu.Lock()
	defer u.mu.Unlock()
	v := FileView{Name: name, File: red(u.file), State: u.state, Text: red(string(u.data)), Errors: []FileError{}}
	switch {
	case u.refused != nil:
		v.Refused = true
		v.Text = red(string(u.refused.data))
		v.Errors = fileErrors(u.refused.err, red)
	case u.loadErr != nil:
		v.Errors = fileErrors(u.loadErr, red)
	}
	return v, true
}

// Plan returns the plan of the pipeline called name as plan.Describe
// gives it, redacted (a SQL literal may have come from a ${VAR}); false
// when no pipeline has that name or its file did not load.
func (s *Supervisor) Plan(name string) (plan.Description, bool) {
	u := s.byName(name)
	if u == nil || u.plan == nil {
		return plan.Description{}, false
	}
	return u.plan.Redacted(s.opt.Secrets.Redact), true
}

// refusedFile is a running pipeline's newer file content that did not
// load.
type refusedFile struct {
	data []byte
	err  error
}

// byName returns the unit whose name, as Status shows it, is name (the
// first file in order when two files claim one name), or nil. Only the
// name is compared as shown, since that is what a client has: the units
// are found by their files as they are, for a piece of a secret in the
// pipelines directory's path is hidden in what Status shows.
func (s *Supervisor) byName(name string) *unit {
	red := s.opt.Secrets.Redactor()
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *unit
	for file, u := range s.units {
		if red.String(u.shownName()) == name && (found == nil || file < found.file) {
			found = u
		}
	}
	return found
}

// SampleCapacity is how many sampled changes a pipeline keeps; older ones
// make room for newer ones.
const SampleCapacity = 200

// samplePerBatch is how many changes of one batch the sample takes: the
// first few, so that a -U and its +U stay together, without copying a
// whole batch on the sink's hot path.
const samplePerBatch = 4

// SampledChange is one change that reached a sink.
type SampledChange struct {
	At   time.Time `json:"t"`
	Sink string    `json:"sink"`
	Kind string    `json:"kind"` // +I, -U, +U, -D
	Row  string    `json:"row"`  // as the print sink writes it: +I[a, b]
}

// SampleView is what /pipelines/{name}/sample shows.
type SampleView struct {
	Name     string `json:"name"`
	Enabled  bool   `json:"enabled"`
	Capacity int    `json:"capacity"`
	// Seen counts the changes sampled since the view was turned on.
	Seen    int64           `json:"seen"`
	Changes []SampledChange `json:"changes"`
}

// sampler keeps the newest changes that reached a pipeline's sinks while
// it is on. Off (the default) it costs the sinks one atomic load a batch.
type sampler struct {
	on   atomic.Bool
	mu   sync.Mutex
	buf  []SampledChange
	next int
	seen int64
}

// tap is the run's pipeline.RunOptions.Tap.
func (sm *sampler) tap(sink string, b *row.Batch) {
	if !sm.on.Load() {
		return
	}
	now := time.Now().UTC()
	n := min(b.Len(), samplePerBatch)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for _, c := range b.Changes[:n] {
		sc := SampledChange{At: now, Sink: sink, Kind: c.Kind.String(), Row: c.String()}
		if len(sm.buf) < SampleCapacity {
			sm.buf = append(sm.buf, sc)
		} else {
			sm.buf[sm.next] = sc
			sm.next = (sm.next + 1) % SampleCapacity
		}
		sm.seen++
	}
}

// set turns the sample on or off; turning it on starts an empty one.
func (sm *sampler) set(on bool) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if on && !sm.on.Load() {
		sm.buf, sm.next, sm.seen = nil, 0, 0
	}
	sm.on.Store(on)
}

// ErrNoPipeline is returned for a name no pipeline file has.
var ErrNoPipeline = errors.New("no such pipeline")

// ErrNotRunnable is returned when sampling a file that did not load.
var ErrNotRunnable = errors.New("the pipeline's file did not load: nothing runs to sample")

// SetSample turns the sampled live view of a pipeline's sink changes on
// or off.
func (s *Supervisor) SetSample(name string, on bool) error {
	u := s.byName(name)
	if u == nil {
		return ErrNoPipeline
	}
	if u.sample == nil {
		return ErrNotRunnable
	}
	u.sample.set(on)
	return nil
}

// Sample returns the sampled changes of the pipeline called name, oldest
// first, with every value passed through the secrets redactor.
func (s *Supervisor) Sample(name string) (SampleView, bool) {
	u := s.byName(name)
	if u == nil {
		return SampleView{}, false
	}
	v := SampleView{Name: name, Capacity: SampleCapacity, Changes: []SampledChange{}}
	sm := u.sample
	if sm == nil {
		return v, true
	}
	red := s.opt.Secrets.Redactor()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	v.Enabled, v.Seen = sm.on.Load(), sm.seen
	for _, c := range append(append([]SampledChange(nil), sm.buf[sm.next:]...), sm.buf[:sm.next]...) {
		c.Row = red.String(c.Row)
		v.Changes = append(v.Changes, c)
	}
	return v, true
}
