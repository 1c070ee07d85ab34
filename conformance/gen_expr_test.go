package conformance

// The expression area's cases: functions and types of Flink 2.3 that etld
// gained, each a case over the shared table t (or a small table of its
// own), recorded on Flink.

func init() { areaCases = append(areaCases, exprAreaCases) }

// tableJN holds JSON numbers whose text a double would change.
const (
	tableJN = "table: jn (id INT, p STRING) json"
	dataJN  = `{"id":1,"p":"{\"x\":123456789.98765433,\"y\":1.5e3,\"z\":100.10}"}
{"id":2,"p":"{\"x\":0.0000001,\"y\":-0.0,\"z\":12345678901234567890}"}
{"id":3,"p":"{\"x\":7,\"y\":-2.5,\"z\":1E2}"}
`
)

var exprAreaExprs = []struct {
	name  string
	exprs []string
}{
	{"extract-fraction", []string{"EXTRACT(MILLISECOND FROM ts)", "EXTRACT(MICROSECOND FROM ts)", "EXTRACT(NANOSECOND FROM ts)"}},
	{"json-nest-array", []string{"JSON_OBJECT(KEY 'a' VALUE ARRAY[i, 2])", "JSON_ARRAY(ARRAY[s, 'x'], ARRAY[ARRAY[1], ARRAY[2, 3]])"}},
	{"json-nest-map-row", []string{"JSON_OBJECT(KEY 'm' VALUE MAP['k', i])", "JSON_ARRAY(MAP['a', ARRAY[b]])", "JSON_OBJECT(KEY 'r' VALUE CAST(ROW(i, s) AS ROW<n INT, t STRING>))"}},
	{"json-nest-raw", []string{"JSON_ARRAY(ARRAY[JSON_OBJECT(KEY 'k' VALUE i)])", "JSON_OBJECT(KEY 'o' VALUE JSON_ARRAY(i, s))"}},
}

func exprAreaCases() []genCase {
	var out []genCase
	for _, e := range exprAreaExprs {
		out = append(out, genCase{name: "fn-" + e.name, header: []string{tableT}, query: exprQuery("t", e.exprs), data: map[string]string{"t": dataT}})
	}
	out = append(out, genCase{name: "fn-json-value-number-text", header: []string{tableJN},
		query: "SELECT id, JSON_VALUE(p, '$.x'), JSON_VALUE(p, '$.y'), JSON_VALUE(p, '$.z') FROM jn",
		data:  map[string]string{"jn": dataJN}})
	return out
}
