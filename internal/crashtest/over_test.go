package crashtest

import (
	"testing"
)

// (o) file -> OVER aggregate -> file, and -> SESSION window aggregate ->
// file: both operators' snapshots (rows waiting for the watermark, each
// partition's frame, open sessions) must give, after any kills, output
// byte-identical to an uninterrupted run's. Event times rise with the row
// number, so no row is late however the restarted runs cut their batches,
// and both results are fixed by the input alone.
var fileOverToFile = scenario{
	name: "file-over-session",
	pipeline: `version: 1
name: crash-over-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    schema:
{{template "readings columns"}}
      - event_time AS TO_TIMESTAMP_LTZ(id * 1000, 3)
    watermark: event_time - INTERVAL '30' SECOND
transforms:
  - name: moving
    sql: |
      SELECT sensor, id, SUM(temp) OVER w AS last10, MAX(id) OVER w AS hi
      FROM readings
      WINDOW w AS (PARTITION BY sensor ORDER BY event_time ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)
  - name: sessions
    sql: |
      SELECT sensor, window_start, window_end, COUNT(*) AS n, SUM(id) AS ids
      FROM TABLE(SESSION(TABLE readings PARTITION BY sensor, DESCRIPTOR(event_time), INTERVAL '5' MINUTE))
      GROUP BY sensor, window_start, window_end
sinks:
{{template "file sink" args . "name" "moving" "from" "moving"}}
{{template "file sink" args . "name" "sessions" "from" "sessions" "suffix" ".sessions"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv", ".sessions.csv"),
}

func TestCrashOverSession(t *testing.T) { runScenario(t, fileOverToFile) }
