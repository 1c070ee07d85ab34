package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// temporalTable returns the right side of `l JOIN r FOR SYSTEM_TIME AS OF
// x` without its AS OF, to be planned as a plain table, and the reference
// itself; nil when the right side has no AS OF. lookupJoin has already
// taken the processing-time AS OF of a lookup source.
func temporalTable(j *sql.Join) (plain sql.FromItem, ref *sql.TableRef) {
	ref, ok := j.Right.(*sql.TableRef)
	if !ok || ref.AsOf == nil {
		return j.Right, nil
	}
	cp := *ref
	cp.AsOf = nil
	return &cp, ref
}

// temporalJoin plans an event-time temporal join (Flink's TemporalJoin
// with TemporalRowTimeJoinOperator): each left row joins the version of
// the right table valid at its event time, once the watermark passes it.
// The refusals are Flink's (StreamPhysicalTemporalJoinRule,
// TemporalJoinRewriteWithUniqueKeyRule), with etld's words and positions.
func (q *queryBuilder) temporalJoin(n *Node, s *scope, j *sql.Join, ref *sql.TableRef) error {
	left, right := n.Inputs[0], n.Inputs[1]
	lw := left.Schema.Len()
	name := ref.Name.Name
	if !ref.Alias.IsZero() {
		name = ref.Alias.Name
	}
	if q.b.plan.Batch {
		return errAt(ref.AsOfAt, "an event-time temporal join (FOR SYSTEM_TIME AS OF) is streaming only, as in Flink: drop `execution: batch`, or join %s without AS OF", name)
	}
	var kind joinop.JoinKind
	switch j.Type {
	case sql.InnerJoin, sql.CommaJoin:
		kind = joinop.InnerJoin
	case sql.LeftJoin:
		kind = joinop.LeftJoin
	default:
		return errAt(j.At, "a temporal join is INNER or LEFT, as in Flink: a %s of the versioned table %s is not supported", j.Type, name)
	}
	// The AS OF expression must be the left input's event-time attribute.
	col, isCol := ref.AsOf.(*sql.ColumnRef)
	at := -1
	if isCol {
		i, err := s.resolve(col)
		if err != nil {
			return err
		}
		at = i
	}
	switch {
	case at >= 0 && at < lw && procTimeCol(left, at):
		return errAt(ref.AsOf.Pos(), "a processing-time temporal join of %s is refused, as Flink refuses it: FOR SYSTEM_TIME AS OF a processing-time attribute only looks up a mysql (or jdbc) source; a transform or a WITH query needs the left table's event-time attribute", name)
	case left.TimeAttr < 0:
		return errAt(ref.AsOf.Pos(), "a temporal join needs the left input's event-time attribute after AS OF, and the left input has none: declare a watermark on its source")
	case at != left.TimeAttr:
		return errAt(ref.AsOf.Pos(), "FOR SYSTEM_TIME AS OF must name the left input's event-time attribute %s, as in Flink (a temporal join joins the version valid at the left row's time)", left.Schema.Fields[left.TimeAttr].Name)
	}
	if !right.Mode.HasKey {
		return errAt(ref.Name.At, "the versioned table %s of a temporal join needs a primary key, as in Flink: read it from a source with a changelog format (debezium-json, ...) and `key:`, or a transform of one that keeps the key columns", name)
	}
	if right.TimeAttr < 0 {
		return errAt(ref.Name.At, "the versioned table %s of a temporal join needs an event-time attribute, as in Flink: declare a watermark on its source and keep that column in a transform (a GROUP BY has none; a keep-last deduplication ordered by the event time DESC, Flink's versioned view, keeps it)", name)
	}
	if j.On == nil {
		return errAt(j.At, "a temporal join needs ON with an equality of the versioned table's primary key")
	}
	js, keys, residual, err := q.equiKeys(n, s, j.On, kind)
	if err != nil {
		return err
	}
	keyTexts, err := q.keyCols(n, js, keys)
	if err != nil {
		return err
	}
	// The inputs may have gained key columns (keyCols).
	left, right = n.Inputs[0], n.Inputs[1]
	lw = left.Schema.Len()
	names := n.Schema.Names()
	if len(js.LeftKeys) == 0 {
		return errAt(j.On.Pos(), "a temporal join needs an equality of a left column or expression and the primary key of %s (ON o.k = %s.k): Flink refuses an empty join key too", name, name)
	}
	if !uniqueOn(right.Mode, js.RightKeys) {
		return errAt(j.On.Pos(), "the primary key %s of the versioned table %s must be among the equality keys of the temporal join, as in Flink; the join keys are %s",
			right.Mode.keysText(right.Schema.Names()), name, keyNames(js.RightKeys, right.Schema.Names()))
	}
	ts := &joinop.TemporalJoinSpec{Left: kind == joinop.LeftJoin, LeftKeys: js.LeftKeys, RightKeys: js.RightKeys,
		LeftTime: left.TimeAttr, RightTime: right.TimeAttr, LeftWidth: lw, RightWidth: js.RightWidth}
	where := strings.Join(keyTexts, ", ")
	if len(residual) > 0 {
		res := andAll(residual)
		c, err := compileExpr(q.zone(), res, n.Schema, "join")
		if err != nil {
			return err
		}
		if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
			return errAt(res.Pos(), "a join condition must be BOOLEAN, this one is %s", c.Type)
		}
		ts.Residual = c.True
		js.Residual = c.True
		where += ", " + sql.Format(res)
	}
	n.op = &joinOp{join: js, temporal: ts}
	// A left change is emitted once, when the watermark passes it, with
	// the version valid then and its own kind (Flink's
	// TemporalRowTimeJoinOperator): insert-only for an insert-only left
	// input, the left input's changes for a changelog one. Each left row
	// gives one row (the right's key is in the join keys), so the left's
	// key stays a key.
	n.Mode = Changelog{Updating: left.Mode.Updating}
	if left.Mode.HasKey {
		n.Mode.Key, n.Mode.HasKey, n.Mode.Alt = left.Mode.Key, true, left.Mode.Alt
	}
	n.TimeAttr = left.TimeAttr
	n.Label = fmt.Sprintf("TemporalJoin(joinType=[%s], where=[%s], leftTime=[%s], rightTime=[%s], select=[%s], state=[%s])",
		kind, where, names[left.TimeAttr], names[lw+right.TimeAttr], strings.Join(names, ", "), temporalStateText)
	return nil
}

// temporalStateText is the retention explain shows: Flink's
// TemporalRowTimeJoinOperator cleans up by the watermark, not by TTL.
const temporalStateText = "left rows until the watermark passes them, per key the versions from the one valid at the watermark on"
