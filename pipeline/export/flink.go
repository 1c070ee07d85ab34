// Package export writes a planned pipeline as a script for another
// engine: Flink (etld export flink), whose SQL etld speaks.
//
// The script is what Flink's SQL client runs (sql-client.sh -f): SET
// statements for what the pipeline file sets, one CREATE TABLE per source
// and per sink with the Flink connector's options, one CREATE TEMPORARY
// VIEW per transform and one EXECUTE STATEMENT SET with an INSERT INTO
// per sink. The option mapping of each connector is the connector's own
// (connector.FlinkSource, FlinkSink, FlinkFormat); this package adds
// what every pipeline shares: schemas, computed and metadata columns,
// watermarks, the PRIMARY KEY of each upsert sink from the key etld
// derived, on_error policies, the references ${VAR} the file used, and
// the list of differences between the two engines.
package export

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/spec"
)

// Difference is something the script does otherwise than etld.
type Difference struct {
	Pos spec.Pos
	// Path is the option's field path in the file (sources[0].follow),
	// Element names the source, sink or transform it belongs to.
	Path, Element string
	What          string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: %s (%s): %s", d.Pos, d.Path, d.Element, d.What)
}

// Placeholder is a ${NAME} the script holds instead of a value.
type Placeholder struct {
	Name string
	// Where says what it stands for and where the file used it.
	Where string
}

// Script is an exported pipeline.
type Script struct {
	Pipeline string
	// SQL is the whole script, the differences and placeholders listed
	// in comments at its top.
	SQL          string
	Differences  []Difference
	Placeholders []Placeholder
}

// Flink writes p as a Flink SQL script. An element that has no Flink
// counterpart (a connector without one, retract mode into a CSV file)
// is an error naming its position; one that Flink runs otherwise is a
// Difference.
func Flink(p *plan.Plan) (*Script, error) {
	x := &exporter{plan: p, names: map[string]bool{}, placeholders: map[string]string{}}
	return x.script()
}

type exporter struct {
	plan  *plan.Plan
	errs  spec.List
	diffs []Difference
	// names are the Flink table names taken, lower-cased.
	names        map[string]bool
	placeholders map[string]string // name -> where
	// selects are the select lists of the sinks' INSERTs, in order.
	selects []string
	body    strings.Builder
}

func (x *exporter) differ(pos spec.Pos, path, element, format string, args ...any) {
	x.diffs = append(x.diffs, Difference{Pos: pos, Path: path, Element: element, What: oneLine(fmt.Sprintf(format, args...))})
}

func (x *exporter) script() (*Script, error) {
	p := x.plan
	for _, s := range p.Sources {
		x.names[strings.ToLower(s.Spec.Name)] = true
	}
	for _, t := range p.Transforms {
		x.names[strings.ToLower(t.Name)] = true
	}
	x.settings()
	x.functions()
	for _, s := range p.Sources {
		x.source(s)
	}
	for _, t := range p.Transforms {
		x.transform(t)
	}
	var sinks []*plan.Sink
	for _, s := range p.Sinks {
		if s.Spec.DeadLetters {
			x.differ(s.Spec.Pos, s.Spec.Path, "sink "+s.Spec.Name, "the sink takes etld's dead letters, which Flink has none of: it is not exported")
			continue
		}
		sinks = append(sinks, s)
	}
	sinkTables := make([]string, len(sinks))
	for i, s := range sinks {
		sinkTables[i] = x.sink(s)
	}
	x.filters()
	x.dataFailures()
	x.errorCalls()
	if len(sinks) > 0 {
		x.body.WriteString("EXECUTE STATEMENT SET\nBEGIN\n")
		for i, s := range sinks {
			fmt.Fprintf(&x.body, "INSERT INTO %s SELECT %s FROM %s;\n", ident(sinkTables[i]), x.selects[i], ident(s.Input.Name))
		}
		x.body.WriteString("END;\n")
	}
	if err := x.errs.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(x.diffs, func(i, j int) bool { return x.diffs[i].Pos.Line < x.diffs[j].Pos.Line })
	out := &Script{Pipeline: p.Spec.Name, Differences: x.diffs}
	names := make([]string, 0, len(x.placeholders))
	for n := range x.placeholders {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out.Placeholders = append(out.Placeholders, Placeholder{Name: n, Where: x.placeholders[n]})
	}
	out.SQL = x.header(out) + x.body.String()
	return out, nil
}

// header is the comment at the top: where the script comes from, how to
// run it, its placeholders and its differences.
func (x *exporter) header(s *Script) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- Flink SQL script of the etld pipeline %s (%s), written by etld export flink.\n", s.Pipeline, x.plan.Spec.File)
	b.WriteString("-- Run it with Flink 2.x: sql-client.sh -f FILE (docs/flink-export.md names the jars).\n")
	if len(s.Placeholders) > 0 {
		b.WriteString("--\n-- Placeholders: the file's ${VAR} references, kept as they are; substitute\n")
		b.WriteString("-- them before running, e.g. envsubst < FILE > job.sql:\n")
		for _, p := range s.Placeholders {
			fmt.Fprintf(&b, "--   ${%s}: %s\n", p.Name, p.Where)
		}
	}
	if len(s.Differences) > 0 {
		fmt.Fprintf(&b, "--\n-- Differences: %d, where Flink will not do what etld does:\n", len(s.Differences))
		for _, d := range s.Differences {
			fmt.Fprintf(&b, "--   %s (%s, line %d): %s\n", d.Path, d.Element, d.Pos.Line, d.What)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// settings writes the SET statements for what the file sets, and the
// session time zone etld always uses.
func (x *exporter) settings() {
	sp := x.plan.Spec
	set := func(k, v string) { fmt.Fprintf(&x.body, "SET %s = %s;\n", quote(k), quote(v)) }
	mode := "streaming"
	if x.plan.Batch {
		mode = "batch"
	}
	set("execution.runtime-mode", mode)
	// The session zone windows over a TIMESTAMP_LTZ align to
	// (local_time_zone, UTC by default).
	zone := "UTC"
	if sp.LocalTimeZone != "" {
		zone = sp.LocalTimeZone
	}
	set("table.local-time-zone", zone)
	switch {
	case sp.CheckpointInterval > 0:
		set("execution.checkpointing.interval", connector.FlinkDuration(sp.CheckpointInterval))
	case !x.plan.Batch:
		// etld checkpoints a pipeline that sets no interval every 10 s;
		// Flink does not checkpoint at all unless told, and then commits
		// no Kafka offset and no file sink's part file.
		set("execution.checkpointing.interval", connector.FlinkDuration(runtime.DefaultCheckpointInterval))
	}
	if !x.plan.Batch {
		if sp.MiniBatch {
			// etld folds the changes of one key within a batch (up to
			// 1024 rows or 50 ms) before an upsert sink.
			set("table.exec.mini-batch.enabled", "true")
			set("table.exec.mini-batch.allow-latency", "50 ms")
			set("table.exec.mini-batch.size", "1024")
		} else {
			set("table.exec.mini-batch.enabled", "false")
		}
	}
	if sp.TwoPhaseAggregate {
		// etld folds partials per key in the decoders and merges them,
		// as Flink's LocalGroupAggregate and GlobalGroupAggregate.
		set("table.optimizer.agg-phase-strategy", "TWO_PHASE")
	}
	if !x.plan.Batch {
		x.idleTimeout(set)
	}
	if sp.StateTTL > 0 && !x.plan.Batch {
		// Both engines expire the state of a key not written for the
		// TTL, in processing time (Flink's OnCreateAndWrite).
		set("table.exec.state.ttl", connector.FlinkDuration(sp.StateTTL))
	}
	x.body.WriteString("\n")
	x.transformTTLs()
}

// idleTimeout sets Flink's table.exec.source.idle-timeout to the
// sources' idle_timeout. Flink has one for the job: when sources set
// different ones, the shortest applies to all, which is a difference for
// the others.
func (x *exporter) idleTimeout(set func(k, v string)) {
	var least time.Duration
	for _, src := range x.plan.Spec.Sources {
		if d := src.IdleTimeout; d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	if least == 0 {
		return
	}
	set("table.exec.source.idle-timeout", connector.FlinkDuration(least))
	for _, src := range x.plan.Spec.Sources {
		if d := src.IdleTimeout; d != least && src.Watermark != nil {
			x.differ(src.Pos, src.Path+".idle_timeout", "source "+src.Name,
				"Flink has one idle timeout for the job: its splits go idle after %s, not %s", connector.FlinkDuration(least), connector.FlinkDuration(d))
		}
	}
}

// transformTTLs lists the transforms whose own state_ttl differs from the
// pipeline's: Flink has one table.exec.state.ttl per job, and its
// STATE_TTL hint covers only a join's or GROUP BY's input tables, not
// every stateful operator of a view, so such a transform's state expires
// after the pipeline's TTL on Flink.
func (x *exporter) transformTTLs() {
	sp := x.plan.Spec
	if x.plan.Batch {
		return
	}
	for _, tr := range sp.Transforms {
		if tr.StateTTL == nil || *tr.StateTTL == sp.StateTTL || !x.plan.ExpiringState(tr.Name) {
			continue
		}
		own, flink := "keeps its state forever", "table.exec.state.ttl = 0 (forever)"
		if *tr.StateTTL > 0 {
			own = "drops a key's state after " + connector.FlinkDuration(*tr.StateTTL)
		}
		if sp.StateTTL > 0 {
			flink = "the pipeline's table.exec.state.ttl = " + connector.FlinkDuration(sp.StateTTL)
		}
		x.differ(tr.StateTTLPos, tr.Path+".state_ttl", "transform "+tr.Name,
			"etld %s for this transform; Flink has one state TTL per job and applies %s to it", own, flink)
	}
}

// transform writes a transform as a view, its query in canonical form
// (names quoted where Flink reserves them).
func (x *exporter) transform(t *plan.Table) {
	tr := t.Transform
	q, err := x.formatSQL(tr.SQL, parseQuery, tr.Path+".sql", "transform "+t.Name)
	if err != nil {
		x.errs.Addf(tr.Pos, tr.Path+".sql", "%v", err)
		return
	}
	fmt.Fprintf(&x.body, "CREATE TEMPORARY VIEW %s%s AS\n%s;\n\n", ident(t.Name), numberedColumns(t.Root), q)
}

// numberedColumns is the view's column list, ` (id, id0)`, when the
// query's select list numbered a repeated name: Flink refuses a view
// whose query repeats a name unless the view names its columns. It is ""
// otherwise. The select list is the root, or under a Distinct or a union
// (whose first input names its columns), with the same names.
func numberedColumns(root *plan.Node) string {
	names := root.Schema.Names()
	for n := root; n != nil && slices.Equal(n.Schema.Names(), names); {
		if n.Renamed {
			quoted := make([]string, len(names))
			for i, m := range names {
				quoted[i] = ident(m)
			}
			return " (" + strings.Join(quoted, ", ") + ")"
		}
		switch {
		case n.Input != nil:
			n = n.Input
		case len(n.Inputs) > 0 && n.Kind == plan.UnionNode:
			n = n.Inputs[0]
		default:
			n = nil
		}
	}
	return ""
}

// filters lists the transforms that filter an updating input.
func (x *exporter) filters() {
	seen := map[*plan.Node]bool{}
	for _, t := range x.plan.Transforms {
		var walk func(n *plan.Node)
		walk = func(n *plan.Node) {
			if n == nil || seen[n] {
				return
			}
			seen[n] = true
			if n.Kind == plan.DistinctNode && !n.Mode.Updating {
				tr := t.Transform
				x.differ(tr.Pos, tr.Path+".sql", "transform "+t.Name,
					"SELECT DISTINCT: etld's result is insert-only (each distinct row once, never retracted); Flink plans it as a GroupAggregate whose result is updating, which an append-only sink (a file, kafka without a key) refuses")
			}
			if n.Filters() && n.Input != nil && n.Input.Mode.Updating {
				tr := t.Transform
				x.differ(tr.Pos, tr.Path+".sql", "transform "+t.Name,
					"a filter over an updating input: when an update's new row fails the condition etld emits -D of the old row (and +I when only the new row passes); Flink emits a lone -U (+U), which an upsert sink drops, keeping the stale row (FLINK-9528)")
			}
			walk(n.Input)
			for _, in := range n.Inputs {
				walk(in)
			}
		}
		walk(t.Root)
	}
}

// tableName returns a Flink table name for a sink: its own, unless a
// source or transform has it (Flink has one namespace for all tables).
func (x *exporter) tableName(name string) string {
	out := name
	for i := 1; x.names[strings.ToLower(out)]; i++ {
		out = name + "_sink"
		if i > 1 {
			out = fmt.Sprintf("%s_sink%d", name, i)
		}
	}
	x.names[strings.ToLower(out)] = true
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ident quotes a name for Flink SQL.
func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// quote writes a Flink SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
