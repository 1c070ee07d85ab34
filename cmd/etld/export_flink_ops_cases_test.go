package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// regionsCSV is the dimension of the join cases: region, name; asia has
// no row and af no readings, so that both sides have unmatched rows.
const regionsCSV = `eu,Europe
us,United States
af,Africa
`

const regionsSource = `
  - name: regions
    type: file
    path: configs/gen/data/regions.csv
    schema:
      - region STRING
      - name STRING
`

// regionRates is the versioned table of the temporal join case, a
// debezium-json changelog keyed by region: eu changes at 10 s, us has one
// version, asia none. Its watermark is an hour behind, so that every
// reading joins at the end of the input, in Flink as in etld.
const regionRates = `{"before":null,"after":{"region":"eu","factor":1,"ts":0},"op":"c"}
{"before":null,"after":{"region":"us","factor":2,"ts":0},"op":"c"}
{"before":{"region":"eu","factor":1,"ts":0},"after":{"region":"eu","factor":3,"ts":10000},"op":"u"}
`

const regionRatesSource = `
  - name: region_rates
    type: file
    path: configs/gen/data/region-rates.jsonl
    format: {type: debezium-json, schema_include: false}
    key: [region]
    schema:
      - region STRING
      - factor INT
      - ts BIGINT
      - valid_from AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: valid_from - INTERVAL '1' HOUR
`

// flinkOpCases are the pipelines of the stateful operators beyond
// GROUP BY and windows: Top-N, deduplication, OVER, SESSION, the regular
// joins (inner, left, full, semi, anti) and UNNEST, each into print.
func flinkOpCases() []flinkCase {
	one := func(name, sql string, sources string) flinkCase {
		return flinkCase{name: name, file: "configs/gen/" + name + ".yaml", sinks: []flinkSink{{kind: "print"}}, yaml: `version: 1
name: ` + name + `
sources:` + sources + `
transforms:
  - name: q
    sql: |
` + indent(sql, "      ") + `
sinks:
  - name: out
    from: q
    type: print
`}
	}
	return []flinkCase{
		one("gen-topn", `SELECT region, id, temp, rn FROM (
  SELECT region, id, temp, ROW_NUMBER() OVER (PARTITION BY region ORDER BY temp DESC) AS rn
  FROM readings)
WHERE rn <= 2`, readingsSource),
		one("gen-dedup", `SELECT id, ts, temp FROM (
  SELECT id, ts, temp, ROW_NUMBER() OVER (PARTITION BY id ORDER BY event_time DESC) AS rn
  FROM readings)
WHERE rn = 1`, readingsSource),
		one("gen-over", `SELECT id, ts, SUM(temp) OVER w AS last2, COUNT(*) OVER w AS n
FROM readings
WINDOW w AS (PARTITION BY id ORDER BY event_time ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`, readingsSource),
		one("gen-session", `SELECT region, window_start, window_end, COUNT(*) AS n, MAX(temp) AS hi
FROM TABLE(SESSION(TABLE readings PARTITION BY region, DESCRIPTOR(event_time), INTERVAL '5' SECOND))
GROUP BY region, window_start, window_end`, readingsSource),
		one("gen-join-inner", `SELECT r.id, r.temp, g.name FROM readings r JOIN regions g ON r.region = g.region AND r.temp > 0`, readingsSource+regionsSource),
		one("gen-join-left", `SELECT r.id, r.ts, g.name FROM readings r LEFT JOIN regions g ON r.region = g.region`, readingsSource+regionsSource),
		one("gen-join-full", `SELECT r.id, r.ts, g.region, g.name FROM readings r FULL JOIN regions g ON r.region = g.region`, readingsSource+regionsSource),
		one("gen-semi", `SELECT id, ts FROM readings WHERE region IN (SELECT region FROM regions)`, readingsSource+regionsSource),
		one("gen-anti", `SELECT g.region, g.name FROM regions g WHERE NOT EXISTS (SELECT * FROM readings r WHERE r.region = g.region)`, readingsSource+regionsSource),
		one("gen-dedup-first", `SELECT region, id, ts FROM (
  SELECT region, id, ts, ROW_NUMBER() OVER (PARTITION BY region ORDER BY event_time) AS rn
  FROM readings)
WHERE rn = 1`, readingsSource),
		one("gen-topn-updating", `SELECT region, id, hi, rn FROM (
  SELECT region, id, hi, ROW_NUMBER() OVER (PARTITION BY region ORDER BY hi DESC) AS rn
  FROM (SELECT region, id, MAX(temp) AS hi FROM readings GROUP BY region, id))
WHERE rn <= 1`, readingsSource),
		one("gen-over-range", `SELECT region, ts, SUM(temp) OVER (PARTITION BY region ORDER BY event_time
  RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS last10s
FROM readings`, readingsSource),
		one("gen-join-updating", `SELECT g.region, g.name, s.n, s.hi
FROM regions g LEFT JOIN (SELECT region, COUNT(*) AS n, MAX(temp) AS hi FROM readings GROUP BY region) s
  ON s.region = g.region`, readingsSource+regionsSource),
		one("gen-not-in", `SELECT id, region FROM readings WHERE region NOT IN (SELECT region FROM regions)`, readingsSource+regionsSource),
		one("gen-temporal", `SELECT r.id, r.ts, r.temp * f.factor AS scaled, f.valid_from
FROM readings r LEFT JOIN region_rates FOR SYSTEM_TIME AS OF r.event_time AS f ON r.region = f.region`, readingsSource+regionRatesSource),
		// state_ttl: SET 'table.exec.state.ttl' on Flink. An hour never
		// expires within the run, so both sides keep every group.
		stateTTL(one("gen-state-ttl", `SELECT region, COUNT(*) AS n, MAX(temp) AS hi FROM readings GROUP BY region`, readingsSource)),
		one("gen-unnest", `SELECT r.id, r.ts, t.tag FROM readings r CROSS JOIN UNNEST(ARRAY[r.id, r.region]) AS t (tag)`, readingsSource),
		one("gen-unnest-left", `SELECT r.id, r.ts, t.tag, t.pos
FROM readings r LEFT JOIN UNNEST(CASE WHEN r.temp > 20 THEN ARRAY[r.region, r.id] END) WITH ORDINALITY AS t (tag, pos) ON TRUE`, readingsSource),
		one("gen-over-rank", `SELECT region, ts, LAG(temp) OVER w AS prev, RANK() OVER w AS r, COLLECT(ts) OVER w AS seen
FROM readings
WINDOW w AS (PARTITION BY region ORDER BY event_time)`, readingsSource),
		one("gen-over-proctime", `SELECT id, ts, ROW_NUMBER() OVER (PARTITION BY region ORDER BY proc_time) AS n FROM readings`,
			strings.Replace(readingsSource, "    watermark:", "      - proc_time AS PROCTIME()\n    watermark:", 1)),
		lookupCase(one("gen-lookup", `SELECT r.id, r.ts, g.name
FROM readings r LEFT JOIN regions FOR SYSTEM_TIME AS OF r.proc_time AS g ON r.region = g.region`,
			strings.Replace(readingsSource, "    watermark:", "      - proc_time AS PROCTIME()\n    watermark:", 1)+mysqlRegionsSource)),
	}
}

// mysqlRegionsSource is regionsCSV as a MySQL table that a lookup join
// reads: Flink's jdbc lookup join on the Flink side.
const mysqlRegionsSource = `
  - name: regions
    type: mysql
    dsn: ${ETLD_MYSQL_DSN}
    table: regions_{{uniq}}
    key: [region]
    schema:
      - region STRING
      - name STRING
`

// lookupCase creates and fills the MySQL table of mysqlRegionsSource
// before the runs; both sides read the same table.
func lookupCase(c flinkCase) flinkCase {
	c.before = func(t *testing.T, brokers string, names func(string) []string) {
		dsn, table := os.Getenv("ETLD_MYSQL_DSN"), names("regions_{{uniq}}")[0]
		t.Cleanup(func() { mysqlExec(t, dsn, "DROP TABLE IF EXISTS "+table) })
		stmts := []string{"CREATE TABLE " + table + " (region VARCHAR(16) PRIMARY KEY, name VARCHAR(64))"}
		for _, line := range strings.Split(strings.TrimSpace(regionsCSV), "\n") {
			region, name, _ := strings.Cut(line, ",")
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES ('%s', '%s')", table, region, name))
		}
		mysqlExec(t, dsn, stmts...)
	}
	c.listed = append(c.listed, "Flink's lookup fails the job after 3 retries")
	return c
}

// stateTTL gives a case's pipeline a state_ttl of an hour.
func stateTTL(c flinkCase) flinkCase {
	c.yaml = strings.Replace(c.yaml, "\nsources:", "\nstate_ttl: 1h\nsources:", 1)
	return c
}

func indent(s, pad string) string {
	out := pad
	for i := 0; i < len(s); i++ {
		out += string(s[i])
		if s[i] == '\n' {
			out += pad
		}
	}
	return out
}
