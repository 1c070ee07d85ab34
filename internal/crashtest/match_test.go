package crashtest

import (
	"testing"
)

// (m) file -> MATCH_RECOGNIZE -> file: the operator's snapshot (rows
// waiting for the watermark, every partial match with its rows, matches
// held back) must give, after any kills, output byte-identical to an
// uninterrupted run's. Event times rise with the row number, so no row is
// late however the restarted runs cut their batches, and the matches come
// out in time order whatever the watermarks.
var fileMatchToFile = scenario{
	name: "file-match",
	pipeline: `version: 1
name: crash-match-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    schema:
{{template "readings columns"}}
      - event_time AS TO_TIMESTAMP_LTZ(id * 1000, 3)
    watermark: event_time - INTERVAL '30' SECOND
transforms:
  - name: warming
    sql: |
      SELECT *
      FROM readings MATCH_RECOGNIZE (
        PARTITION BY sensor
        ORDER BY event_time
        MEASURES FIRST(A.id) AS first_id, LAST(B.id) AS last_b, COUNT(B.id) AS nb, C.id AS c_id, AVG(B.temp) AS avg_b
        AFTER MATCH SKIP TO NEXT ROW
        PATTERN (A B+? C) WITHIN INTERVAL '2' HOUR
        DEFINE A AS A.temp < 5, B AS B.temp >= 5 AND B.temp < 30, C AS C.temp >= 30 AND SUM(B.temp) > 20
      ) AS T
sinks:
{{template "file sink" args . "name" "warming" "from" "warming"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv"),
}

func TestCrashMatch(t *testing.T) { runScenario(t, fileMatchToFile) }
