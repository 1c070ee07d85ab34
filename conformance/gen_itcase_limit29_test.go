package conformance

// Flink's stream LimitITCase, SortLimitITCase and TemporalSortITCase
// (runtime/stream/sql): LIMIT and OFFSET without ORDER BY, OFFSET
// without FETCH (refused), ORDER BY ... LIMIT over an insert-only input
// and over an aggregate's updates, with an offset, and ORDER BY the
// event time.

func init() { areaCases = append(areaCases, itcaseLimit29Cases) }

var itLimit29Tables = map[string][2]string{
	"R6": {"table: R6 (category STRING, shopId INT, num BIGINT) json", itJSON([]string{"category", "shopId", "num"}, itRankData[:6])},
	"AB": {"table: AB (a INT, b INT) json", itJSON([]string{"a", "b"}, [][]any{{1, 1}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {2, 4}, {3, 3}, {3, 4}, {3, 5}})},
}

var itcaseLimit29Queries = []struct {
	name   string
	tables []string
	query  string
}{
	{"limit-plain", []string{"R6"}, "SELECT * FROM R6 LIMIT 4"},
	{"limit-offset-fetch", []string{"R6"}, "SELECT * FROM R6 LIMIT 4 OFFSET 2"},
	{"limit-offset-no-fetch", []string{"R6"}, "SELECT * FROM R6 OFFSET 2"},
	{"sort-limit-desc", []string{"R6"}, "SELECT * FROM R6 ORDER BY num DESC LIMIT 2"},
	{"sort-limit-retract", []string{"AB"}, "SELECT a, MAX(b) FROM AB GROUP BY a ORDER BY a LIMIT 2"},
	{"sort-limit-retract-offset", []string{"AB"}, "SELECT a, MAX(b) FROM AB GROUP BY a ORDER BY a LIMIT 2 OFFSET 1"},
	{"temporal-sort", []string{"RT"}, "SELECT a, b, c FROM RT ORDER BY ts"},
	{"temporal-sort-secondary", []string{"RT"}, "SELECT a, b, c, ts FROM RT ORDER BY ts, a DESC"},
}

func itcaseLimit29Cases() []genCase {
	var out []genCase
	for _, q := range itcaseLimit29Queries {
		lines, data := readTables(q.tables, itLimit29Tables, itTables)
		h := append([]string{"mode: streaming"}, lines...)
		switch q.name {
		case "limit-plain", "limit-offset-fetch":
			h = append(h, "expect: stream-limit-no-order")
		case "temporal-sort", "temporal-sort-secondary":
			h = append(h, "expect: stream-temporal-sort")
		}
		out = append(out, genCase{name: "itcase29-" + q.name, header: h, query: q.query, data: data})
	}
	return out
}
