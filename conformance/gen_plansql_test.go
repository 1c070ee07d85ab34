package conformance

// Cases of the query constructs planned in pipeline/plan beside the
// plain SELECT: uniquified output names, legacy group windows, set
// operations, grouping sets, correlated and scalar subqueries. Each
// query runs in the modes listed, over the shared tables.

func init() { areaCases = append(areaCases, plansqlCases) }

var plansqlQueries = []struct {
	name   string
	modes  []string
	tables []string
	query  string
}{
	// Output names: a repeated name gets Calcite's number.
	{"names-join", both, []string{"o"}, "SELECT a.oid, b.oid, a.product FROM o a JOIN o b ON a.user_id = b.user_id AND a.oid < b.oid"},
	{"names-agg", both, []string{"o"}, "SELECT category, COUNT(*) AS n, COUNT(qty) AS n FROM o GROUP BY category"},
	{"names-star", streaming, []string{"o"}, "SELECT oid, *, oid + 1 AS oid FROM o WHERE oid < 4"},
	// Legacy group windows.
	{"gw-tumble", both, []string{"e"}, "SELECT k, TUMBLE_START(ts, INTERVAL '1' MINUTE), TUMBLE_END(ts, INTERVAL '1' MINUTE), COUNT(*), SUM(v) FROM e GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), k"},
	{"gw-tumble-having", streaming, []string{"e"}, "SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) AS ws, SUM(v) AS s FROM e WHERE v > 1 GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE) HAVING COUNT(*) > 1"},
	{"gw-hop", both, []string{"e"}, "SELECT HOP_START(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE), HOP_END(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE), COUNT(*), MAX(v) FROM e GROUP BY HOP(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE)"},
	// Flink 2.3 finds no batch plan for a legacy SESSION window.
	{"gw-session", streaming, []string{"e"}, "SELECT k, SESSION_START(ts, INTERVAL '30' SECOND), SESSION_END(ts, INTERVAL '30' SECOND), COUNT(*) FROM e GROUP BY k, SESSION(ts, INTERVAL '30' SECOND)"},
	{"gw-rowtime-cascade", streaming, []string{"e"}, "SELECT TUMBLE_START(rt, INTERVAL '2' MINUTE), SUM(n) FROM (SELECT k, TUMBLE_ROWTIME(ts, INTERVAL '1' MINUTE) AS rt, COUNT(*) AS n FROM e GROUP BY k, TUMBLE(ts, INTERVAL '1' MINUTE)) GROUP BY TUMBLE(rt, INTERVAL '2' MINUTE)"},
	// INTERSECT, EXCEPT [ALL]. In streaming mode the row kinds of EXCEPT
	// and of any set operation over an updating input depend on how the
	// two inputs interleave (a left row emitted before its right match
	// arrives is retracted), on Flink as on etld: those run in batch.
	{"setop-intersect", both, []string{"o"}, "SELECT category FROM o INTERSECT SELECT category FROM o WHERE qty > 1"},
	{"setop-intersect-all", both, []string{"o"}, "SELECT category FROM o INTERSECT ALL SELECT category FROM o WHERE price > 5"},
	{"setop-except", batch, []string{"o"}, "SELECT category FROM o EXCEPT SELECT category FROM o WHERE qty > 3"},
	{"setop-except-all", batch, []string{"o"}, "SELECT user_id FROM o EXCEPT ALL SELECT user_id FROM o WHERE category = 'books'"},
	{"setop-nulls", streaming, []string{"o"}, "SELECT category, qty FROM o INTERSECT SELECT category, qty FROM o WHERE oid > 3"},
	{"setop-updating", batch, []string{"o"}, "SELECT category, COUNT(*) FROM o GROUP BY category EXCEPT SELECT category, CAST(1 AS BIGINT) FROM o"},
	{"setop-updating-all", batch, []string{"o"}, "SELECT user_id, COUNT(*) FROM o GROUP BY user_id INTERSECT ALL SELECT user_id, CAST(1 AS BIGINT) FROM o"},
	{"setop-precedence", streaming, []string{"o"}, "SELECT category FROM o UNION ALL SELECT product FROM o INTERSECT SELECT category FROM o"},
	// GROUPING SETS, ROLLUP, CUBE.
	{"gs-rollup", both, []string{"o"}, "SELECT category, user_id, SUM(qty), COUNT(*), GROUPING(category), GROUPING_ID(category, user_id) FROM o GROUP BY ROLLUP(category, user_id)"},
	{"gs-cube", both, []string{"o"}, "SELECT category, product, MAX(price), GROUPING(product) FROM o GROUP BY CUBE(category, product) HAVING COUNT(*) > 1"},
	{"gs-sets", both, []string{"o"}, "SELECT category, user_id, COUNT(*) FROM o GROUP BY GROUPING SETS ((category), (user_id), ())"},
	{"gs-mixed", streaming, []string{"o"}, "SELECT user_id, category, MIN(price) FROM o GROUP BY user_id, GROUPING SETS (category, ())"},
	{"gs-updating", both, []string{"o"}, "SELECT n, user_id, COUNT(*) FROM (SELECT user_id, category, COUNT(*) AS n FROM o GROUP BY user_id, category) GROUP BY ROLLUP(n, user_id)"},
	{"gs-window", both, []string{"e"}, "SELECT window_start, window_end, k, SUM(v), GROUPING(k) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, ROLLUP(k)"},
	{"gs-window-in-set", streaming, []string{"e"}, "SELECT window_start, k, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY GROUPING SETS ((window_start, window_end, k), (window_start, window_end))"},
	{"gs-plain-grouping", streaming, []string{"o"}, "SELECT category, GROUPING(category), COUNT(*) FROM o GROUP BY category"},
	// A correlated IN naming an outer column unqualified.
	{"in-outer-unqualified", both, []string{"o", "t"}, "SELECT oid, qty FROM o WHERE oid IN (SELECT id FROM t WHERE i < qty)"},
	// Scalar subqueries in WHERE and SELECT. In streaming mode the row
	// kinds depend on whether a row of the table arrives before or after
	// the subquery's value changes (it is emitted with the old value and
	// updated), on Flink as on etld; the streaming cases are those whose
	// subquery never changes.
	{"sq-select", batch, []string{"o"}, "SELECT oid, price, (SELECT MAX(price) FROM o) AS top FROM o"},
	{"sq-where", batch, []string{"o"}, "SELECT oid, price FROM o WHERE price > (SELECT AVG(price) FROM o)"},
	{"sq-two", batch, []string{"o", "t"}, "SELECT oid, (SELECT COUNT(*) FROM t) FROM o WHERE qty < (SELECT MAX(i) FROM t WHERE i < 100)"},
	{"sq-updating", batch, []string{"o"}, "SELECT category, (SELECT MAX(n) FROM (SELECT user_id, COUNT(*) AS n FROM o GROUP BY user_id)) FROM o WHERE oid < 4"},
	{"sq-one-row", batch, []string{"o"}, "SELECT oid, (SELECT product FROM o WHERE oid = 2) FROM o WHERE oid > 5"},
	{"sq-empty", streaming, []string{"o"}, "SELECT oid, (SELECT product FROM o WHERE oid = 99) FROM o WHERE oid < 3"},
	{"sq-correlated", batch, []string{"o"}, "SELECT oid, price FROM o WHERE price > (SELECT AVG(o2.price) FROM o o2 WHERE o2.category = o.category)"},
	{"sq-correlated-count", batch, []string{"o"}, "SELECT oid, (SELECT COUNT(*) FROM o o2 WHERE o2.user_id = o.user_id AND o2.qty > 1) AS n FROM o"},
	{"sq-agg-share", batch, []string{"o"}, "SELECT category, COUNT(*) * 100 / (SELECT COUNT(*) FROM o) AS pct FROM o GROUP BY category HAVING SUM(qty) > (SELECT MIN(qty) FROM o)"},
	{"sq-many-rows", both, []string{"o"}, "SELECT oid, (SELECT product FROM o WHERE category = 'books') FROM o"},
	// Constant tables: VALUES, SELECT without FROM, a lone UNNEST. The
	// column types merge as Flink's least restrictive type (INT and
	// DECIMAL, NULL, strings of different lengths); unnamed columns are
	// EXPR$0...
	{"const-values-merge", both, []string{"o"}, "SELECT x, y FROM (VALUES (1, 'a'), (2.5, 'bbb'), (NULL, NULL)) AS t(x, y)"},
	{"const-values-chars", both, []string{"o"}, "SELECT x, CHAR_LENGTH(y), y || '|' FROM (VALUES (1, 'a'), (2, 'bb')) AS t(x, y)"},
	{"const-values-bigint", both, []string{"o"}, "SELECT x, x * 2 FROM (VALUES (1), (2.5), (CAST(3 AS BIGINT))) AS t(x)"},
	{"const-values-null", both, []string{"o"}, "SELECT x, y FROM (VALUES (1, 'a'), (NULL, 'b'), (3, NULL)) AS t(x, y)"},
	{"const-values-allnull", streaming, []string{"o"}, "SELECT x FROM (VALUES (NULL), (NULL)) AS t(x)"},
	{"const-values-noname", both, []string{"o"}, "SELECT t.EXPR$1, t.EXPR$0 + 1 FROM (VALUES (1, 'a'), (2, 'b')) AS t"},
	{"const-no-from", both, []string{"o"}, "SELECT 1, 'a', CAST(NULL AS INT), 2 + 3"},
	{"const-unnest-alone", both, []string{"o"}, "SELECT x, n FROM UNNEST(ARRAY['a', 'b']) WITH ORDINALITY AS t(x, n)"},
	{"const-join", both, []string{"o"}, "SELECT o.oid, t.label FROM o JOIN (VALUES ('books', 'B'), ('toys', 'T')) AS t(cat, label) ON o.category = t.cat"},
	{"const-in-values", both, []string{"o"}, "SELECT oid FROM o WHERE user_id IN (VALUES 1, 4)"},
	{"const-union", both, []string{"o"}, "SELECT category FROM o WHERE oid < 3 UNION ALL VALUES ('extra')"},
	{"const-agg", both, []string{"o"}, "SELECT y, SUM(x), COUNT(*) FROM (VALUES (1, 'a'), (2, 'a'), (3, 'b')) AS t(x, y) GROUP BY y"},
	{"const-subquery", both, []string{"o"}, "SELECT * FROM (SELECT x * 10 AS z FROM (VALUES (1), (2), (3)) AS t(x)) WHERE z > 10"},
}

var (
	streaming = []string{"streaming"}
	batch     = []string{"batch"}
)

func plansqlCases() []genCase {
	var out []genCase
	for _, q := range plansqlQueries {
		for _, mode := range q.modes {
			lines, data := readTables(q.tables, extraTables)
			h := append([]string{"mode: " + mode}, lines...)
			name := "plansql-" + q.name
			if len(q.modes) > 1 {
				name += "-" + mode
			}
			out = append(out, genCase{name: name, header: h, query: q.query, data: data})
		}
	}
	return out
}
