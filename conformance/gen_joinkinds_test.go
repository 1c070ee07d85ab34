package conformance

// Outer joins of an updating input: an update of a row with or without a
// match comes out as -D and +I (Flink's StreamingJoinOperator sends no
// -U/+U once an outer side is involved). The updating input is an
// aggregate matched against an insert-only table, so the row kinds are
// +I and -D whichever input is read first.

const (
	tableKU = "table: ku (k INT, v INT) json"
	dataKU  = `{"k":1,"v":1}
{"k":2,"v":2}
{"k":1,"v":3}
{"k":3,"v":4}
{"k":2,"v":5}
{"k":1,"v":6}
`
	tableKD = "table: kd (k INT, name STRING) json"
	dataKD  = `{"k":1,"name":"a"}
{"k":2,"name":"b"}
{"k":4,"name":"d"}
`
	aggKU = "(SELECT k, SUM(v) AS s FROM ku GROUP BY k)"
)

func init() {
	areaCases = append(areaCases, func() []genCase {
		var out []genCase
		for _, c := range []struct{ name, query string }{
			{"left", "SELECT x.k, x.s, d.name FROM " + aggKU + " x LEFT JOIN kd d ON x.k = d.k"},
			{"right", "SELECT d.name, x.k, x.s FROM kd d RIGHT JOIN " + aggKU + " x ON d.k = x.k"},
			{"full", "SELECT x.k, x.s, d.k, d.name FROM " + aggKU + " x FULL JOIN kd d ON x.k = d.k"},
		} {
			out = append(out, genCase{name: "join-outer-update-kinds-" + c.name, header: []string{"mode: streaming", tableKU, tableKD},
				query: c.query, data: map[string]string{"ku": dataKU, "kd": dataKD}})
		}
		return out
	})
}
