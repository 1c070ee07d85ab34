package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

const good = `version: 1
name: sensor-stats
execution: batch
checkpoint_interval: 10s
sources:
  - name: sensor
    type: file
    path: ${DATA}/sensor.csv
    schema:
      - id STRING
      - ts BIGINT
      - temperature DECIMAL(5, 2) NOT NULL
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '5' SECOND
    on_error: skip
transforms:
  - name: per_sensor
    sql: |
      SELECT id, COUNT(*) AS n
      FROM sensor GROUP BY id
sinks:
  - name: out
    from: per_sensor
    type: print
    mode: retract
    key: [id]
`

func TestParseGood(t *testing.T) {
	p, err := Parse("p.yaml", []byte(good), env(map[string]string{"DATA": "/data"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "sensor-stats" || p.Execution != "batch" || p.CheckpointInterval != 10*time.Second {
		t.Errorf("pipeline = %+v", p)
	}
	src := p.Sources[0]
	if len(src.Schema) != 4 || src.Schema[2].Type.String() != "DECIMAL(5, 2) NOT NULL" {
		t.Errorf("schema = %+v", src.Schema)
	}
	if c := src.Schema[3]; c.Computed == nil || c.Computed.Text != "TO_TIMESTAMP_LTZ(ts, 3)" || c.Computed.Pos.Line != 13 || c.Computed.Pos.Col != 23 {
		t.Errorf("computed column = %+v", c.Computed)
	}
	if src.OnError.Policy != "skip" || src.Watermark.Text != "event_time - INTERVAL '5' SECOND" {
		t.Errorf("source = %+v", src)
	}
	// The path option keeps its expanded value in the connector's mapping.
	found := false
	for i := 0; i+1 < len(src.Options.Content); i += 2 {
		if src.Options.Content[i].Value == "path" {
			found = src.Options.Content[i+1].Value == "/data/sensor.csv"
		}
	}
	if !found {
		t.Error("${DATA} was not expanded in the source's path")
	}
	// A position on the second line of a block scalar maps into the file.
	sql := p.Transforms[0].SQL
	if pos := sql.FilePos(2, 6); pos.Line != 20 || pos.Col != 12 {
		t.Errorf("SQL 2:6 maps to %v, want p.yaml:20:12", pos)
	}
	if s := p.Sinks[0]; s.Mode != "retract" || len(s.Key) != 1 || s.From != "per_sensor" {
		t.Errorf("sink = %+v", s)
	}
}

func TestParseErrorsAllAtOnceWithPositions(t *testing.T) {
	const bad = `version: 2
name: "bad name!"
sources:
  - name: sensor
    type: file
    schema:
      - id STRING
      - id BIGINT
      - t FLAOT
    on_error: ignore
  - name: sensor
    type: datagen
    path: ${NOPE}
transforms:
  - name: t1
    sqll: SELECT 1
sinks:
  - name: out
    from: per_sensr
    type: print
    mode: sideways
  - type: print
`
	_, err := Parse("bad.yaml", []byte(bad), env(nil))
	var list List
	if !errors.As(err, &list) {
		t.Fatalf("err = %v, want a List", err)
	}
	want := []string{
		"bad.yaml:1:10: version: unsupported version \"2\"",
		"bad.yaml:2:7: name: invalid pipeline name \"bad name!\"",
		"bad.yaml:8:9: sources[0].schema[1]: duplicate column \"id\"",
		"bad.yaml:9:9: sources[0].schema[2]: column \"t\": unknown type \"FLAOT\"",
		"bad.yaml:10:15: sources[0].on_error: unknown policy \"ignore\"",
		"bad.yaml:11:5: sources[1].name: duplicate name \"sensor\": already used at bad.yaml:4:5",
		"bad.yaml:13:11: sources[1].path: environment variable NOPE is not set",
		"bad.yaml:15:5: transforms[0].sql: missing required key",
		"bad.yaml:16:5: transforms[0].sqll: unknown key; did you mean \"sql\"?",
		"bad.yaml:19:11: sinks[0].from: \"per_sensr\" is not a source or transform of this pipeline",
		"bad.yaml:21:11: sinks[0].mode: unknown mode \"sideways\"",
		"bad.yaml:22:5: sinks[1].name: missing required key",
		"bad.yaml:22:5: sinks[1].from: missing required key",
	}
	text := err.Error()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing error %q in:\n%s", w, text)
		}
	}
	for _, e := range list {
		if !e.Pos.IsValid() {
			t.Errorf("error without a line: %v", e)
		}
	}
}

func TestParseRejectsNonPipelines(t *testing.T) {
	for _, src := range []string{"", "- a\n- b\n", "version: 1\n", "key: [unclosed\n", "\t\tbad: indent"} {
		_, err := Parse("x.yaml", []byte(src), env(nil))
		if err == nil {
			t.Errorf("%q: no error", src)
			continue
		}
		if !strings.HasPrefix(err.Error(), "x.yaml:") {
			t.Errorf("%q: error without position: %v", src, err)
		}
	}
}

func TestExpandEscapes(t *testing.T) {
	src := "version: 1\nname: p\nsources: [{name: s, type: datagen, password: \"$${NOT_A_VAR}${PW}\"}]\nsinks: [{name: o, from: s, type: print}]\n"
	p, err := Parse("x.yaml", []byte(src), env(map[string]string{"PW": "hunter2"}))
	if err != nil {
		t.Fatal(err)
	}
	n := p.Sources[0].Options
	if got := n.Content[5].Value; got != "${NOT_A_VAR}hunter2" {
		t.Errorf("expanded to %q", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("version: 1\nname: x\nsources: [{name: a, type: datagen}]\nsinks: [{name: b, from: a, type: print}]\n"))
	f.Add([]byte("version: 1\nsources:\n  - schema: [\"a AS\", \"b DECIMAL(99,1)\"]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("version: 1\nname: x\nsources: [{name: a, type: datagen, schema: [\"b AS \\\"c\\\" +\\\n  d\"]}]\ntransforms:\n  - name: t\n    sql: >\n      SELECT\n\n        x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data, env(map[string]string{"A": "1"}))
		if p != nil {
			// Mapping any place in any SQL back to the file never panics.
			var sqls []*SQL
			for _, tr := range p.Transforms {
				sqls = append(sqls, tr.SQL)
			}
			for _, src := range p.Sources {
				sqls = append(sqls, src.Watermark)
				for _, c := range src.Schema {
					sqls = append(sqls, c.Computed)
				}
			}
			for _, s := range sqls {
				for _, lc := range [][2]int{{1, 1}, {1, 5}, {2, 1}, {3, 40}, {99, 99}} {
					s.FilePos(lc[0], lc[1])
				}
			}
		}
		if err == nil {
			return
		}
		var list List
		if !errors.As(err, &list) {
			t.Fatalf("error is not a List: %v", err)
		}
		for _, e := range list {
			if !e.Pos.IsValid() {
				t.Fatalf("error without a position: %v", e)
			}
		}
	})
}

// An empty query is refused where it is written, whatever its style: a
// transform without SQL would otherwise drop out of the plan silently.
func TestParseEmptySQL(t *testing.T) {
	for name, tc := range map[string]struct{ value, want string }{
		"double-quoted": {`""`, "e.yaml:5:10: transforms[0].sql: empty SQL"},
		"single-quoted": {`''`, "e.yaml:5:10: transforms[0].sql: empty SQL"},
		"blanks":        {`"  "`, "e.yaml:5:10: transforms[0].sql: empty SQL"},
		"literal":       {"|\n", "e.yaml:5:10: transforms[0].sql: empty SQL"},
		"folded":        {">-\n", "e.yaml:5:10: transforms[0].sql: empty SQL"},
		"null":          {"", "e.yaml:5:9: transforms[0].sql: want a string, got null"},
	} {
		t.Run(name, func(t *testing.T) {
			src := "version: 1\nname: e\nsources: [{name: s, type: datagen}]\ntransforms:\n  - sql: " + tc.value + "\n    name: a\nsinks: [{name: o, from: a, type: print}]\n"
			_, err := Parse("e.yaml", []byte(src), env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The planner adds its errors to the spec's; one problem found twice is
// listed once, and the list is in file order.
func TestListErrSortsAndDeduplicates(t *testing.T) {
	var l List
	l.Addf(Pos{File: "a.yaml", Line: 9, Col: 1}, "sinks[0]", "late")
	l.Addf(Pos{File: "a.yaml", Line: 3, Col: 5}, "sources[0].path", "missing")
	l.Addf(Pos{File: "a.yaml", Line: 9, Col: 1}, "sinks[0]", "late")
	l.Addf(Pos{File: "a.yaml", Line: 3, Col: 5}, "sources[0].path", "missing")
	want := "a.yaml:3:5: sources[0].path: missing\na.yaml:9:1: sinks[0]: late"
	if got := l.Err().Error(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestExpandRefusesBadReferences(t *testing.T) {
	for value, want := range map[string]string{
		`"${bad"`:          `x.yaml:3:63: sources[0].password: unclosed variable reference: "${" without "}"`,
		`"a${PW}b${"`:      `x.yaml:3:63: sources[0].password: unclosed variable reference: "${" without "}"`,
		`"${1X}"`:          `x.yaml:3:63: sources[0].password: invalid variable reference "${1X}"`,
		`"${UNSET_THING}"`: `x.yaml:3:63: sources[0].password: environment variable UNSET_THING is not set`,
	} {
		src := "version: 1\nname: p\nsources: [{name: s, type: datagen, schema: [a INT], password: " + value + "}]\nsinks: [{name: o, from: s, type: print}]\n"
		_, err := Parse("x.yaml", []byte(src), env(map[string]string{"PW": "hunter2"}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", value, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows a variable's value: %v", value, err)
		}
	}
	// $${ is a literal ${, not an unclosed reference.
	src := "version: 1\nname: p\nsources: [{name: s, type: datagen, schema: [a INT], password: \"$${bad\"}]\nsinks: [{name: o, from: s, type: print}]\n"
	p, err := Parse("x.yaml", []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Sources[0].Options.Content[7].Value; got != "${bad" {
		t.Errorf("$${bad expanded to %q", got)
	}
}

// In a flow list a comma ends the item, so `DECIMAL(10, 2)` is cut in
// two; the error says how to write it, once, and the piece after the
// comma is not reported again as a column of its own.
func TestParseFlowSchemaCutAtComma(t *testing.T) {
	for name, tc := range map[string]struct{ schema, want string }{
		"type": {"[id BIGINT, d DECIMAL(10, 2), s STRING]",
			`x.yaml:3:65: sources[0].schema[1]: column "d DECIMAL(10, 2)" is cut at its comma: in a flow list [...] a comma ends the item; quote it, ["d DECIMAL(10, 2)"], or write the schema as a block list, one "- d DECIMAL(10, 2)" a line`},
		"computed": {"[a STRING, b STRING, c AS CONCAT(a, b)]",
			`x.yaml:3:74: sources[0].schema[2]: column "c AS CONCAT(a, b)" is cut at its comma`},
		"map": {"[id BIGINT, m MAP<STRING, INT>]",
			`x.yaml:3:65: sources[0].schema[1]: column "m MAP<STRING, INT>" is cut at its comma`},
	} {
		t.Run(name, func(t *testing.T) {
			src := "version: 1\nname: p\nsources: [{name: s, type: datagen, rows: 1, schema: " + tc.schema + "}]\nsinks: [{name: o, from: s, type: print}]\n"
			_, err := Parse("x.yaml", []byte(src), env(nil))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if n := strings.Count(err.Error(), "\n"); n != 0 {
				t.Errorf("%d errors, want 1:\n%s", n+1, err)
			}
		})
	}
	// A block list or a quoted item keeps the comma.
	for _, schema := range []string{"\n      - d DECIMAL(10, 2)\n", ` ["d DECIMAL(10, 2)"]` + "\n"} {
		src := "version: 1\nname: p\nsources:\n  - name: s\n    type: datagen\n    schema:" + schema + "sinks: [{name: o, from: s, type: print}]\n"
		p, err := Parse("x.yaml", []byte(src), env(nil))
		if err != nil {
			t.Fatalf("%q: %v", schema, err)
		}
		if got := p.Sources[0].Schema[0].Type.String(); got != "DECIMAL(10, 2)" {
			t.Errorf("%q: type %s", schema, got)
		}
	}
}

// TestParseBoolKeys: the pipeline's boolean switches, absent, true,
// false and a value that is not a boolean.
func TestParseBoolKeys(t *testing.T) {
	const base = "version: 1\nname: p\n%ssources:\n  - {name: s, type: datagen, schema: [a INT]}\nsinks:\n  - {name: o, from: s, type: blackhole}\n"
	for _, key := range []struct {
		name string
		get  func(*Pipeline) bool
	}{
		{"mini_batch_aggregate", func(p *Pipeline) bool { return p.MiniBatchAggregate }},
		{"two_phase_aggregate", func(p *Pipeline) bool { return p.TwoPhaseAggregate }},
	} {
		for _, tc := range []struct {
			line string
			want bool
			err  bool
		}{
			{"", false, false},
			{key.name + ": true\n", true, false},
			{key.name + ": false\n", false, false},
			{key.name + ": [1]\n", false, true},
			{key.name + ": 2\n", false, true},
		} {
			p, err := Parse("p.yaml", []byte(fmt.Sprintf(base, tc.line)), env(nil))
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), key.name) {
					t.Errorf("%q: error %v, want one naming %s", tc.line, err, key.name)
				}
				continue
			}
			if err != nil {
				t.Errorf("%q: %v", tc.line, err)
				continue
			}
			if got := key.get(p); got != tc.want {
				t.Errorf("%q: %s %v, want %v", tc.line, key.name, got, tc.want)
			}
		}
	}
}

// on_error may name a sink of the file for dead letters: the names are
// checked, with their positions, and so are the sink's keys (no from, no
// dead letters of its own into a sink) and the policy's (one target,
// only for dead-letter).
func TestOnErrorDeadLetterSink(t *testing.T) {
	const good = `version: 1
name: p
sources:
  - name: logs
    type: file
    on_error: {policy: dead-letter, sink: Errors}
  - name: more
    type: file
    on_error: {policy: dead-letter, file: more.jsonl}
  - name: old
    type: file
    on_error: dead-letter
    dead_letter: old.jsonl
sinks:
  - name: out
    from: logs
    type: print
    on_error: {policy: dead-letter, sink: errors}
  - name: errors
    type: print
    on_error: skip
`
	p, err := Parse("p.yaml", []byte(good), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if oe := p.Sources[0].OnError; oe.Policy != "dead-letter" || oe.Sink != "Errors" || oe.DeadLetter != "" || oe.SinkPos.Line != 6 {
		t.Errorf("on_error of logs = %+v", oe)
	}
	if oe := p.Sources[1].OnError; oe.DeadLetter != "more.jsonl" || oe.Sink != "" {
		t.Errorf("on_error of more = %+v", oe)
	}
	if oe := p.Sources[2].OnError; oe.DeadLetter != "old.jsonl" {
		t.Errorf("on_error of old = %+v", oe)
	}
	if !p.Sinks[1].DeadLetters || p.Sinks[0].DeadLetters {
		t.Errorf("sinks taking dead letters: out %v, errors %v; want errors only", p.Sinks[0].DeadLetters, p.Sinks[1].DeadLetters)
	}

	const bad = `version: 1
name: p
sources:
  - name: logs
    type: file
    on_error: {policy: dead-letter, sink: erors}
  - name: both
    type: file
    on_error: {policy: dead-letter, file: a.jsonl, sink: errors}
  - name: twice
    type: file
    on_error: {policy: dead-letter, file: a.jsonl}
    dead_letter: b.jsonl
  - name: skipper
    type: file
    on_error: {policy: skip, sink: errors}
  - name: nowhere
    type: file
    on_error: {policy: dead-letter}
  - name: nopolicy
    type: file
    on_error: {sink: errors, polcy: skip}
sinks:
  - name: errors
    from: logs
    type: print
    on_error: {policy: dead-letter, sink: errors}
  - name: lost
    type: print
`
	_, err = Parse("bad.yaml", []byte(bad), env(nil))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`bad.yaml:6:43: sources[0].on_error.sink: "erors" is not a sink of this pipeline; did you mean "errors"?`,
		`bad.yaml:9:58: sources[1].on_error.sink: on_error names a file and a sink`,
		`bad.yaml:13:18: sources[2].dead_letter: on_error names where dead letters go already`,
		`bad.yaml:16:15: sources[3].on_error: on_error: skip keeps no record`,
		`bad.yaml:19:15: sources[4].dead_letter: on_error: dead-letter needs`,
		`bad.yaml:22:15: sources[5].on_error.policy: missing required key`,
		`bad.yaml:22:30: sources[5].on_error.polcy: unknown key; did you mean "policy"?`,
		`bad.yaml:25:11: sinks[0].from: sink "errors" takes dead letters (an on_error names it), not a table`,
		`bad.yaml:27:43: sinks[0].on_error.sink: sink "errors" takes dead letters: the rows its target refuses cannot go to a sink too`,
		`bad.yaml:28:5: sinks[1].from: missing required key`,
	}
	text := err.Error()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing error %q in:\n%s", w, text)
		}
	}
	if n := strings.Count(text, "\n") + 1; n != len(want) {
		t.Errorf("%d errors, want %d:\n%s", n, len(want), text)
	}
}
