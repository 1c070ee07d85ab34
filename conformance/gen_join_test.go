package conformance

// Regular joins without an equality key, with null-safe or computed keys,
// and event-time temporal joins with a changelog probe input or a
// computed key. Streaming outer joins are FULL joins: whichever side of a
// matching pair is read first is padded and retracted, so the row kinds
// do not depend on the read order; LEFT joins and NOT EXISTS, whose kinds
// do, run in batch mode.

const (
	tableJO = "table: jo (id INT, cust BIGINT, amount INT) json"
	dataJO  = `{"id":1,"cust":10,"amount":5}
{"id":2,"cust":20,"amount":null}
{"id":3,"cust":null,"amount":7}
{"id":4,"cust":30,"amount":20}
`
	tableJC = "table: jc (id INT, iid INT, name STRING) json"
	dataJC  = `{"id":10,"iid":5,"name":"a"}
{"id":20,"iid":null,"name":"b"}
{"id":31,"iid":7,"name":"c"}
{"id":9,"iid":30,"name":"d"}
`
	tableRT = "table: rt (cur STRING, rate INT, ts TIMESTAMP(3)) debezium-json key cur watermark ts AS ts"
	dataRT  = `{"before":null,"after":{"cur":"EUR","rate":1,"ts":"2024-01-01 10:00:00"},"op":"c"}
{"before":null,"after":{"cur":"USD","rate":2,"ts":"2024-01-01 10:00:00"},"op":"c"}
{"before":{"cur":"EUR","rate":1,"ts":"2024-01-01 10:00:00"},"after":{"cur":"EUR","rate":3,"ts":"2024-01-01 10:00:30"},"op":"u"}
`
	tableLO = "table: lo (id INT, cur STRING, amount INT, ts TIMESTAMP(3)) debezium-json key id watermark ts AS ts - INTERVAL '1' MINUTE"
	dataLO  = `{"before":null,"after":{"id":1,"cur":"EUR","amount":10,"ts":"2024-01-01 10:00:10"},"op":"c"}
{"before":null,"after":{"id":2,"cur":"USD","amount":20,"ts":"2024-01-01 10:00:20"},"op":"c"}
{"before":{"id":1,"cur":"EUR","amount":10,"ts":"2024-01-01 10:00:10"},"after":{"id":1,"cur":"EUR","amount":11,"ts":"2024-01-01 10:00:40"},"op":"u"}
{"before":{"id":2,"cur":"USD","amount":20,"ts":"2024-01-01 10:00:20"},"after":null,"op":"d"}
`
	tableTK = "table: tk (id INT, cust INT, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' MINUTE"
	dataTK  = `{"id":1,"cust":1,"ts":"2024-01-01 10:00:10"}
{"id":2,"cust":2,"ts":"2024-01-01 10:00:20"}
{"id":3,"cust":3,"ts":"2024-01-01 10:00:20"}
{"id":4,"cust":1,"ts":"2024-01-01 10:00:40"}
`
	tableRC = "table: rc (country STRING, label STRING, ts TIMESTAMP(3)) debezium-json key country watermark ts AS ts"
	dataRC  = `{"before":null,"after":{"country":"1","label":"one","ts":"2024-01-01 10:00:00"},"op":"c"}
{"before":null,"after":{"country":"2","label":"two","ts":"2024-01-01 10:00:00"},"op":"c"}
{"before":{"country":"1","label":"one","ts":"2024-01-01 10:00:00"},"after":{"country":"1","label":"uno","ts":"2024-01-01 10:00:30"},"op":"u"}
`
)

// joinKeyCases run over jo and jc, in the modes given.
var joinKeyCases = []struct {
	name  string
	modes []string
	query string
}{
	{"cross", both, "SELECT o.id, c.name FROM jo o CROSS JOIN jc c"},
	{"comma-inequality", both, "SELECT o.id, c.name FROM jo o, jc c WHERE o.amount > c.iid"},
	{"inequality-full", both, "SELECT o.id, c.name FROM jo o FULL JOIN jc c ON o.amount > c.iid"},
	{"inequality-left", batchOnly, "SELECT o.id, c.name FROM jo o LEFT JOIN jc c ON o.amount > c.iid"},
	{"or-full", both, "SELECT o.id, c.name FROM jo o FULL JOIN jc c ON o.amount = c.iid OR o.cust = c.id"},
	{"not-distinct-full", both, "SELECT o.id, c.name FROM jo o FULL JOIN jc c ON o.amount IS NOT DISTINCT FROM c.iid"},
	{"null-safe-or", both, "SELECT o.id, c.name FROM jo o JOIN jc c ON (o.amount IS NULL AND c.iid IS NULL) OR o.amount = c.iid"},
	{"exists-inequality", both, "SELECT o.id FROM jo o WHERE EXISTS (SELECT * FROM jc c WHERE c.iid < o.amount)"},
	{"not-exists-inequality", batchOnly, "SELECT o.id FROM jo o WHERE NOT EXISTS (SELECT * FROM jc c WHERE c.iid < o.amount)"},
	{"in-correlated-inequality", both, "SELECT c.name FROM jc c WHERE c.iid IN (SELECT o.amount FROM jo o WHERE o.cust > c.id)"},
	{"expression-key-full", both, "SELECT o.id, c.name FROM jo o FULL JOIN jc c ON o.cust + 1 = c.id + 1"},
	{"cast-key", both, "SELECT o.id, c.name FROM jo o JOIN jc c ON o.cust = CAST(c.iid AS BIGINT)"},
	{"bigint-int-key", both, "SELECT o.id, c.name FROM jo o JOIN jc c ON o.cust = c.id"},
	{"bigint-int-key-left", batchOnly, "SELECT o.id, c.name FROM jo o LEFT JOIN jc c ON o.cust = c.id"},
}

var batchOnly = []string{"batch"}

func init() {
	areaCases = append(areaCases, func() []genCase {
		var out []genCase
		for _, c := range joinKeyCases {
			for _, mode := range c.modes {
				out = append(out, genCase{name: "join-" + c.name + "-" + mode, header: []string{"mode: " + mode, tableJO, tableJC},
					query: c.query, data: map[string]string{"jo": dataJO, "jc": dataJC}})
			}
		}
		out = append(out,
			genCase{name: "join-temporal-changelog-left", header: []string{"mode: streaming", tableLO, tableRT},
				query: "SELECT l.id, l.amount, r.rate, l.ts FROM lo l JOIN rt FOR SYSTEM_TIME AS OF l.ts AS r ON l.cur = r.cur",
				data:  map[string]string{"lo": dataLO, "rt": dataRT}},
			genCase{name: "join-temporal-changelog-left-outer", header: []string{"mode: streaming", tableLO, tableRT},
				query: "SELECT l.id, r.rate FROM lo l LEFT JOIN rt FOR SYSTEM_TIME AS OF l.ts AS r ON l.cur = r.cur AND r.rate > 1",
				data:  map[string]string{"lo": dataLO, "rt": dataRT}},
			genCase{name: "join-temporal-cast-key", header: []string{"mode: streaming", tableTK, tableRC},
				query: "SELECT o.id, r.label FROM tk o LEFT JOIN rc FOR SYSTEM_TIME AS OF o.ts AS r ON CAST(o.cust AS STRING) = r.country",
				data:  map[string]string{"tk": dataTK, "rc": dataRC}},
		)
		return out
	})
}
