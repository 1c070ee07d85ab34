package crashtest

import "testing"

// (l3) file -> an interval LEFT JOIN of the readings with the same
// sensor's readings of the ten minutes before -> file, and -> an OVER
// aggregate over each sensor's last ten readings, and one over its last
// half hour (a bounded RANGE frame, with cleanup timers) -> file, and
// -> SESSION windows per sensor (gap 15 minutes) -> file, and -> each
// sensor's two busiest of seven buckets (a Top-N over a GROUP BY's
// counts, UpdateFastStrategy: a changelog) -> file, and -> SELECT
// DISTINCT sensor, MOD(id, 3) -> file, each life with
// another number of workers (1, 2, 3, 1, ...: the reference run has
// one): every restore gives the workers the key groups of a checkpoint
// written by another number of them, each key's cached rows and cleanup
// timers, its partitions with their frames and waiting rows, its open
// sessions, its ranked rows or the rows it has seen, and
// every worker the clock (and the join's expiration times). A
// reading with no earlier one of its sensor within the ten minutes comes
// out padded when its cleanup timer fires. Event times rise with the
// row number, so no row is late, and the join's result is fixed by the
// input alone whatever the order in which its two inputs arrive; the
// workers' rows come out in another order, so the lines are compared as
// sets: the same pairs and padded rows, none lost, none twice.
var fileKeyedRescale = scenario{
	name: "file-keyed-rescale",
	pipeline: `version: 1
name: crash-keyed-rescale-{{.Out}}
parallelism: {{workers .Life}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    schema:
{{template "readings columns"}}
      - event_time AS TO_TIMESTAMP_LTZ(id * 1000, 3)
    watermark: event_time - INTERVAL '30' SECOND
transforms:
  - name: after
    sql: |
      SELECT a.sensor, a.id, b.id AS before_id, b.temp - a.temp AS change
      FROM readings AS a LEFT JOIN readings AS b
        ON a.sensor = b.sensor
        AND a.event_time BETWEEN b.event_time + INTERVAL '1' SECOND AND b.event_time + INTERVAL '10' MINUTE
  - name: moving
    sql: |
      SELECT sensor, id, SUM(temp) OVER w AS last10, MAX(id) OVER w AS hi
      FROM readings
      WINDOW w AS (PARTITION BY sensor ORDER BY event_time ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)
  - name: recent
    sql: |
      SELECT sensor, id, COUNT(*) OVER (PARTITION BY sensor ORDER BY event_time
        RANGE BETWEEN INTERVAL '30' MINUTE PRECEDING AND CURRENT ROW) AS n
      FROM readings
  - name: visits
    sql: |
      SELECT sensor, window_start, window_end, COUNT(*) AS n, SUM(id) AS ids
      FROM TABLE(SESSION(TABLE readings PARTITION BY sensor, DESCRIPTOR(event_time), INTERVAL '15' MINUTE))
      GROUP BY sensor, window_start, window_end
  - name: busiest
    sql: |
      SELECT sensor, bucket, n FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY sensor ORDER BY n DESC) AS rn
        FROM (SELECT sensor, MOD(id, 7) AS bucket, COUNT(*) AS n FROM readings GROUP BY sensor, MOD(id, 7))
      ) WHERE rn <= 2
  - name: kinds
    sql: SELECT DISTINCT sensor, MOD(id, 3) AS m FROM readings
sinks:
{{template "file sink" args . "name" "after" "from" "after"}}
{{template "file sink" args . "name" "recent" "from" "recent" "suffix" ".recent"}}
{{template "file sink" args . "name" "visits" "from" "visits" "suffix" ".visits"}}
{{template "file sink" args . "name" "busiest" "from" "busiest" "suffix" ".busiest" "mode" "retract" "format" "csv"}}
{{template "file sink" args . "name" "kinds" "from" "kinds" "suffix" ".kinds"}}
{{template "file sink" args . "name" "moving" "from" "moving" "suffix" ".moving"}}
`,
	setup: writesReadings(10),
	check: sameLines(".csv", ".moving.csv", ".recent.csv", ".visits.csv", ".busiest.csv", ".kinds.csv"),
}

func TestCrashKeyedRescale(t *testing.T) { runScenario(t, fileKeyedRescale) }
