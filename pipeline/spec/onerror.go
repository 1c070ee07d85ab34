package spec

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// OnError is a source's bad-record policy, or a sink's policy for the
// rows its target refuses: `on_error: skip`, `on_error: dead-letter`
// with `dead_letter: FILE`, or the mapping
// `on_error: {policy: dead-letter, file: FILE}` or
// `on_error: {policy: dead-letter, sink: NAME}`.
type OnError struct {
	Policy string // fail | skip | dead-letter
	// DeadLetter is the file that dead-letter writes rejected records
	// to, at DeadLetterPos; "" when a sink takes them.
	DeadLetter    string
	DeadLetterPos Pos
	// Sink is the sink of the pipeline that dead-letter hands rejected
	// records to; "" when a file takes them.
	Sink    string
	SinkPos Pos
	Pos     Pos
}

// onError reads the on_error and dead_letter keys of a source or sink.
func (p *parser) onError(f map[string]*yaml.Node, path string) OnError {
	oe := OnError{Policy: "fail"}
	opath := JoinPath(path, "on_error")
	v, ok := f["on_error"]
	policyAt, policyPath := v, opath
	var fileNode *yaml.Node
	if ok {
		oe.Pos = p.pos(v)
		if v.Kind == yaml.MappingNode {
			m := p.fields(v, opath, []string{"policy", "file", "sink"})
			policyAt, policyPath = m["policy"], JoinPath(opath, "policy")
			if policyAt == nil {
				p.errs.Addf(oe.Pos, policyPath, "missing required key (fail, skip or dead-letter)")
				oe.Policy = ""
			}
			if fv, ok := m["file"]; ok {
				oe.DeadLetter, oe.DeadLetterPos, fileNode = p.str(fv, JoinPath(opath, "file")), p.pos(fv), fv
			}
			if sv, ok := m["sink"]; ok {
				oe.Sink, oe.SinkPos = p.str(sv, JoinPath(opath, "sink")), p.pos(sv)
			}
			if fileNode != nil && oe.Sink != "" {
				p.errs.Addf(oe.SinkPos, JoinPath(opath, "sink"), "on_error names a file and a sink: dead letters go to one of them")
			}
		}
	}
	if policyAt != nil {
		oe.Policy = p.str(policyAt, policyPath)
		switch oe.Policy {
		case "fail", "skip", "dead-letter":
		default:
			p.errs.Addf(p.pos(policyAt), policyPath, "unknown policy %q: want fail, skip or dead-letter", oe.Policy)
		}
	}
	if dv, ok := f["dead_letter"]; ok {
		if fileNode != nil || oe.Sink != "" {
			p.errs.Addf(p.pos(dv), JoinPath(path, "dead_letter"), "on_error names where dead letters go already: keep one of them")
		} else {
			oe.DeadLetter, oe.DeadLetterPos = p.str(dv, JoinPath(path, "dead_letter")), p.pos(dv)
		}
	}
	switch {
	case oe.Policy == "dead-letter" && oe.DeadLetter == "" && oe.Sink == "":
		p.errs.Addf(oe.Pos, JoinPath(path, "dead_letter"), "on_error: dead-letter needs `dead_letter: FILE`, the file that receives rejected records, or `on_error: {policy: dead-letter, sink: NAME}`, a sink of the pipeline that does")
	case oe.Policy != "dead-letter" && oe.Policy != "" && (fileNode != nil || oe.Sink != ""):
		p.errs.Addf(oe.Pos, opath, "on_error: %s keeps no record: a file or sink is for dead-letter", oe.Policy)
	}
	return oe
}

// deadLetterSinks checks every on_error that names a sink, and marks the
// sinks so named as taking dead letters: such a sink reads no table (no
// from), and its own refused rows cannot go to a sink (dead letters of
// dead letters could go round in a circle). Every other sink needs a
// from.
func (p *parser) deadLetterSinks(pl *Pipeline) {
	byName := map[string]*Sink{}
	var names []string
	for _, sk := range pl.Sinks {
		byName[strings.ToLower(sk.Name)] = sk
		names = append(names, sk.Name)
	}
	named := func(oe OnError, sinkPath string) {
		if oe.Sink == "" {
			return
		}
		sk := byName[strings.ToLower(oe.Sink)]
		if sk == nil {
			hint := ""
			if c := Closest(oe.Sink, names); c != "" {
				hint = fmt.Sprintf("; did you mean %q?", c)
			}
			p.errs.Addf(oe.SinkPos, sinkPath, "%q is not a sink of this pipeline%s", oe.Sink, hint)
			return
		}
		sk.DeadLetters = true
	}
	for _, s := range pl.Sources {
		named(s.OnError, JoinPath(s.Path, "on_error.sink"))
	}
	for _, sk := range pl.Sinks {
		named(sk.OnError, JoinPath(sk.Path, "on_error.sink"))
	}
	named(pl.LateRows, "late_rows.sink")
	for _, sk := range pl.Sinks {
		if sk.DeadLetters && sk.From != "" {
			p.errs.Addf(sk.FromPos, sk.Path+".from", "sink %q takes dead letters (an on_error names it), not a table: remove from, or give it a sink of its own", sk.Name)
		}
		if sk.DeadLetters && sk.OnError.Sink != "" {
			p.errs.Addf(sk.OnError.SinkPos, sk.Path+".on_error.sink", "sink %q takes dead letters: the rows its target refuses cannot go to a sink too; give on_error a file", sk.Name)
		}
		if !sk.DeadLetters && sk.From == "" {
			p.errs.Addf(sk.Pos, sk.Path+".from", "missing required key (the source or transform the sink writes; a sink without one takes dead letters and must be named by an on_error)")
		}
	}
}
