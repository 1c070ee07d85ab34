package expr

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// nestedTable has a column of each composite type, and NULL ones.
func nestedTable(t testing.TB) (Table, row.Row) {
	tab := Table{Name: "t", Schema: row.NewSchema(
		row.Field{Name: "arr", Type: mustType("ARRAY<INT>")},
		row.Field{Name: "m", Type: mustType("MAP<STRING, BIGINT>")},
		row.Field{Name: "r", Type: mustType("ROW<a INT, b STRING, sub ROW<c DOUBLE>>")},
		row.Field{Name: "strs", Type: mustType("ARRAY<STRING>")},
		row.Field{Name: "n_arr", Type: mustType("ARRAY<INT>")},
		row.Field{Name: "n_r", Type: mustType("ROW<a INT>")},
		row.Field{Name: "one", Type: mustType("ARRAY<STRING>")},
		row.Field{Name: "i", Type: row.Of(row.Int)},
	)}
	r := row.Row{
		row.ArrayValue([]row.Value{row.IntValue(10), row.NullValue, row.IntValue(30)}),
		row.MapValue([]row.Value{row.StringValue("a"), row.StringValue("b")}, []row.Value{row.BigIntValue(1), row.BigIntValue(2)}),
		row.StructValue([]row.Value{row.IntValue(7), row.StringValue("x"), row.StructValue([]row.Value{row.DoubleValue(2.5)})}),
		row.ArrayValue([]row.Value{row.StringValue("p"), row.StringValue("q")}),
		row.NullValue,
		row.NullValue,
		row.ArrayValue([]row.Value{row.StringValue("only")}),
		row.IntValue(2),
	}
	return tab, r
}

func TestNestedExpressions(t *testing.T) {
	tab, input := nestedTable(t)
	for _, tc := range []struct{ expr, want string }{
		{"ARRAY[1, 2]", "ARRAY<INT NOT NULL> NOT NULL [1, 2]"},
		{"ARRAY[1, NULL, 2.5]", "ARRAY<DECIMAL(11, 1)> NOT NULL [1.0, null, 2.5]"},
		{"MAP['a', 1, 'b', 2]", "MAP<STRING NOT NULL, INT NOT NULL> NOT NULL {a=1, b=2}"},
		{"ROW(1, 'a')", "ROW<`EXPR$0` INT NOT NULL, `EXPR$1` STRING NOT NULL> NOT NULL +I[1, a]"},
		{"CAST(ARRAY[1, 2] AS STRING)", "STRING NOT NULL [1, 2]"},
		{"CAST(MAP['a', 1] AS STRING)", "STRING NOT NULL {a=1}"},
		{"CAST(ROW(1, 'a') AS STRING)", "STRING NOT NULL (1, a)"},
		{"CAST(arr AS STRING)", "STRING [10, NULL, 30]"},
		{"CAST(ARRAY[1, 2] AS ARRAY<BIGINT>)", "ARRAY<BIGINT> NOT NULL [1, 2]"},
		{"CAST(ARRAY['1', 'x'] AS ARRAY<INT>)", "error: cannot parse \"x\" as INT"},
		{"CAST(ROW(1, 'a') AS ROW<x BIGINT, y STRING>)", "ROW<`x` BIGINT, `y` STRING> NOT NULL +I[1, a]"},
		{"CAST(ROW(1) AS ROW<x INT, y INT>)", "error: 1:1: cannot CAST ROW<`EXPR$0` INT NOT NULL> to ROW<`x` INT, `y` INT>: 1 fields to 2"},
		{"CARDINALITY(arr)", "INT 3"},
		{"CARDINALITY(m)", "INT 2"},
		{"CARDINALITY(n_arr)", "INT null"},
		{"CARDINALITY(ARRAY[1])", "INT NOT NULL 1"},
		{"CARDINALITY(i)", "error: 1:13: CARDINALITY argument 1 must be an ARRAY or a MAP, not INT"},
		{"ELEMENT(one)", "STRING only"},
		{"ELEMENT(n_arr)", "INT null"},
		{"ELEMENT(arr)", "error: ELEMENT of an array with 3 elements"},
		{"arr[1]", "INT 10"},
		{"arr[2]", "INT null"},
		{"arr[i + 1]", "INT 30"},
		{"arr[0]", "error: 1:5: an ARRAY index starts at 1, not 0"},
		{"arr[i - 2]", "INT null"},
		{"arr[4]", "INT null"},
		{"arr[-1]", "error: 1:5: an ARRAY index starts at 1, not -1"},
		{"ARRAY[10, 20][3]", "INT null"},
		{"n_arr[1]", "INT null"},
		{"arr['x']", "error: 1:5: an ARRAY index must be an INT, not STRING"},
		{"i[1]", "error: 1:2: [] applies to an ARRAY, a MAP or a ROW, not to INT"},
		{"m['b']", "BIGINT 2"},
		{"m['zz']", "BIGINT null"},
		{"m[1]", "error: 1:3: a key of MAP<STRING, BIGINT> must be a STRING, not INT"},
		{"MAP['a', 1]['a']", "INT 1"},
		{"ARRAY[ARRAY[1, 2], ARRAY[3]][2][1]", "INT 3"},
		{"r.a", "INT 7"},
		{"t.r.b", "STRING x"},
		{"r.sub.c", "DOUBLE 2.5"},
		{"t.r.sub.c", "DOUBLE 2.5"},
		{"n_r.a", "INT null"},
		{"r.zz", "error: 1:3: ROW<`a` INT, `b` STRING, `sub` ROW<`c` DOUBLE>> has no field \"zz\""},
		{"r.A", "INT 7"},
		{"(arr).x", "error: 1:7: ARRAY<INT> is not a ROW"},
		{"zz.a", "error: 1:1: table \"zz\" is not in scope here"},
		{"ROW(1, 'a').EXPR$1", "STRING NOT NULL a"},
		{"arr = ARRAY[10, NULL, 30]", "BOOLEAN true"},
		{"arr <> ARRAY[10]", "BOOLEAN true"},
		{"arr = n_arr", "BOOLEAN null"},
		{"arr < ARRAY[1]", "error: 1:5: ARRAY<INT> and ARRAY<INT NOT NULL> cannot be ordered"},
		{"arr = ARRAY['a']", "error: 1:5: cannot compare ARRAY<INT> with ARRAY<STRING NOT NULL>"},
		{"ARRAY[NULL]", "error: 1:1: ARRAY[...]: the elements are all NULL"},
		{"ARRAY[1, 'a']", "error: 1:10: ARRAY[...] elements: INT and STRING have no common type"},
		{"CASE WHEN i > 1 THEN arr ELSE ARRAY[1] END", "ARRAY<INT> [10, null, 30]"},
		{"COALESCE(n_arr, ARRAY[5])", "ARRAY<INT> NOT NULL [5]"},
		// r['field'] and r[n] name a field; (a, b) is ROW(a, b).
		{"r['b']", "STRING x"},
		{"r['sub']['c']", "DOUBLE 2.5"},
		{"r[1]", "INT 7"},
		{"r['zz']", "error: has no field \"zz\""},
		{"r[4]", "error: has no field 4"},
		{"r[i]", "error: a ROW's field is named by a constant"},
		{"(i, 'a')", "ROW<`EXPR$0` INT, `EXPR$1` STRING NOT NULL> NOT NULL +I[2, a]"},
		{"(i, 'a').EXPR$1", "STRING NOT NULL a"},
		{"(i)", "INT 2"},
		// JSON_OBJECT and JSON_ARRAY nest composite values as JSON, as Flink does.
		{"JSON_OBJECT(KEY 'a' VALUE arr)", `STRING NOT NULL {"a":[10,null,30]}`},
		{"JSON_ARRAY(m, r)", `STRING NOT NULL [{"a":1,"b":2},{"a":7,"b":"x","sub":{"c":2.5}}]`},
		{"JSON_ARRAY(n_arr, n_r NULL ON NULL)", `STRING NOT NULL [null,null]`},
		{"JSON_OBJECT('x' VALUE ARRAY[ROW(1, 'a')], 'y' VALUE MAP['k', ARRAY['v']])", `STRING NOT NULL {"x":[{"EXPR$0":1,"EXPR$1":"a"}],"y":{"k":["v"]}}`},
		{"JSON_ARRAY(ARRAY[JSON_OBJECT('k' VALUE 1)])", `STRING NOT NULL [["{\"k\":1}"]]`},
		{"JSON_ARRAY(MAP[1, 2])", "error: 1:12: cannot write MAP<INT NOT NULL, INT NOT NULL> as JSON: the key type must be a character string"},
		{"JSON_ARRAY(MAP[CAST(NULL AS STRING), 1])", "error: a MAP key is NULL"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := sql.ParseExpr(tc.expr)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			want, wantErr := strings.CutPrefix(tc.want, "error: ")
			c, err := Compile(e, tab)
			if err == nil {
				var v row.Value
				v, err = c.Eval(input)
				if err == nil {
					if wantErr {
						t.Fatalf("got %s %s, want error %q", c.Type, v, want)
					}
					if got := c.Type.String() + " " + v.String(); got != want {
						t.Fatalf("got  %s\nwant %s", got, want)
					}
					return
				}
			}
			if !wantErr || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
