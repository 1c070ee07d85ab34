package expr_test

import (
	"fmt"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// The planner compiles each expression once against its input's schema;
// the runtime calls Eval per row.
func ExampleCompile() {
	in := expr.Table{Name: "sensor", Schema: row.NewSchema(
		row.Field{Name: "id", Type: row.Type{ID: row.String, NotNull: true}},
		row.Field{Name: "temperature", Type: row.Of(row.Double)},
	)}
	e, _ := sql.ParseExpr("CASE WHEN temperature > 30 THEN UPPER(id) || ' is hot' END")
	c, err := expr.Compile(e, in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []row.Row{
		{row.StringValue("a"), row.DoubleValue(35)},
		{row.StringValue("b"), row.DoubleValue(20)},
		{row.StringValue("c"), row.NullValue},
	} {
		v, _ := c.Eval(r)
		fmt.Println(v)
	}
	fmt.Println(c.Type)

	e, _ = sql.ParseExpr("temprature > 30")
	_, err = expr.Compile(e, in)
	fmt.Println(err)
	// Output:
	// A is hot
	// null
	// null
	// STRING
	// 1:1: column "temprature" not found in table sensor; did you mean "temperature"?
}
