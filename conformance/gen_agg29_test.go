package conformance

// ARRAY_AGG, JSON_ARRAYAGG, JSON_OBJECTAGG, STDDEV and VARIANCE: a
// GROUP BY over insert-only and over updating input, window TVFs, OVER,
// batch, NULLs, empty groups and duplicates, and what Flink refuses.

func init() { areaCases = append(areaCases, agg29Cases) }

// updQ is an updating input: each user's row count, its largest qty
// and the smallest qty above 3 (NULL for most), keyed by user.
const agg29Upd = "(SELECT user_id AS uid, COUNT(*) AS n, MAX(qty) AS q, MIN(qty) FILTER (WHERE qty > 3) AS big FROM o GROUP BY user_id)"

// agg29Prod is an updating input keyed by product: novel's count goes
// 1 then 2, its big qty stays NULL.
const agg29Prod = "(SELECT product AS p, COUNT(*) AS n, MAX(qty) AS q, MIN(qty) FILTER (WHERE qty > 3) AS big FROM o GROUP BY product)"

func agg29Cases() []genCase {
	type q struct {
		name   string
		modes  []string
		tables []string
		query  string
	}
	stream := []string{"streaming"}
	tables := map[string][2]string{"o": {tableO, dataO}, "e": {tableE, dataE}, "t": {tableT, dataT}}
	tumble := "TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '2' MINUTE))"
	hop := "TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))"
	cumulate := "TABLE(CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))"
	session := "TABLE(SESSION(TABLE e PARTITION BY k, DESCRIPTOR(ts), INTERVAL '30' SECOND))"
	qs := []q{
		// ARRAY_AGG: NULLs kept by default, IGNORE NULLS inside and after
		// the parentheses, DISTINCT (a NULL is a distinct value), FILTER.
		{"array-group", both, []string{"o"}, "SELECT category, ARRAY_AGG(qty), ARRAY_AGG(qty IGNORE NULLS), ARRAY_AGG(qty) IGNORE NULLS, ARRAY_AGG(price) FILTER (WHERE qty > 1) FROM o GROUP BY category"},
		// Flink 2.3's batch planner cannot plan ARRAY_AGG(DISTINCT x)
		// beside another aggregate; alone it can.
		{"array-distinct", both, []string{"o"}, "SELECT category, ARRAY_AGG(DISTINCT product) FROM o GROUP BY category"},
		{"array-retract", stream, []string{"o"}, "SELECT n, ARRAY_AGG(uid), ARRAY_AGG(big), ARRAY_AGG(big IGNORE NULLS) FROM " + agg29Upd + " GROUP BY n"},
		{"array-distinct-nulls", stream, []string{"o"}, "SELECT ARRAY_AGG(DISTINCT qty) IGNORE NULLS, ARRAY_AGG(DISTINCT qty) FROM o"},
		{"array-composite", stream, []string{"o"}, "SELECT category, ARRAY_AGG(ROW(oid, product)), ARRAY_AGG(ARRAY[oid]) FROM o GROUP BY category"},
		{"array-tumble", both, []string{"e"}, "SELECT window_start, k, ARRAY_AGG(v), ARRAY_AGG(v IGNORE NULLS) FROM " + tumble + " GROUP BY window_start, window_end, k"},
		{"array-hop", stream, []string{"e"}, "SELECT window_start, k, ARRAY_AGG(v) FROM " + hop + " GROUP BY window_start, window_end, k"},
		{"array-cumulate", stream, []string{"e"}, "SELECT window_start, window_end, k, ARRAY_AGG(v) FROM " + cumulate + " GROUP BY window_start, window_end, k"},
		{"array-session", stream, []string{"e"}, "SELECT window_start, k, ARRAY_AGG(v) FROM " + session + " GROUP BY window_start, window_end, k"},
		{"array-over", both, []string{"e"}, "SELECT k, v, ARRAY_AGG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM e"},
		// Nothing to aggregate: ARRAY_AGG and the variances NULL, the JSON
		// ones [] and {} (batch; streaming emits no row).
		{"empty", both, []string{"o"}, "SELECT ARRAY_AGG(qty), JSON_ARRAYAGG(qty), JSON_OBJECTAGG(KEY product VALUE qty), STDDEV(qty), VARIANCE(price), COUNT(*) FROM o WHERE oid > 100"},
		{"empty-groups", both, []string{"o"}, "SELECT category, ARRAY_AGG(qty) FILTER (WHERE oid > 100), ARRAY_AGG(amt IGNORE NULLS), JSON_ARRAYAGG(amt), STDDEV(qty) FILTER (WHERE oid > 100) FROM o GROUP BY category"},
		// JSON_ARRAYAGG: NULLs left out by default, NULL ON NULL writes
		// null; JSON texts of each type; ORDER BY read and ignored.
		{"jsonarray-group", both, []string{"o"}, "SELECT category, JSON_ARRAYAGG(qty), JSON_ARRAYAGG(qty NULL ON NULL), JSON_ARRAYAGG(product), JSON_ARRAYAGG(amt), JSON_ARRAYAGG(price ABSENT ON NULL) FROM o GROUP BY category"},
		// Flink's parser takes no FILTER after the JSON aggregates.
		{"jsonarray-filter", stream, []string{"o"}, "SELECT category, JSON_ARRAYAGG(qty) FILTER (WHERE qty > 1) FROM o GROUP BY category"},
		{"jsonarray-retract", stream, []string{"o"}, "SELECT n, JSON_ARRAYAGG(uid), JSON_ARRAYAGG(big NULL ON NULL), JSON_ARRAYAGG(big) FROM " + agg29Upd + " GROUP BY n"},
		{"jsonarray-nested", stream, []string{"o"}, "SELECT JSON_ARRAYAGG(JSON_OBJECT(KEY 'p' VALUE product, KEY 'q' VALUE qty)), JSON_ARRAYAGG(ARRAY[oid]), JSON_ARRAYAGG(oid > 3), JSON_ARRAYAGG(price ORDER BY oid DESC) FROM o"},
		// A TIMESTAMP's JSON text, as JSON_STRING writes it.
		{"jsonarray-timestamps", stream, []string{"t"}, "SELECT JSON_ARRAYAGG(ts), JSON_ARRAYAGG(CAST(ts AS TIMESTAMP(0))), JSON_ARRAYAGG(CAST(ts AS TIMESTAMP(6))), JSON_OBJECTAGG(KEY s VALUE ts) FROM t WHERE s <> ''"},
		{"jsonarray-tumble", both, []string{"e"}, "SELECT window_start, k, JSON_ARRAYAGG(v), JSON_ARRAYAGG(v NULL ON NULL) FROM " + tumble + " GROUP BY window_start, window_end, k"},
		{"jsonarray-hop", stream, []string{"e"}, "SELECT window_start, k, JSON_ARRAYAGG(v) FROM " + hop + " GROUP BY window_start, window_end, k"},
		{"jsonarray-session", stream, []string{"e"}, "SELECT window_start, k, JSON_ARRAYAGG(v) FROM " + session + " GROUP BY window_start, window_end, k"},
		{"jsonarray-over", stream, []string{"e"}, "SELECT k, JSON_ARRAYAGG(v) OVER (PARTITION BY k ORDER BY ts) FROM e"},
		{"jsonarray-distinct", stream, []string{"o"}, "SELECT JSON_ARRAYAGG(DISTINCT product) FROM o"},
		// JSON_OBJECTAGG: keys sorted, KEY optional, NULL ON NULL by
		// default; a duplicate or NULL key fails the job; a non-string
		// key is refused.
		{"jsonobject-group", both, []string{"o"}, "SELECT category, JSON_OBJECTAGG(KEY product VALUE qty), JSON_OBJECTAGG(product VALUE price ABSENT ON NULL), JSON_OBJECTAGG(KEY product VALUE amt NULL ON NULL) FROM o WHERE oid <> 4 GROUP BY category"},
		{"jsonobject-duplicate", both, []string{"o"}, "SELECT category, JSON_OBJECTAGG(KEY product VALUE qty) FROM o GROUP BY category"},
		{"jsonobject-null-key", stream, []string{"o"}, "SELECT JSON_OBJECTAGG(KEY category VALUE qty) FROM o WHERE oid >= 5"},
		{"jsonobject-int-key", stream, []string{"o"}, "SELECT JSON_OBJECTAGG(KEY oid VALUE qty) FROM o"},
		{"jsonobject-retract", stream, []string{"o"}, "SELECT n, JSON_OBJECTAGG(KEY CAST(uid AS STRING) VALUE q), JSON_OBJECTAGG(KEY CAST(uid AS STRING) VALUE big ABSENT ON NULL) FROM " + agg29Upd + " GROUP BY n"},
		{"jsonobject-retract-null", stream, []string{"o"}, "SELECT n, JSON_OBJECTAGG(KEY p VALUE big) FROM " + agg29Prod + " GROUP BY n"},
		{"jsonobject-nested", stream, []string{"o"}, "SELECT JSON_OBJECTAGG(KEY product VALUE JSON_OBJECT(KEY 'q' VALUE qty)) FROM o WHERE oid <> 4"},
		{"jsonobject-escape", stream, []string{"o"}, "SELECT JSON_ARRAYAGG(s), JSON_OBJECTAGG(KEY s VALUE s || 'x') FROM (VALUES ('a\"b'), ('日本'), ('x/y'), (CHR(1) || 'tab'), ('Z')) AS t(s)"},
		{"jsonobject-tumble", both, []string{"e"}, "SELECT window_start, k, JSON_OBJECTAGG(KEY CAST(v AS STRING) VALUE ts) FROM " + tumble + " WHERE v IS NOT NULL GROUP BY window_start, window_end, k"},
		{"jsonobject-hop", stream, []string{"e"}, "SELECT window_start, k, JSON_OBJECTAGG(KEY CAST(v AS STRING) VALUE v) FROM " + hop + " WHERE v IS NOT NULL GROUP BY window_start, window_end, k"},
		{"jsonobject-over", stream, []string{"e"}, "SELECT k, JSON_OBJECTAGG(KEY k VALUE v) OVER (PARTITION BY k ORDER BY ts) FROM e"},
		// PERCENTILE(x, p): one constant percentage.
		{"percentile-group", both, []string{"o"}, "SELECT category, PERCENTILE(qty, 0.5), PERCENTILE(price, 0.1), PERCENTILE(amt, 1), PERCENTILE(oid, 0) FROM o GROUP BY category"},
		{"percentile-global", both, []string{"o"}, "SELECT PERCENTILE(qty, 0.5), PERCENTILE(price, 0.9), PERCENTILE(user_id, 0.25) FROM o"},
		{"percentile-retract", stream, []string{"o"}, "SELECT n, PERCENTILE(q, 0.5), PERCENTILE(uid, 0.75) FROM " + agg29Upd + " GROUP BY n"},
		{"percentile-tumble", both, []string{"e"}, "SELECT window_start, k, PERCENTILE(v, 0.5) FROM " + tumble + " GROUP BY window_start, window_end, k"},
		{"percentile-hop", stream, []string{"e"}, "SELECT window_start, k, PERCENTILE(v, 0.3) FROM " + hop + " GROUP BY window_start, window_end, k"},
		{"percentile-over", stream, []string{"e"}, "SELECT k, v, PERCENTILE(v, 0.5) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM e"},
		{"percentile-out-of-range", stream, []string{"o"}, "SELECT PERCENTILE(qty, 1.5) FROM o"},
		// STDDEV and VARIANCE are STDDEV_SAMP and VAR_SAMP.
		{"stddev-variance", both, []string{"o"}, "SELECT category, STDDEV(qty), VARIANCE(qty), STDDEV(price), VARIANCE(price), STDDEV(DISTINCT qty) FROM o GROUP BY category"},
		{"stddev-retract", stream, []string{"o"}, "SELECT n, STDDEV(q), VARIANCE(CAST(q AS DOUBLE)) FROM " + agg29Upd + " GROUP BY n"},
		{"stddev-tumble", both, []string{"e"}, "SELECT window_start, k, STDDEV(v), VARIANCE(v) FROM " + tumble + " GROUP BY window_start, window_end, k"},
		{"stddev-over", stream, []string{"e"}, "SELECT k, v, STDDEV(CAST(v AS DOUBLE)) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM e"},
	}
	var out []genCase
	for _, c := range qs {
		for _, mode := range c.modes {
			name := "agg29-" + c.name
			if len(c.modes) > 1 {
				name += "-" + mode
			}
			lines, data := readTables(c.tables, tables)
			h := append([]string{"mode: " + mode}, lines...)
			out = append(out, genCase{name: name, header: h, query: c.query, data: data})
		}
	}
	return out
}
