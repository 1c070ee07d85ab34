package plan

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/sql"
)

// A constant table (VALUES, a SELECT without FROM, the one row a lone
// UNNEST reads) is a ValuesNode: its rows are computed when the query is
// planned, and a run reads them with a source node over a constSource,
// insert-only and bounded, as Flink reads its Values.

// valuesOp is a ValuesNode's rows.
type valuesOp struct{ rows []row.Row }

func (v *valuesOp) operator(opBuild) (operator.Lifecycle, error) {
	return nil, fmt.Errorf("plan: a constant table is a source, not an operator")
}

func (n *Node) constRows() *valuesOp { x, _ := n.op.(*valuesOp); return x }

// valuesScope plans a constant table. Each column's type is the common
// type of its values in every row (Flink's least restrictive type), the
// values cast to it; its name is the alias list's or EXPR$i, as Flink
// names them.
func valuesScope(zone *time.Location, v *sql.Values) (*scope, error) {
	width := len(v.Rows[0])
	cells := make([][]*expr.Compiled, len(v.Rows))
	for i, r := range v.Rows {
		cells[i] = make([]*expr.Compiled, width)
		for c, e := range r {
			if l, ok := e.(*sql.Literal); ok && l.Kind == sql.LitNull {
				// Flink's validator refuses it ("Illegal use of 'NULL'").
				return nil, errAt(e.Pos(), "VALUES: a bare NULL has no type: write CAST(NULL AS type)")
			}
			ce, err := compileExpr(zone, e, row.NewSchema(), "VALUES")
			if err != nil {
				return nil, err
			}
			cells[i][c] = ce
		}
	}
	fields := make([]row.Field, width)
	for c := range width {
		t := cells[0][c].Type
		for i := 1; i < len(cells); i++ {
			u := cells[i][c].Type
			common, err := expr.CommonType(t, u)
			if err != nil {
				return nil, errAt(v.Rows[i][c].Pos(), "VALUES: column %d is %s in the rows before and %s in this one: they have no common type; CAST one of them",
					c+1, t, u)
			}
			t = common
		}
		name := "EXPR$" + strconv.Itoa(c)
		if v.Columns != nil {
			name = v.Columns[c].Name
		}
		fields[c] = row.Field{Name: name, Type: t}
	}
	rows := make([]row.Row, len(v.Rows))
	tuples := make([]string, len(v.Rows))
	for i, r := range v.Rows {
		rows[i] = make(row.Row, width)
		texts := make([]string, width)
		for c, e := range r {
			val, err := constValue(zone, e, cells[i][c], fields[c].Type)
			if err != nil {
				return nil, err
			}
			rows[i][c], texts[c] = val, sql.Format(e)
		}
		tuples[i] = "{ " + strings.Join(texts, ", ") + " }"
	}
	if v.Implicit {
		// Flink's one-row table has a column ZERO it never reads.
		tuples[0] = "{ 0 }"
	}
	n := &Node{Kind: ValuesNode, Schema: row.NewSchema(fields...), TimeAttr: -1, Bounded: true, op: &valuesOp{rows: rows},
		Label: "Values(tuples=[[" + strings.Join(tuples, ", ") + "]])"}
	table := "VALUES"
	if v.Implicit {
		table = "<none: the query has no FROM>"
	}
	return &scope{node: n, name: v.Alias.Name, table: table}, nil
}

// constValue is e's value as a value of t: e is compiled as c, and
// evaluated once, with no row.
func constValue(zone *time.Location, e sql.Expr, c *expr.Compiled, t row.Type) (row.Value, error) {
	if !sameRepresentation(c.Type, t) || c.Type.Length != t.Length {
		want := t
		want.NotNull = c.Type.NotNull
		cast, err := compileExpr(zone, &sql.Cast{At: e.Pos(), X: e, Type: want, TypeText: want.String()}, row.NewSchema(), "VALUES")
		if err != nil {
			return row.NullValue, err
		}
		c = cast
	}
	val, err := c.Eval(nil)
	if err != nil {
		return row.NullValue, errAt(e.Pos(), "VALUES: %v", err)
	}
	return val, nil
}

// constSourceNode is the runtime node that reads constant table n, named
// id for checkpoints.
func constSourceNode(n *Node, id, transform string, aliases []string) *runtime.SourceNode {
	return &runtime.SourceNode{
		Node: runtime.Node{Name: n.Label, Kind: "source", ID: id, Transform: transform, Aliases: aliases,
			Fingerprint: fmt.Sprintf("%s, output %s", n.Label, n.Schema)},
		Source:  &constSource{rows: n.constRows().rows},
		Columns: n.Schema,
	}
}

// constSource reads a constant table's rows once, then ends. Its position
// is the number of rows read, so a run restored from a checkpoint taken
// after its end reads none again.
type constSource struct {
	rows []row.Row
	next int
}

var (
	_ connector.Source     = (*constSource)(nil)
	_ connector.Positioner = (*constSource)(nil)
)

func (s *constSource) Bounded() bool              { return true }
func (s *constSource) Open(context.Context) error { return nil }
func (s *constSource) Close(context.Context) error {
	return nil
}

func (s *constSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	end := min(s.next+max, len(s.rows))
	b := &row.Batch{}
	for _, r := range s.rows[s.next:end] {
		b.Append(row.Insert, r.Clone())
	}
	s.next = end
	if s.next == len(s.rows) {
		return b, io.EOF
	}
	return b, nil
}

func (s *constSource) Position() ([]byte, error) {
	return strconv.AppendInt(nil, int64(s.next), 10), nil
}

func (s *constSource) Restore(pos []byte) error {
	n, err := strconv.Atoi(string(pos))
	if err != nil || n < 0 || n > len(s.rows) {
		return fmt.Errorf("constant table: bad position %q", pos)
	}
	s.next = n
	return nil
}
