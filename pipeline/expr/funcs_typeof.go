package expr

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// JSON_STRING(x) and TYPEOF(x [, force]) of Flink's JsonFunctionsITCase
// and MiscFunctionsITCase.

func init() {
	register(map[string]*funcDef{
		"JSON_STRING": {min: 1, max: 1, build: buildJSONString},
		"TYPEOF":      {min: 1, max: 2, build: buildTypeOf},
	})
}

// buildJSONString is JSON_STRING(x): x as a JSON value, written as
// JSON_ARRAY writes its items (a string quoted and escaped, a number or
// BOOLEAN as itself, an ARRAY or ROW nested); NULL for NULL.
func buildJSONString(c *compiler, e *sql.Call, args []*node) (*node, error) {
	evs, ws, err := jsonValueWriters(args)
	if err != nil {
		return nil, err
	}
	text := exprString(e)
	f := func(r row.Row) (row.Value, error) {
		v, err := evs[0](r)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		buf, err := ws[0](make([]byte, 0, 32), v)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return row.StringValue(string(buf)), nil
	}
	return c.finish(e, row.Type{ID: row.String, NotNull: args[0].t.NotNull}, f, args...)
}

// buildTypeOf is TYPEOF(x [, force]): the name of x's type as Flink's
// LogicalType.asSummaryString writes it (INT, DECIMAL(10, 2), INT NOT
// NULL), a constant; with force TRUE its serializable form, where
// STRING is VARCHAR(2147483647).
func buildTypeOf(c *compiler, e *sql.Call, args []*node) (*node, error) {
	force := false
	if len(args) == 2 {
		a := args[1]
		if !a.konst || a.t.ID != row.Boolean || a.val.IsNull() {
			return nil, errAt(a.e.Pos(), "the second argument of TYPEOF must be the constant TRUE or FALSE")
		}
		force = a.val.Bool()
	}
	t := args[0].t
	name := t.String()
	if force && t.ID == row.String && t.Length == 0 {
		name = "VARCHAR(2147483647)"
		if t.NotNull {
			name += " NOT NULL"
		}
	}
	return constNode(e, row.Type{ID: row.String, NotNull: true}, row.StringValue(name)), nil
}
