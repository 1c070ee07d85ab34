package spec

import "gopkg.in/yaml.v3"

// lateRows reads the pipeline's late_rows key: what becomes of the rows
// an event-time operator drops because they come behind the watermark.
// `drop` (the default, as Flink does) counts them; the mapping
// `{policy: dead-letter, file: FILE}` or `{policy: dead-letter, sink:
// NAME}` also writes each to that dead-letter output, with its source
// position and the operator that refused it. The result is an OnError
// whose Policy is "drop" or "dead-letter".
func (p *parser) lateRows(v *yaml.Node) OnError {
	const path = "late_rows"
	oe := OnError{Policy: "drop", Pos: p.pos(v)}
	if v.Kind != yaml.MappingNode {
		if s := p.str(v, path); s != "drop" {
			p.errs.Addf(p.pos(v), path, "unknown late_rows %q: want drop, or {policy: dead-letter, file: FILE} or {policy: dead-letter, sink: NAME}", s)
		}
		return oe
	}
	m := p.fields(v, path, []string{"policy", "file", "sink"})
	if pv, ok := m["policy"]; !ok {
		p.errs.Addf(oe.Pos, JoinPath(path, "policy"), "missing required key (drop or dead-letter)")
	} else if oe.Policy = p.str(pv, JoinPath(path, "policy")); oe.Policy != "drop" && oe.Policy != "dead-letter" {
		p.errs.Addf(p.pos(pv), JoinPath(path, "policy"), "unknown policy %q: want drop or dead-letter", oe.Policy)
	}
	if fv, ok := m["file"]; ok {
		oe.DeadLetter, oe.DeadLetterPos = p.str(fv, JoinPath(path, "file")), p.pos(fv)
	}
	if sv, ok := m["sink"]; ok {
		oe.Sink, oe.SinkPos = p.str(sv, JoinPath(path, "sink")), p.pos(sv)
	}
	switch {
	case oe.DeadLetter != "" && oe.Sink != "":
		p.errs.Addf(oe.SinkPos, JoinPath(path, "sink"), "late_rows names a file and a sink: late rows go to one of them")
	case oe.Policy == "dead-letter" && oe.DeadLetter == "" && oe.Sink == "":
		p.errs.Addf(oe.Pos, path, "late_rows: dead-letter needs `file: FILE` or `sink: NAME`, where the late rows go")
	case oe.Policy == "drop" && (oe.DeadLetter != "" || oe.Sink != ""):
		p.errs.Addf(oe.Pos, path, "late_rows: drop keeps no row: a file or sink is for dead-letter")
	}
	return oe
}
