package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// partRef names a part: its partition directory ("" without partitions,
// relative to the sink's path) and its number.
type partRef struct {
	Dir string `json:"dir,omitempty"`
	Num int64  `json:"num"`
	// Upload is what object storage needs to publish or resume the part
	// (its multipart upload); empty on disk.
	Upload string `json:"upload,omitempty"`
}

func (r partRef) base(ext string) string { return fmt.Sprintf("part-%05d%s", r.Num, ext) }

func (r partRef) final(ext string) string { return path.Join(r.Dir, r.base(ext)) }

func (r partRef) inProgress(ext string) string {
	return path.Join(r.Dir, "."+r.base(ext)+partSuffix)
}

func (r partRef) spill(ext string, k int) string {
	return path.Join(r.Dir, fmt.Sprintf(".%s.spill-%d", r.base(ext), k))
}

// spillRef is a spill file: Rows rows, of which the first Skip are no
// longer held.
type spillRef struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
	Skip int    `json:"skip,omitempty"`
}

// openRef is an open part in a checkpoint: the length of its
// in-progress file, what its writer needs to go on and the spills of the
// rows it held.
type openRef struct {
	partRef
	Size   int64      `json:"size"`
	Writer []byte     `json:"writer"`
	Spills []spillRef `json:"spills,omitempty"`
	Opened int64      `json:"opened"`
}

// partitionRef is a partition not yet committed and the time that
// decides when it is complete (µs).
type partitionRef struct {
	Dir  string `json:"dir"`
	Time int64  `json:"time"`
}

// dirState is what Snapshot returns and Commit and Restore take: JSON,
// so that a person can read a checkpoint.
type dirState struct {
	V    int    `json:"v"`
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Seq numbers the next part.
	Seq        int64          `json:"seq"`
	Watermark  int64          `json:"watermark"`
	Finished   bool           `json:"finished,omitempty"`
	Pending    []partRef      `json:"pending,omitempty"`
	Open       []openRef      `json:"open,omitempty"`
	Partitions []partitionRef `json:"partitions,omitempty"`
	// Drop lists the spills no part needs any more, deleted by the
	// commit: an earlier checkpoint, the one a crash before this one is
	// stored restores, may still need them.
	Drop []string `json:"drop,omitempty"`
}

const dirStateVersion = 1

// Snapshot completes the parts a checkpoint rolls (an old part, one of a
// complete partition, every part once the input ended), makes the open
// ones durable, spilling the rows their writers hold, and returns the
// state a Commit publishes and a Restore resumes.
func (s *DirSink) Snapshot(ctx context.Context) ([]byte, error) {
	if !s.started || s.closed {
		return nil, s.errorf("snapshot before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.flush(); err != nil {
		return nil, err
	}
	now := s.now()
	for _, dir := range slices.Sorted(maps.Keys(s.open)) {
		p := s.open[dir]
		old := s.rollEvery > 0 && now.Sub(p.opened) >= s.rollEvery
		if old || s.finished || s.complete(dir, s.wm, now) {
			if err := s.closePart(ctx, p); err != nil {
				return nil, err
			}
		}
	}
	st := s.state()
	for _, dir := range slices.Sorted(maps.Keys(s.open)) {
		p := s.open[dir]
		w, length, err := p.w.Checkpoint()
		if err != nil {
			return nil, s.errorf("%s: %w", p.ref.inProgress(s.ext), err)
		}
		if s.keep {
			if err := s.spill(ctx, p); err != nil {
				return nil, err
			}
		}
		upload, err := s.st.checkpoint(ctx, p.f)
		if err != nil {
			return nil, s.errorf("%s: %w", p.ref.inProgress(s.ext), err)
		}
		keeps := s.st.keeps(upload)
		for _, k := range p.keeps {
			if !slices.Contains(keeps, k) {
				s.drop = append(s.drop, k)
				st.Drop = append(st.Drop, k)
			}
		}
		p.keeps = keeps
		ref := p.ref
		ref.Upload = upload
		st.Open = append(st.Open, openRef{partRef: ref, Size: length, Writer: w, Spills: slices.Clone(p.spills), Opened: p.opened.UnixMilli()})
	}
	if err := s.st.sync(); err != nil {
		return nil, err
	}
	out, err := json.Marshal(st)
	if err != nil {
		return nil, s.errorf("encode state: %w", err)
	}
	return out, nil
}

// state is the checkpoint state without the open parts.
func (s *DirSink) state() dirState {
	st := dirState{V: dirStateVersion, Path: s.path, Dir: true, Seq: s.seq, Watermark: s.wm, Finished: s.finished, Pending: slices.Clone(s.pending), Drop: slices.Clone(s.drop)}
	for _, dir := range slices.Sorted(maps.Keys(s.partitions)) {
		st.Partitions = append(st.Partitions, partitionRef{Dir: dir, Time: s.partitions[dir]})
	}
	return st
}

// complete reports whether partition dir is complete at watermark wm.
func (s *DirSink) complete(dir string, wm int64, now time.Time) bool {
	at, ok := s.partitions[dir]
	return ok && s.part != nil && s.part.due(at, wm, now)
}

// due reports whether a partition of time at is complete.
func (p *partitioner) due(at, wm int64, now time.Time) bool {
	delay := p.delay.Microseconds()
	switch p.trigger {
	case triggerPartitionTime:
		return at <= math.MaxInt64-delay && wm > at+delay
	case triggerProcessTime:
		return now.UnixMicro() > at+delay
	}
	return false
}

// spill writes the rows p's writer holds that no spill has yet into a
// new spill file, and forgets the spills whose rows it no longer holds.
func (s *DirSink) spill(ctx context.Context, p *openPart) error {
	excess := len(p.recent) - p.w.Held()
	for _, sp := range p.spills {
		excess += sp.Rows - sp.Skip
	}
	if excess < 0 {
		return s.errorf("%s: the writer holds %d rows, more than the sink kept", p.ref.inProgress(s.ext), p.w.Held())
	}
	for len(p.spills) > 0 && excess >= p.spills[0].Rows-p.spills[0].Skip {
		excess -= p.spills[0].Rows - p.spills[0].Skip
		s.drop = append(s.drop, p.spills[0].Name)
		p.spills = p.spills[1:]
	}
	if len(p.spills) > 0 {
		p.spills[0].Skip += excess
		excess = 0
	}
	p.recent = p.recent[excess:]
	if len(p.recent) == 0 {
		return nil
	}
	name := p.ref.spill(s.ext, p.spillSeq)
	p.spillSeq++
	f, err := s.st.create(ctx, name)
	if err != nil {
		return err
	}
	err = func() error {
		w, err := s.enc.Create(f)
		if err != nil {
			return err
		}
		for _, r := range p.recent {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return errors.Join(w.Close(), f.Sync())
	}()
	if err = errors.Join(err, f.Close()); err != nil {
		return s.errorf("%s: %w", name, err)
	}
	p.spills = append(p.spills, spillRef{Name: name, Rows: len(p.recent)})
	p.recent = nil
	return nil
}

// Commit publishes the parts st completed and writes the success files
// of the partitions complete at its watermark. It is idempotent.
func (s *DirSink) Commit(ctx context.Context, data []byte) error {
	if !s.started || s.closed {
		return s.errorf("commit before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := s.decodeState(data)
	if err != nil {
		return s.errorf("commit: %w", err)
	}
	return s.commit(ctx, st)
}

func (s *DirSink) commit(ctx context.Context, st dirState) error {
	for _, ref := range st.Pending {
		if err := s.st.publish(ctx, ref.inProgress(s.ext), ref.final(s.ext), ref.Upload); err != nil {
			return err
		}
	}
	if err := s.st.sync(); err != nil {
		return err
	}
	s.pending = slices.DeleteFunc(s.pending, func(r partRef) bool { return slices.Contains(st.Pending, r) })
	for _, name := range st.Drop {
		if err := s.st.remove(ctx, name); err != nil {
			return err
		}
	}
	s.drop = slices.DeleteFunc(s.drop, func(n string) bool { return slices.Contains(st.Drop, n) })
	if s.part == nil || s.part.trigger == triggerNone {
		return nil
	}
	now := s.now()
	for _, pr := range st.Partitions {
		if !st.Finished && !s.part.due(pr.Time, st.Watermark, now) {
			continue
		}
		if slices.ContainsFunc(st.Open, func(o openRef) bool { return o.Dir == pr.Dir }) {
			continue // rows came after it was complete: once they are published
		}
		if err := s.st.touch(ctx, path.Join(pr.Dir, s.part.success)); err != nil {
			return err
		}
		if at, ok := s.partitions[pr.Dir]; ok && at == pr.Time && s.open[pr.Dir] == nil {
			delete(s.partitions, pr.Dir)
		}
	}
	return nil
}

// Restore makes Open resume from st (see dir.go).
func (s *DirSink) Restore(data []byte) error {
	if s.started || s.closed {
		return s.errorf("restore after open")
	}
	st, err := s.decodeState(data)
	if err != nil {
		return s.errorf("restore: %w", err)
	}
	s.restored = &st
	return nil
}

// recover is Open's part of a Restore: the open parts are cut back to
// the checkpoint and resumed with the rows their spills hold; every
// other in-progress file is deleted. The runtime then commits the
// checkpoint, which publishes its pending parts.
func (s *DirSink) recover(ctx context.Context, st dirState) error {
	s.seq, s.wm, s.finished = st.Seq, st.Watermark, st.Finished
	s.pending = slices.Clone(st.Pending)
	for _, pr := range st.Partitions {
		s.partitions[pr.Dir] = pr.Time
	}
	keep := map[string]bool{}
	for _, ref := range st.Pending {
		keep[ref.inProgress(s.ext)] = true
	}
	for _, ref := range st.Pending {
		for _, k := range s.st.keeps(ref.Upload) {
			keep[k] = true
		}
	}
	for _, o := range st.Open {
		if err := s.resumePart(ctx, o); err != nil {
			return err
		}
		keep[o.inProgress(s.ext)] = true
		for _, sp := range o.Spills {
			keep[sp.Name] = true
		}
		for _, k := range s.st.keeps(o.Upload) {
			keep[k] = true
		}
	}
	return s.removeHidden(ctx, keep)
}

// resumePart opens a part of the checkpoint again where it was.
func (s *DirSink) resumePart(ctx context.Context, o openRef) error {
	f, err := s.st.resumePart(ctx, o.inProgress(s.ext), o.Size, o.Upload)
	if err != nil {
		return err
	}
	w, err := s.enc.Resume(f, o.Writer)
	if err != nil {
		f.Close()
		return s.errorf("%s: %w", o.inProgress(s.ext), err)
	}
	ref := o.partRef
	ref.Upload = ""
	p := &openPart{ref: ref, f: f, w: w, opened: time.UnixMilli(o.Opened), spills: slices.Clone(o.Spills), keeps: s.st.keeps(o.Upload)}
	s.open[o.Dir] = p
	for _, sp := range o.Spills {
		if n, ok := spillNum(sp.Name); ok {
			p.spillSeq = max(p.spillSeq, n+1)
		}
		if err := s.replay(ctx, p, sp); err != nil {
			return err
		}
	}
	return nil
}

// replay gives a resumed part's writer the rows of a spill again.
func (s *DirSink) replay(ctx context.Context, p *openPart, sp spillRef) error {
	data, err := s.st.read(ctx, sp.Name)
	if err != nil {
		return err
	}
	fr, err := s.dec.OpenFile(bytes.NewReader(data), int64(len(data)), s.st.abs(sp.Name))
	if err != nil {
		return err
	}
	n := 0
	for g := range fr.Groups() {
		err := fr.ReadGroup(context.Background(), g, 0, 1024, func(b *row.Batch) error {
			for _, c := range b.Changes {
				if n >= sp.Skip {
					if err := p.w.Write(c.Row); err != nil {
						return err
					}
				}
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if n != sp.Rows {
		return s.errorf("the spill %s holds %d rows, the checkpoint counted %d", s.st.abs(sp.Name), n, sp.Rows)
	}
	return nil
}

var spillName = regexp.MustCompile(`\.spill-(\d+)$`)

func spillNum(name string) (int, bool) {
	m := spillName.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// isHidden reports an in-progress or spill file of a part.
func isHidden(name string) bool { return strings.HasPrefix(path.Base(name), ".part-") }

// removeHidden deletes every in-progress and spill file not in keep.
func (s *DirSink) removeHidden(ctx context.Context, keep map[string]bool) error {
	names, err := s.st.walk(ctx, func(name string) bool { return isHidden(name) && !keep[name] })
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := s.st.remove(ctx, n); err != nil {
			return err
		}
		s.logger.Debug("file sink: removed an in-progress file of an earlier run", "sink", s.name, "file", n)
	}
	return nil
}

// fresh prepares a start without a checkpoint: the output's parts and
// success files are removed, refused or kept (append) as the package doc
// says, and in-progress files of earlier runs deleted.
func (s *DirSink) fresh(ctx context.Context) error {
	partName := regexp.MustCompile(`^part-(\d+)` + regexp.QuoteMeta(s.ext) + `$`)
	success := ""
	if s.part != nil {
		success = s.part.success
	}
	names, err := s.st.walk(ctx, func(name string) bool {
		base := path.Base(name)
		return partName.MatchString(base) || (success != "" && base == success)
	})
	if err != nil {
		return err
	}
	if err := s.removeHidden(ctx, nil); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	if s.append {
		for _, n := range names {
			if m := partName.FindStringSubmatch(path.Base(n)); m != nil {
				if k, err := strconv.ParseInt(m[1], 10, 64); err == nil {
					s.seq = max(s.seq, k+1)
				}
			}
		}
		return nil
	}
	if s.resumable && !s.overwrite {
		return s.errorf("holds %d part or success files (%s, ...) that no checkpoint of this pipeline covers (a renamed pipeline starts with new, empty state), and a run with a state directory does not destroy data it did not write; set overwrite: true on the sink to replace them, append: true to add parts after them, or move them away", len(names), names[0])
	}
	s.logger.Info("file sink: removing the existing part files", "sink", s.name, "path", s.path, "files", len(names), "overwrite", s.overwrite)
	for _, n := range names {
		if err := s.st.remove(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// decodeState checks a state strictly: it names files Open deletes.
func (s *DirSink) decodeState(data []byte) (dirState, error) {
	var st dirState
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return st, fmt.Errorf("state %.64q is not a file sink state: %w", data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return st, fmt.Errorf("state %.64q: data after the state", data)
	}
	switch {
	case st.V != dirStateVersion || !st.Dir:
		return st, fmt.Errorf("the checkpoint was taken writing one file %s, and the sink now writes a directory of part files; to start afresh, reset the pipeline's state (etld state reset)", st.Path)
	case st.Path != s.path:
		return st, fmt.Errorf("the checkpoint was taken writing %s, and the sink now writes %s; to start afresh, reset the pipeline's state (etld state reset)", st.Path, s.path)
	}
	for _, name := range st.Drop {
		if !isHidden(name) || !cleanDir(path.Dir(name)) && path.Dir(name) != "." {
			return st, fmt.Errorf("state %.64q: %q is not a spill of this output", data, name)
		}
	}
	refs := slices.Clone(st.Pending)
	for _, o := range st.Open {
		refs = append(refs, o.partRef)
		for _, sp := range o.Spills {
			if !isHidden(sp.Name) || path.Dir(sp.Name) != path.Dir(o.inProgress(s.ext)) || sp.Skip < 0 || sp.Skip > sp.Rows {
				return st, fmt.Errorf("state %.64q: %q is not a spill of part %d", data, sp.Name, o.Num)
			}
		}
	}
	for _, r := range refs {
		if r.Num < 0 || r.Num >= st.Seq || !cleanDir(r.Dir) {
			return st, fmt.Errorf("state %.64q: part %d in %q is not one of this output", data, r.Num, r.Dir)
		}
	}
	return st, nil
}

// cleanDir reports a partition directory that stays under the output.
func cleanDir(dir string) bool {
	if dir == "" {
		return true
	}
	return path.Clean(dir) == dir && !path.IsAbs(dir) && !strings.HasPrefix(dir, "..") && !strings.Contains(dir, "/../")
}
