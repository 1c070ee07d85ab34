package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/row"
)

// The tests section: unit tests that `etld test` runs with the pipeline's
// sources and sinks replaced by in-memory ones (pipeline/pipetest). This
// file reads their shape; whether a source, sink or column a test names
// exists is checked against the plan, by pipetest, at these positions.
//
//	tests:
//	  - name: two readings of one sensor
//	    inputs:
//	      sensor:                      # a source's name
//	        rows:                      # or lines: (raw records), or file:
//	          - {id: s1, ts: 1000, temperature: 20.5}
//	    expect:
//	      console:                     # a sink's name
//	        changes:                   # or final: (the folded table)
//	          - +I: {id: s1, readings: 1, max_temp: 20.5}
//	        ordered: false             # compare as a multiset
//	    dead_letters:
//	      sensor:                      # a source with on_error: dead-letter
//	        - "s1,x,20"                # a record it set aside
//	        - {record: "s2,1,y", error: DOUBLE}  # and a part of the reason

// Test is one unit test of a pipeline.
type Test struct {
	Name        string
	Inputs      []*TestInput
	Expect      []*TestExpect
	DeadLetters []*TestDeadLetters
	Pos         Pos
	Path        string
}

// TestInput is what one source reads in a test: rows, raw records
// decoded by the source's format (lines), or a file of such records.
// Exactly one of the three is set.
type TestInput struct {
	Source string
	Rows   []*TestRow
	Lines  []TestLine
	// HasLines tells `lines: []` (no records) from no lines key.
	HasLines bool
	// File is the records file, relative paths resolved against the
	// directory of the file the test is in.
	File    string
	FilePos Pos
	Pos     Pos
	Path    string
}

// TestLine is one raw record.
type TestLine struct {
	Text string
	Pos  Pos
}

// TestRow is a row with its kind: a mapping of column to value (+I), or
// a one-key mapping from a kind to such a mapping (`- -U: {id: 1}`).
type TestRow struct {
	Kind   row.Kind
	Values []TestValue // in the order written
	Pos    Pos
	Path   string
}

// TestValue is one column's value as written; Null for null or ~.
type TestValue struct {
	Column string
	Text   string
	Null   bool
	// Pos is the value's position, KeyPos the column name's.
	Pos, KeyPos Pos
	Path        string
}

// TestExpect is what one sink must have received: its changes in order
// (or as a multiset, Ordered false), and/or its final table, the changes
// folded by the sink's key (upsert) or as a multiset of rows.
type TestExpect struct {
	Sink                 string
	Changes              []*TestRow
	Final                []*TestRow
	HasChanges, HasFinal bool
	Ordered              bool
	Pos                  Pos
	Path                 string
}

// TestDeadLetters is every record a source's on_error: dead-letter must
// have set aside in a test, in any order.
type TestDeadLetters struct {
	Source  string
	Records []TestDeadLetter
	Pos     Pos
	Path    string
}

// TestDeadLetter is one record set aside: the record as the dead-letter
// file holds it and, when Error is not empty, a part of the reason.
type TestDeadLetter struct {
	Record, Error string
	Pos           Pos
	Path          string
}

// TestFile returns the file beside a pipeline file that may hold its
// tests: NAME_test.yaml beside NAME.yaml.
func TestFile(pipelineFile string) string {
	ext := filepath.Ext(pipelineFile)
	return strings.TrimSuffix(pipelineFile, ext) + "_test" + ext
}

// IsTestFile reports whether name is a tests file (NAME_test.yaml), not
// a pipeline: directory listings of pipelines leave such files out.
func IsTestFile(name string) bool {
	ext := filepath.Ext(name)
	return (ext == ".yaml" || ext == ".yml") && strings.HasSuffix(strings.TrimSuffix(name, ext), "_test")
}

// ParseTests reads a tests file: a mapping with the one key tests, as
// the section of a pipeline file. lookup resolves ${VAR}.
func ParseTests(file string, data []byte, lookup func(string) (string, bool)) ([]*Test, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, List{Errorf(Pos{File: file, Line: 1, Col: 1}, "", "empty tests file: want a mapping with the key tests")}
	}
	p := &parser{file: file, lines: strings.Split(string(data), "\n"), lookup: lookup}
	root := doc.Content[0]
	p.expand(root, "")
	f := p.fields(root, "", []string{"tests"})
	var tests []*Test
	if v, ok := f["tests"]; ok {
		tests = p.tests(v, "tests")
	} else if root.Kind == yaml.MappingNode {
		p.errs.Addf(p.pos(root), "tests", "missing required key: list the tests")
	}
	p.redactErrors()
	return tests, p.errs.Err()
}

// LoadTests reads the tests file at path; see ParseTests.
func LoadTests(path string) ([]*Test, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTests(path, data, os.LookupEnv)
}

func (p *parser) tests(n *yaml.Node, path string) []*Test {
	var out []*Test
	names := map[string]Pos{}
	for i, tn := range p.list(n, path) {
		tpath := IndexPath(path, i)
		t := &Test{Pos: p.pos(tn), Path: tpath}
		f := p.fields(tn, tpath, []string{"name", "inputs", "expect", "dead_letters"})
		if tn.Kind != yaml.MappingNode {
			continue
		}
		t.Name = p.required(f, tn, tpath, "name")
		if prev, dup := names[t.Name]; dup && t.Name != "" {
			p.errs.Addf(p.pos(f["name"]), JoinPath(tpath, "name"), "duplicate test name %q: already used at %s", t.Name, prev)
		}
		names[t.Name] = t.Pos
		if v, ok := f["inputs"]; ok {
			p.eachNamed(v, JoinPath(tpath, "inputs"), func(name string, at Pos, vn *yaml.Node, ipath string) {
				t.Inputs = append(t.Inputs, p.testInput(name, at, vn, ipath))
			})
		}
		if v, ok := f["expect"]; ok {
			p.eachNamed(v, JoinPath(tpath, "expect"), func(name string, at Pos, vn *yaml.Node, epath string) {
				t.Expect = append(t.Expect, p.testExpect(name, at, vn, epath))
			})
		}
		if v, ok := f["dead_letters"]; ok {
			p.eachNamed(v, JoinPath(tpath, "dead_letters"), func(name string, at Pos, vn *yaml.Node, dpath string) {
				t.DeadLetters = append(t.DeadLetters, p.testDeadLetters(name, at, vn, dpath))
			})
		}
		if len(t.Expect) == 0 && len(t.DeadLetters) == 0 {
			p.errs.Addf(t.Pos, JoinPath(tpath, "expect"), "missing required key: a test expects changes or a final table at one sink at least, or dead_letters")
		}
		out = append(out, t)
	}
	return out
}

// eachNamed calls fn for each key of a mapping from names (of sources,
// of sinks) to their settings.
// The element's position is its name's.
func (p *parser) eachNamed(n *yaml.Node, path string, fn func(name string, at Pos, v *yaml.Node, path string)) {
	f := p.fields(n, path, nil)
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if f[k.Value] != n.Content[i+1] {
			continue // a duplicate, reported
		}
		fn(k.Value, p.pos(k), n.Content[i+1], JoinPath(path, k.Value))
	}
}

func (p *parser) testInput(name string, at Pos, n *yaml.Node, path string) *TestInput {
	in := &TestInput{Source: name, Pos: at, Path: path}
	f := p.fields(n, path, []string{"rows", "lines", "file"})
	if n.Kind != yaml.MappingNode {
		return in
	}
	given := 0
	if v, ok := f["rows"]; ok {
		given++
		in.Rows = p.testRows(v, JoinPath(path, "rows"))
	}
	if v, ok := f["lines"]; ok {
		given++
		in.HasLines = true
		in.Lines = p.testLines(v, JoinPath(path, "lines"))
	}
	if v, ok := f["file"]; ok {
		given++
		in.File, in.FilePos = p.str(v, JoinPath(path, "file")), p.pos(v)
		if in.File != "" && !filepath.IsAbs(in.File) {
			in.File = filepath.Join(filepath.Dir(p.file), in.File)
		}
	}
	if given != 1 {
		p.errs.Addf(in.Pos, path, "give the input of source %q as exactly one of rows, lines or file (found %d)", name, given)
	}
	return in
}

// testLines reads raw records: a list of strings, or a block scalar with
// one record a line.
func (p *parser) testLines(n *yaml.Node, path string) []TestLine {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		var out []TestLine
		text := strings.TrimSuffix(n.Value, "\n")
		if text == "" {
			return nil
		}
		for i, l := range strings.Split(text, "\n") {
			pos := p.pos(n)
			if n.Style == yaml.LiteralStyle {
				// The block's lines start on the line after the `|`.
				pos = Pos{File: p.file, Line: n.Line + 1 + i, Col: 1}
				if pos.Line-1 < len(p.lines) {
					pos.Col = leadingSpaces(p.lines[pos.Line-1], 1<<30) + 1
				}
			}
			out = append(out, TestLine{Text: l, Pos: pos})
		}
		return out
	}
	var out []TestLine
	for i, c := range p.list(n, path) {
		out = append(out, TestLine{Text: p.str(c, IndexPath(path, i)), Pos: p.pos(c)})
	}
	return out
}

func (p *parser) testRows(n *yaml.Node, path string) []*TestRow {
	var out []*TestRow
	for i, c := range p.list(n, path) {
		if r := p.testRow(c, IndexPath(path, i)); r != nil {
			out = append(out, r)
		}
	}
	return out
}

func (p *parser) testRow(n *yaml.Node, path string) *TestRow {
	r := &TestRow{Kind: row.Insert, Pos: p.pos(n), Path: path}
	if n.Kind != yaml.MappingNode {
		p.errs.Addf(p.pos(n), path, "want a row: a mapping of column to value, e.g. {id: 1, name: a}, or a kind and such a mapping, e.g. `-U: {id: 1}`; got %s", kindName(n))
		return nil
	}
	values := n
	if len(n.Content) == 2 {
		if k, ok := row.ParseKind(n.Content[0].Value); ok {
			r.Kind = k
			values = n.Content[1]
			if values.Kind != yaml.MappingNode {
				p.errs.Addf(p.pos(values), JoinPath(path, n.Content[0].Value), "want the row of the %s change: a mapping of column to value, got %s", k, kindName(values))
				return nil
			}
		}
	}
	f := p.fields(values, path, nil)
	for i := 0; i+1 < len(values.Content); i += 2 {
		k, v := values.Content[i], values.Content[i+1]
		if f[k.Value] != v {
			continue // a duplicate, reported
		}
		vpath := JoinPath(path, k.Value)
		if _, isKind := row.ParseKind(k.Value); isKind {
			p.errs.Addf(p.pos(k), vpath, "a row with a kind is a mapping with one key, the kind: `- %s: {id: 1}`", k.Value)
			continue
		}
		tv := TestValue{Column: k.Value, Pos: p.pos(v), KeyPos: p.pos(k), Path: vpath}
		switch {
		case v.Kind != yaml.ScalarNode:
			p.errs.Addf(p.pos(v), vpath, "want a value (a number, a string, true, false or null), got %s", kindName(v))
			continue
		case v.Tag == "!!null":
			tv.Null = true
		default:
			tv.Text = v.Value
		}
		r.Values = append(r.Values, tv)
	}
	return r
}

func (p *parser) testExpect(name string, at Pos, n *yaml.Node, path string) *TestExpect {
	e := &TestExpect{Sink: name, Ordered: true, Pos: at, Path: path}
	f := p.fields(n, path, []string{"changes", "final", "ordered"})
	if n.Kind != yaml.MappingNode {
		return e
	}
	if v, ok := f["changes"]; ok {
		e.HasChanges = true
		e.Changes = p.testRows(v, JoinPath(path, "changes"))
	}
	if v, ok := f["final"]; ok {
		e.HasFinal = true
		e.Final = p.testRows(v, JoinPath(path, "final"))
		for _, r := range e.Final {
			if r.Kind != row.Insert {
				p.errs.Addf(r.Pos, r.Path, "a final table holds rows, not changes: write the row without the kind %s", r.Kind)
			}
		}
	}
	if v, ok := f["ordered"]; ok {
		switch p.str(v, JoinPath(path, "ordered")) {
		case "true":
		case "false":
			e.Ordered = false
		default:
			p.errs.Addf(p.pos(v), JoinPath(path, "ordered"), "want true or false, got %s", describe(v))
		}
	}
	if !e.HasChanges && !e.HasFinal {
		p.errs.Addf(e.Pos, path, "expect changes (the changes sink %q receives, with their kinds) or final (its table at the end), or both", name)
	}
	return e
}

// testDeadLetters reads a list of records: each a string (the record)
// or a mapping with record and error.
func (p *parser) testDeadLetters(name string, at Pos, n *yaml.Node, path string) *TestDeadLetters {
	d := &TestDeadLetters{Source: name, Pos: at, Path: path}
	for i, c := range p.list(n, path) {
		rpath := IndexPath(path, i)
		r := TestDeadLetter{Pos: p.pos(c), Path: rpath}
		if c.Kind == yaml.MappingNode {
			f := p.fields(c, rpath, []string{"record", "error"})
			r.Record = p.required(f, c, rpath, "record")
			r.Error = p.str(f["error"], JoinPath(rpath, "error"))
		} else {
			r.Record = p.str(c, rpath)
		}
		d.Records = append(d.Records, r)
	}
	return d
}

// String renders a test value as written, for messages.
func (v TestValue) String() string {
	if v.Null {
		return "null"
	}
	return fmt.Sprintf("%q", v.Text)
}
