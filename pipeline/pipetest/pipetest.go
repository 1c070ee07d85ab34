// Package pipetest runs a pipeline's unit tests (`etld test`, as
// `benthos test` for Benthos configs): the tests section of a pipeline
// file, or NAME_test.yaml beside NAME.yaml, gives each test input rows
// for the sources and the changes (or final table) expected at the sinks.
//
// A test runs the real plan (SQL, changelog modes, each sink's mode and
// key, the runtime's operators, watermarks and checkpoints) with every
// source and sink replaced by an in-memory one, so no Kafka, MySQL or
// Elasticsearch is needed. Input records are read one at a time, so the
// watermark follows the rows' event time record by record and windows fire
// deterministically; the end of the input fires every open window, as a
// bounded run does.
package pipetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/spec"
)

// standIns are the values a ${VAR} the environment does not set takes
// in a test run, tried in turn until the option it is in accepts one: the
// connectors whose options name addresses and secrets (a DSN, brokers,
// hosts) are replaced, so their real values are not needed, but their
// constructors still check the options' shape. None is ever connected
// to. A variable the SQL reads must be set for its tests to mean
// anything, so one it reads gets none (refuseInSQL); one that no
// stand-in fits is reported with the file's error.
var standIns = []string{
	"etld-test",
	"127.0.0.1:9",
	"http://127.0.0.1:9",
	"etld:etld-test@tcp(127.0.0.1:9)/etld",
	"postgres://etld:etld-test@127.0.0.1:9/etld",
	"0",
}

// Env is what loading tests needs.
type Env struct {
	Registry *connector.Registry
	// Lookup resolves ${VAR}; nil means the process environment. A
	// variable it does not set takes a stand-in value (see standIns).
	Lookup func(string) (string, bool)
	// Timeout bounds one test's run (default 1 minute).
	Timeout time.Duration
}

// Suite is a pipeline file's tests, checked against its plan.
type Suite struct {
	File     string
	Pipeline string
	// TestsFile is the file the tests came from: File, or NAME_test.yaml.
	TestsFile string
	cases     []*testCase
	spec      *spec.Pipeline
	env       Env
}

// Len is the number of tests.
func (s *Suite) Len() int { return len(s.cases) }

// Load reads the pipeline file at path and its tests: its tests section,
// or the tests file beside it. Every problem of the pipeline and of the
// tests is reported at once, with file:line:col and the field path. A
// pipeline without tests gives a Suite with none.
func Load(path string, env Env) (*Suite, error) {
	if env.Lookup == nil {
		env.Lookup = os.LookupEnv
	}
	if env.Timeout <= 0 {
		env.Timeout = time.Minute
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Every error is collected: the pipeline's, its tests section's or
	// tests file's, and those of each test against the plan.
	sp, pl, errs, err := parse(path, data, &env)
	if !isList(err) {
		return nil, err
	}
	errs.Add(err)
	if sp == nil {
		return nil, errs.Err()
	}
	s := &Suite{File: path, Pipeline: sp.Name, TestsFile: path, spec: sp, env: env}
	tests := sp.Tests
	side := spec.TestFile(path)
	if _, statErr := os.Stat(side); statErr == nil {
		if tests != nil {
			errs.Addf(sp.Tests[0].Pos, "tests", "the tests of this pipeline are in this section and in %s too; keep them in one place", side)
			return nil, errs.Err()
		}
		data, err := os.ReadFile(side)
		if err != nil {
			return nil, err
		}
		// A test the file's errors leave whole is still checked below.
		tests, err = spec.ParseTests(side, data, env.Lookup)
		if !isList(err) {
			return nil, err
		}
		errs.Add(err)
		s.TestsFile = side
	}
	if pl != nil {
		for _, t := range tests {
			s.cases = append(s.cases, prepare(t, pl, env.Registry, &errs))
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// isList reports whether err is nil or a list of errors in the files,
// which Load collects; any other error ends it.
func isList(err error) bool {
	var list spec.List
	return err == nil || errors.As(err, &list)
}

// parse reads and plans the pipeline, giving each unset ${VAR} the first
// stand-in that the options it is in accept. It sets env.Lookup to the
// lookup that worked, for the runs and the tests file. The errors of the
// tests section come apart (tests), so that they stop neither the plan
// nor the checks of the tests against it; the pipeline is returned with
// its errors when it was read, so that its tests are read too.
func parse(path string, data []byte, env *Env) (sp *spec.Pipeline, pl *plan.Plan, tests spec.List, err error) {
	lines := strings.Split(string(data), "\n")
	choice := map[string]int{} // unset variable -> index into standIns
	base := env.Lookup
	lookup := func(name string) (string, bool) {
		if v, ok := base(name); ok {
			return v, true
		}
		if _, seen := choice[name]; !seen {
			choice[name] = 0
		}
		if i := choice[name]; i < len(standIns) {
			return standIns[i], true
		}
		return "", false // every stand-in failed: spec says it is unset
	}
	for {
		sp, err = spec.Parse(path, data, lookup)
		pl = nil
		if sp != nil {
			// Build returns the spec's other errors with its own.
			sp.Errors, tests = splitTests(sp.Errors)
			pl, err = plan.Build(sp, plan.Env{Registry: env.Registry, Logger: slog.New(slog.DiscardHandler)})
		}
		if sp != nil && refuseInSQL(sp, lines, choice) {
			if pl != nil {
				_ = pl.Close()
			}
			continue
		}
		if err == nil {
			_ = pl.Close()
			env.Lookup = lookup
			return sp, pl, tests, nil
		}
		// The next stand-in for each unset variable on a line an error
		// points at; none left to try ends the search with the errors.
		var list spec.List
		errors.As(err, &list)
		advanced := false
		for name, i := range choice {
			if i >= len(standIns) {
				continue
			}
			for _, e := range list {
				if l := e.Pos.Line; e.Pos.File == path && l > 0 && l <= len(lines) && strings.Contains(lines[l-1], "${"+name) {
					choice[name] = i + 1
					advanced = true
					break
				}
			}
		}
		if !advanced || sp == nil {
			return sp, nil, tests, err
		}
	}
}

// splitTests parts a pipeline's errors into those of its tests section
// and the others.
func splitTests(errs spec.List) (others, tests spec.List) {
	for _, e := range errs {
		if e.Path == "tests" || strings.HasPrefix(e.Path, "tests[") || strings.HasPrefix(e.Path, "tests.") {
			tests = append(tests, e)
		} else {
			others = append(others, e)
		}
	}
	return others, tests
}

// refuseInSQL takes the stand-ins away from the unset variables that SQL
// reads (a transform, a computed column, a watermark): a stand-in there
// would change what the tests test, so such a variable must be set. It
// reports whether it took any.
func refuseInSQL(sp *spec.Pipeline, lines []string, choice map[string]int) bool {
	var texts []*spec.SQL
	for _, t := range sp.Transforms {
		texts = append(texts, t.SQL)
	}
	for _, s := range sp.Sources {
		texts = append(texts, s.Watermark)
		for _, c := range s.Schema {
			texts = append(texts, c.Computed)
		}
	}
	took := false
	for _, q := range texts {
		if q == nil || q.Pos.Line == 0 {
			continue
		}
		// The text's lines, and the line of its key (a block's `|`).
		last := min(q.Pos.Line+strings.Count(q.Text, "\n")+1, len(lines))
		for l := q.Pos.Line; l <= last; l++ {
			for name, i := range choice {
				if i < len(standIns) && strings.Contains(lines[l-1], "${"+name+"}") {
					choice[name] = len(standIns)
					took = true
				}
			}
		}
	}
	return took
}

// Result is the outcome of one test.
type Result struct {
	Name string
	Pos  spec.Pos
	// Err is set when the run itself failed (an error in a transform,
	// a bad record with on_error: fail); the test then fails.
	Err error
	// Sinks holds the comparison at each sink the test expects something
	// of, in the test's order.
	Sinks []SinkResult
	// DeadLetters holds the comparison of each source's dead letters the
	// test names, in its order.
	DeadLetters []DeadLetterResult
}

// Passed reports whether the run succeeded and every sink got what the
// test expects.
func (r Result) Passed() bool {
	if r.Err != nil {
		return false
	}
	for _, s := range r.Sinks {
		if !s.Passed() {
			return false
		}
	}
	for _, d := range r.DeadLetters {
		if !d.Passed() {
			return false
		}
	}
	return true
}

// Run runs the tests whose name only matches (every test when only is
// nil), in file order.
func (s *Suite) Run(ctx context.Context, only *regexp.Regexp) []Result {
	out := make([]Result, 0, len(s.cases))
	for _, c := range s.cases {
		if only != nil && !only.MatchString(c.test.Name) {
			continue
		}
		out = append(out, s.run(ctx, c))
	}
	return out
}

func (s *Suite) run(ctx context.Context, c *testCase) Result {
	res := Result{Name: c.test.Name, Pos: c.test.Pos}
	out, err := s.execute(ctx, c)
	if err != nil {
		res.Err = err
		return res
	}
	for _, e := range c.expect {
		res.Sinks = append(res.Sinks, e.compare(out.sinks[e.sink]))
	}
	for _, d := range c.deadLetters {
		res.DeadLetters = append(res.DeadLetters, d.compare(out.deadLetters[d.source]))
	}
	return res
}

// outcome is what a test's run left: each sink's memory and each
// source's dead letters, by name.
type outcome struct {
	sinks       map[string]*memSink
	deadLetters map[string][]deadLetter
}

// execute plans the pipeline afresh (a plan runs once), puts in-memory
// connectors in place of the pipeline's own and runs it to the end of the
// test's input.
func (s *Suite) execute(ctx context.Context, c *testCase) (*outcome, error) {
	// A dead-letter file named by the pipeline goes to a scratch
	// directory: a test writes nothing outside it.
	scratch, err := os.MkdirTemp("", "etld-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	files, restore := redirectDeadLetters(s.spec, scratch)
	defer restore()
	pl, err := plan.Build(s.spec, plan.Env{Registry: s.env.Registry, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer pl.Close()
	for _, src := range pl.Sources {
		mem, err := s.memSource(src, c.inputs[src.Spec.Name])
		if err != nil {
			return nil, err
		}
		if src.LookedUp() {
			table := &memTable{name: src.Spec.Name}
			if lsrc, ok := src.Conn.(connector.LookupSource); ok {
				table.opts = lsrc.LookupOptions()
			}
			if table.reader, err = s.memSource(src, c.inputs[src.Spec.Name]); err != nil {
				return nil, err
			}
			mem.table = table
		}
		src.Conn = mem
	}
	sinks := map[string]*memSink{}
	for _, sk := range pl.Sinks {
		mem := &memSink{}
		if err := mem.Bind(connector.SinkInput{Schema: sk.Input.Root.Schema, Mode: sk.Mode, Key: sk.Key}); err != nil {
			return nil, err
		}
		sk.Conn = mem
		sinks[sk.Spec.Name] = mem
	}
	g, err := pl.Graph()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, s.env.Timeout)
	defer cancel()
	// No checkpoint during the run but the final one: a test's input is
	// small, and its result must not depend on when one was taken.
	err = runtime.Run(runCtx, g, runtime.Options{Checkpoint: runtime.CheckpointOptions{Interval: 24 * time.Hour}})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, fmt.Errorf("the run did not end within %s", s.env.Timeout)
	}
	if err != nil {
		return nil, err
	}
	if err := pl.Close(); err != nil {
		return nil, err
	}
	out := &outcome{sinks: sinks, deadLetters: map[string][]deadLetter{}}
	for _, d := range c.deadLetters {
		if d.sink != "" {
			out.deadLetters[d.source] = sinkDeadLetters(sinkNamed(sinks, d.sink), d.source)
			continue
		}
		if out.deadLetters[d.source], err = readDeadLetters(files[d.source]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sinkNamed finds a sink by its name, which the file may spell in
// another case.
func sinkNamed(sinks map[string]*memSink, name string) *memSink {
	for n, s := range sinks {
		if strings.EqualFold(n, name) {
			return s
		}
	}
	return &memSink{}
}

// memSource is an in-memory source that reads in (nothing when nil) in
// place of src.
func (s *Suite) memSource(src *plan.Source, in *input) (*memSource, error) {
	mem := &memSource{width: src.Physical.Len(), reject: src.Reject}
	if in == nil {
		return mem, nil
	}
	mem.records = in.records
	if in.format != nil {
		dec, err := s.env.Registry.NewDecoder(*in.format, in.decodedSchema)
		if err != nil {
			return nil, err
		}
		mem.decoder, mem.decoded, mem.columns = dec, in.decodedSchema.Len(), in.columns
	}
	return mem, nil
}

// redirectDeadLetters points every dead_letter of the pipeline into dir.
// It returns the sources' files there by name, and what puts them back.
func redirectDeadLetters(sp *spec.Pipeline, dir string) (map[string]string, func()) {
	var undo []func()
	redirect := func(oe *spec.OnError, name string) string {
		if oe.DeadLetter == "" {
			return ""
		}
		was := oe.DeadLetter
		oe.DeadLetter = filepath.Join(dir, name+"-"+filepath.Base(was))
		undo = append(undo, func() { oe.DeadLetter = was })
		return oe.DeadLetter
	}
	sources := map[string]string{}
	for _, s := range sp.Sources {
		sources[s.Name] = redirect(&s.OnError, "source-"+s.Name)
	}
	for _, s := range sp.Sinks {
		redirect(&s.OnError, "sink-"+s.Name)
	}
	return sources, func() {
		for _, u := range undo {
			u()
		}
	}
}
