package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/spec"
	"gopkg.in/yaml.v3"
)

// A pipeline that reads a file it writes destroys its input or feeds
// itself: a file sink opening the file a source reads truncates it
// before it is read, and a followed glob that matches the sink's output
// (or a dead-letter file) reads every row written again, without end.
// Both are refused when the pipeline is validated.

// writtenFile is a file the pipeline writes, as its file names it.
type writtenFile struct {
	name string
	// output: the sink's output, which it truncates when it opens;
	// otherwise a file written beside it or a dead-letter file.
	output bool
	pos    spec.Pos
	path   string // the field path of the option naming it
	what   string // "sink \"out\" writes out.csv"
}

// checkFileLoops refuses a pipeline in which a source reads a file that
// a sink or a dead_letter writes.
func (b *builder) checkFileLoops() {
	written := b.writtenFiles()
	if len(written) == 0 {
		return
	}
	for _, src := range b.plan.Sources {
		fr, ok := src.Conn.(connector.FileReader)
		if !ok {
			continue
		}
		patterns, follow := fr.ReadFiles()
		reported := map[string]bool{} // the options already reported for this source
		for _, w := range written {
			for _, p := range patterns {
				if reported[w.path] || !matchesFile(p, w.name) {
					continue
				}
				reported[w.path] = true
				verb, why := "reads", "the pipeline would read its own output"
				switch {
				case follow:
					verb, why = "follows", "everything written would be read again, without end"
				case w.output && !isGlob(p):
					why = "the sink truncates the file when it opens, before it is read"
				}
				b.errs.Addf(w.pos, w.path, "%s, which source %q %s (path %s at %s): %s; write to a file the source does not read",
					w.what, src.Spec.Name, verb, p, src.Spec.Pos, why)
				break
			}
		}
	}
}

// writtenFiles lists the files the sinks and the dead-letter policies
// write.
func (b *builder) writtenFiles() []writtenFile {
	var out []writtenFile
	deadLetter := func(kind, name, path string, oe spec.OnError) {
		if oe.Policy == "dead-letter" && oe.DeadLetter != "" {
			out = append(out, writtenFile{name: oe.DeadLetter, pos: oe.DeadLetterPos, path: path + ".dead_letter",
				what: fmt.Sprintf("%s %q writes the records it sets aside to %s", kind, name, oe.DeadLetter)})
		}
	}
	for _, s := range b.plan.Spec.Sources {
		deadLetter("source", s.Name, s.Path, s.OnError)
	}
	if lr := b.plan.Spec.LateRows; lr.Policy == "dead-letter" && lr.DeadLetter != "" {
		out = append(out, writtenFile{name: lr.DeadLetter, pos: lr.DeadLetterPos, path: "late_rows.file",
			what: fmt.Sprintf("late_rows writes the late rows to %s", lr.DeadLetter)})
	}
	for _, s := range b.plan.Sinks {
		deadLetter("sink", s.Spec.Name, s.Spec.Path, s.Spec.OnError)
		fw, ok := s.Conn.(connector.FileWriter)
		if !ok {
			continue
		}
		pos := optionAt(s.Spec.Pos, s.Spec.Options, "path")
		for i, f := range fw.WriteFiles() {
			w := writtenFile{name: f, output: i == 0, pos: pos, path: s.Spec.Path + ".path",
				what: fmt.Sprintf("sink %q writes %s", s.Spec.Name, f)}
			if i > 0 {
				w.what = fmt.Sprintf("sink %q writes files beside its output, such as %s", s.Spec.Name, f)
			}
			out = append(out, w)
		}
	}
	return out
}

// optionAt is the position of the value of option key in a connector's
// options, or def when the key is not there.
func optionAt(def spec.Pos, opts *yaml.Node, key string) spec.Pos {
	if m := opts; m != nil {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return spec.At(def.File, m.Content[i+1])
			}
		}
	}
	return def
}

// matchesFile reports whether pattern (a path or a glob) names file, both
// relative to the working directory: compared cleaned and absolute, then
// with symlinks resolved as far as the files exist, and for a glob also
// through the files it matches now.
func matchesFile(pattern, file string) bool {
	pat, err := filepath.Abs(pattern)
	if err != nil {
		return false
	}
	f, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	real := resolve(f)
	if !isGlob(pat) {
		return pat == f || resolve(pat) == real
	}
	if ok, _ := filepath.Match(pat, f); ok {
		return true
	}
	if ok, _ := filepath.Match(resolveGlob(pat), real); ok {
		return true
	}
	matches, _ := filepath.Glob(pat)
	for _, m := range matches {
		if resolve(m) == real {
			return true
		}
	}
	return false
}

func isGlob(pattern string) bool { return strings.ContainsAny(pattern, `*?[\`) }

// resolve resolves the symlinks of the absolute path p as far as its
// directories exist: a file yet to be written resolves through its
// directory, a symlink to it (dangling until then) to its target.
func resolve(p string) string { return resolveDepth(p, 0) }

// maxLinks bounds the symlinks followed, as the kernel's ELOOP does.
const maxLinks = 40

func resolveDepth(p string, links int) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir := filepath.Dir(p)
	if dir == p {
		return p
	}
	dir = resolveDepth(dir, links)
	if target, err := os.Readlink(filepath.Join(dir, filepath.Base(p))); err == nil && links < maxLinks {
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		return resolveDepth(target, links+1)
	}
	return filepath.Join(dir, filepath.Base(p))
}

// resolveGlob resolves the directories of the absolute glob pat up to
// its first component with a wildcard.
func resolveGlob(pat string) string {
	dir := pat
	for isGlob(dir) {
		dir = filepath.Dir(dir)
	}
	rest, err := filepath.Rel(dir, pat)
	if err != nil {
		return pat
	}
	return filepath.Join(resolve(dir), rest)
}
