// Package plan turns a pipeline spec into a plan: it builds the connectors
// through the registry, binds every transform's SQL to the tables it reads,
// derives each table's changelog mode and upsert key (Flink's changelog
// model: +I, -U, +U, -D), chooses each sink's mode or refuses the pipeline, and finally
// instantiates the runtime graph. It does no I/O: `etld validate` is Build.
package plan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/pipeline/sql"
	"github.com/etld/etld/pipeline/udf"
)

// Env is what planning needs from outside.
type Env struct {
	Registry *connector.Registry
	Logger   *slog.Logger
	// WholeJoinRows keeps each batch join's inputs' rows whole, as the
	// plans before narrowJoins did: what tests compare the narrowed
	// plan's results with.
	WholeJoinRows bool
}

// Plan is a checked pipeline, ready to explain or run.
type Plan struct {
	Spec  *spec.Pipeline
	Batch bool

	Sources    []*Source
	Transforms []*Table
	Sinks      []*Sink

	tables map[string]*Table
	// deadLetters are the targets of on_error: dead-letter, by file or
	// sink (deadletter.go), and deadLetterOrder the same in the order
	// they were named.
	deadLetters     map[string]*deadLetters
	deadLetterOrder []*deadLetters
	// late is where late_rows: dead-letter puts the rows operators drop
	// as late (nil: they are only counted), and lateLog its policies'
	// logger.
	late    *runtime.DeadLetterNode
	lateLog *slog.Logger
	// funcs are the file's user-defined functions (functions.go).
	funcs *udf.Registry
}

// Source is a planned source: its connector and the table it produces.
type Source struct {
	Spec *spec.Source
	Conn connector.Source
	// Physical is what the connector produces; Table.Root.Schema adds the
	// computed columns.
	Physical row.Schema
	Table    *Table
	// Projected parallels Physical: the columns the plan reads, pushed
	// down to the connector (pushdown.go); nil when it reads them all or
	// the connector cannot leave any out.
	Projected []bool
	computed  []*expr.Compiled // nil when the source has no computed columns
	// paths are the fields of ROW columns the connector decodes into
	// columns of their own (nested projection pushdown, pushdown.go),
	// after its physical ones; the scan's rows carry them after the
	// computed columns. pathFields names and types them.
	paths      []connector.FieldPath
	pathFields []row.Field
	// watermark gives each row's watermark candidate.
	watermark *expr.Compiled
	policy    *runtime.Policy
	// feed is the source node's way into its policy, for its connector
	// and its computed columns.
	feed *runtime.Feed
	// lookedUp: a lookup join reads the table by key (lookup.go).
	lookedUp bool
}

// Table is a named table: a source or a transform.
type Table struct {
	Name string
	Root *Node
	// Transform is set for transforms.
	Transform *spec.Transform
}

// Sink is a planned sink.
type Sink struct {
	Spec  *spec.Sink
	Conn  connector.Sink
	Input *Table
	Mode  connector.Mode
	Key   []int
	// Replay is what a restored run sends the sink again.
	Replay connector.Replay
	policy *runtime.Policy
	feed   *runtime.Feed
}

// Skipped is the number of rows the sink's on_error policy set aside.
func (s *Sink) Skipped() int64 { return s.policy.Skipped() }

// Build plans a pipeline. Every problem is reported, as a spec.List with
// file positions, not only the first. p may be a partial pipeline that
// spec.Parse returned with errors (p.Errors): Build then plans what it can
// and returns those errors together with its own, without the ones that
// only follow from them.
func Build(p *spec.Pipeline, env Env) (*Plan, error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	b := &builder{
		env:  env,
		plan: &Plan{Spec: p, Batch: p.Execution == "batch", tables: map[string]*Table{}, deadLetters: map[string]*deadLetters{}},
		tr:   map[string]*spec.Transform{},
		errs: newReport(p.Errors),

		declared:  map[string]bool{},
		attempted: map[*spec.Transform]*Table{},
		excused:   map[string]bool{},
	}
	b.loadFunctions()
	for _, s := range p.Sources {
		b.declared[strings.ToLower(s.Name)] = true
	}
	for _, t := range p.Transforms {
		key := strings.ToLower(t.Name)
		if _, dup := b.tr[key]; !dup {
			b.tr[key] = t
		}
		b.declared[key] = true
	}
	for _, s := range p.Sources {
		b.source(s)
	}
	for _, t := range p.Transforms {
		b.transform(t)
	}
	if b.plan.Batch {
		for _, s := range b.plan.Sources {
			if s.Conn != nil && !s.Conn.Bounded() {
				b.errs.Addf(p.ExecutionPos, "execution", "batch execution needs bounded sources, but source %q (%s) is unbounded; set `rows:` or use execution: streaming", s.Spec.Name, s.Spec.Type)
			}
		}
	}
	for _, s := range p.Sinks {
		// Before any sink is planned: a sink taking dead letters may
		// come before the sink whose on_error names it.
		b.deadLettersOf(s.OnError)
	}
	b.plan.late, b.plan.lateLog = b.deadLettersOf(p.LateRows), b.env.Logger
	for _, s := range p.Sinks {
		b.sink(s)
	}
	b.checkShared()
	b.checkFileLoops()
	b.accountForAll()
	if err := b.errs.result(); err != nil {
		_ = b.plan.funcs.Close(context.Background())
		return nil, err
	}
	b.pushProjections()
	return b.plan, nil
}

// accountForAll refuses a pipeline in which a declared transform or sink
// has no plan node and no error says why: running it would silently do
// less than its file declares. Each unplanned element must have an error
// of its own or read a table that failed; since every element is checked,
// a chain of such excuses always ends at a reported error.
func (b *builder) accountForAll() {
	planned := map[*spec.Transform]bool{}
	for _, t := range b.plan.Transforms {
		planned[t.Transform] = true
	}
	for _, t := range b.plan.Spec.Transforms {
		if !planned[t] && !b.errs.reported(t.Path) && !b.excused[t.Path] {
			b.errs.Addf(t.Pos, t.Path, "transform %q was not planned, and no error says why; this is a bug in etld, please report it", t.Name)
		}
	}
	sinks := map[*spec.Sink]bool{}
	for _, s := range b.plan.Sinks {
		sinks[s.Spec] = true
	}
	for _, s := range b.plan.Spec.Sinks {
		if !sinks[s] && !b.errs.reported(s.Path) && !b.excused[s.Path] {
			b.errs.Addf(s.Pos, s.Path, "sink %q was not planned, and no error says why; this is a bug in etld, please report it", s.Name)
		}
	}
}

type builder struct {
	env  Env
	plan *Plan
	errs *report
	tr   map[string]*spec.Transform
	// declared holds the (lower-case) names of every source and transform.
	declared map[string]bool
	// building holds the transforms being planned, to find cycles.
	building  []*spec.Transform
	attempted map[*spec.Transform]*Table
	// excused holds the paths of the transforms and sinks left unplanned
	// because a table they read failed with errors of its own.
	excused map[string]bool
}

// errReported fails a query that reads a table whose own errors are
// already reported, without adding another.
var errReported = errors.New("reported")

// sqlError places an error from the SQL text s into the file.
func (b *builder) sqlError(s *spec.SQL, path string, err error) {
	var se *sql.Error
	if errors.As(err, &se) {
		msg := b.misplacedCall(se.Msg)
		if snip := se.Snippet(s.Text); snip != "" {
			msg += "\n" + indent(snip)
		}
		b.errs.Add(&spec.Error{Pos: s.FilePos(se.Pos.Line, se.Pos.Col), Path: path, Msg: msg})
		return
	}
	b.errs.Add(&spec.Error{Pos: s.Pos, Path: path, Msg: err.Error()})
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

func (b *builder) source(s *spec.Source) {
	src := &Source{Spec: s}
	// A source whose schema the spec faulted gives no table: the queries
	// that read it would only fail on the columns it lacks. Its connector
	// is still built, for the errors in its options.
	broken := b.shapeFaulted(s)
	var physical []row.Field
	var computed []spec.Column
	var metadata []string
	for _, c := range s.Schema {
		if b.errs.reported(c.Path) {
			continue
		}
		if c.Computed != nil {
			computed = append(computed, c)
			continue
		}
		if c.Metadata != "" && metadata == nil {
			metadata = make([]string, len(physical), len(s.Schema))
		}
		if metadata != nil {
			metadata = append(metadata, c.Metadata)
		}
		physical = append(physical, row.Field{Name: c.Name, Type: c.Type})
	}
	src.Physical = row.NewSchema(physical...)
	if !b.sourceConn(s, src, metadata) {
		broken = true
	}
	b.plan.Sources = append(b.plan.Sources, src)
	if !broken {
		b.sourceTable(s, src, computed)
	}
}

// sourceConn builds a source's error policy and connector. It reports
// false when the source has no schema to make a table of: none written,
// and none the connector knows.
func (b *builder) sourceConn(s *spec.Source, src *Source, metadata []string) bool {
	policy, err := runtime.NewPolicy("source", s.Name, s.OnError.Policy, b.deadLettersOf(s.OnError), b.env.Logger)
	if err != nil {
		b.errs.Addf(s.OnError.Pos, s.Path+".on_error", "%v", err)
	}
	src.policy, src.feed = policy, policy.Feed()
	conn, err := b.env.Registry.NewSource(s.Pos.File, s, connector.SourceEnv{
		Name:     s.Name,
		Pipeline: b.plan.Spec.Name,
		Schema:   src.Physical,
		Metadata: metadata,
		Logger:   b.env.Logger.With("source", s.Name),
		Reject:   src.feed.Reject,
		Formats:  b.env.Registry,
	})
	// From here on only src.Conn is used: it stays nil when the
	// connector failed to build, and every use below checks for that,
	// so that a connector's errors are reported and never followed by a
	// call into a half-built value.
	if err != nil {
		if len(s.Schema) == 0 {
			// What a constructor says without pointing at an option is
			// then about the missing columns, said below.
			err = aboutOptions(err, s.Path)
		}
		b.errs.Add(placeAt(err, s.Pos, s.Path))
	} else {
		src.Conn = conn
		b.checkMetadata(s, conn)
	}
	if len(s.Schema) == 0 {
		if sch, ok := src.Conn.(interface{ Schema() row.Schema }); ok {
			src.Physical = sch.Schema()
		} else {
			// A connector that failed may have failed for the missing
			// columns (a format's "the schema has no columns"): say what
			// to write, at the source.
			b.errs.Addf(s.Pos, s.Path+".schema", "missing required key: list the columns, e.g. `- id BIGINT`")
			return false
		}
	}
	return true
}

// sourceTable makes the table SQL reads of a source: its physical
// columns, then its computed columns, with its watermark and key.
func (b *builder) sourceTable(s *spec.Source, src *Source, computed []spec.Column) {
	// Computed columns see the physical columns and the computed ones
	// before them, as Flink's computed columns do.
	fields := append([]row.Field(nil), src.Physical.Fields...)
	for i, c := range computed {
		cur := row.NewSchema(fields...)
		comp, err := b.compileText(c.Computed, c.Path, cur, s.Name)
		if err != nil {
			continue
		}
		if i == 0 {
			src.computed = make([]*expr.Compiled, 0, len(computed))
		}
		src.computed = append(src.computed, comp)
		fields = append(fields, row.Field{Name: c.Name, Type: comp.Type})
	}
	schema := row.NewSchema(fields...)

	timeAttr := -1
	if s.Watermark != nil {
		timeAttr = b.watermark(src, schema)
	}
	var key []int
	for _, k := range s.Key {
		i := schema.Index(k)
		if i < 0 {
			b.errs.Addf(s.Pos, s.Path+".key", "key column %q is not in the schema", k)
			continue
		}
		key = append(key, i)
	}
	updating := false
	if u, ok := src.Conn.(connector.UpdatingSource); ok {
		updating = u.Updating()
	}
	if updating && key == nil {
		b.errs.Addf(s.Pos, s.Path+".key", "source %q reads a changelog (updates and deletes), which needs `key:` naming the columns that identify a row", s.Name)
	}
	bounded := src.Conn != nil && src.Conn.Bounded()
	node := &Node{
		Kind: ScanNode, Label: fmt.Sprintf("Scan(%s, type=%s)", s.Name, s.Type),
		Schema: schema, Mode: scanMode(updating, key), TimeAttr: timeAttr,
		Bounded: bounded, op: &scanOp{source: src},
	}
	src.Table = &Table{Name: s.Name, Root: node}
	if updating && key != nil {
		src.Table.Root = normalizeOver(node, s, src.Conn)
	}
	if b.shapeFaulted(s) {
		return // a computed column, the watermark or the key failed
	}
	// Of several tables with one name (an error the spec reported), SQL
	// reads the first.
	if key := strings.ToLower(s.Name); b.plan.tables[key] == nil {
		b.plan.tables[key] = src.Table
	}
}

// shapeFaulted reports whether an error makes the source's table unknown:
// one about the source as a whole, its schema, key or watermark.
func (b *builder) shapeFaulted(s *spec.Source) bool {
	return b.errs.reportedAt(s.Path) || b.errs.reported(s.Path+".schema") ||
		b.errs.reported(s.Path+".key") || b.errs.reported(s.Path+".watermark")
}

// checkMetadata refuses metadata columns the source cannot fill.
func (b *builder) checkMetadata(s *spec.Source, conn connector.Source) {
	var offered map[string]row.Type
	if m, ok := conn.(connector.MetadataSource); ok {
		offered = m.MetadataKeys()
	}
	for _, c := range s.Schema {
		if c.Metadata == "" {
			continue
		}
		t, ok := offered[c.Metadata]
		if !ok {
			keys := make([]string, 0, len(offered))
			for k := range offered {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if len(keys) == 0 {
				b.errs.Addf(c.Pos, c.Path, "column %q: a %s source has no metadata columns", c.Name, s.Type)
			} else {
				b.errs.Addf(c.Pos, c.Path, "column %q: a %s source has no metadata key %q; it offers %s", c.Name, s.Type, c.Metadata, strings.Join(keys, ", "))
			}
			continue
		}
		if t.ID != c.Type.ID || (t.ID.Nested() && t.Nullable() != c.Type.Nullable()) {
			b.errs.Addf(c.Pos, c.Path, "column %q: metadata %q is %s, declared %s", c.Name, c.Metadata, t, c.Type)
		}
	}
}

// watermark compiles the watermark expression and finds the time
// attribute: the one column the expression reads.
func (b *builder) watermark(src *Source, schema row.Schema) int {
	s := src.Spec
	path := s.Path + ".watermark"
	e, err := sql.ParseExpr(s.Watermark.Text)
	if err != nil {
		b.sqlError(s.Watermark, path, err)
		return -1
	}
	var cols []string
	walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.ColumnRef); ok {
			cols = append(cols, c.Column.Name)
		}
		return true
	})
	if len(cols) != 1 {
		b.errs.Addf(s.Watermark.Pos, path, "a watermark reads exactly one column, the event-time attribute (e.g. `event_time - INTERVAL '5' SECOND`); this one reads %d", len(cols))
		return -1
	}
	attr := schema.Index(cols[0])
	if attr < 0 {
		b.compileText(s.Watermark, path, schema, s.Name) // reports the unknown column
		return -1
	}
	if t := schema.Fields[attr].Type.ID; t != row.Timestamp && t != row.TimestampLTZ {
		b.errs.Addf(s.Watermark.Pos, path, "the event-time attribute %q is %s; it must be TIMESTAMP(3) or TIMESTAMP_LTZ(3) (compute one, e.g. `- event_time AS TO_TIMESTAMP_LTZ(ts, 3)`)", cols[0], schema.Fields[attr].Type)
		return -1
	}
	comp, err := b.compileParsed(e, s.Watermark, path, schema, s.Name)
	if err != nil {
		return -1
	}
	if comp.Type.ID != row.Timestamp && comp.Type.ID != row.TimestampLTZ {
		b.errs.Addf(s.Watermark.Pos, path, "a watermark expression must give a timestamp, this one gives %s", comp.Type)
		return -1
	}
	src.watermark = comp
	return attr
}

// compileText parses and compiles an expression from the file.
func (b *builder) compileText(s *spec.SQL, path string, schema row.Schema, table string) (*expr.Compiled, error) {
	e, err := sql.ParseExpr(s.Text)
	if err != nil {
		b.sqlError(s, path, err)
		return nil, err
	}
	return b.compileParsed(e, s, path, schema, table)
}

func (b *builder) compileParsed(e sql.Expr, s *spec.SQL, path string, schema row.Schema, table string) (*expr.Compiled, error) {
	c, err := compileExpr(b.plan.Spec.Zone, e, schema, table)
	if err != nil {
		b.sqlError(s, path, err)
		return nil, err
	}
	return c, nil
}

// transform plans a transform, planning first the transforms it reads. It
// returns nil when the transform failed: its errors are reported, or it
// reads a table that failed.
func (b *builder) transform(t *spec.Transform) *Table {
	for i, bt := range b.building {
		if bt == t {
			var cycle []string
			for _, c := range b.building[i:] {
				cycle = append(cycle, strings.ToLower(c.Name))
			}
			cycle = append(cycle, strings.ToLower(t.Name))
			b.errs.Addf(t.Pos, t.Path, "transforms form a cycle: %s", strings.Join(cycle, " -> "))
			return nil
		}
	}
	if tab, done := b.attempted[t]; done {
		return tab
	}
	b.attempted[t] = nil
	if t.SQL == nil || b.errs.reported(t.Path+".sql") {
		// The spec said why (no SQL, or an unset ${VAR} in it); planning
		// what is left of the text would only repeat it.
		return nil
	}
	b.building = append(b.building, t)
	defer func() { b.building = b.building[:len(b.building)-1] }()
	q, err := sql.Parse(t.SQL.Text)
	if err != nil {
		b.sqlError(t.SQL, t.Path+".sql", err)
		return nil
	}
	qb := &queryBuilder{b: b, top: q}
	root, err := qb.query(q)
	if errors.Is(err, errReported) {
		b.excused[t.Path] = true
		return nil
	}
	if err != nil {
		b.sqlError(t.SQL, t.Path+".sql", err)
		return nil
	}
	tab := &Table{Name: t.Name, Root: root, Transform: t}
	b.attempted[t] = tab
	b.plan.Transforms = append(b.plan.Transforms, tab)
	// Of several tables with one name (an error the spec reported), SQL
	// reads the first.
	key := strings.ToLower(t.Name)
	if _, taken := b.plan.tables[key]; !taken && b.tr[key] == t {
		b.plan.tables[key] = tab
	}
	return tab
}

// table resolves a table name used in FROM. A declared table that failed
// gives errReported: its errors are already reported, and a query that
// reads it cannot be checked.
func (b *builder) table(name string, at sql.Pos) (*Table, error) {
	key := strings.ToLower(name)
	if tab, ok := b.plan.tables[key]; ok {
		return tab, nil
	}
	if t, ok := b.tr[key]; ok {
		if tab := b.transform(t); tab != nil {
			return tab, nil
		}
		return nil, errReported
	}
	if b.declared[key] {
		return nil, errReported
	}
	return nil, errAt(at, "table %q not found: it is not a source or transform of this pipeline%s", name, suggest(name, b.tableNames()))
}

func (b *builder) tableNames() []string {
	var names []string
	for _, s := range b.plan.Spec.Sources {
		names = append(names, s.Name)
	}
	for _, t := range b.plan.Spec.Transforms {
		names = append(names, t.Name)
	}
	return names
}

// Skipped is the number of bad records the source's on_error policy set
// aside so far.
func (s *Source) Skipped() int64 { return s.policy.Skipped() }

// LookedUp reports whether a lookup join reads the source's table by key.
func (s *Source) LookedUp() bool { return s.lookedUp }

// Reject hands a bad record to the source's on_error policy, as the
// source's connector does: a connector that stands in for it (etld test's
// in-memory sources) follows the same policy.
func (s *Source) Reject(bad connector.BadRecord) error { return s.feed.Reject(bad) }

// Close releases what the plan holds beyond its connectors, which the
// runtime closes, as it does the dead-letter files: the compiled
// modules of its functions.
func (p *Plan) Close() error { return p.funcs.Close(context.Background()) }

// Functions are the pipeline's user-defined functions.
func (p *Plan) Functions() []*udf.Function { return p.funcs.Functions() }
