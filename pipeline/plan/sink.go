package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/pipeline/sql"
)

// compileExpr is where the planner compiles every expression: the one
// place the pipeline's session zone (local_time_zone, nil for UTC) reaches
// the compiler, so no call site can compile in UTC by omission.
func compileExpr(zone *time.Location, e sql.Expr, schema row.Schema, table string) (*expr.Compiled, error) {
	c, err := compileCalcExpr(zone, e, schema, table)
	if err == nil && c.ReadsWatermark {
		return nil, watermarkOutsideCalc(e)
	}
	return c, err
}

// compileCalcExpr is compileExpr for an expression a Calc evaluates (a
// query's select list, WHERE and HAVING): it may call
// CURRENT_WATERMARK, which only a Calc gives the watermark it passes
// (calcOp.fresh).
func compileCalcExpr(zone *time.Location, e sql.Expr, schema row.Schema, table string) (*expr.Compiled, error) {
	if sq := findScalarQuery(e); sq != nil {
		return nil, errAt(sq.At, "a scalar subquery is supported in WHERE, the select list and HAVING")
	}
	return expr.Compile(e, expr.Table{Name: table, Schema: schema}, expr.WithZone(zone))
}

// watermarkNotRowtime is the error for CURRENT_WATERMARK of a column
// that is not the input's event-time attribute.
func watermarkNotRowtime(e sql.Expr) error {
	return errAt(watermarkCall(e), "CURRENT_WATERMARK takes the input's event-time attribute, the column its WATERMARK is declared on (as Flink requires a rowtime attribute)")
}

// watermarkCall is where e's first CURRENT_WATERMARK call is.
func watermarkCall(e sql.Expr) sql.Pos {
	at := e.Pos()
	walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.Call); ok && strings.EqualFold(c.Name, "CURRENT_WATERMARK") {
			at = c.At
			return false
		}
		return true
	})
	return at
}

// watermarkOutsideCalc is the error for CURRENT_WATERMARK where no Calc
// evaluates it (a join condition, an aggregate's argument, a computed
// column): there etld knows no watermark to give it.
func watermarkOutsideCalc(e sql.Expr) error {
	return errAt(watermarkCall(e), "CURRENT_WATERMARK is supported in a query's select list, WHERE and HAVING (compute it there, in a subquery, and use its column here)")
}

// zone is the pipeline's session zone, nil for UTC.
func (q *queryBuilder) zone() *time.Location { return q.b.plan.Spec.Zone }

func (b *builder) sink(s *spec.Sink) {
	policy, err := runtime.NewPolicy("sink", s.Name, s.OnError.Policy, b.deadLettersOf(s.OnError), b.env.Logger)
	if err != nil {
		b.errs.Addf(s.OnError.Pos, s.Path+".on_error", "%v", err)
	}
	feed := policy.Feed()
	conn, err := b.env.Registry.NewSink(s.Pos.File, s, connector.SinkEnv{
		Name:    s.Name,
		Logger:  b.env.Logger.With("sink", s.Name),
		Formats: b.env.Registry,
		Reject:  feed.Reject,
	})
	if err != nil {
		// The registry returns no connector with an error: nothing
		// below may call into a sink that did not build.
		b.errs.Add(placeAt(err, s.Pos, s.Path))
		return
	}
	if s.DeadLetters {
		if !b.errs.reported(s.Path) {
			b.deadLetterSink(s, conn, policy, feed)
		}
		return
	}
	if b.errs.reported(s.Path) {
		// A dangling from:, an unknown mode: choosing a mode would only
		// repeat the spec's errors.
		return
	}
	key := strings.ToLower(s.From)
	tab := b.plan.tables[key]
	if tab == nil || tab.Root.Schema.Len() == 0 {
		// A transform that failed to plan has its own errors, and so has
		// a source without columns (no schema, or a connector that did
		// not build): binding the sink to nothing would only add a
		// second, misleading error.
		if b.declared[key] {
			b.excused[s.Path] = true
		}
		return
	}
	sk := &Sink{Spec: s, Conn: conn, Input: tab, policy: policy, feed: feed}
	if err := b.chooseMode(sk); err != nil {
		b.errs.Add(placeAt(err, s.Pos, s.Path))
		return
	}
	sk.Replay = replayOf(tab)
	if sk.Replay.ByRecord && sk.Mode == connector.Upsert && b.plan.Spec.MiniBatch {
		// The runtime compacts each batch's upserts by key (graph.go):
		// which changes survive depends on where batches are cut.
		sk.Replay = connector.Replay{Why: "mini_batch compacts upserts within batches, which a restored run cuts elsewhere"}
	}
	if err := conn.Bind(connector.SinkInput{Schema: tab.Root.Schema, Mode: sk.Mode, Key: sk.Key, Replay: sk.Replay}); err != nil {
		b.errs.Add(placeAt(connector.Place(s.Pos.File, s.Options, s.Path, err), s.Pos, s.Path))
		return
	}
	b.plan.Sinks = append(b.plan.Sinks, sk)
}

// chooseMode gives a sink the mode its file names, when the sink and its
// input allow it, or else picks one: append (or upsert on a declared
// key) for an insert-only table; for an updating one, retract where the
// sink writes the change kinds themselves, else upsert on the table's
// key; or it explains why the sink cannot take its input.
func (b *builder) chooseMode(sk *Sink) error {
	s, in := sk.Spec, sk.Input.Root
	caps := sk.Conn.Capabilities()
	names := in.Schema.Names()
	asked := connector.ModeFromString(s.Mode)
	what := fmt.Sprintf("sink %q (%s)", s.Name, s.Type)
	source := describe(sk.Input)

	// A declared key must be the derived upsert key: anything else would
	// need Flink's upsert materializer, which keeps every row's history.
	var declared []int
	if len(s.Key) > 0 {
		for _, k := range s.Key {
			i := in.Schema.Index(k)
			if i < 0 {
				return spec.Errorf(s.KeyPos, s.Path+".key", "key column %q is not a column of %s (its columns: %s)", k, source, strings.Join(names, ", "))
			}
			declared = append(declared, i)
		}
		if in.Mode.HasKey && !in.Mode.matchesKey(s.Key, names) {
			return spec.Errorf(s.KeyPos, s.Path+".key", "%s declares key %s, but %s of %s is %s. Writing by another key would have to keep every row's history to stay correct (Flink's upsert materializer); etld refuses instead. Use key: %s, or change the GROUP BY", what, keyNames(declared, names), keyWord(in.Mode), source, in.Mode.keysText(names), strings.Join(keyList(in.Mode.Key, names), ", "))
		}
		if in.Mode.Updating && !in.Mode.HasKey {
			return spec.Errorf(s.KeyPos, s.Path+".key", "%s declares key %s, but %s has no upsert key: its updates cannot be matched to rows by key", what, keyNames(declared, names), source)
		}
	}
	key := in.Mode.Key
	hasKey := in.Mode.HasKey
	if declared != nil {
		key, hasKey = declared, true
	}

	switch asked {
	case connector.Append:
		if !caps.Append {
			return spec.Errorf(s.ModePos, s.Path+".mode", "%s cannot run in append mode", what)
		}
		if in.Mode.Updating {
			return refuse(s, "append-only", sk.Input, caps)
		}
		sk.Mode = connector.Append
	case connector.Upsert:
		if !caps.Upsert {
			return spec.Errorf(s.ModePos, s.Path+".mode", "%s cannot run in upsert mode%s", what, alternatives(caps))
		}
		if !hasKey && caps.UpsertNeedsKey {
			return spec.Errorf(s.ModePos, s.Path+".mode", "%s in upsert mode needs a key, and %s has none; declare `key:` with the columns that identify a row", what, source)
		}
		sk.Mode, sk.Key = connector.Upsert, key
	case connector.Retract:
		if !caps.Retract {
			return spec.Errorf(s.ModePos, s.Path+".mode", "%s cannot run in retract mode%s", what, alternatives(caps))
		}
		sk.Mode = connector.Retract
	default: // auto
		switch {
		case !in.Mode.Updating && declared != nil && caps.Upsert:
			sk.Mode, sk.Key = connector.Upsert, declared
		case !in.Mode.Updating && caps.Append:
			sk.Mode = connector.Append
		case in.Mode.Updating && caps.Retract && caps.AutoRetract:
			// A sink that writes the kinds themselves (print, a
			// changelog format) shows the whole changelog.
			sk.Mode = connector.Retract
		case in.Mode.Updating && caps.Upsert && (hasKey || !caps.UpsertNeedsKey):
			sk.Mode, sk.Key = connector.Upsert, key
		case in.Mode.Updating:
			return refuse(s, modeWord(caps), sk.Input, caps)
		default:
			return spec.Errorf(s.Pos, s.Path, "%s cannot take the insert-only result of %s", what, source)
		}
	}
	return nil
}

func modeWord(c connector.Capabilities) string {
	if c.Append && !c.Upsert && !c.Retract {
		return "append-only"
	}
	if c.Upsert {
		return "upsert, no key"
	}
	return "append-only"
}

func alternatives(c connector.Capabilities) string {
	var modes []string
	if c.Append {
		modes = append(modes, "append")
	}
	if c.Upsert {
		modes = append(modes, "upsert")
	}
	if c.Retract {
		modes = append(modes, "retract")
	}
	return "; it supports " + strings.Join(modes, ", ")
}

// refuse explains why a sink cannot take an updating table: which
// operator makes the table update, and what the user can change.
func refuse(s *spec.Sink, mode string, t *Table, caps connector.Capabilities) error {
	why := "its rows change after they are written"
	// The first updating node found down the inputs (through a union,
	// the input that makes it updating) says why.
	union := false
	var find func(n *Node) bool
	find = func(n *Node) bool {
		if n != nil && n.Kind == UnionNode && n.Mode.Updating {
			union = true
		}
		switch {
		case n == nil || !n.Mode.Updating:
			return false
		case n.Kind == GroupAggNode || n.Kind == DistinctNode:
			why = groupText(n) + " updates rows already written"
			return true
		case n.Kind == RankNode || n.Kind == DedupNode:
			why = n.Label + " updates rows already written"
			return true
		case n.Kind == JoinNode && (n.joined().join.Kind != joinop.InnerJoin || !n.Inputs[0].Mode.Updating && !n.Inputs[1].Mode.Updating):
			why = n.Label + " retracts its rows when matches arrive or leave"
			return true
		case n.Kind == ScanNode:
			why = fmt.Sprintf("source %q reads a changelog of updates and deletes", n.scanned().Spec.Name)
			return true
		}
		for _, in := range n.inputs() {
			if find(in) {
				return true
			}
		}
		return false
	}
	find(t.Root)
	var fixes []string
	if caps.Upsert && union {
		fixes = append(fixes, "GROUP BY the result of the UNION to give it an upsert key (a union has none: a key of one input says nothing of another's rows)")
	} else if caps.Upsert {
		fixes = append(fixes, "keep the upsert key columns in the SELECT list so that this sink can upsert")
	} else {
		fixes = append(fixes, "use an upsert sink (elasticsearch, mysql, kafka with a key)")
	}
	if caps.Retract {
		fixes = append(fixes, "set `mode: retract`")
	}
	fixes = append(fixes, "aggregate over a window (TUMBLE) to get final rows", "or set `execution: batch` when every source is bounded")
	return spec.Errorf(s.Pos, s.Path, "sink %q (%s, %s) cannot take the updating result of %s: %s. %s.",
		s.Name, s.Type, mode, describe(t), why, capitalize(strings.Join(fixes, ", ")))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func groupText(n *Node) string {
	if n.Kind == DistinctNode {
		return "SELECT DISTINCT"
	}
	keys := n.groupAgg().keys
	if len(keys) == 0 {
		return "the global aggregate"
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = n.Input.Schema.Fields[k].Name
	}
	return "GROUP BY " + strings.Join(names, ", ")
}

func describe(t *Table) string {
	if t.Transform != nil {
		return fmt.Sprintf("transform %q", t.Name)
	}
	return fmt.Sprintf("source %q", t.Name)
}

// keyWord is "the upsert key", or "an upsert key" when there are several.
func keyWord(c Changelog) string {
	if len(c.Alt) > 0 {
		return "an upsert key"
	}
	return "the upsert key"
}
