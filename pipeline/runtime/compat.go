package runtime

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What an edited pipeline does with the state a checkpoint holds, node
// by node. A node is matched to its saved state by ID (then by its
// aliases: a renamed transform's former ID; for a checkpoint of format 3
// and before, the ID that format gave it) and its state schema (the
// Fingerprint) decides:
//
//   - an operator whose schema is unchanged keeps its state, whatever
//     changed around it (a filter or projection after it, a new sink or
//     transform, a sink's options, the state TTL);
//   - an operator whose columns only widened in ways that leave the saved
//     values as they are (TINYINT/SMALLINT to INT, DECIMAL precision up at
//     the same scale, VARCHAR longer, TIMESTAMP precision up, NOT NULL
//     dropped) migrates: its state is read as it is under the new types;
//     INT to BIGINT and FLOAT to DOUBLE migrate too for an operator that
//     retags the saved values as it restores them (operator.Widener);
//   - any other change of an operator, a stateful operator added to or
//     gone from a transform whose other operators keep their state, and a
//     source whose type changed are refused, each named with what
//     changed, unless the run resets it (ResetState): then it starts empty;
//   - a source keeps its position and a sink its own state (what it wrote)
//     when its type is unchanged, whatever its columns;
//   - a new transform, source or sink starts empty; the state of one that
//     is gone is dropped.

// Action is what a restore does with one node's saved state.
type Action string

const (
	Keep    Action = "keep"    // restored as saved
	Migrate Action = "migrate" // restored under widened column types
	Fresh   Action = "new"     // nothing saved: starts empty
	Reset   Action = "reset"   // saved, set aside on request: starts empty
	Drop    Action = "drop"    // saved for a node the pipeline no longer has
	Refuse  Action = "refuse"  // does not fit: the run is refused
)

// Verdict is the Action for one node's state, or for saved state no node
// takes (Drop, Refuse of a gone operator).
type Verdict struct {
	// ID is the node's state ID, or the checkpoint's for saved state no
	// node takes.
	ID string
	// Name names the node for people: `transform "q" (GroupAggregate(...))`.
	Name   string
	Action Action
	// From is the ID of the saved state the node restores (Keep,
	// Migrate): ID itself, or an alias.
	From string
	// Why says what changed, for Migrate, Refuse, Reset and Drop.
	Why string
	// Pos is where the node's transform is in the pipeline file, when
	// known (Node.Pos).
	Pos string
	// Optional: a node whose state may be missing from a checkpoint (a
	// join's held-back inputs, a dead-letter file's length).
	Optional bool
	// Widen, for Migrate, is the retagging the operator's restore applies
	// to the saved values (INT to BIGINT, FLOAT to DOUBLE:
	// operator.Widener); nil when they read as they are.
	Widen map[row.TypeID]row.TypeID
	// WidenCols, for Migrate of an operator.ColumnWidener whose input
	// columns widened, is the retagging by input column (row.Null: as
	// saved), which the operator applies instead of Widen's by type: a
	// column of a type others widen from may then stay; nil when Widen
	// applies to every saved value.
	WidenCols []row.TypeID
	// Change, for Migrate of an operator, sums up what widened: "INT ->
	// BIGINT on column v".
	Change string
}

// Restores reports whether the node's saved state is handed to it.
func (v Verdict) Restores() bool { return v.Action == Keep || v.Action == Migrate }

// stateNode is a node whose state goes into checkpoints.
type stateNode struct {
	n        *Node
	optional bool
	// widener: the operator can retag saved values (operator.Widener);
	// colWidener: by input column (operator.ColumnWidener).
	widener, colWidener bool
}

// stateNodes lists g's nodes whose state goes into checkpoints, in the
// coordinator's order.
func stateNodes(g *Graph) []stateNode {
	var out []stateNode
	for _, s := range g.Sources {
		out = append(out, stateNode{n: &s.Node})
	}
	for _, o := range g.Ops {
		if _, ok := o.Op.(operator.Snapshotter); ok {
			w, ok := o.Op.(operator.Widener)
			cw, cok := o.Op.(operator.ColumnWidener)
			out = append(out, stateNode{n: &o.Node, widener: ok && w.CanWiden(), colWidener: cok && cw.CanWidenColumns()})
		}
	}
	for _, u := range g.Unions {
		if u.BuildFirst {
			out = append(out, stateNode{n: &u.Node, optional: true})
		}
	}
	for _, s := range g.Sinks {
		out = append(out, stateNode{n: &s.Node})
	}
	for _, d := range g.DeadLetters {
		if d.File != "" {
			out = append(out, stateNode{n: &d.Node, optional: true})
		}
	}
	return out
}

// Compare decides, for every node of g with state and for every saved
// state of cp no node takes, what a run of g restored from cp does with
// it. reset names the nodes to start empty (`--reset-state`): a state
// ID, "TRANSFORM/KIND#N" (the operator id of /metrics), a transform's
// name for all of its operators, "source/NAME" or "sink/NAME"; naming
// nothing is an error. g's node IDs must be set (the planner sets them;
// the coordinator derives the missing ones).
func Compare(g *Graph, cp *checkpoint.Checkpoint, reset []string) ([]Verdict, error) {
	nodes := stateNodes(g)
	resets := make([]bool, len(reset))
	isReset := func(ids ...string) bool {
		hit := false
		for i, r := range reset {
			for _, id := range ids {
				if id != "" && resetMatches(r, id) {
					resets[i], hit = true, true
				}
			}
		}
		return hit
	}
	used := map[string]bool{}
	// The transforms whose saved state is in cp, by the state name in
	// their IDs, and those of g.
	saved, present := map[string]bool{}, map[string]bool{}
	for _, c := range cp.Components {
		if name := transformOf(c.ID); name != "" {
			saved[name] = true
		}
	}
	for _, sn := range nodes {
		if name := transformOf(sn.n.ID); name != "" {
			present[name] = true
			for _, a := range sn.n.Aliases {
				present[transformOf(strings.TrimPrefix(a, "legacy:"))] = true
			}
		}
	}
	var out []Verdict
	for _, sn := range nodes {
		n := sn.n
		v := Verdict{ID: n.ID, Name: describe(n), Optional: sn.optional, Pos: n.Pos}
		comp := findState(cp, n)
		if comp != nil {
			used[comp.ID] = true
		}
		switch {
		case isReset(n.ID, n.Short, stateOf(comp)):
			v.Action, v.Why = Reset, "--reset-state: starts empty"
		case comp == nil && sn.optional:
			v.Action = Fresh
		case comp == nil:
			v.Action, v.Why = fresh(n, saved)
			if src, ok := normalized(n.ID); ok && restored(out, "source/"+src) {
				// Its source goes on from its saved position: an update or
				// delete of a row read before would meet no row.
				v.Action, v.Why = Refuse, "a changelog normalization new after a source that keeps its position: it would start without the rows read before"
			}
		default:
			v.From = comp.ID
			v.Action, v.Why, v.Widen, v.WidenCols, v.Change = fits(n, comp.Fingerprint, sn.widener, sn.colWidener)
			ttlChange(&v, n, comp)
		}
		out = append(out, v)
	}
	followJoins(out)
	keeps := false
	for _, v := range out {
		keeps = keeps || (transformOf(v.ID) != "" && v.Restores())
	}
	for _, c := range cp.Components {
		if used[c.ID] || strings.HasPrefix(c.ID, deadLettersID) {
			continue
		}
		v := Verdict{ID: c.ID, Name: describeID(c.ID), Action: Drop, Why: "no longer in the pipeline: its state is dropped"}
		switch name := transformOf(c.ID); {
		case isReset(c.ID):
			v.Why = "--reset-state: its state is dropped"
		case strings.HasSuffix(c.ID, "/inputs"):
			// A join's held-back inputs go with the join.
		case strings.HasPrefix(c.ID, "source/") && strings.Count(c.ID, "/") == 1 && keeps:
			// A source renamed in the file looks the same: read again
			// from its start, its rows would count twice.
			v.Action = Refuse
			v.Why = "it is gone while operators keep state built from its rows (a renamed source would read them again into that state)"
		case name != "" && present[name]:
			v.Action = Refuse
			v.Why = fmt.Sprintf("a stateful operator (%s) is gone from a transform whose other operators keep their state", c.Fingerprint)
		}
		out = append(out, v)
	}
	for i, r := range reset {
		if !resets[i] {
			return out, fmt.Errorf("--reset-state %s names no operator of pipeline %s nor any state of checkpoint %d", r, g.Name, cp.ID)
		}
	}
	return out, nil
}

// findState returns the saved state of n in cp: by its ID, then by its
// aliases; for a checkpoint of format 3 and before, by the ID that format
// gave it first.
func findState(cp *checkpoint.Checkpoint, n *Node) *checkpoint.Component {
	ids := []string{n.ID}
	var legacy []string
	for _, a := range n.Aliases {
		if l, ok := strings.CutPrefix(a, "legacy:"); ok {
			legacy = append(legacy, l)
		} else {
			ids = append(ids, a)
		}
	}
	if cp.Format != 0 && cp.Format < 4 {
		ids = append(legacy, ids...)
	}
	for _, id := range ids {
		if c := cp.Find(id); c != nil {
			return c
		}
	}
	return nil
}

// fresh says why a node without saved state may start empty, or refuses
// a stateful operator new in a transform whose other operators keep
// their state: it would see only the changes from now on while they go
// on with everything before.
func fresh(n *Node, saved map[string]bool) (Action, string) {
	name := transformOf(n.ID)
	if name != "" && saved[name] {
		return Refuse, "a stateful operator new in a transform whose other operators keep their state: it would start empty"
	}
	switch n.Kind {
	case "source":
		return Fresh, "new: reads from its start"
	case "sink":
		return Fresh, "new: receives the changes from now on"
	}
	return Fresh, "new: starts empty"
}

// fits decides what n does with saved state of schema old; widener:
// n's operator can retag saved values (operator.Widener), colWidener: by
// input column (operator.ColumnWidener).
func fits(n *Node, old string, widener, colWidener bool) (Action, string, map[row.TypeID]row.TypeID, []row.TypeID, string) {
	if old == n.Fingerprint {
		return Keep, "", nil, nil, ""
	}
	switch {
	case n.Kind == "source" && n.Transform == "":
		if connType(old) != connType(n.Fingerprint) {
			return Refuse, fmt.Sprintf("its type changed from %s to %s: the saved position means nothing to it", connType(old), connType(n.Fingerprint)), nil, nil, ""
		}
		return Keep, "its columns changed: its position is kept", nil, nil, ""
	case n.Kind == "sink":
		if connType(old) != connType(n.Fingerprint) {
			return Reset, fmt.Sprintf("its type changed from %s to %s: it starts without the state of what it wrote", connType(old), connType(n.Fingerprint)), nil, nil, ""
		}
		return Keep, "its input changed: the state of what it wrote is kept", nil, nil, ""
	}
	return schemaChange(old, n.Fingerprint, widener, colWidener)
}

// ttlChange makes the verdict of an operator that restores its saved
// state say so when its state TTL changed since the checkpoint (one of
// format 5 and later, which records it): the saved ages migrate in
// place under the new TTL, a shorter one expiring the keys already
// older than it.
func ttlChange(v *Verdict, n *Node, comp *checkpoint.Component) {
	if !v.Restores() || transformOf(n.ID) == "" || comp.StateTTL < 0 || comp.StateTTL == n.StateTTL {
		return
	}
	change := fmt.Sprintf("state TTL %s -> %s", ttlText(comp.StateTTL), ttlText(n.StateTTL))
	why := "the saved keys keep their ages under the new state TTL"
	if v.Action == Keep {
		v.Action, v.Why, v.Change = Migrate, why, change
		return
	}
	v.Why += "; " + why
	v.Change += ", " + change
}

// ttlText writes a state TTL as state_ttl is written: "1h", "90s",
// "none" for 0.
func ttlText(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// connType is the connector type a source's or a sink's fingerprint
// starts with ("type kafka, ...").
func connType(fp string) string {
	t, _, _ := strings.Cut(strings.TrimPrefix(fp, "type "), ",")
	return t
}

// followJoins gives a join's held-back inputs the join's action when it
// starts empty: rows held for a join that forgot its build side would
// join with nothing; and its retagging when it widens: the held rows are
// of the join's input columns.
func followJoins(vs []Verdict) {
	byID := map[string]Verdict{}
	for _, v := range vs {
		byID[v.ID] = v
	}
	for i, v := range vs {
		join, ok := strings.CutSuffix(v.ID, "/inputs")
		if !ok || !v.Restores() {
			continue
		}
		switch j := byID[join]; {
		case j.Action == Reset || j.Action == Fresh:
			vs[i].Action, vs[i].Why = j.Action, "the join's held-back inputs go with the join"
		case j.Action == Migrate && j.WidenCols != nil:
			// The held rows are retagged by type only: a column of the
			// narrow type that stays would be widened with them.
			vs[i].Action, vs[i].Why = Refuse, "the join's held-back inputs cannot be retagged by column, and a column of the type others widen from stays: reset the join"
		case j.Action == Migrate && j.Widen != nil:
			vs[i].Action, vs[i].Widen, vs[i].Change = Migrate, j.Widen, j.Change
			vs[i].Why = "the join's held-back inputs widen with the join"
		}
	}
}

// normalized reports the source whose changelog normalization id
// ("source/NAME/normalize") is.
func normalized(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "source/")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "/normalize")
}

// restored reports whether the verdict of id in vs restores its state.
func restored(vs []Verdict, id string) bool {
	for _, v := range vs {
		if v.ID == id {
			return v.Restores()
		}
	}
	return false
}

// transformOf is the state name of a transform's state ID
// ("transform/NAME/..."), "" for other IDs.
func transformOf(id string) string {
	parts := strings.SplitN(id, "/", 3)
	if len(parts) < 3 || parts[0] != "transform" {
		return ""
	}
	return parts[1]
}

func stateOf(c *checkpoint.Component) string {
	if c == nil {
		return ""
	}
	return c.ID
}

// resetMatches reports whether the --reset-state value r names the node
// or state id: the ID itself, the ID without "transform/" (the operator
// id of /metrics when the transform has no uid), or a transform's name
// for all of its operators.
func resetMatches(r, id string) bool {
	r = strings.TrimSuffix(r, "/")
	if r == id || "transform/"+r == id {
		return true
	}
	if name := transformOf(id); name != "" {
		return r == name || r == "transform/"+name
	}
	// An operator id of /metrics, "TRANSFORM/KIND#N": its transform.
	short, _, ok := strings.Cut(id, "/")
	return ok && strings.Contains(id, "#") && r == short
}

// Refusals is the error of a run whose checkpoint does not fit: every
// refused node with what changed, and the choices.
func Refusals(dir string, cp *checkpoint.Checkpoint, vs []Verdict) error {
	var lines []string
	var ids []string
	for _, v := range vs {
		if v.Action == Refuse {
			at := ""
			if v.Pos != "" {
				at = v.Pos + ": "
			}
			lines = append(lines, fmt.Sprintf("%s%s [%s]: %s", at, v.Name, v.ID, v.Why))
			ids = append(ids, v.ID)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	slices.Sort(ids)
	return fmt.Errorf("the saved state in %s (checkpoint %d, taken %s) does not fit the edited pipeline: %s; "+
		"choices: revert the edit; start those operators empty with `etld run --reset-state %s` (they then see only the rows read from now on; `etld state reset STATE_DIR PIPELINE ID --pipeline FILE` does it once, in the state), or give the transform a new `uid:` (all of its operators start empty); "+
		"rebuild them from the sources' start up to the saved positions with `etld run --backfill` (sources that can read their input again, upsert sinks: these get only the rows that differ); `etld validate --against-state` lists what each operator keeps",
		dir, cp.ID, cp.Time.UTC().Format("2006-01-02T15:04:05Z07:00"), strings.Join(lines, "; "), strings.Join(ids, " --reset-state "))
}
