package expr

import (
	"errors"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

func init() {
	register(map[string]*funcDef{"ERROR": {min: 1, max: 1, build: buildError}})
}

// errNoReason is the reason of an ERROR whose reason is NULL.
var errNoReason = errors.New("no reason given (NULL)")

// buildError is ERROR(reason): it fails the row it is evaluated on with
// reason, an *EvalError the runtime hands to the source's on_error
// policy as any failing expression (Vector's abort, Benthos's throw).
// Flink has no such function.
//
// It gives no value, so its type is NULL's, the type that unifies with
// any other: as a CASE, IF or COALESCE branch it takes the other
// branches' type (coerce keeps its evaluation), and it is NOT NULL, so
// that the others' NOT NULL holds. An operand of NULL's type elsewhere
// makes its expression NULL, but the operand is still evaluated
// (nullEval), so ERROR fails there too. It is never folded: a constant
// reason fails at run time, on the rows that reach it.
func buildError(c *compiler, e *sql.Call, args []*node) (*node, error) {
	reason := args[0]
	if !isStringy(reason.t) {
		return nil, errAt(reason.e.Pos(), "ERROR takes a STRING reason, not %s", typeName(reason.t))
	}
	ev := reason.eval
	f := func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		switch {
		case err != nil:
			return row.NullValue, err
		case v.IsNull():
			err = errNoReason
		default:
			err = errors.New(v.Str())
		}
		return row.NullValue, &EvalError{Expr: "ERROR", Err: err}
	}
	return &node{t: row.Type{ID: row.Null, NotNull: true}, eval: f, col: -1, e: e}, nil
}
