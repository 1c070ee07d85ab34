package spec

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/row"
)

// Version is the pipeline file format this package reads.
const Version = 1

// Pipeline is one pipeline file.
type Pipeline struct {
	File    string
	Name    string
	NamePos Pos
	// Execution is "streaming" (the default) or "batch".
	Execution    string
	ExecutionPos Pos
	// CheckpointInterval is 0 when the file does not set it.
	CheckpointInterval time.Duration
	// MiniBatch folds the changes of one key within a batch before they
	// reach an upsert sink (default true; `mini_batch: false` turns it off).
	MiniBatch bool
	// MiniBatchAggregate makes a streaming GROUP BY hold its output and
	// emit one net change per key per mini-batch (default false:
	// `mini_batch_aggregate: true`). Off by default because which
	// intermediate changes survive depends on timing, and a run that
	// starts over into an upsert or retract sink promises the same
	// changelog as before.
	MiniBatchAggregate bool
	// TwoPhaseAggregate is `two_phase_aggregate: true`: a GROUP BY whose
	// input a file source decodes in parallel folds each batch into a
	// partial per key in the decoders, and merges the partials (Flink's
	// table.optimizer.agg-phase-strategy: TWO_PHASE), in batch mode and
	// with mini_batch_aggregate. Off by default: on the bench machine it
	// cost about what it saved (bench/README.md, "Local/global
	// aggregation in the decode workers").
	TwoPhaseAggregate bool
	// Backfill is `backfill: true`: an edit of a stateful operator that
	// the saved state does not fit (an added aggregate, a changed key)
	// rebuilds the operator from the sources' start instead of being
	// refused, as `etld run --backfill` does (pipeline.Backfill).
	Backfill bool
	// StateTTL is `state_ttl`, Flink's table.exec.state.ttl: the state a
	// streaming operator keeps for a key (GROUP BY, DISTINCT, joins,
	// Top-N, deduplication) is dropped once the key was not written for
	// this long. 0, the default, keeps state forever.
	StateTTL    time.Duration
	StateTTLPos Pos
	// MaxStateBytes is `max_state_bytes`: the most memory one operator's
	// state may hold before the run fails. 0 when the file does not set
	// it (the runtime's default applies), -1 for `unlimited`.
	MaxStateBytes int64
	// Parallelism is `parallelism`: how many workers run each keyed
	// operator (a GROUP BY), each owning a share of the keys. 0 when the
	// file does not set it: one worker.
	Parallelism    int
	ParallelismPos Pos
	// LateRows is `late_rows`: what becomes of the rows event-time
	// operators drop as late. Policy "drop" (the default) counts them;
	// "dead-letter" also writes each to the file or sink it names.
	LateRows OnError
	// LocalTimeZone is `local_time_zone` as written ("" when not set),
	// Flink's table.local-time-zone: the session zone windows over a
	// TIMESTAMP_LTZ align to. Zone is it loaded, nil for UTC.
	LocalTimeZone string
	Zone          *time.Location

	Sources    []*Source
	Transforms []*Transform
	Sinks      []*Sink
	// Functions are the user-defined functions SQL may call
	// (functions.go).
	Functions []*Function
	// Tests are the file's tests section (etld test), nil without one.
	Tests []*Test

	// Errors are the problems Parse found, the same list it returns as
	// its error. A pipeline with errors is partial (an element may lack a
	// name, a column its type); the planner still builds what it can, to
	// report its own errors with these in one pass.
	Errors List
}

// Source is a source entry: the common keys etld reads itself, plus the
// whole mapping for the connector to decode its own options from.
type Source struct {
	Name    string
	Type    string
	Schema  []Column
	Key     []string // declared key columns, if any
	OnError OnError
	// Watermark is the watermark expression (e.g. ts - INTERVAL '5' SECOND).
	Watermark *SQL
	// IdleTimeout (idle_timeout) is how long a split of the source (a
	// Kafka partition) may go without a record before its watermark stops
	// holding the source's back (Flink's table.exec.source.idle-timeout);
	// 0 never.
	IdleTimeout time.Duration
	Pos         Pos
	Path        string
	TypePos     Pos
	// Options is the source's YAML mapping; CommonSourceKeys are taken.
	Options *yaml.Node
}

// CommonSourceKeys are the source keys read by etld, not by the connector.
var CommonSourceKeys = []string{"name", "type", "schema", "key", "on_error", "dead_letter", "watermark", "idle_timeout"}

// Column is a schema entry: physical (name and type) or computed (name AS
// expression).
type Column struct {
	Name     string
	Type     row.Type
	Computed *SQL
	// Metadata is the key of a metadata column (`ts TIMESTAMP_LTZ(3)
	// METADATA FROM 'timestamp'`; the column's name when FROM is left
	// out), filled by the source rather than decoded; "" otherwise.
	Metadata string
	Pos      Pos
	Path     string
}

// Transform is a named SQL query.
type Transform struct {
	Name string
	SQL  *SQL
	Pos  Pos
	Path string
	// StateTTL, when set, is the transform's own `state_ttl`, overriding
	// the pipeline's for the stateful operators of its query (0: keep
	// their state forever).
	StateTTL    *time.Duration
	StateTTLPos Pos
	// UID, when set, names the transform's state in checkpoints instead
	// of Name (Flink's uid): renaming the transform then keeps its state,
	// and a new uid starts its operators empty.
	UID    string
	UIDPos Pos
	// RenamedFrom is the transform's former name: a checkpoint taken
	// under that name restores into it (ignored when UID is set).
	RenamedFrom    string
	RenamedFromPos Pos
}

// Sink is a sink entry.
type Sink struct {
	Name    string
	Type    string
	From    string
	FromPos Pos
	Mode    string // auto | append | upsert | retract
	ModePos Pos
	Key     []string
	KeyPos  Pos
	Pos     Pos
	Path    string
	TypePos Pos
	// OnError is what happens to rows the target refuses for good.
	OnError OnError
	// DeadLetters: the sink has no from; it takes the records that the
	// on_error of sources and sinks naming it set aside.
	DeadLetters bool
	Options     *yaml.Node
}

// CommonSinkKeys are the sink keys read by etld, not by the connector.
var CommonSinkKeys = []string{"name", "type", "from", "mode", "key", "on_error", "dead_letter"}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
var pipelineNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Load reads and checks the pipeline file at path; see Parse.
func Load(path string) (*Pipeline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, os.LookupEnv)
}

// Parse reads a pipeline file's bytes; lookup resolves ${VAR}. With
// errors it still returns the pipeline as far as it could be read, unless
// the file is not YAML or holds no document; pass it to the planner to
// have all the errors of the file at once.
func Parse(file string, data []byte, lookup func(string) (string, bool)) (*Pipeline, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, List{Errorf(Pos{File: file, Line: 1, Col: 1}, "", "empty pipeline file: want a mapping with version, name, sources and sinks")}
	}
	p := &parser{file: file, lines: strings.Split(string(data), "\n"), lookup: lookup}
	root := doc.Content[0]
	p.expand(root, "")
	pl := p.pipeline(root)
	p.redactErrors()
	pl.Errors = p.errs
	return pl, p.errs.Err()
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlError(file string, err error) error {
	var list List
	msg := err.Error()
	for _, line := range strings.Split(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n"), "\n") {
		line = strings.TrimSpace(line)
		if m := yamlLineRE.FindStringSubmatch(line); m != nil {
			var n int
			fmt.Sscan(m[1], &n)
			list.Addf(Pos{File: file, Line: n, Col: 1}, "", "invalid YAML: %s", m[2])
		} else if line != "" {
			list.Addf(Pos{File: file, Line: 1, Col: 1}, "", "invalid YAML: %s", strings.TrimPrefix(line, "yaml: "))
		}
	}
	return list.Err()
}

type parser struct {
	file   string
	lines  []string
	lookup func(string) (string, bool)
	errs   List
	// substituted holds what expand did, by field path.
	substituted map[string]*substitution
}

func (p *parser) pos(n *yaml.Node) Pos { return At(p.file, n) }

// varRE finds $$, ${NAME} and, last, a ${ that no } closes.
var varRE = regexp.MustCompile(`\$\$|\$\{([^}]*)\}|\$\{`)

// expand replaces ${VAR} in every scalar with the environment's value. An
// unset variable is an error, never an empty string; $$ is a literal $.
func (p *parser) expand(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "$") {
			return
		}
		p.expandScalar(n, path)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p.expand(n.Content[i+1], JoinPath(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p.expand(c, IndexPath(path, i))
		}
	}
}

// fields returns a mapping's keys with their value nodes, reporting
// duplicates and keys not in allowed.
func (p *parser) fields(n *yaml.Node, path string, allowed []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errs.Addf(p.pos(n), path, "want a mapping, got %s", kindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, dup := out[k.Value]; dup {
			p.errs.Addf(p.pos(k), JoinPath(path, k.Value), "duplicate key")
			continue
		}
		if allowed != nil && !contains(allowed, k.Value) {
			hint := ""
			if c := Closest(k.Value, allowed); c != "" {
				hint = fmt.Sprintf("; did you mean %q?", c)
			}
			p.errs.Addf(p.pos(k), JoinPath(path, k.Value), "unknown key%s", hint)
			continue
		}
		out[k.Value] = n.Content[i+1]
	}
	return out
}

func (p *parser) str(n *yaml.Node, path string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errs.Addf(p.pos(n), path, "want a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (p *parser) strList(n *yaml.Node, path string) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		var out []string
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if n.Kind != yaml.SequenceNode {
		p.errs.Addf(p.pos(n), path, "want a list of column names, got %s", kindName(n))
		return nil
	}
	var out []string
	for i, c := range n.Content {
		out = append(out, p.str(c, IndexPath(path, i)))
	}
	return out
}

// sql reads a piece of SQL. Empty SQL is an error, not an absent query:
// a transform without one would drop out of the plan with every sink that
// reads it.
func (p *parser) sql(n *yaml.Node, path, what string) *SQL {
	text := p.str(n, path)
	if strings.TrimSpace(text) == "" {
		if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
			p.errs.Addf(p.pos(n), path, "empty SQL: write %s", what)
		}
		return nil
	}
	return p.sqlIn(n, 0, text)
}

var topKeys = []string{"version", "name", "execution", "checkpoint_interval", "mini_batch", "mini_batch_aggregate", "two_phase_aggregate", "backfill", "state_ttl", "max_state_bytes", "parallelism", "late_rows", "local_time_zone", "functions", "sources", "transforms", "sinks", "tests"}

func (p *parser) pipeline(root *yaml.Node) *Pipeline {
	pl := &Pipeline{File: p.file, Execution: "streaming", MiniBatch: true, LateRows: OnError{Policy: "drop"}}
	f := p.fields(root, "", topKeys)
	if root.Kind != yaml.MappingNode {
		return pl
	}
	p.settings(pl, root, f)
	if v, ok := f["functions"]; ok {
		pl.Functions = p.functions(v)
	}
	tables := p.entries(pl, root, f)
	p.deadLetterSinks(pl)
	if v, ok := f["tests"]; ok {
		pl.Tests = p.tests(v, "tests")
	}
	p.checkFrom(pl, tables)
	return pl
}

// settings reads the file's own keys: version, name and the execution
// settings.
func (p *parser) settings(pl *Pipeline, root *yaml.Node, f map[string]*yaml.Node) {
	if v, ok := f["version"]; !ok {
		p.errs.Addf(p.pos(root), "version", "missing required key: add `version: %d`", Version)
	} else if v.Value != fmt.Sprint(Version) {
		p.errs.Addf(p.pos(v), "version", "unsupported version %q: this etld reads version %d", v.Value, Version)
	}
	if v, ok := f["name"]; !ok {
		p.errs.Addf(p.pos(root), "name", "missing required key: every pipeline has a unique name")
	} else {
		pl.Name, pl.NamePos = p.str(v, "name"), p.pos(v)
		if pl.Name != "" && !pipelineNameRE.MatchString(pl.Name) {
			p.errs.Addf(p.pos(v), "name", "invalid pipeline name %q: use letters, digits, '_', '-' and '.'", pl.Name)
		}
	}
	if v, ok := f["execution"]; ok {
		pl.Execution, pl.ExecutionPos = p.str(v, "execution"), p.pos(v)
		if pl.Execution != "streaming" && pl.Execution != "batch" {
			p.errs.Addf(p.pos(v), "execution", "unknown execution mode %q: want streaming or batch", pl.Execution)
		}
	}
	if v, ok := f["checkpoint_interval"]; ok {
		d, err := parseDuration(p.str(v, "checkpoint_interval"), v)
		if err != nil {
			p.errs.Addf(p.pos(v), "checkpoint_interval", "%v", err)
		}
		pl.CheckpointInterval = d
	}
	if v, ok := f["mini_batch"]; ok {
		pl.MiniBatch = p.flag(v, "mini_batch", pl.MiniBatch)
	}
	if v, ok := f["backfill"]; ok {
		pl.Backfill = p.flag(v, "backfill", pl.Backfill)
	}
	if v, ok := f["state_ttl"]; ok {
		pl.StateTTL, pl.StateTTLPos = p.stateTTL(v, "state_ttl"), p.pos(v)
	}
	if v, ok := f["max_state_bytes"]; ok {
		n, err := parseBytes(p.str(v, "max_state_bytes"))
		if err != nil {
			p.errs.Addf(p.pos(v), "max_state_bytes", "%v", err)
		}
		pl.MaxStateBytes = n
	}
	if v, ok := f["parallelism"]; ok {
		pl.ParallelismPos = p.pos(v)
		n, err := strconv.Atoi(p.str(v, "parallelism"))
		if err != nil || n < 1 || n > MaxParallelism {
			p.errs.Addf(p.pos(v), "parallelism", "want a number of workers from 1 to %d, got %q", MaxParallelism, v.Value)
		} else {
			pl.Parallelism = n
		}
	}
	if v, ok := f["late_rows"]; ok {
		pl.LateRows = p.lateRows(v)
	}
	if v, ok := f["local_time_zone"]; ok {
		p.localTimeZone(v, pl)
	}
	if v, ok := f["mini_batch_aggregate"]; ok {
		pl.MiniBatchAggregate = p.flag(v, "mini_batch_aggregate", pl.MiniBatchAggregate)
	}
	if v, ok := f["two_phase_aggregate"]; ok {
		pl.TwoPhaseAggregate = p.flag(v, "two_phase_aggregate", pl.TwoPhaseAggregate)
	}
}

// MaxParallelism is the most workers `parallelism` asks for: the key
// groups a keyed operator's state is cut in (the runtime's).
const MaxParallelism = 128

// flag reads true or false; anything else is an error, and keeps def.
func (p *parser) flag(v *yaml.Node, path string, def bool) bool {
	switch p.str(v, path) {
	case "true":
		return true
	case "false":
		return false
	}
	p.errs.Addf(p.pos(v), path, "want true or false, got %s", kindName(v))
	return def
}

// tableDecl is the first declaration of a source's or transform's name.
type tableDecl struct {
	name string
	pos  Pos
}

// entries reads the sources, transforms and sinks, and returns the
// tables the sources and transforms declare, by lower-cased name (SQL
// names are case-insensitive).
func (p *parser) entries(pl *Pipeline, root *yaml.Node, f map[string]*yaml.Node) map[string]tableDecl {
	tables := map[string]tableDecl{}
	declare := func(name string, pos Pos, path string) {
		if name == "" {
			return
		}
		if !nameRE.MatchString(name) {
			p.errs.Addf(pos, path, "invalid name %q: use letters, digits and '_', not starting with a digit (it is a SQL table name)", name)
		}
		key := strings.ToLower(name)
		if prev, dup := tables[key]; dup {
			p.errs.Addf(pos, path, "duplicate name %q: already used at %s", name, prev.pos)
			return
		}
		tables[key] = tableDecl{name, pos}
	}
	if v, ok := f["sources"]; ok {
		for i, n := range p.list(v, "sources") {
			src := p.source(n, IndexPath("sources", i))
			declare(src.Name, src.Pos, src.Path+".name")
			pl.Sources = append(pl.Sources, src)
		}
	}
	if len(pl.Sources) == 0 {
		p.errs.Addf(p.pos(root), "sources", "a pipeline needs at least one source")
	}
	if v, ok := f["transforms"]; ok {
		for i, n := range p.list(v, "transforms") {
			tr := p.transform(n, IndexPath("transforms", i))
			declare(tr.Name, tr.Pos, tr.Path+".name")
			pl.Transforms = append(pl.Transforms, tr)
		}
		p.stateNames(pl.Transforms)
	}
	sinkNames := map[string]Pos{}
	if v, ok := f["sinks"]; ok {
		for i, n := range p.list(v, "sinks") {
			sk := p.sink(n, IndexPath("sinks", i))
			if prev, dup := sinkNames[strings.ToLower(sk.Name)]; dup && sk.Name != "" {
				p.errs.Addf(sk.Pos, sk.Path+".name", "duplicate sink name %q: already used at %s", sk.Name, prev)
			}
			sinkNames[strings.ToLower(sk.Name)] = sk.Pos
			pl.Sinks = append(pl.Sinks, sk)
		}
	}
	if len(pl.Sinks) == 0 {
		p.errs.Addf(p.pos(root), "sinks", "a pipeline needs at least one sink")
	}
	return tables
}

// checkFrom reports each sink that reads a table the file does not
// declare, with the nearest declared name.
func (p *parser) checkFrom(pl *Pipeline, tables map[string]tableDecl) {
	var names []string // the table names, for suggestions
	for _, sk := range pl.Sinks {
		if sk.From == "" {
			continue
		}
		if _, found := tables[strings.ToLower(sk.From)]; !found {
			if names == nil {
				names = make([]string, 0, len(tables))
				for _, t := range tables {
					names = append(names, t.name)
				}
				sort.Strings(names) // the nearest of equals is always the same
			}
			hint := ""
			if c := Closest(sk.From, names); c != "" {
				hint = fmt.Sprintf("; did you mean %q?", c)
			}
			p.errs.Addf(sk.FromPos, sk.Path+".from", "%q is not a source or transform of this pipeline%s", sk.From, hint)
		}
	}
}

func (p *parser) list(n *yaml.Node, path string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		p.errs.Addf(p.pos(n), path, "want a list, got %s", kindName(n))
		return nil
	}
	return n.Content
}

func (p *parser) required(f map[string]*yaml.Node, n *yaml.Node, path, key string) string {
	v, ok := f[key]
	if !ok {
		p.errs.Addf(p.pos(n), JoinPath(path, key), "missing required key")
		return ""
	}
	return p.str(v, JoinPath(path, key))
}

// stateNames refuses two transforms whose state would have one name in
// a checkpoint: a uid equal to another transform's uid or name.
func (p *parser) stateNames(trs []*Transform) {
	seen := map[string]*Transform{}
	for _, tr := range trs {
		if tr.UID == "" {
			seen[tr.Name] = tr
		}
	}
	for _, tr := range trs {
		if tr.UID == "" {
			continue
		}
		if prev, dup := seen[tr.UID]; dup {
			p.errs.Addf(tr.UIDPos, tr.Path+".uid", "uid %q is already the state name of transform %q at %s; a uid must name one transform's state", tr.UID, prev.Name, prev.Pos)
			continue
		}
		seen[tr.UID] = tr
	}
}

// StateName is the name the transform's state has in checkpoints: its
// uid, else its name.
func (t *Transform) StateName() string {
	if t.UID != "" {
		return t.UID
	}
	return t.Name
}
