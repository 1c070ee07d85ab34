package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/sql"
)

// setOperation plans left INTERSECT / EXCEPT [ALL] right: both inputs
// get a last column saying their side (0 left, 1 right), as Flink's
// rewrite of the ALL forms marks them, a union merges them (the columns
// take their common types, the names the left's), and a SetOp counts
// each row's copies per side and emits the change of its multiplicity
// (aggop.SetOp). Flink plans the distinct forms as a semi (anti) join
// on every column followed by a distinct aggregate; the counts give the
// same rows and row kinds, with NULLs equal as set operations take them.
func (q *queryBuilder) setOperation(left, right *Node, lsel, rsel *sql.Select, op sql.SetOp, distinct bool) (*Node, error) {
	if left.Schema.Len() != right.Schema.Len() {
		return nil, errAt(rsel.At, "%s: its inputs must have the same number of columns: the left has %d (%s), the right %d (%s)",
			op, left.Schema.Len(), strings.Join(left.Schema.Names(), ", "), right.Schema.Len(), strings.Join(right.Schema.Names(), ", "))
	}
	l, err := sideMarked(q.zone(), left, 0, "$side")
	if err != nil {
		return nil, err
	}
	r, err := sideMarked(q.zone(), right, 1, "$side")
	if err != nil {
		return nil, err
	}
	u, err := q.union([]*Node{l, r}, []*sql.Select{lsel, rsel})
	if err != nil {
		var se *sql.Error
		if errors.As(err, &se) {
			se.Msg = strings.NewReplacer("UNION", op.String(), "the inputs before input 2", "the left input", "input 2", "the right input").Replace(se.Msg)
		}
		return nil, err
	}
	kind := map[sql.SetOp]aggop.SetOpKind{sql.Intersect: aggop.Intersect, sql.Except: aggop.Except}[op]
	if !distinct {
		kind++ // the ALL form follows each distinct one
	}
	width := left.Schema.Len()
	batch := q.b.plan.Batch
	n := &Node{Kind: SetOpNode, Input: u, Schema: row.NewSchema(u.Schema.Fields[:width]...), TimeAttr: -1,
		Bounded: u.Bounded, batch: batch, op: &setOpOp{kind: kind, width: width, batch: batch}}
	n.Mode = setOpMode(kind, width, u.Mode.Updating, batch)
	n.Label = fmt.Sprintf("SetOp(%s, select=[%s])", strings.ToLower(kind.String()), strings.Join(n.Schema.Names(), ", "))
	return n, nil
}

// setOpMode: a set operation emits +I for each copy a row gains and -D
// for each it loses. INTERSECT [ALL] over insert-only inputs only gains
// (counts only grow), so it is insert-only; EXCEPT loses a row when the
// right side gains it, so it is updating, as is any set operation over
// an updating input. The distinct forms are keyed by all columns. In
// batch mode the final rows come at the end.
func setOpMode(kind aggop.SetOpKind, width int, inUpdating, batch bool) Changelog {
	c := Changelog{Updating: !batch && (inUpdating || kind == aggop.Except || kind == aggop.ExceptAll)}
	if kind == aggop.Intersect || kind == aggop.Except {
		c.Key, c.HasKey = make([]int, width), true
		for i := range c.Key {
			c.Key[i] = i
		}
	}
	return c
}

// sideMarked appends the constant INT column name, of value side, to
// in's rows.
func sideMarked(zone *time.Location, in *Node, side int32, name string) (*Node, error) {
	width := in.Schema.Len()
	project := make([]*expr.Compiled, width+1)
	texts := make([]string, width+1)
	colMap := make([]int, width)
	fields := make([]row.Field, width+1)
	for c, f := range in.Schema.Fields {
		compiled, err := compileExpr(zone, &sql.ColumnRef{Column: sql.Ident{Name: f.Name, Quoted: true}}, in.Schema, "set operation input")
		if err != nil {
			return nil, err
		}
		project[c], texts[c], colMap[c], fields[c] = compiled, f.Name, c, f
	}
	lit := &sql.Literal{Kind: sql.LitInt, Text: fmt.Sprint(side), Value: row.IntValue(side), Type: row.Type{ID: row.Int, NotNull: true}}
	marker, err := compileExpr(zone, lit, in.Schema, "set operation input")
	if err != nil {
		return nil, err
	}
	project[width], texts[width] = marker, fmt.Sprintf("%d AS %s", side, name)
	fields[width] = row.Field{Name: name, Type: marker.Type}
	n := &Node{Kind: CalcNode, Input: in, Schema: row.NewSchema(fields...), Mode: calcMode(in.Mode, colMap),
		TimeAttr: -1, Bounded: in.Bounded, op: &calcOp{project: project}}
	n.Label = fmt.Sprintf("Calc(select=[%s])", strings.Join(texts, ", "))
	return n, nil
}

// setOpOp is a SetOpNode's operation.
type setOpOp struct {
	kind  aggop.SetOpKind
	width int
	batch bool
}

func (s *setOpOp) operator(opBuild) (operator.Lifecycle, error) {
	return aggop.NewSetOp(s.kind, s.width, s.batch)
}
