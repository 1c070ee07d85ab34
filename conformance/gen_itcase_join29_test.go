package conformance

// More of Flink's stream JoinITCase (runtime/stream/sql): conditions
// Calcite derives join keys from (OR of ANDs, TRUE, IS NULL), joins on
// keys made NULL by IF, IS NULL OR = keys, duplicate keys, BOOLEAN keys,
// aliases with odd characters, outer joins that never match, joins of
// identical rows, and joins of aggregates on their unique keys, equi and
// not, three of them in a row.
//
// Adapted for the case format: the ITCase's tables are DataStreams; here
// they are files, A smallTupleData3 (a1, a2, a3), B tupleData5 (b1..b5).
// The upsert-source cases (testLeftJoinOnRowKey) are left out: their
// changes wait for the sink's first row, which a file cannot.

func init() { areaCases = append(areaCases, itcaseJoin29Cases) }

var itNonWindowJoin1 = [][]any{{1, 1, "Hi1"}, {1, 2, "Hi2"}, {1, 2, "Hi2"}, {1, 5, "Hi3"}, {2, 7, "Hi5"}, {1, 9, "Hi6"}, {1, 8, "Hi8"}, {3, 8, "Hi9"}}

var itJoin29Tables = map[string][2]string{
	"A":   {"table: A (a1 INT, a2 BIGINT, a3 STRING) json", itJSON([]string{"a1", "a2", "a3"}, itTupleData3()[:3])},
	"B":   {"table: B (b1 INT, b2 BIGINT, b3 INT, b4 STRING, b5 BIGINT) json", itJSON([]string{"b1", "b2", "b3", "b4", "b5"}, itTupleData5)},
	"JA":  {"table: JA (a1 INT, a2 INT, a3 STRING) json", itJSON([]string{"a1", "a2", "a3"}, [][]any{{0, 1, "hi a1"}, {1, 2, "hi a2"}, {2, 3, "hi a3"}})},
	"JB":  {"table: JB (b1 INT, b2 INT, b3 STRING) json", itJSON([]string{"b1", "b2", "b3"}, [][]any{{3, 4, "hi b1"}, {4, 5, nil}, {5, 6, "hi b3"}})},
	"N1":  {"table: N1 (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, itNonWindowJoin1)},
	"N2":  {"table: N2 (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, [][]any{{1, 1, "HiHi"}, {2, 2, "HeHe"}, {3, 2, "HeHe"}})},
	"BO3": {"table: BO3 (a1 INT, b1 BIGINT, c1 STRING, d1 BOOLEAN) json", itJSON([]string{"a1", "b1", "c1", "d1"}, [][]any{{1, 1, "Hi", true}, {2, 2, "Hello", false}, {3, 2, "Hello world", true}})},
	"BO5": {"table: BO5 (a2 INT, b2 BIGINT, c2 STRING, d2 BOOLEAN) json", itJSON([]string{"a2", "b2", "c2", "d2"}, [][]any{{1, 1, "Hi", true}, {2, 2, "Hello", false}, {3, 2, "Hello world", true}})},
	"DS5": {"table: DS5 (d INT, e BIGINT, f INT, g STRING, h BIGINT) json", itJSON([]string{"d", "e", "f", "g", "h"}, itTupleData5[:6])},
	"NJ5": {"table: NJ5 (d INT, e BIGINT, f INT, g STRING, h BIGINT) json", itJSON([]string{"d", "e", "f", "g", "h"}, itTupleData5[2:6])},
	"SR1": {"table: SR1 (pk INT, a INT) json", itJSON([]string{"pk", "a"}, [][]any{{1, 1}, {1, 1}, {2, 2}, {2, 2}, {3, 3}, {3, 3}, {4, 4}, {4, 4}, {5, 5}, {5, 5}})},
	"SR2": {"table: SR2 (pk INT, a INT) json", itJSON([]string{"pk", "a"}, [][]any{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}, {9, 9}, {10, 10}})},
	"TA":  {"table: TA (a1 INT, a2 BIGINT) json", itJSON([]string{"a1", "a2"}, [][]any{{1, 1}, {1, 2}, {1, 2}, {1, 5}, {2, 7}, {1, 9}, {1, 8}, {3, 8}})},
	"TB":  {"table: TB (b1 INT, b2 BIGINT) json", itJSON([]string{"b1", "b2"}, [][]any{{1, 1}, {2, 2}, {3, 2}, {1, 4}})},
	"TC":  {"table: TC (c1 INT, c2 BIGINT) json", itJSON([]string{"c1", "c2"}, [][]any{{1, 1}, {2, 2}, {3, 2}, {2, 1}})},
}

const (
	jSumA = "(SELECT SUM(a2) AS a2, a1 FROM A GROUP BY a1)"
	jSumB = "(SELECT SUM(b2) AS b2, b1 FROM B GROUP BY b1)"
	jIfN1 = "(SELECT IF(a = 3, CAST(NULL AS INT), a) AS a, b, c FROM N1)"
	jIfN2 = "(SELECT IF(a = 3, CAST(NULL AS INT), a) AS a, b, c FROM N2)"
)

var itcaseJoin29Queries = []struct {
	name   string
	tables []string
	query  string
}{
	{"join-derived-or-keys", []string{"A", "B"}, "SELECT * FROM A, B WHERE (a2 = 1 AND b2 = 2) OR (a1 = 2 AND b1 = 4)"},
	{"join-derived-or-true", []string{"A", "B"}, "SELECT * FROM A, B WHERE (a2 = 1 AND TRUE) OR (a1 = 2 AND b1 = 4)"},
	{"join-derived-or-null", []string{"JA", "JB"}, "SELECT * FROM JA, JB WHERE (a1 = 1 AND b1 = 3) OR (a1 = 2 AND b3 IS NULL)"},
	{"join-if-null-keys", []string{"N1", "N2"}, "SELECT t2.a, t2.c, t1.c FROM " + jIfN1 + " AS t1 JOIN " + jIfN2 + " AS t2 ON t1.a = t2.a AND t1.b > t2.b"},
	{"join-is-null-or-equal", []string{"N1", "N2"}, "SELECT t2.a, t2.c, t1.c FROM " + jIfN1 + " AS t1 JOIN " + jIfN2 + " AS t2 ON ((t1.a IS NULL AND t2.a IS NULL) OR (t1.a = t2.a)) AND t1.b > t2.b"},
	{"join-duplicate-key", []string{"A", "B"}, "SELECT a1, b1, b3 FROM A JOIN B ON a1 = b1 AND a1 = b3"},
	{"join-boolean-key", []string{"BO3", "BO5"}, "SELECT a1, a1, c2 FROM BO3 INNER JOIN BO5 ON d1 = d2 WHERE d1 IS TRUE"},
	{"join-nonequi-filter", []string{"T3", "T5"}, "SELECT c, g FROM T3, T5 WHERE b = e AND a < 6 AND h < b"},
	{"join-alias-odd-name", []string{"A", "B"}, "SELECT B.b5, T.`1-_./Ü` FROM (SELECT a1, a2, a3 AS `1-_./Ü` FROM A) AS T, B WHERE a1 = b1 AND a1 < 4"},
	{"join-then-count", []string{"A", "B"}, "SELECT COUNT(b4), COUNT(a2) FROM A, B WHERE a1 = b1"},
	{"join-left-never-matches", []string{"S3", "NJ5"}, "SELECT b, c, e, g FROM S3 LEFT OUTER JOIN NJ5 ON b = e"},
	{"join-left-small", []string{"S3", "DS5"}, "SELECT b, c, e, g FROM S3 LEFT OUTER JOIN DS5 ON b = e"},
	{"join-same-records", []string{"SR1", "SR2"}, "SELECT SR1.pk AS leftPk, SR1.a AS leftA, SR2.pk AS rightPk, SR2.a AS rightA FROM SR1 JOIN SR2 ON SR1.pk = SR2.pk"},
	{"join-full-b2", []string{"A", "B"}, "SELECT a3, b4 FROM A FULL OUTER JOIN B ON a2 = b2"},
	{"join-right-b2", []string{"A", "B"}, "SELECT a3, b4 FROM A RIGHT OUTER JOIN B ON a2 = b2"},
	{"join-equal-pk", []string{"A", "B"}, "SELECT a1, b1 FROM " + jSumA + " JOIN " + jSumB + " ON a1 = b1"},
	{"join-three-way-aggs", []string{"TA", "TB", "TC"}, "SELECT a1, b1, c1 FROM (SELECT SUM(a2) AS a2, a1 FROM TA GROUP BY a1) JOIN (SELECT SUM(b2) AS b2, b1 FROM TB GROUP BY b1) ON a1 = b1 JOIN (SELECT SUM(c2) AS c2, c1 FROM TC GROUP BY c1) ON c2 = b2"},
	{"join-on-agg-values", []string{"A", "B"}, "SELECT a1, a2, b1, b2 FROM " + jSumA + " JOIN " + jSumB + " ON a2 = b2"},
	{"join-left-nonequi-none", []string{"A", "B"}, "SELECT a1, b1 FROM A LEFT JOIN B ON a1 = b1 AND a2 > b2"},
	{"join-left-equal-pk-nonequi", []string{"A", "B"}, "SELECT a1, b1 FROM " + jSumA + " LEFT JOIN " + jSumB + " ON a1 = b1 AND a2 > b2"},
	{"join-left-pk-right-not", []string{"A", "B"}, "SELECT a1, b1 FROM " + jSumA + " LEFT JOIN B ON a1 = b1 AND a2 > b2"},
	{"join-left-pk-nonequi", []string{"A", "B"}, "SELECT a1, a2, b1, b2 FROM " + jSumA + " LEFT JOIN " + jSumB + " ON a2 = b2 AND a1 > b1"},
	{"join-left-equal-pk", []string{"A", "B"}, "SELECT a1, b1 FROM " + jSumA + " LEFT JOIN " + jSumB + " ON a1 = b1"},
	{"join-left-pk", []string{"A", "B"}, "SELECT a1, a2, b1, b2 FROM " + jSumA + " LEFT JOIN " + jSumB + " ON a2 = b2"},
}

func itcaseJoin29Cases() []genCase {
	var out []genCase
	for _, q := range itcaseJoin29Queries {
		lines, data := readTables(q.tables, itJoin29Tables, itTables)
		h := append([]string{"mode: streaming"}, lines...)
		out = append(out, genCase{name: "itcase29-" + q.name, header: h, query: q.query, data: data})
	}
	return out
}
